"""The exception vocabulary (exceptions.yaml): expiry, cancel and open-breaker types with their
base classes, the status codes that mean expiry or cancel, and the naming conventions for
classes the catalog does not know. The schema is documented at the top of exceptions.yaml."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Tuple

from deadline_lint.catalog.names import canonical_name
from deadline_lint.catalog.schema import is_names

EXPIRY, CANCEL, BREAKER = "expiry", "cancel", "breaker"
KINDS = (EXPIRY, CANCEL, BREAKER)

# Where a type's knowledge comes from.
CATALOG, PROFILE, CONVENTION, SUBCLASS = "catalog", "profile", "convention", "subclass"

_TYPE_KEYS = frozenset({"kind", "bases"})
_STATUS_KEYS = frozenset({"kind", "carried_by"})
_FILE_KEYS = frozenset({"types", "statuses", "aliases", "conventions"})


@dataclass(frozen=True)
class ExceptionType:
    """One exception class (or, with `status`, one status code carried by an error class)."""

    qualname: str
    kind: Optional[str]  # EXPIRY, CANCEL, BREAKER, or None for a base class
    bases: Tuple[str, ...] = ()  # for a status: the error classes that carry it
    status: bool = False
    source: str = CATALOG

    @property
    def short_name(self) -> str:
        return self.qualname.rpartition(".")[2]


@dataclass(frozen=True)
class ExceptionVocabulary:
    types: Mapping[str, ExceptionType]
    aliases: Mapping[str, str] = field(default_factory=dict)
    conventions: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)
    # base class -> every kinded type deriving from it (itself included), catalog order
    _admitted: Dict[str, Tuple[ExceptionType, ...]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        admitted: Dict[str, List[ExceptionType]] = {}
        for exc in self.types.values():
            if exc.kind is None:
                continue
            for ancestor in self.ancestors(exc.qualname):
                admitted.setdefault(ancestor, []).append(exc)
        self._admitted.update({name: tuple(found) for name, found in admitted.items()})

    # -- names -------------------------------------------------------------------------
    def canonical(self, qualname: str) -> str:
        """Another import path of a listed object mapped to the catalog's spelling
        (`requests.exceptions.Timeout` -> `requests.Timeout`, `builtins.OSError` -> `OSError`)."""
        return canonical_name(self.aliases, qualname)

    def get(self, qualname: str) -> Optional[ExceptionType]:
        return self.types.get(self.canonical(qualname))

    def convention_kind(self, qualname: str) -> Optional[str]:
        """The kind a class name signals by convention (`UpstreamTimeout` -> expiry)."""
        name = qualname.rpartition(".")[2]
        for kind in KINDS:
            if any(fragment in name for fragment in self.conventions.get(kind, ())):
                return kind
        return None

    # -- hierarchy ---------------------------------------------------------------------
    def ancestors(self, qualname: str) -> FrozenSet[str]:
        """The type and every listed class it derives from."""
        seen = {qualname}
        stack = [qualname]
        while stack:
            found = self.types.get(stack.pop())
            for base in found.bases if found is not None else ():
                if base not in seen:
                    seen.add(base)
                    stack.append(base)
        return frozenset(seen)

    def admitted(self, qualname: str) -> Tuple[ExceptionType, ...]:
        """Every expiry, cancel or breaker type that `except <qualname>` catches: the type
        itself when it has a kind, then everything listed that derives from it."""
        return self._admitted.get(self.canonical(qualname), ())

    def statuses(self, kind: Optional[str] = None) -> Tuple[ExceptionType, ...]:
        return tuple(t for t in self.types.values() if t.status and (kind is None or t.kind == kind))

    def extended(self, extra: Iterable[ExceptionType]) -> "ExceptionVocabulary":
        """This vocabulary plus `extra` (the profile's own types); an extra entry with a
        listed name replaces it."""
        types = dict(self.types)
        types.update({t.qualname: t for t in extra})
        return ExceptionVocabulary(types, self.aliases, self.conventions)


def profile_types(exceptions: object) -> Tuple[ExceptionType, ...]:
    """The profile's `exceptions` section (a profile_settings.ExceptionSettings) as types.
    Their bases are not declared: they are taken to derive from Exception, so `except
    Exception` admits them too."""
    return tuple(
        ExceptionType(name, kind, ("Exception",), source=PROFILE)
        for kind in KINDS
        for name in getattr(exceptions, kind, ()) or ()
    )


# -- building and validation ----------------------------------------------------------
def build_vocabulary(content: Optional[Mapping[str, Any]]) -> ExceptionVocabulary:
    content = content or {}
    types: Dict[str, ExceptionType] = {}
    for name, spec in (content.get("types") or {}).items():
        spec = spec or {}
        types[name] = ExceptionType(name, spec.get("kind"), tuple(spec.get("bases") or ()))
    for name, spec in (content.get("statuses") or {}).items():
        types[name] = ExceptionType(name, spec["kind"], tuple(spec.get("carried_by") or ()), status=True)
    aliases = dict(content.get("aliases") or {})
    conventions = {kind: tuple(names or ()) for kind, names in (content.get("conventions") or {}).items()}
    return ExceptionVocabulary(types, aliases, conventions)


def validate_vocabulary(content: Any) -> Optional[str]:
    """What was expected, or None when `content` follows the exceptions.yaml schema."""
    if not isinstance(content, dict) or set(content) - _FILE_KEYS:
        return f"a mapping with keys among {sorted(_FILE_KEYS)}"
    types = content.get("types") or {}
    statuses = content.get("statuses") or {}
    if not isinstance(types, dict) or not isinstance(statuses, dict):
        return "`types` and `statuses` as mappings of qualified name to description"
    for name, spec in types.items():
        spec = spec or {}
        if not isinstance(spec, dict) or set(spec) - _TYPE_KEYS:
            return f"`types.{name}` as a mapping with keys among {sorted(_TYPE_KEYS)}"
        if spec.get("kind") not in (None, *KINDS):
            return f"`types.{name}.kind` as one of {', '.join(KINDS)}"
        if "bases" in spec and not is_names(spec["bases"]):
            return f"`types.{name}.bases` as a list of names"
        unknown = [b for b in spec.get("bases") or () if b not in types]
        if unknown:
            return f"`types.{name}.bases` to be listed types (not {', '.join(unknown)})"
    for name, spec in statuses.items():
        if not isinstance(spec, dict) or set(spec) - _STATUS_KEYS or spec.get("kind") not in KINDS:
            return f"`statuses.{name}` as a mapping with `kind` ({', '.join(KINDS)}) and `carried_by`"
        carriers = spec.get("carried_by") or []
        if not is_names(carriers) or any(c not in types for c in carriers):
            return f"`statuses.{name}.carried_by` as a list of listed types"
    aliases = content.get("aliases") or {}
    if not isinstance(aliases, dict) or not all(isinstance(v, str) for v in aliases.values()):
        return "`aliases` as a mapping of import path to canonical path"
    conventions = content.get("conventions") or {}
    if not isinstance(conventions, dict) or set(conventions) - set(KINDS):
        return f"`conventions` as a mapping with keys among {list(KINDS)}"
    if not all(is_names(v) for v in conventions.values()):
        return "`conventions` values as lists of name fragments"
    return _cycle_problem(types)


def _cycle_problem(types: Mapping[str, Any]) -> Optional[str]:
    state: Dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str) -> bool:
        if state.get(name) == 2:
            return False
        if state.get(name) == 1:
            return True
        state[name] = 1
        if any(visit(base) for base in ((types.get(name) or {}).get("bases") or ())):
            return True
        state[name] = 2
        return False

    for name in types:
        if visit(name):
            return f"base classes without a cycle (at `types.{name}`)"
    return None
