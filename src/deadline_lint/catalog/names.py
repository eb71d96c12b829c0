"""Small helpers every typed catalog section shares: one spelling per listed object, and lists
of names read from a section."""
from __future__ import annotations

from typing import Any, FrozenSet, Mapping


def canonical_name(aliases: Mapping[str, str], qualname: str) -> str:
    """Another import path of a listed object mapped to the catalog's spelling, by its longest
    aliased prefix (`requests.exceptions.Timeout` -> `requests.Timeout`); an alias to "" drops
    the prefix (`builtins.OSError` -> `OSError`)."""
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        target = aliases.get(".".join(parts[:cut]))
        if target is not None:
            return ".".join(p for p in (target, *parts[cut:]) if p)
    return qualname


def name_set(section: Mapping[str, Any], key: str, file: str) -> FrozenSet[str]:
    """`section[key]` as a set of non-empty names; a malformed list is a packaging bug."""
    value = section.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise RuntimeError(f"{file}: {key}: expected a list of names")
    return frozenset(value)
