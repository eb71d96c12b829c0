"""Every rule: importing this module imports every family, whose rules register themselves
with `rules.base.register`."""
from __future__ import annotations

from typing import Dict, Tuple, Type

from deadline_lint.rules import clock, outbound, retry, spawn, status, trace  # noqa: F401  (registers them)
from deadline_lint.rules.base import REGISTRY, Rule
from deadline_lint.tool_codes import TOOL_CODES


def all_rules() -> Dict[str, Type[Rule]]:
    return dict(sorted(REGISTRY.items()))


def known_codes() -> Tuple[str, ...]:
    """Every code the tool can report, from the registry at run time (rules merged later
    count automatically) plus the tool codes DL0xx."""
    return tuple(sorted({*TOOL_CODES, *all_rules()}))
