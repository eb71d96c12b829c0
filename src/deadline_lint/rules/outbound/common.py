"""Helpers shared by the outbound rules."""
from __future__ import annotations

from typing import FrozenSet

from deadline_lint.catalog import Catalog


def outbound_words(catalog: Catalog) -> FrozenSet[str]:
    """A file that names none of the outbound modules cannot contain an outbound call."""
    return catalog.outbound_modules


def describe_default(default_timeout) -> str:
    if default_timeout is None:
        return "never times out by default"
    return f"waits {default_timeout:g} s by default"
