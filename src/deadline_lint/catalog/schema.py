"""The outbound schema's validator: what a client group (built in, or from a profile's
`outbound:`) may say, and one line on what was expected when it says something else.
The schema itself is documented at the top of outbound.yaml."""
from __future__ import annotations

from typing import AbstractSet, Any, Mapping, Optional, Tuple

CALL, WAIT = "call", "wait"  # the kinds a function entry may declare

_GROUP_KEYS = frozenset({
    "library", "default_timeout", "keyword", "timeout_template", "imports", "headers_keyword",
    "functions", "classes", "stubs", "timeout_objects", "aliases",
})
_ENTRY_KEYS = frozenset({
    "name", "keyword", "position", "default_timeout", "kind", "wraps", "wrap", "imports", "headers_position",
})
_METHOD_KEYS = frozenset(
    {"name", "keyword", "position", "default_timeout", "returns", "inherits_timeout", "headers_position"}
)
_CLASS_KEYS = frozenset({
    "methods", "constructor_keyword", "constructor_position", "default_timeout", "keyword", "checked",
    "factories", "configured_by", "none_is_default", "attributes",
})
_STUB_KEYS = frozenset({"module_suffix", "class_suffix", "position", "blocking_attributes", "future_attributes"})
_TIMEOUT_OBJECT_KEYS = frozenset({"fields", "unbounded_if_none", "unbounded_if_empty"})


def _is_seconds(value: Any) -> bool:
    # 0: the call does not wait at all unless given a timeout (RQ's `Job.latest_result`).
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0)


