"""The kinds of value a profile setting takes: each `Check` is the loader's test, the JSON
Schema fragment editors get and the words the docs table shows, so the three cannot drift.
A test returns None when the value is fine, else what was expected (or `(where, expected,
got)` when it names a part of the value, as the outbound check does)."""
from __future__ import annotations

from types import MappingProxyType
import ast
import keyword
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional

from deadline_lint.support.selector import SELECTOR_PATTERN, is_selector

_MAX_MS = 24 * 60 * 60 * 1000  # a day: no request budget is longer; larger is a typo
_TEMPLATE_FIELDS = ("budget", "margin", "edge")
# grpc.StatusCode's names (tests/test_profile_limits.py compares them when grpc is installed).
GRPC_STATUS_NAMES = (
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
    "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
)


@dataclass(frozen=True)
class Check:
    problem: Callable[[Any], Any]
    json: Callable[[], Dict[str, Any]]
    kind: str  # for the docs table
    freeze: Callable[[Any], Any] = lambda value: value  # the typed field's value


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _milliseconds(value: Any) -> Optional[str]:
    ok = _whole(value) and 0 <= value <= _MAX_MS
    return None if ok else f"a whole number of milliseconds, 0 or more (at most a day, {_MAX_MS})"


def _positive_number(value: Any) -> Optional[str]:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
    return None if ok else "a number of seconds greater than 0"


def _boolean(value: Any) -> Optional[str]:
    return None if isinstance(value, bool) else "true or false"


def _string(value: Any) -> Optional[str]:
    return None if isinstance(value, str) and value.strip() else "a non-empty string"


def _string_list(value: Any) -> Optional[str]:
    ok = isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)
    return None if ok else "a list of non-empty strings"


def _code_list(value: Any) -> Optional[str]:
    ok = isinstance(value, list) and all(is_selector(v) for v in value)
    return None if ok else "a list of rule codes or prefixes such as DL101, DL1 or ALL"


def _path_map(value: Any) -> Optional[str]:
    ok = isinstance(value, dict) and all(isinstance(k, str) and _code_list(v) is None for k, v in value.items())
    return None if ok else "a mapping of glob pattern to a list of rule codes"


# What a budget object's method does (analysis/budget_types.py reads them).
BUDGET_ROLES = ("raw_remainder", "raw_remainder_ms", "hop_timeout", "expired_check", "refuse_check", "header_value")


def _role_map(value: Any) -> Optional[str]:
    ok = isinstance(value, dict) and all(k in BUDGET_ROLES and _string_list(v) is None for k, v in value.items())
    return None if ok else "a mapping of role (" + ", ".join(BUDGET_ROLES) + ") to a list of method names"


def _type_role_map(value: Any) -> Optional[str]:
    ok = isinstance(value, dict) and all(
        isinstance(k, str) and k.strip() and _role_map(v) is None for k, v in value.items()
    )
    return None if ok else "a mapping of budget type to a mapping of role to a list of method names"


def _http_status(value: Any) -> Optional[str]:
    return None if _whole(value) and 100 <= value <= 599 else "an HTTP status code (a whole number, 100-599)"


def _grpc_status(value: Any) -> Optional[str]:
    if isinstance(value, str) and value in GRPC_STATUS_NAMES:
        return None
    return "a gRPC status name (one of grpc.StatusCode's: " + ", ".join(GRPC_STATUS_NAMES) + ")"


def is_expression_template(template: str, fields: Mapping[str, str]) -> bool:
    """The template, filled in, is one Python expression (not a statement, not broken)."""
    try:
        ast.parse(template.format(**fields).strip(), mode="eval")
    except (SyntaxError, ValueError, KeyError, IndexError, RecursionError):
        return False
    return True


def _template(value: Any) -> Optional[str]:
    if not isinstance(value, str) or not value.strip():
        return "a Python expression template"
    if not set(re.findall(r"{(\w*)}", value)) <= set(_TEMPLATE_FIELDS):
        return "a Python expression using only {budget}, {margin} and {edge}"
    if not is_expression_template(value, {"budget": "budget", "margin": "0.05", "edge": "10.0"}):
        return "a template that fills in to one Python expression, such as \"{budget}.timeout()\""
    return None


def _client_list(value: Any) -> Any:
    # The catalog's schema is imported only for a profile that declares clients: loading the
    # catalog package is a large part of what a run answered from the cache would import.
    from deadline_lint.catalog.schema import validate_client_groups

    return validate_client_groups(value) or _client_spelling_problem(value)


_NAME_KEYS = ("keyword", "constructor_keyword", "headers_keyword")
_TEMPLATE_KEYS = MappingProxyType({"timeout_template": ("timeout",), "wrap": ("call", "timeout")})


