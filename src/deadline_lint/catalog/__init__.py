"""Built-in library knowledge, loaded from the YAML files beside this module.

Rules never name a library in code: they ask the catalog. A profile's `outbound:` section
uses the same schema (documented at the top of outbound.yaml) and is merged over the
built-in groups: a later entry with the same qualified name replaces an earlier one.
"""
from __future__ import annotations

from types import MappingProxyType
import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, Hashable, Iterable, List, Mapping, Optional, Set, Tuple, TypeVar

from deadline_lint.catalog.exceptions import (
    ExceptionVocabulary,
    build_vocabulary,
    validate_vocabulary,
)
from deadline_lint.catalog.names import canonical_name
from deadline_lint.catalog.outbound import (  # noqa: F401  (CLIENT re-exported)
    CLIENT,
    ClientClass,
    OutboundApi,
    StubPattern,
    TimeoutObject,
    as_mapping,
    inherited_value,
    outbound_api,
)
from deadline_lint.catalog.retry import (
    RetryCatalog,
    build_retry_catalog,
    validate_retry_catalog,
)
from deadline_lint.catalog.schema import CALL, WAIT, validate_client_groups  # noqa: F401  (re-exported)
from deadline_lint.catalog.sections import (
    BudgetCatalog,
    CancellationCatalog,
    build_budget_catalog,
    build_cancellation_catalog,
)
from deadline_lint.support import compiled

_HERE = Path(__file__).parent
_D = TypeVar("_D")

@dataclass(frozen=True)
class Catalog:
    apis: Mapping[str, OutboundApi]
    classes: Mapping[str, ClientClass]
    aliases: Mapping[str, str]
    data: Mapping[str, Any]  # the other per-concern files, by file stem
    factories: Mapping[str, str] = field(default_factory=dict)  # function -> class it builds
    stubs: Tuple[StubPattern, ...] = ()
    timeout_objects: Mapping[str, TimeoutObject] = field(default_factory=dict)
    method_names: FrozenSet[str] = frozenset()  # every listed method name: a cheap pre-check
    returning_methods: FrozenSet[str] = frozenset()  # methods that hand out another client
    # The last part of every listed name: `x.y.attr(...)` with any other `attr` cannot be a
    # listed call, a constructor or a timeout object (unless a gRPC stub is the receiver).
    final_names: FrozenSet[str] = frozenset()
    exceptions: ExceptionVocabulary = field(default_factory=lambda: build_vocabulary(None))  # exceptions.yaml
    retry: RetryCatalog = field(default_factory=RetryCatalog)  # retry.yaml
    budget: BudgetCatalog = field(default_factory=BudgetCatalog)  # budget.yaml
    cancellation: CancellationCatalog = field(default_factory=CancellationCatalog)  # cancellation.yaml
    _synthesized: Dict[Hashable, Any] = field(default_factory=dict, compare=False, repr=False)
    # A digest of what the catalog was built from (the built-in files' bytes and a profile's
    # groups), set by `load_catalog`; "" for a catalog built otherwise.
    inputs: str = field(default="", init=False, compare=False, repr=False)

    def cached(self, owner: Callable[..., Any], build: Any, *params: Hashable) -> Any:
        """A value derived from this catalog, built once (`build()`) and shared by its users:
        found by the code that owns it (a class or function, never a string two owners could
        both spell) and the parameters it was built for."""
        key = (owner, params)
        if key not in self._synthesized:
            self._synthesized[key] = build()
        return self._synthesized[key]

    def derived(self, build: Callable[..., _D], *args: Hashable) -> _D:
        """`build(self, *args)`, built on first use and then shared: a typed section, a text
        filter, a first look, found by the name of its class or builder. Shared because a
        prefilter tells its leaves apart by their test's identity."""
        key = (build, *args)
        if key not in self._synthesized:
            self._synthesized[key] = build(self, *args)
        found: _D = self._synthesized[key]
        return found

    def canonical(self, qualname: str) -> str:
        """Map another import path of the same object to the catalog's spelling."""
        return canonical_name(self.aliases, qualname)

    @property
    def outbound_modules(self) -> FrozenSet[str]:
        """Top-level module names that any outbound API lives in."""
        return self.derived(_outbound_modules)

    # -- clients -----------------------------------------------------------------
    def client_class(self, qualname: str) -> Optional[ClientClass]:
        """A listed class, or a generated gRPC stub class matched by its module's suffix."""
        found = self.classes.get(qualname)
        if found is not None or not self.stubs:
            return found
        key = ("stub", qualname)
        if key not in self._synthesized:
            self._synthesized[key] = self._stub_class(qualname)
        return self._synthesized[key]

    def _stub_class(self, qualname: str) -> Optional[ClientClass]:
        for pattern in self.stubs:
            if pattern.matches(qualname):
                return ClientClass(qualname, pattern.library, None, None, pattern.default_timeout, any_method=True)
        return None

    def constructed_class(self, qualname: str) -> Optional[ClientClass]:
        """The client class a call to `qualname` builds: the class itself or a factory."""
        built = self.factories.get(qualname)
        return self.client_class(built if built is not None else qualname)

    def method_api(self, client: ClientClass, method: str) -> Optional[OutboundApi]:
        api = client.methods.get(method)
        if api is not None or not client.any_method or method.startswith("_"):
            return api
        key = ("method", client.qualname, method)
        if key not in self._synthesized:
            pattern = next(p for p in self.stubs if p.matches(client.qualname))
            self._synthesized[key] = OutboundApi(
                f"{client.qualname}.{method}",
                client.library,
                pattern.keyword,
                pattern.position,
                pattern.default_timeout,
            )
        return self._synthesized[key]

    def stub_attribute(self, client: ClientClass, attribute: str) -> Optional[bool]:
        """For `stub.Method.<attribute>(...)`: True if it waits, False if it starts a future,
        None if the attribute is not a way of calling the method."""
        if not client.any_method:
            return None
        for pattern in self.stubs:
            if pattern.matches(client.qualname):
                if attribute in pattern.blocking_attributes:
                    return True
                if attribute in pattern.future_attributes:
                    return False
        return None

    def constructor_api(self, client: ClientClass, called: str) -> OutboundApi:
        """The constructor (or factory `called`) seen as an API: its timeout bounds the client."""
        key = ("constructor", client.qualname, called)
        if key not in self._synthesized:
            direct = called == client.qualname
            self._synthesized[key] = OutboundApi(
                called,
                client.library,
                client.constructor_keyword,
                client.constructor_position if direct else None,  # factories: by keyword only
                client.default_timeout,
                kind=CLIENT,
                timeout_template=client.timeout_template,
                imports=client.imports,
                checked=client.checked,
            )
        return self._synthesized[key]