def _is_index(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


def is_names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def _is_optional_name(value: Any) -> bool:
    return value is None or (isinstance(value, str) and bool(value.strip()))


def _template_problem(value: Any, fields: Tuple[str, ...]) -> Optional[str]:
    if not isinstance(value, str):
        return "a string"
    try:
        value.format(**{name: "x" for name in fields})
    except (KeyError, IndexError, ValueError):
        return f"a template using only {', '.join('{' + f + '}' for f in fields)}"
    return None


def _common_problem(spec: Mapping[str, Any]) -> Optional[str]:
    """Checks shared by groups, entries, methods and classes."""
    if not _is_optional_name(spec.get("keyword")):
        return "`keyword` as a parameter name or null"
    for key in ("position", "constructor_position", "wraps", "headers_position"):
        if not _is_index(spec.get(key)):
            return f"`{key}` as a whole number from 0"
    if not _is_seconds(spec.get("default_timeout")):
        return "`default_timeout` as seconds from 0 (0: no wait unless given a timeout) or null"
    for key in ("imports", "factories", "configured_by"):
        if key in spec and not is_names(spec[key]):
            return f"`{key}` as a list of names"
    for key in ("checked", "inherits_timeout", "unbounded_if_empty", "none_is_default"):
        if key in spec and not isinstance(spec[key], bool):
            return f"`{key}` as true or false"
    return None


def _entry_problem(entry: Any, allowed: AbstractSet[str] = _ENTRY_KEYS) -> Optional[str]:
    if isinstance(entry, str):
        return None if entry.strip() else "a qualified name"
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        return "a qualified name or a mapping with `name`"
    if set(entry) - allowed:
        return f"entry keys among {sorted(allowed)}"
    if entry.get("kind", CALL) not in (CALL, WAIT):
        return "`kind` as call or wait"
    if entry.get("kind") == WAIT and entry.get("wraps") is None:
        return "`wraps` (the argument it bounds) for kind wait"
    if "wrap" in entry:
        problem = _template_problem(entry["wrap"], ("call", "timeout"))
        if problem:
            return f"`wrap` as {problem}"
    if "returns" in entry and not _is_optional_name(entry["returns"]):
        return "`returns` as a class name"
    return _common_problem(entry)


def _class_problem(spec: Any) -> Optional[str]:
    if not isinstance(spec, dict) or set(spec) - _CLASS_KEYS:
        return f"a mapping with keys among {sorted(_CLASS_KEYS)}"
    methods = spec.get("methods", []) or []
    if not isinstance(methods, list):
        return "`methods` as a list of method names"
    for method in methods:
        problem = _entry_problem(method, _METHOD_KEYS)
        if problem:
            return f"`methods` entries as method names or mappings ({problem})"
    if not _is_optional_name(spec.get("constructor_keyword")):
        return "`constructor_keyword` as a parameter name or null"
    attributes = spec.get("attributes", {}) or {}
    if not isinstance(attributes, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in attributes.items()
    ):
        return "`attributes` as a mapping of attribute name to client class"
    return _common_problem(spec)


def _stub_problem(spec: Any) -> Optional[str]:
    if not isinstance(spec, dict) or set(spec) - _STUB_KEYS:
        return f"a mapping with keys among {sorted(_STUB_KEYS)}"
    if not (isinstance(spec.get("module_suffix"), str) and isinstance(spec.get("class_suffix"), str)):
        return "`module_suffix` and `class_suffix` as strings"
    if not _is_index(spec.get("position")):
        return "`position` as a whole number from 0"
    for key in ("blocking_attributes", "future_attributes"):
        if key in spec and not is_names(spec[key]):
            return f"`{key}` as a list of names"
    return None


def _timeout_object_problem(spec: Any) -> Optional[str]:
    if not isinstance(spec, dict) or set(spec) - _TIMEOUT_OBJECT_KEYS:
        return f"a mapping with keys among {sorted(_TIMEOUT_OBJECT_KEYS)}"
    fields = spec.get("fields")
    if not isinstance(fields, dict) or not fields or not all(_is_index(v) for v in fields.values()):
        return "`fields` as a mapping of argument name to positional index (or null)"
    unbounded = spec.get("unbounded_if_none", list(fields))
    if not is_names(unbounded) or set(unbounded) - set(fields):
        return "`unbounded_if_none` as a list of names from `fields`"
    return _common_problem(spec)


def validate_client_groups(groups: Any) -> Optional[str]:
    """What was expected, or None when `groups` follows the outbound schema."""
    if not isinstance(groups, list):
        return "a list of client groups (library, default_timeout, keyword, functions, classes)"
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("library"), str):
            return "each client group to be a mapping with a `library` name"
        unknown = set(group) - _GROUP_KEYS
        if unknown:
            return f"client group keys among {sorted(_GROUP_KEYS)}, not {sorted(unknown)}"
        problem = _common_problem(group)
        if problem:
            return problem
        if "timeout_template" in group:
            problem = _template_problem(group["timeout_template"], ("timeout",))
            if problem:
                return f"`timeout_template` as {problem}"
        if not _is_optional_name(group.get("headers_keyword")):
            return "`headers_keyword` as a parameter name or null"
        functions = group.get("functions", []) or []
        if not isinstance(functions, list):
            return "`functions` as a list of entries"
        for entry in functions:
            problem = _entry_problem(entry)
            if problem:
                return f"each entry of `functions` to be {problem}"
        for key, check, what in (
            ("classes", _class_problem, "class"),
            ("timeout_objects", _timeout_object_problem, "timeout object"),
        ):
            specs = group.get(key, {}) or {}
            if not isinstance(specs, dict):
                return f"`{key}` as a mapping of qualified name to its description"
            for spec in specs.values():
                problem = check(spec)
                if problem:
                    return f"each {what} in `{key}` to be {problem}"
        stubs = group.get("stubs", []) or []
        if not isinstance(stubs, list):
            return "`stubs` as a list of stub patterns"
        for spec in stubs:
            problem = _stub_problem(spec)
            if problem:
                return f"each entry of `stubs` to be {problem}"
        aliases = group.get("aliases", {}) or {}
        if not isinstance(aliases, dict) or not all(isinstance(v, str) for v in aliases.values()):
            return "`aliases` as a mapping of import path to canonical path"
    return None