def _client_spelling_problem(groups: List[Mapping[str, Any]]):
    """What the catalog schema leaves to the profile: that names are Python identifiers and
    templates Python expressions, or a fix blames the tool (DL003) for the profile's typo.
    Returns (where, expected, got), e.g. ("outbound[0].keyword", ...)."""
    for index, group in enumerate(groups):
        specs = [(f"outbound[{index}]", group)]
        for entry_index, entry in enumerate(group.get("functions", []) or []):
            if isinstance(entry, dict):
                specs.append((f"outbound[{index}].functions[{entry_index}]", entry))
        for name, spec in (group.get("classes", {}) or {}).items():
            specs.append((f"outbound[{index}].classes.{name}", spec))
            for method_index, method in enumerate(spec.get("methods", []) or []):
                if isinstance(method, dict):
                    specs.append((f"outbound[{index}].classes.{name}.methods[{method_index}]", method))
        for where, spec in specs:
            for key in _NAME_KEYS:
                value = spec.get(key)
                if value is not None and not (value.isidentifier() and not keyword.iskeyword(value)):
                    return f"{where}.{key}", "a Python parameter name", value
            for key, fields in _TEMPLATE_KEYS.items():
                value = spec.get(key)
                if value is not None and not is_expression_template(value, {f: "x" for f in fields}):
                    return f"{where}.{key}", "a template that fills in to one Python expression", value
    return None


def _outbound_json() -> Dict[str, Any]:
    from deadline_lint.catalog import schema as catalog  # see _client_list

    def closed(keys) -> Dict[str, Any]:
        return {"type": "object", "properties": {k: {} for k in sorted(keys)}, "additionalProperties": False}

    entry = {"anyOf": [dict(_STRING), closed(catalog._ENTRY_KEYS)]}
    group = closed(catalog._GROUP_KEYS)
    group["required"] = ["library"]
    group["properties"].update({
        "library": dict(_STRING),
        "default_timeout": {"anyOf": [{"type": "null"}, {"type": "number", "minimum": 0}]},
        "keyword": {"type": ["string", "null"]},
        "functions": {"type": "array", "items": entry},
        "classes": {"type": "object", "additionalProperties": closed(catalog._CLASS_KEYS)},
        "stubs": {"type": "array", "items": closed(catalog._STUB_KEYS)},
        "timeout_objects": {"type": "object", "additionalProperties": closed(catalog._TIMEOUT_OBJECT_KEYS)},
        "aliases": {"type": "object", "additionalProperties": {"type": "string"}},
    })
    return {"type": "array", "items": group}


_STRING = MappingProxyType({"type": "string", "pattern": r"\S"})
_CODES = MappingProxyType({"type": "array", "items": {"type": "string", "pattern": SELECTOR_PATTERN}})


def json_copy(value: Any) -> Any:
    if isinstance(value, (dict, MappingProxyType)):
        return {key: json_copy(item) for key, item in value.items()}
    return value


def _tuple(value: Any) -> Any:
    return tuple(value)


MILLISECONDS = Check(_milliseconds, lambda: {"type": "integer", "minimum": 0, "maximum": _MAX_MS}, "milliseconds")
SECONDS = Check(_positive_number, lambda: {"type": "number", "exclusiveMinimum": 0}, "seconds (> 0)")
BOOLEAN = Check(_boolean, lambda: {"type": "boolean"}, "true / false")
STRING = Check(_string, lambda: dict(_STRING), "string")
NAMES = Check(_string_list, lambda: {"type": "array", "items": dict(_STRING)}, "list of names", _tuple)
CODES = Check(_code_list, lambda: dict(_CODES), "list of rule codes", _tuple)
PATH_CODES = Check(
    _path_map, lambda: {"type": "object", "additionalProperties": dict(_CODES)}, "glob -> list of rule codes",
    lambda value: {pattern: tuple(codes) for pattern, codes in value.items()},
)
_ROLE_JSON = MappingProxyType({
    "type": "object", "additionalProperties": False,
    "properties": {role: {"type": "array", "items": dict(_STRING)} for role in BUDGET_ROLES},
})
ROLES = Check(
    _role_map, lambda: json_copy(_ROLE_JSON), "role -> list of method names",
    lambda value: {role: tuple(methods) for role, methods in value.items()},
)
TYPE_ROLES = Check(
    _type_role_map, lambda: {"type": "object", "additionalProperties": json_copy(_ROLE_JSON)},
    "type -> role -> list of method names",
    lambda value: {name: {role: tuple(m) for role, m in roles.items()} for name, roles in value.items()},
)
HTTP_STATUS = Check(_http_status, lambda: {"type": "integer", "minimum": 100, "maximum": 599}, "HTTP status code")
GRPC_STATUS = Check(_grpc_status, lambda: {"type": "string", "enum": list(GRPC_STATUS_NAMES)}, "gRPC status name")
TEMPLATE = Check(_template, lambda: {
    "type": "string", "pattern": r"\S", "not": {"pattern": r"\{(?!(?:budget|margin|edge)\})\w*\}"},
}, "expression template")
PROPAGATIONS = ("parameter", "context")


def _propagation(value: Any) -> Optional[str]:
    return None if value in PROPAGATIONS else "one of " + ", ".join(f'"{p}"' for p in PROPAGATIONS)


def _dotted_name(value: Any) -> Optional[str]:
    if isinstance(value, str) and (value == "" or all(part.isidentifier() for part in value.split("."))):
        return None
    return "a dotted name such as \"app.deadlines.remaining_seconds\" (or \"\" for none)"


PROPAGATION = Check(_propagation, lambda: {"type": "string", "enum": list(PROPAGATIONS)}, "parameter or context")
DOTTED_NAME = Check(
    _dotted_name, lambda: {"type": "string", "pattern": r"^$|^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$"}, "dotted name",
)
CLIENTS = Check(_client_list, _outbound_json, "list of client groups (catalog schema)", _tuple)
