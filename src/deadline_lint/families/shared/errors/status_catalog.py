"""The status vocabulary (statuses.yaml) as typed data: which qualified names are a status
constant or a status-producing class, which calls, methods, keywords and attributes take a
status, and how a family of names spells another status. The schema is documented at the top
of statuses.yaml."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Mapping, Optional, Tuple

from deadline_lint.catalog import Catalog
from deadline_lint.catalog.names import canonical_name
from deadline_lint.catalog.schema import is_names

CONSTANT, CLASS = "constant", "class"  # what a listed name is: a value, or a class to raise

_FILE_KEYS = frozenset({
    "quota", "phrases", "grpc_codes", "constants", "classes", "named_classes", "calls", "methods",
    "keywords", "attributes", "tuple_returns", "aliases", "handler_registrations",
})
_REGISTRATION_KEYS = frozenset({"modules", "decorators", "calls", "mappings"})
_FAMILY_KEYS = frozenset({"form", "codes"})
_FORM_FIELDS = ("phrase", "camel", "code", "grpc")


@dataclass(frozen=True)
class Status:
    """An HTTP status code or a gRPC status name (exactly one is set)."""

    http: Optional[int] = None
    grpc: Optional[str] = None

    def __str__(self) -> str:
        return str(self.http) if self.http is not None else str(self.grpc)

    @staticmethod
    def of(value: Any) -> "Status":
        """A profile's status value: a number is HTTP, a name is gRPC."""
        return Status(http=value) if isinstance(value, int) else Status(grpc=str(value))


@dataclass(frozen=True)
class NamedStatus:
    """A listed name: the status it stands for, whether it is a constant or a class, and the
    family (module or class) it belongs to, whose other members spell other statuses."""

    status: Status
    role: str  # CONSTANT or CLASS
    family: str


@dataclass(frozen=True)
class StatusArgument:
    position: Optional[int]
    keyword: Optional[str]


@dataclass(frozen=True)
class HandlerRegistrations:
    """Framework APIs registering a function as the handler of an exception type."""

    modules: Tuple[str, ...] = ()  # the file imports one of these, or nothing here applies
    decorators: Mapping[str, int] = field(default_factory=dict)  # method -> position of the type
    calls: Mapping[str, Tuple[int, int]] = field(default_factory=dict)  # method -> (type, handler) positions
    mappings: Tuple[str, ...] = ()  # keywords given a dict of type -> handler (`exception_handlers={...}`)


@dataclass(frozen=True)
class StatusVocabulary:
    names: Mapping[str, NamedStatus]  # qualified name -> what it stands for
    spellings: Mapping[Tuple[str, Status], str]  # (family, status) -> the member's name
    calls: Mapping[str, StatusArgument]
    methods: Mapping[str, int]
    keywords: FrozenSet[str]
    attributes: FrozenSet[str]
    tuple_returns: Tuple[str, ...]
    aliases: Mapping[str, str]
    quota: FrozenSet[Status]
    final_names: FrozenSet[str]  # last part of every listed name: a cheap first look
    registrations: HandlerRegistrations = HandlerRegistrations()

    def canonical(self, qualname: str) -> str:
        return canonical_name(self.aliases, qualname)

    def named(self, qualname: str) -> Optional[NamedStatus]:
        return self.names.get(self.canonical(qualname))

    def call_argument(self, qualname: str) -> Optional[StatusArgument]:
        return self.calls.get(self.canonical(qualname))

    def spelling(self, family: str, status: Status) -> Optional[str]:
        """The name of `status` among the members of `family` (None: it has no such member)."""
        return self.spellings.get((family, status))


def _camel(phrase: str) -> str:
    return "".join(word.capitalize() for word in phrase.split("_"))


def build_statuses(content: Mapping[str, Any]) -> StatusVocabulary:
    phrases: Dict[int, str] = {int(code): phrase for code, phrase in (content.get("phrases") or {}).items()}
    grpc_codes = list(content.get("grpc_codes") or [])
    names: Dict[str, NamedStatus] = {}
    spellings: Dict[Tuple[str, Status], str] = {}
    for role, key in ((CONSTANT, "constants"), (CLASS, "classes")):
        for family, spec in (content.get(key) or {}).items():
            form = spec["form"]
            if "{grpc}" in form:
                members = [(Status(grpc=name), form.format(grpc=name)) for name in grpc_codes]
            else:
                members = [
                    (Status(http=code), form.format(phrase=phrases[code], camel=_camel(phrases[code]), code=code))
                    for code in spec.get("codes") or []
                ]
            for status, member in members:
                names[f"{family}.{member}"] = NamedStatus(status, role, family)
                spellings.setdefault((family, status), member)
    for qualname, value in (content.get("named_classes") or {}).items():
        family = qualname.rpartition(".")[0]
        status = Status.of(value)
        names[qualname] = NamedStatus(status, CLASS, family)
        spellings.setdefault((family, status), qualname.rpartition(".")[2])
    calls = {
        name: StatusArgument(spec.get("position"), spec.get("keyword"))
        for name, spec in (content.get("calls") or {}).items()
    }
    quota = content.get("quota") or {}
    finals = {name.rpartition(".")[2] for name in [*names, *calls, *(content.get("aliases") or {})]}
    return StatusVocabulary(
        names=names,
        spellings=spellings,
        calls=calls,
        methods=dict(content.get("methods") or {}),
        keywords=frozenset(content.get("keywords") or ()),
        attributes=frozenset(content.get("attributes") or ()),
        tuple_returns=tuple(content.get("tuple_returns") or ()),
        aliases=dict(content.get("aliases") or {}),
        quota=frozenset(
            [Status(http=c) for c in quota.get("http") or ()] + [Status(grpc=n) for n in quota.get("grpc") or ()]
        ),
        final_names=frozenset(finals),
        registrations=_registrations(content.get("handler_registrations") or {}),
    )


