"""Outbound calls: which calls leave the process, and what bounds how long they wait.

Two views of a call, both as `OutboundCall`:
- `classify_call`: the call goes over the wire (or waits on something that does), e.g.
  `requests.get(...)`, `stub.Method(...)`, `conn.fetch(...)`, `asyncio.wait_for(...)`.
- `classify_construction`: the call builds a client whose timeout bounds its later calls,
  e.g. `httpx.Client(timeout=...)`, `redis.Redis(...)`, `boto3.client("s3", config=...)`.
A factory such as `asyncpg.connect` is both: it waits (its own `timeout`) and builds a
connection (whose `command_timeout` bounds the commands).

A call to a project function that wraps one is classified by `wrapper_sites.py`; the
per-file answers rules ask for are `outbound.py`'s.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Dict, FrozenSet, Optional, Set, Tuple

from deadline_lint.catalog import Catalog, ClientClass, OutboundApi
from deadline_lint.families.outbound.analysis.catalog_imports import STDLIB_MODULES
from deadline_lint.families.outbound.analysis.client_types import Instance, client_types
from deadline_lint.semantics.local.expressions import argument_at
from deadline_lint.semantics.local.resolve import Resolver
from deadline_lint.semantics.local.scopes import Scope

# Where the effective timeout of a call comes from.
FROM_CALL = "call"  # passed to the call itself
FROM_CONSTRUCTOR = "constructor"  # passed when the client object was built
FROM_DEFAULT = "default"  # nothing passed: the library default applies
HIDDEN = "hidden"  # **kwargs or *args might carry it: we cannot tell


@dataclass(frozen=True)
class OutboundCall:
    node: ast.Call
    api: OutboundApi
    timeout: Optional[ast.expr]  # the expression that sets the timeout, if any
    source: str  # FROM_CALL / FROM_CONSTRUCTOR / FROM_DEFAULT / HIDDEN
    default_timeout: Optional[float]  # what the library does when nothing is passed
    blocking: bool = True  # False: the call starts and returns a future at once
    # FROM_DEFAULT through a receiver that may hold one of several clients: the one built
    # here without a timeout (`session or aiohttp.ClientSession()`)
    built: Optional[ast.Call] = None
    # FROM_DEFAULT through a parameter every project caller passes a client built without a
    # timeout: `passed_clients.Passed`, which names them
    passed: Optional[object] = None

    @property
    def display_name(self) -> str:
        return self.api.qualname


# Per listed class: the words a file using it spells, and the method names it then reaches.
ClassWords = Tuple[Tuple[Tuple[str, ...], FrozenSet[str]], ...]


def may_be_listed(
    func: ast.expr, scope: Scope, resolver: Resolver, catalog: Catalog, methods: Optional[FrozenSet[str]]
) -> bool:
    """A cheap first look, true for every call the catalog could know. `name(...)` and
    `module.attr(...)` need an imported name at their head; `obj.attr(...)` on an instance
    needs `attr` among `methods` (the methods of the clients the file can build; None: any
    name, as when a gRPC stub may be the receiver). Most calls (`self.helper()`,
    `items.append(x)`, `len(x)`) stop here."""
    if isinstance(func, ast.Attribute):
        if methods is None or func.attr in methods:
            return True
        if func.attr not in catalog.final_names:
            return False
        head = func.value
        while isinstance(head, ast.Attribute):
            head = head.value
        return isinstance(head, ast.Name) and head.id in resolver.catalog_imports(scope)
    if isinstance(func, ast.Name):
        return func.id in resolver.catalog_imports(scope)
    return False


def hides_arguments(call: ast.Call) -> bool:
    return any(kw.arg is None for kw in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args)


def classify_call(
    call: ast.Call,
    scope: Scope,
    resolver: Resolver,
    catalog: Catalog,
    stubs_possible: bool = True,
    methods: Optional[FrozenSet[str]] = None,
) -> Optional[OutboundCall]:
    """An OutboundCall for calls the catalog knows; None for everything else.
    `stubs_possible=False` (the file names no stub module) and `methods` (the method names
    of the clients this file can build, see `file_methods`) let most calls be skipped
    without resolving their receiver: the common case, and the costly one."""
    func = call.func
    if not may_be_listed(func, scope, resolver, catalog, None if stubs_possible and catalog.stubs else methods):
        return None
    qualname = resolver.qualified_name(func, scope)
    instance = None
    blocking = True
    api: Optional[OutboundApi] = None
    if qualname is not None:
        api = catalog.apis.get(qualname)
    through = qualname is None or _names_project_value(qualname, resolver)  # `SESSION.get`, SESSION imported
    if api is None and isinstance(func, ast.Attribute) and through:
        if func.attr in catalog.method_names or (stubs_possible and catalog.stubs):
            instance = client_types(resolver).instance(func.value, scope)
            if instance is not None and func.attr in instance.overridden:
                instance = None  # a project subclass's own method, not the library's
            client = catalog.client_class(instance.qualname) if instance is not None else None
            if client is not None:
                api = catalog.method_api(client, func.attr)
        if api is None and stubs_possible and catalog.stubs and isinstance(func.value, ast.Attribute):
            instance, api, blocking = _stub_call_variant(func, scope, resolver, catalog)
    if api is None:
        return None
    timeout = argument_at(call, api.position, api.keyword) if api.keyword else None
    if timeout is not None:
        return OutboundCall(call, api, timeout, FROM_CALL, api.default_timeout, blocking)
    if hides_arguments(call):
        return OutboundCall(call, api, None, HIDDEN, api.default_timeout, blocking)
    if instance is not None:
        client = catalog.client_class(instance.qualname)
        if client is not None and (client.constructor_keyword or client.constructor_position is not None):
            source, ctor_timeout = _constructor_timeout(instance, client, resolver, catalog)
            if source == HIDDEN and instance.constructor is None and instance.built:
                source, built = _built_without_timeout(instance, client, call)
                if built is not None:
                    return OutboundCall(call, api, None, source, api.default_timeout, blocking, built)
            if source == HIDDEN and instance.passed is not None:
                passed = instance.passed
                return OutboundCall(call, api, None, FROM_DEFAULT, api.default_timeout, blocking, passed=passed)
            if source != FROM_DEFAULT:
                return OutboundCall(call, api, ctor_timeout, source, api.default_timeout, blocking)
    passed = instance.passed if instance is not None else None
    return OutboundCall(call, api, None, FROM_DEFAULT, api.default_timeout, blocking, passed=passed)


def _names_project_value(qualname: str, resolver: Resolver) -> bool:
    """`SESSION.get` with `SESSION` imported from a project module: its receiver may be a
    client the project built."""
    project = resolver.project
    return project is not None and project.is_project_name(resolver, qualname)


def _stub_call_variant(
    func: ast.Attribute, scope: Scope, resolver: Resolver, catalog: Catalog
) -> Tuple[Optional[Instance], Optional[OutboundApi], bool]:
    """`stub.Method.future(...)` / `stub.Method.with_call(...)`: the stub method, called."""
    method = func.value
    assert isinstance(method, ast.Attribute)
    instance = client_types(resolver).instance(method.value, scope)
    client = catalog.client_class(instance.qualname) if instance is not None else None
    if client is None:
        return None, None, True
    blocking = catalog.stub_attribute(client, func.attr)
    if blocking is None:
        return None, None, True
    return instance, catalog.method_api(client, method.attr), blocking


def _constructor_timeout(
    instance: Instance, client: ClientClass, resolver: Resolver, catalog: Catalog
) -> Tuple[str, Optional[ast.expr]]:
    """Where the timeout a client was built with comes from, for calls made through it."""
    constructor = instance.constructor
    if constructor is None:
        # Built elsewhere (a parameter, several assignments): maybe with a timeout.
        return HIDDEN, None
    position = client.constructor_position if instance.called == client.qualname else None
    ctor_timeout = argument_at(constructor, position, client.constructor_keyword)
    if ctor_timeout is not None and not _means_default(ctor_timeout, client):
        return FROM_CONSTRUCTOR, ctor_timeout
    if hides_arguments(constructor) or _configured_elsewhere(constructor, client):
        return HIDDEN, None
    return FROM_DEFAULT, None


def built_without_timeout(instance: Instance, resolver: Resolver, catalog: Catalog) -> bool:
    """The instance's one constructor builds a client with no timeout (what a call through it
    waits is the library's default)."""
    client = catalog.client_class(instance.qualname)
    if client is None or instance.constructor is None:
        return False
    if not (client.constructor_keyword or client.constructor_position is not None):
        return False
    return _constructor_timeout(instance, client, resolver, catalog)[0] == FROM_DEFAULT


