"""The clock section of the catalog (clock.yaml), typed: which functions read which clock,
what a fix may swap a wall-clock read for, and which calls take or build durations."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, FrozenSet, Mapping, Optional, Tuple

from deadline_lint.catalog import Catalog

WALL, MONOTONIC = "wall", "monotonic"
UNITS = ("s", "ns", "datetime", "text")


@dataclass(frozen=True)
class ClockFunction:
    qualname: str
    clock: str  # WALL or MONOTONIC
    unit: str  # one of UNITS
    monotonic: Optional[str] = None  # wall reads only: the monotonic function of the same unit


@dataclass(frozen=True)
class InstantMethod:
    """`<datetime>.timestamp()`: the same instant, spelled in another unit."""

    name: str
    unit: str
    monotonic: Optional[str] = None


@dataclass(frozen=True)
class WireVocabulary:
    """How headers and gRPC metadata are spelled when read or written (clock.yaml `wire`)."""

    containers: Tuple[str, ...]
    metadata_methods: FrozenSet[str]
    keywords: FrozenSet[str]
    budget_keys: FrozenSet[str]  # normalised: lower case, `_` as `-`
    deadline_words: Tuple[str, ...]
    unit_needed: FrozenSet[str]  # deadline words that count only beside a unit
    units: FrozenSet[str]
    date_key: str
    date_parsers: FrozenSet[str]
    clamps: FrozenSet[str]


def normalise_key(key: str) -> str:
    """`X_Request_Deadline`, `HTTP_X_REQUEST_DEADLINE` (WSGI) -> `x-request-deadline`."""
    key = key.strip().lower().replace("_", "-")
    return key[5:] if key.startswith("http-") else key


@dataclass(frozen=True)
class ClockCatalog:
    functions: Mapping[str, ClockFunction]
    instant_methods: Mapping[str, InstantMethod]
    loop_time_method: str
    loop_factories: FrozenSet[str]
    loop_names: FrozenSet[str]
    durations: FrozenSet[str]
    sleeps: FrozenSet[str]
    wire: WireVocabulary

    @property
    def final_names(self) -> FrozenSet[str]:
        """The last part of every clock function: `x.attr()` with another `attr` reads no clock."""
        return frozenset(q.rpartition(".")[2] for q in self.functions) | {self.loop_time_method}


def clock_catalog(catalog: Catalog) -> ClockCatalog:
    """The typed clock section, built once per catalog."""
    return catalog.cached(ClockCatalog, lambda: _build(catalog.data.get("clock") or {}))


def _problem(data: Any) -> Optional[str]:
    if not isinstance(data, dict):
        return "a mapping"
    for section in ("wall", "monotonic", "instant_methods"):
        entries = data.get(section, {}) or {}
        if not isinstance(entries, dict):
            return f"`{section}` as a mapping of name to {{unit, monotonic}}"
        for name, spec in entries.items():
            if not isinstance(spec, dict) or spec.get("unit") not in UNITS:
                return f"`{section}.{name}` with a unit among {UNITS}"
    loop = data.get("loop_time", {}) or {}
    if not isinstance(loop, dict) or not isinstance(loop.get("method", "time"), str):
        return "`loop_time` as a mapping with `method`, `loop_factories` and `loop_names`"
    wire = data.get("wire", {}) or {}
    if not isinstance(wire, dict) or not all(
        isinstance(wire.get(key, []) or [], list)
        for key in (
            "containers", "metadata_methods", "keywords", "budget_keys", "deadline_words", "unit_needed", "units",
            "date_parsers", "clamps",
        )
    ):
        return "`wire` as a mapping of lists of names (and `date_key`)"
    return None


def _names(value: Any) -> FrozenSet[str]:
    return frozenset(value or ())


def _build(data: Mapping[str, Any]) -> ClockCatalog:
    problem = _problem(data)
    if problem:  # a packaging bug, not a user error
        raise RuntimeError(f"clock.yaml: expected {problem}")
    functions = {}
    for clock in (WALL, MONOTONIC):
        for name, spec in (data.get(clock) or {}).items():
            functions[name] = ClockFunction(name, clock, spec["unit"], spec.get("monotonic"))
    methods = {
        name: InstantMethod(name, spec["unit"], spec.get("monotonic"))
        for name, spec in (data.get("instant_methods") or {}).items()
    }
    loop = data.get("loop_time") or {}
    wire = data.get("wire") or {}
    vocabulary = WireVocabulary(
        containers=tuple(wire.get("containers") or ()),
        metadata_methods=_names(wire.get("metadata_methods")),
        keywords=_names(wire.get("keywords")),
        budget_keys=frozenset(normalise_key(k) for k in wire.get("budget_keys") or ()),
        deadline_words=tuple(wire.get("deadline_words") or ()),
        unit_needed=_names(wire.get("unit_needed")),
        units=_names(wire.get("units")),
        date_key=normalise_key(wire.get("date_key", "date")),
        date_parsers=_names(wire.get("date_parsers")),
        clamps=_names(wire.get("clamps")),
    )
    return ClockCatalog(
        functions=functions,
        instant_methods=methods,
        loop_time_method=loop.get("method", "time"),
        loop_factories=_names(loop.get("loop_factories")),
        loop_names=_names(loop.get("loop_names")),
        durations=_names(data.get("durations")),
        sleeps=_names(data.get("sleeps")),
        wire=vocabulary,
    )