# -- building ----------------------------------------------------------------------
def _build(groups: Iterable[Mapping[str, Any]], data: Mapping[str, Any]) -> Catalog:
    apis: Dict[str, OutboundApi] = {}
    classes: Dict[str, ClientClass] = {}
    aliases: Dict[str, str] = {}
    factories: Dict[str, str] = {}
    stubs: List[StubPattern] = []
    timeout_objects: Dict[str, TimeoutObject] = {}
    for group in groups:
        library = group["library"]
        base = {
            "keyword": group.get("keyword", "timeout"),
            "default_timeout": group.get("default_timeout"),
            "timeout_template": group.get("timeout_template", "{timeout}"),
            "imports": group.get("imports", []),
            "headers_keyword": group.get("headers_keyword"),
        }
        for entry in group.get("functions", []) or []:
            spec = as_mapping(entry)
            apis[spec["name"]] = outbound_api(spec, spec["name"], library, base)
        for class_name, spec in (group.get("classes", {}) or {}).items():
            class_base = dict(base)
            class_base["default_timeout"] = inherited_value(spec, "default_timeout", base["default_timeout"])
            class_base["keyword"] = inherited_value(spec, "keyword", base["keyword"])
            methods: Dict[str, OutboundApi] = {}
            returns: Dict[str, Tuple[str, bool]] = {}
            for method in spec.get("methods", []) or []:
                method_spec = as_mapping(method)
                name = method_spec["name"]
                if method_spec.get("returns"):
                    returns[name] = (method_spec["returns"], bool(method_spec.get("inherits_timeout", False)))
                    continue  # a method that hands out another client is not itself a call
                methods[name] = outbound_api(method_spec, f"{class_name}.{name}", library, class_base)
            apis.update({api.qualname: api for api in methods.values()})
            classes[class_name] = ClientClass(
                qualname=class_name,
                library=library,
                constructor_keyword=spec.get("constructor_keyword"),
                constructor_position=spec.get("constructor_position"),
                default_timeout=class_base["default_timeout"],
                methods=methods,
                checked=bool(spec.get("checked", False)),
                none_is_default=bool(spec.get("none_is_default", False)),
                configured_by=frozenset(spec.get("configured_by", []) or []),
                returns=returns,
                attributes=dict(spec.get("attributes", {}) or {}),
                timeout_template=base["timeout_template"],
                imports=tuple(base["imports"] or ()),
            )
            for factory in spec.get("factories", []) or []:
                factories[factory] = class_name
        for spec in group.get("stubs", []) or []:
            stubs.append(
                StubPattern(
                    library=library,
                    module_suffix=spec["module_suffix"],
                    class_suffix=spec["class_suffix"],
                    keyword=base["keyword"],
                    position=spec.get("position"),
                    default_timeout=base["default_timeout"],
                    blocking_attributes=frozenset(spec.get("blocking_attributes", []) or []),
                    future_attributes=frozenset(spec.get("future_attributes", []) or []),
                )
            )
        for name, spec in (group.get("timeout_objects", {}) or {}).items():
            fields = dict(spec["fields"])
            timeout_objects[name] = TimeoutObject(
                qualname=name,
                library=library,
                fields=fields,
                unbounded_if_none=frozenset(spec.get("unbounded_if_none", list(fields))),
                unbounded_if_empty=bool(spec.get("unbounded_if_empty", False)),
            )
        aliases.update(group.get("aliases", {}) or {})
    method_names: Set[str] = set()
    returning: Set[str] = set()
    for client in classes.values():
        method_names.update(client.methods)
        returning.update(client.returns)
    method_names.update(returning)
    return Catalog(
        apis=apis,
        classes=classes,
        aliases=aliases,
        data=data,
        factories=factories,
        stubs=tuple(stubs),
        timeout_objects=timeout_objects,
        method_names=frozenset(method_names),
        returning_methods=frozenset(returning),
        final_names=frozenset(
            name.rpartition(".")[2] for name in [*apis, *classes, *factories, *timeout_objects, *aliases]
        )
        | frozenset(method_names),
        exceptions=_builtin_vocabulary(),
        retry=_builtin_retry(),
        budget=_builtin_budget(),
        cancellation=_builtin_cancellation(),
    )


