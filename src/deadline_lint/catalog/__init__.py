"""Built-in library knowledge, loaded from the YAML files beside this module.

Rules never name a library in code: they ask the catalog. A profile's `outbound:` section
uses the same schema and is merged over the built-in groups.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Tuple

import yaml

_HERE = Path(__file__).parent
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_GROUP_KEYS = {"library", "default_timeout", "keyword", "functions", "classes", "aliases"}
_ENTRY_KEYS = {"name", "keyword", "position", "default_timeout"}
_CLASS_KEYS = {"methods", "constructor_keyword", "constructor_position", "default_timeout"}


@dataclass(frozen=True)
class OutboundApi:
    qualname: str
    library: str
    keyword: Optional[str]  # None: the API takes no timeout at all
    position: Optional[int]  # positional index of the timeout, counting from 0
    default_timeout: Optional[float]  # None: waits forever


@dataclass(frozen=True)
class ClientClass:
    qualname: str
    library: str
    constructor_keyword: Optional[str]
    constructor_position: Optional[int]
    default_timeout: Optional[float]
    methods: Mapping[str, OutboundApi] = field(default_factory=dict)


@dataclass(frozen=True)
class Catalog:
    apis: Mapping[str, OutboundApi]
    classes: Mapping[str, ClientClass]
    aliases: Mapping[str, str]
    data: Mapping[str, Any]  # the other per-concern files, by file stem

    def canonical(self, qualname: str) -> str:
        """Map another import path of the same object to the catalog's spelling."""
        parts = qualname.split(".")
        for cut in range(len(parts), 0, -1):
            prefix = ".".join(parts[:cut])
            target = self.aliases.get(prefix)
            if target is not None:
                return ".".join([target, *parts[cut:]])
        return qualname

    @property
    def outbound_modules(self) -> FrozenSet[str]:
        """Top-level module names that any outbound API lives in: the text prefilter's words."""
        names = {q.split(".")[0] for q in list(self.apis) + list(self.classes)}
        names.update(alias.split(".")[0] for alias in self.aliases)
        return frozenset(names)


def _is_seconds(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0)


def _is_index(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0)


def _entry_problem(entry: Any) -> Optional[str]:
    if isinstance(entry, str):
        return None if entry.strip() else "a qualified name"
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        return "a qualified name or a mapping with `name`"
    if set(entry) - _ENTRY_KEYS:
        return f"entry keys among {sorted(_ENTRY_KEYS)}"
    if not _is_index(entry.get("position")):
        return "`position` as a whole number from 0"
    if not _is_seconds(entry.get("default_timeout")):
        return "`default_timeout` as seconds above 0 or null"
    return None


def _class_problem(spec: Any) -> Optional[str]:
    if not isinstance(spec, dict) or set(spec) - _CLASS_KEYS:
        return f"a mapping with keys among {sorted(_CLASS_KEYS)}"
    methods = spec.get("methods", [])
    if not isinstance(methods, list) or not all(isinstance(m, str) for m in methods):
        return "`methods` as a list of method names"
    if not _is_index(spec.get("constructor_position")):
        return "`constructor_position` as a whole number from 0"
    if not _is_seconds(spec.get("default_timeout")):
        return "`default_timeout` as seconds above 0 or null"
    return None


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
        if not _is_seconds(group.get("default_timeout")):
            return "`default_timeout` as seconds above 0 or null"
        for entry in group.get("functions", []) or []:
            problem = _entry_problem(entry)
            if problem:
                return f"each entry of `functions` to be {problem}"
        classes = group.get("classes", {}) or {}
        if not isinstance(classes, dict):
            return "`classes` as a mapping of class name to its methods"
        for spec in classes.values():
            problem = _class_problem(spec)
            if problem:
                return f"each class in `classes` to be {problem}"
        aliases = group.get("aliases", {}) or {}
        if not isinstance(aliases, dict) or not all(isinstance(v, str) for v in aliases.values()):
            return "`aliases` as a mapping of import path to canonical path"
    return None


def _build(groups: Iterable[Mapping[str, Any]], data: Mapping[str, Any]) -> Catalog:
    apis: Dict[str, OutboundApi] = {}
    classes: Dict[str, ClientClass] = {}
    aliases: Dict[str, str] = {}
    for group in groups:
        library = group["library"]
        default = group.get("default_timeout")
        keyword = group.get("keyword", "timeout")
        for entry in group.get("functions", []) or []:
            spec = {"name": entry} if isinstance(entry, str) else entry
            api = OutboundApi(
                qualname=spec["name"],
                library=library,
                keyword=spec.get("keyword", keyword),
                position=spec.get("position"),
                default_timeout=spec.get("default_timeout", default),
            )
            apis[api.qualname] = api
        for class_name, spec in (group.get("classes", {}) or {}).items():
            class_default = spec.get("default_timeout", default)
            methods = {
                method: OutboundApi(f"{class_name}.{method}", library, keyword, None, class_default)
                for method in spec.get("methods", [])
            }
            apis.update({api.qualname: api for api in methods.values()})
            classes[class_name] = ClientClass(
                qualname=class_name,
                library=library,
                constructor_keyword=spec.get("constructor_keyword"),
                constructor_position=spec.get("constructor_position"),
                default_timeout=class_default,
                methods=methods,
            )
        aliases.update(group.get("aliases", {}) or {})
    return Catalog(apis=apis, classes=classes, aliases=aliases, data=data)


@lru_cache(maxsize=None)
def _builtin_files() -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    groups: List[Dict[str, Any]] = []
    data: Dict[str, Any] = {}
    for path in sorted(_HERE.glob("*.yaml")):
        content = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
        if path.stem == "outbound":
            problem = validate_client_groups(content)
            if problem:  # a packaging bug, not a user error
                raise RuntimeError(f"{path}: expected {problem}")
            groups = content
        else:
            data[path.stem] = content
    return groups, data


def load_catalog(extra_groups: Iterable[Mapping[str, Any]] = ()) -> Catalog:
    groups, data = _builtin_files()
    return _build([*groups, *extra_groups], data)