def first_built_without_timeout(instance: Instance, catalog: Catalog) -> Optional[ast.Call]:
    """Of a receiver that may hold one of several clients built here, the first built without
    a timeout, when none built here is known to set one (what a call through it may wait is
    the library's default); None otherwise."""
    client = catalog.client_class(instance.qualname)
    if client is None or not instance.built:
        return None
    if not (client.constructor_keyword or client.constructor_position is not None):
        return None
    source, built = _built_without_timeout(instance, client, instance.built[0])
    return built if source == FROM_DEFAULT else None


def _built_without_timeout(
    instance: Instance, client: ClientClass, call: ast.Call
) -> Tuple[str, Optional[ast.Call]]:
    """A receiver that may hold one of several clients: FROM_DEFAULT with the one built here
    without a timeout (the last before the call, else the first), when none built here is
    known to set one (the others, a parameter or a name, are not known to: an injected
    client is the caller's to bound, the fallback built here is this code's)."""
    for constructor in instance.built:
        timeout = argument_at(constructor, client.constructor_position, client.constructor_keyword)
        if timeout is not None and not _means_default(timeout, client):
            return HIDDEN, None
        if hides_arguments(constructor) or _configured_elsewhere(constructor, client):
            return HIDDEN, None
    before = [c for c in instance.built if c.lineno <= call.lineno]
    return FROM_DEFAULT, max(before, key=lambda c: c.lineno) if before else instance.built[0]