def _validate_groups(content: Any) -> Optional[str]:
    """A file of library groups (queues.yaml): a list of mappings, each naming its library;
    the family that reads it checks the rest."""
    if isinstance(content, list) and all(isinstance(g, dict) and "library" in g for g in content):
        return None
    return "a list of library groups"


def _outbound_modules(catalog: Catalog) -> FrozenSet[str]:
    names = {q.split(".")[0] for q in [*catalog.apis, *catalog.classes, *catalog.factories, *catalog.timeout_objects]}
    names.update(alias.split(".")[0] for alias in catalog.aliases)
    return frozenset(names)


_VALIDATORS = MappingProxyType(
    {"exceptions": validate_vocabulary, "retry": validate_retry_catalog, "queues": _validate_groups}
)


@lru_cache(maxsize=None)
def _builtin_files() -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    groups: List[Dict[str, Any]] = []
    data: Dict[str, Any] = {}
    paths = sorted(_HERE.glob("*.yaml"))
    for stem, content in compiled.documents(paths, _parse_builtin, lambda kept: _valid_builtin(paths, kept)):
        if stem == "outbound":
            groups = content
        else:
            data[stem] = content
    return groups, data


def _parse_builtin(files: List[Tuple[Path, bytes]]) -> "compiled.Documents":
    """Each built-in file parsed and checked against its schema (a problem is a packaging bug,
    not a user error)."""
    # Deferred: a check that reads the kept documents (the pre-commit case) never loads PyYAML.
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    parsed: "compiled.Documents" = []
    for path, raw in files:
        content = yaml.load(raw.decode("utf-8"), Loader=loader)
        problem = _problem(path.stem, content)
        if problem:
            raise RuntimeError(f"{path}: expected {problem}")
        parsed.append((path.stem, content))
    return parsed


def _problem(stem: str, content: Any) -> Optional[str]:
    validate = validate_client_groups if stem == "outbound" else _VALIDATORS.get(stem)
    if validate is None:  # a section without a schema of its own is at least a mapping
        return None if isinstance(content, dict) else "a mapping"
    return validate(content)


def _valid_builtin(paths: List[Path], kept: "compiled.Documents") -> bool:
    """What a cache holds for the built-in files: one (stem, document) per file, in order, each
    valid against its schema, as `_parse_builtin` would have returned it."""
    if len(kept) != len(paths):
        return False
    for path, document in zip(paths, kept):
        if not (isinstance(document, tuple) and len(document) == 2 and document[0] == path.stem):
            return False
        if _problem(path.stem, document[1]):
            return False
    return True


@lru_cache(maxsize=None)
def _builtin_vocabulary() -> ExceptionVocabulary:
    return build_vocabulary(_builtin_files()[1].get("exceptions"))


@lru_cache(maxsize=None)
def _builtin_retry() -> RetryCatalog:
    return build_retry_catalog(_builtin_files()[1].get("retry"))


@lru_cache(maxsize=None)
def _builtin_budget() -> BudgetCatalog:
    return build_budget_catalog(_builtin_files()[1].get("budget"))


@lru_cache(maxsize=None)
def _builtin_cancellation() -> CancellationCatalog:
    return build_cancellation_catalog(_builtin_files()[1].get("cancellation"))


@lru_cache(maxsize=None)
def _builtin_digest() -> str:
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(_HERE.glob("*.yaml")):
        data = path.read_bytes()
        digest.update(b"\0%s\0%d\0" % (path.name.encode(), len(data)))
        digest.update(data)
    return digest.hexdigest()


def load_catalog(extra_groups: Iterable[Mapping[str, Any]] = ()) -> Catalog:
    groups, data = _builtin_files()
    extra = list(extra_groups)
    built = _build([*groups, *extra], data)
    # The same inputs build the same catalog in this build of the tool (whatever is stored
    # under a digest lives in a folder named by the tool's own fingerprint).
    extra_text = json.dumps(extra, sort_keys=True, default=repr)
    inputs = hashlib.blake2b(f"{_builtin_digest()}\0{extra_text}".encode(), digest_size=16).hexdigest()
    object.__setattr__(built, "inputs", inputs)
    return built