def _registrations(content: Mapping[str, Any]) -> HandlerRegistrations:
    calls = {name: (int(spec["type"]), int(spec["handler"])) for name, spec in (content.get("calls") or {}).items()}
    return HandlerRegistrations(
        modules=tuple(content.get("modules") or ()),
        decorators={name: int(position) for name, position in (content.get("decorators") or {}).items()},
        calls=calls,
        mappings=tuple(content.get("mappings") or ()),
    )


def _registrations_problem(content: Any) -> Optional[str]:
    expected = "`handler_registrations` as a mapping with `modules`, `decorators`, `calls` and `mappings`"
    if not isinstance(content, dict) or set(content) - _REGISTRATION_KEYS:
        return expected
    if not is_names(content.get("modules") or []) or not is_names(content.get("mappings") or []):
        return expected
    decorators = content.get("decorators") or {}
    if not isinstance(decorators, dict) or not all(_is_index(v) and v is not None for v in decorators.values()):
        return "`handler_registrations.decorators` as a mapping of method name to the type's position"
    calls = content.get("calls") or {}
    if not isinstance(calls, dict) or not all(
        isinstance(spec, dict)
        and set(spec) == {"type", "handler"}
        and all(_is_index(v) and v is not None for v in spec.values())
        for spec in calls.values()
    ):
        return "`handler_registrations.calls` as a mapping of method name to `type` and `handler` positions"
    return None


def _is_index(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


def _family_problem(key: str, family: str, spec: Any, phrases: Mapping[Any, Any]) -> Optional[str]:
    if not isinstance(spec, dict) or set(spec) - _FAMILY_KEYS or not isinstance(spec.get("form"), str):
        return f"`{key}.{family}` as a mapping with `form` (and `codes`)"
    try:
        spec["form"].format(**{name: "x" for name in _FORM_FIELDS})
    except (KeyError, IndexError, ValueError):
        return f"`{key}.{family}.form` using only {{phrase}}, {{camel}}, {{code}} or {{grpc}}"
    unknown = [c for c in spec.get("codes") or [] if c not in phrases]
    if unknown:
        return f"`{key}.{family}.codes` to be codes listed in `phrases` (not {unknown})"
    return None


def validate_statuses(content: Any) -> Optional[str]:
    """What was expected, or None when `content` follows the statuses.yaml schema."""
    if not isinstance(content, dict) or set(content) - _FILE_KEYS:
        return f"a mapping with keys among {sorted(_FILE_KEYS)}"
    phrases = content.get("phrases") or {}
    if not isinstance(phrases, dict) or not all(
        isinstance(k, int) and 100 <= k <= 599 and isinstance(v, str) and v.isidentifier() for k, v in phrases.items()
    ):
        return "`phrases` as a mapping of HTTP code to an UPPER_SNAKE phrase"
    if not is_names(content.get("grpc_codes") or []):
        return "`grpc_codes` as a list of names"
    for key in ("constants", "classes"):
        for family, spec in (content.get(key) or {}).items():
            problem = _family_problem(key, family, spec, phrases)
            if problem:
                return problem
    for name, value in (content.get("named_classes") or {}).items():
        if not (isinstance(value, int) or (isinstance(value, str) and value.isidentifier())):
            return f"`named_classes.{name}` as an HTTP code or a gRPC status name"
    for name, spec in (content.get("calls") or {}).items():
        if (
            not isinstance(spec, dict)
            or set(spec) - {"position", "keyword"}
            or not _is_index(spec.get("position"))
            or not (spec.get("keyword") is None or isinstance(spec.get("keyword"), str))
        ):
            return f"`calls.{name}` as a mapping with `position` and/or `keyword`"
    methods = content.get("methods") or {}
    if not isinstance(methods, dict) or not all(_is_index(v) and v is not None for v in methods.values()):
        return "`methods` as a mapping of method name to argument position"
    for key in ("keywords", "attributes", "tuple_returns"):
        if not is_names(content.get(key) or []):
            return f"`{key}` as a list of names"
    quota = content.get("quota") or {}
    if not isinstance(quota, dict) or set(quota) - {"http", "grpc"}:
        return "`quota` as a mapping with `http` and `grpc` lists"
    aliases = content.get("aliases") or {}
    if not isinstance(aliases, dict) or not all(isinstance(v, str) for v in aliases.values()):
        return "`aliases` as a mapping of import path to canonical path"
    return _registrations_problem(content.get("handler_registrations") or {})


def status_vocabulary(catalog: Catalog) -> StatusVocabulary:
    """The built-in vocabulary, built once per catalog."""
    return catalog.derived(_status_vocabulary)


def _status_vocabulary(catalog: Catalog) -> StatusVocabulary:
    content = catalog.data.get("statuses") or {}
    problem = validate_statuses(content)
    if problem:  # a packaging bug, not a user error
        raise RuntimeError(f"statuses.yaml: expected {problem}")
    return build_statuses(content)