def _means_default(timeout: ast.expr, client: ClientClass) -> bool:
    """`aiohttp.ClientSession(timeout=None)` keeps aiohttp's default: not an unbounded client."""
    return client.none_is_default and isinstance(timeout, ast.Constant) and timeout.value is None


def _configured_elsewhere(call: ast.Call, client: ClientClass) -> bool:
    return bool(client.configured_by) and any(kw.arg in client.configured_by for kw in call.keywords)


def classify_construction(call: ast.Call, scope: Scope, resolver: Resolver, catalog: Catalog) -> Optional[OutboundCall]:
    """The construction of a client whose constructor takes a timeout, seen as a call with
    api.kind == CLIENT; None for every other call."""
    func = call.func
    if not may_be_listed(func, scope, resolver, catalog, catalog.returning_methods):
        return None
    qualname = resolver.qualified_name(func, scope)
    client: Optional[ClientClass] = None
    called = qualname
    if qualname is not None:
        client = catalog.constructed_class(qualname)
    elif isinstance(func, ast.Attribute) and func.attr in catalog.returning_methods:
        built = client_types(resolver).instance(call, scope)  # `session.client("s3", config=...)`
        if built is not None and built.constructor is call:
            client = catalog.client_class(built.qualname)
            called = built.called
    if client is None or client.constructor_keyword is None or called is None:
        return None
    api = catalog.constructor_api(client, called)
    timeout = argument_at(call, api.position, api.keyword)
    if timeout is not None and not _means_default(timeout, client):
        return OutboundCall(call, api, timeout, FROM_CALL, api.default_timeout)
    if hides_arguments(call) or _configured_elsewhere(call, client):
        return OutboundCall(call, api, None, HIDDEN, api.default_timeout)
    return OutboundCall(call, api, None, FROM_DEFAULT, api.default_timeout)


def file_methods(catalog: Catalog, text: str) -> FrozenSet[str]:
    """Method names that can reach a listed client in a file with this text: those of the
    classes whose module (or, for the standard library, whose name) the text mentions."""
    by_class = catalog.derived(_class_words)
    # Each distinct word is looked for once (many classes share their module's).
    spelled = {word for word in catalog.derived(_word_set) if word in text}
    methods: Set[str] = set()
    for words, reachable in by_class:
        if not spelled.isdisjoint(words):
            methods.update(reachable)
    return frozenset(methods)


def _word_set(catalog: Catalog) -> Tuple[str, ...]:
    return tuple(sorted({word for words, _ in catalog.derived(_class_words) for word in words}))


def _class_words(catalog: Catalog) -> ClassWords:
    """Per listed class, once per catalog: the words a file using it spells and the method
    names it then makes reachable."""
    built_by: Dict[str, Set[str]] = {}
    for factory, built in catalog.factories.items():
        built_by.setdefault(built, set()).add(mention_word(factory))
    return tuple(
        (
            tuple(sorted({mention_word(client.qualname), *built_by.get(client.qualname, ())})),
            frozenset(client.methods) | frozenset(client.returns),
        )
        for client in catalog.classes.values()
    )




def mention_word(qualname: str) -> str:
    """A word every file that uses `qualname` spells: its top-level module, or, for the
    standard library (imported everywhere), the object's own name."""
    parts = qualname.split(".")
    return parts[-1] if parts[0] in STDLIB_MODULES else parts[0]
