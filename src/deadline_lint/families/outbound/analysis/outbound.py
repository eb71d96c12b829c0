"""Outbound calls: which calls leave the process, and what bounds how long they wait.

Two views of a call, both as `OutboundCall`:
- `classify_call`: the call goes over the wire (or waits on something that does), e.g.
  `requests.get(...)`, `stub.Method(...)`, `conn.fetch(...)`, `asyncio.wait_for(...)`.
- `classify_construction`: the call builds a client whose timeout bounds its later calls,
  e.g. `httpx.Client(timeout=...)`, `redis.Redis(...)`, `boto3.client("s3", config=...)`.
A factory such as `asyncpg.connect` is both: it waits (its own `timeout`) and builds a
connection (whose `command_timeout` bounds the commands).
"""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterator, Optional, Set, Tuple, cast

from deadline_lint.catalog import Catalog, ClientClass, OutboundApi, TimeoutObject
from deadline_lint.families.outbound.analysis.catalog_imports import STDLIB_MODULES, catalog_imports
from deadline_lint.families.outbound.analysis.client_types import Instance, client_types
from deadline_lint.families.outbound.analysis.outbound_facts import ForwardsTimeout
from deadline_lint.families.outbound.analysis.outbound_project import OutboundProject
from deadline_lint.families.outbound.analysis.wrappers import (
    WrapperSummary,
    calls_in,
    display_name,
    forwarded_parameter,
    forwards_kwargs,
    is_method,
    spread_into,
)
from deadline_lint.semantics.local.expressions import argument_at, is_unbounded
from deadline_lint.semantics.local.resolve import Definition, Resolver
from deadline_lint.semantics.local.scopes import Scope
from deadline_lint.support.records import dataclass

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

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

    @property
    def display_name(self) -> str:
        return self.api.qualname


MAX_HOPS = 3  # wrappers composed between a call and the library call it reaches, at most
_IN_PROGRESS = object()  # a summary being computed: a recursive chain ends here, unknown
_CUT = [0]  # how many summaries a recursive chain has cut short so far


def wrapper_summary(definition: Definition, catalog: Catalog, depth: int = 0) -> Optional[WrapperSummary]:
    """The summary of a project function whose parameter reaches an outbound call's timeout
    (composed through wrappers of wrappers); None for any other function, and for recursive
    or unresolvable chains. Cached on the function's scope."""
    if not definition.is_function or depth > MAX_HOPS:
        return None  # as deep as the text prefilter looks: a file alone gets the same answer
    facts = definition.own_scope.facts
    # Most functions are no wrapper. Found to be none with some hops left, a function is
    # none with fewer too (a chain cut shorter reaches no more), unless a recursive chain
    # cut that answer short: then it holds for its own depth only.
    none_from = cast(Optional[int], facts.get("wrapper_none_from"))  # written below only
    if none_from is not None and depth >= none_from:
        return None
    # By depth: a chain cut short deeper down must not hide a wrapper seen from nearer.
    key = f"wrapper_summary@{depth}"
    cached = facts.get(key, None)
    if cached is _IN_PROGRESS or (cached is None and key in facts and depth in facts.get("wrapper_cut_at", ())):  # type: ignore[operator]
        _CUT[0] += 1
        return None
    if key in facts:
        return cached  # type: ignore[return-value]
    facts[key] = _IN_PROGRESS
    cuts = _CUT[0]
    found = None
    try:
        found = _summarize(definition, definition.own_scope, catalog, depth)
    finally:
        facts[key] = found
    if found is None:
        if _CUT[0] == cuts:
            facts["wrapper_none_from"] = depth if none_from is None else min(depth, none_from)
        else:
            cast(Set[int], facts.setdefault("wrapper_cut_at", set())).add(depth)
    return found


def _summarize(definition: Definition, scope: Scope, catalog: Catalog, depth: int) -> Optional[WrapperSummary]:
    function, resolver = definition.node, definition.resolver
    candidates = scope.facts.get("wrapper_candidates")
    if candidates is None:  # the same at every depth: one walk of the body
        params = {p.arg for p in scope.function_params()}
        # A call that forwards nothing of the wrapper's is not the one its timeout reaches.
        candidates = [c for c in calls_in(function) if _passes_a_parameter(c, params)]
        scope.facts["wrapper_candidates"] = candidates
    if not candidates:
        return None
    stubs_possible, methods = _module_reach(resolver, catalog)
    for call in candidates:  # type: ignore[attr-defined]
        site = classify_call(call, scope, resolver, catalog, stubs_possible, methods)
        inner: Optional[WrapperSummary] = None
        if site is None:
            site, inner = _wrapper_site(call, scope, resolver, catalog, depth + 1)
        if site is None or site.api.keyword is None:
            continue
        if inner is not None:
            qualname, default, library = inner.inner_qualname, inner.inner_default, inner.inner_library
            template, imports = inner.timeout_template, inner.imports
        else:
            qualname, default, library = site.api.qualname, site.api.default_timeout, site.api.library
            template, imports = site.api.timeout_template, site.api.imports
        common = dict(
            name=display_name(function, definition.scope),
            is_method=is_method(function, definition.scope),
            inner_qualname=qualname,
            inner_default=default,
            inner_library=library,
            timeout_template=template,
            imports=imports,
        )
        if site.source == FROM_CALL and site.timeout is not None:
            forwarded = forwarded_parameter(function, scope, site.timeout)
            if forwarded is not None:
                name, position, param_default, required = forwarded
                return WrapperSummary(
                    keyword=name, position=position, default=param_default, required=required, via_kwargs=False,
                    **common,  # type: ignore[arg-type]
                )
        elif forwards_kwargs(function, call, site.api.keyword, site.api.position):
            return spread_into(site.api.keyword, inner, common)
    return None


def _module_reach(resolver: Resolver, catalog: Catalog) -> Tuple[bool, FrozenSet[str]]:
    """For the calls of a module's functions: whether a gRPC stub may be a receiver, and the
    client methods the module can reach (once per module)."""
    cached = getattr(resolver, "outbound_reach", None)
    if cached is None:
        text = getattr(resolver, "text", None)
        stubs_possible = text is None or any(p.module_suffix in text for p in catalog.stubs)
        methods = catalog.method_names if text is None else file_methods(catalog, text)
        cached = resolver.outbound_reach = (stubs_possible, methods)  # type: ignore[attr-defined]
    return cached


def _passes_a_parameter(call: ast.Call, params) -> bool:
    values = [*call.args, *(kw.value for kw in call.keywords)]
    return any(isinstance(v, ast.Name) and v.id in params for v in values)


def _wrapper_site(
    call: ast.Call, scope: Scope, resolver: Resolver, catalog: Catalog, depth: int = 0
) -> Tuple[Optional["OutboundCall"], Optional[WrapperSummary]]:
    """A call to a project wrapper seen as the outbound call it makes, and its summary: a
    function of this module, or (through the project's facts) of another module."""
    definition = resolver.definition(call.func, scope)
    api: Optional[OutboundApi]
    if definition is None:
        project = resolver.project
        remote = project.wrapper_at(call.func, scope) if isinstance(project, OutboundProject) else None
        if remote is None:
            return None, None
        summary, key = remote
        api = cast(Optional[OutboundApi], project.apis.get(key))  # type: ignore[union-attr]
        if api is None:
            api = project.apis[key] = _wrapper_api(summary)  # type: ignore[union-attr]
    else:
        if not definition.is_function:
            return None, None
        found = wrapper_summary(definition, catalog, depth)
        if found is None:
            return None, None
        summary = found
        if summary.is_method and (
            not isinstance(call.func, ast.Attribute) or resolver.project_class_of(call.func.value, scope, 0) is None
        ):
            return None, None  # not called on an instance (`Class.method(obj, ...)`): stay quiet
        facts = definition.own_scope.facts
        api = cast(Optional[OutboundApi], facts.get("wrapper_api"))  # written here only
        if api is None:
            api = facts["wrapper_api"] = _wrapper_api(summary)
    timeout = argument_at(call, summary.position, summary.keyword)
    if timeout is not None:
        return OutboundCall(call, api, timeout, FROM_CALL, api.default_timeout), summary
    if _hides_arguments(call):
        return OutboundCall(call, api, None, HIDDEN, api.default_timeout), summary
    if summary.via_kwargs:
        return OutboundCall(call, api, None, FROM_DEFAULT, summary.inner_default), summary
    if summary.required or not (isinstance(summary.default, ast.Constant) and summary.default.value is None):
        return None, None  # a number (or a constant set elsewhere) bounds it; required: the call fails
    return OutboundCall(call, api, None, FROM_DEFAULT, None), summary


def _wrapper_api(summary: WrapperSummary) -> OutboundApi:
    # Inside a message's backticks the name reads "`get_json` -> `requests.get`".
    return OutboundApi(
        qualname=f"{summary.name}` -> `{summary.inner_qualname}",
        library=summary.inner_library,
        keyword=summary.keyword,
        position=summary.position,
        default_timeout=summary.inner_default if summary.via_kwargs else None,
        timeout_template=summary.timeout_template,
        imports=summary.imports,
    )


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


def _hides_arguments(call: ast.Call) -> bool:
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
    if _hides_arguments(call):
        return OutboundCall(call, api, None, HIDDEN, api.default_timeout, blocking)
    if instance is not None:
        client = catalog.client_class(instance.qualname)
        if client is not None and (client.constructor_keyword or client.constructor_position is not None):
            source, ctor_timeout = _constructor_timeout(instance, client, resolver, catalog)
            if source != FROM_DEFAULT:
                return OutboundCall(call, api, ctor_timeout, source, api.default_timeout, blocking)
    return OutboundCall(call, api, None, FROM_DEFAULT, api.default_timeout, blocking)


def _names_project_value(qualname: str, resolver: Resolver) -> bool:
    """`SESSION.get` with `SESSION` imported from a project module: its receiver may be a
    client the project built."""
    project = resolver.project
    return project is not None and project.is_project_name(resolver, qualname)


def _stub_call_variant(func: ast.Attribute, scope: Scope, resolver: Resolver, catalog: Catalog):
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
    if _hides_arguments(constructor) or _configured_elsewhere(constructor, client):
        return HIDDEN, None
    return FROM_DEFAULT, None


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
    if _hides_arguments(call) or _configured_elsewhere(call, client):
        return OutboundCall(call, api, None, HIDDEN, api.default_timeout)
    return OutboundCall(call, api, None, FROM_DEFAULT, api.default_timeout)


def file_methods(catalog: Catalog, text: str) -> FrozenSet[str]:
    """Method names that can reach a listed client in a file with this text: those of the
    classes whose module (or, for the standard library, whose name) the text mentions."""
    by_class = catalog.cached("outbound.class_words", lambda: _class_words(catalog))
    # Each distinct word is looked for once (many classes share their module's).
    spelled = {word for word in catalog.cached("outbound.class_word_set", lambda: _word_set(by_class)) if word in text}
    methods = set()
    for words, reachable in by_class:
        if not spelled.isdisjoint(words):
            methods.update(reachable)
    return frozenset(methods)


def _word_set(by_class) -> Tuple[str, ...]:
    return tuple(sorted({word for words, _ in by_class for word in words}))


def _class_words(catalog: Catalog) -> Tuple[Tuple[Tuple[str, ...], FrozenSet[str]], ...]:
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


# -- timeout values ----------------------------------------------------------------
def may_build_timeout_object(call: ast.Call, scope: Scope, resolver: Resolver, catalog: Catalog) -> bool:
    """The first look of `timeout_object`: timeout objects are built from their module,
    never from an instance."""
    return bool(catalog.timeout_objects) and may_be_listed(call.func, scope, resolver, catalog, _NO_METHODS)


_NO_METHODS: FrozenSet[str] = frozenset()


def timeout_object(call: ast.AST, scope: Scope, resolver: Resolver, catalog: Catalog) -> Optional[TimeoutObject]:
    if not isinstance(call, ast.Call) or not may_build_timeout_object(call, scope, resolver, catalog):
        return None
    qualname = resolver.qualified_name(call.func, scope)
    return catalog.timeout_objects.get(qualname) if qualname is not None else None


def timeout_fields(call: ast.Call, spec: TimeoutObject) -> Iterator[Tuple[str, ast.expr]]:
    """The (field, value) pairs a timeout object is built with."""
    for name, position in spec.fields.items():
        value = argument_at(call, position, name)
        if value is not None:
            yield name, value


def unbounded_fields(call: ast.Call, spec: TimeoutObject, scope: Scope, resolver: Resolver):
    """The field values that make a timeout object unbounded; [] when it is bounded or when we
    cannot tell (`**kwargs`). An object built empty that means "no limit" yields [(field, None)]."""
    if _hides_arguments(call):
        return []
    given = list(timeout_fields(call, spec))
    if not given:
        return [(spec.primary_field, None)] if spec.unbounded_if_empty else []
    return [
        (name, value)
        for name, value in given
        if name in spec.unbounded_if_none and is_unbounded(value, scope, resolver)
    ]


# -- the per-file analysis rules ask ---------------------------------------------------
_DEF_NAME = re.compile(r"\bdef\s+(\w+)")


class OutboundSites:
    """Per file (`ctx.analysis(OutboundSites)`): each call's outbound views, classified once,
    in the scope where the walk meets it."""

    def __init__(self, ctx: "FileView") -> None:
        self.ctx = ctx
        # Receivers of unlisted method names only matter when a gRPC stub could be the receiver.
        self._stubs_possible = any(p.module_suffix in ctx.source.text for p in ctx.catalog.stubs)
        self._file_methods: Optional[FrozenSet[str]] = None  # of the clients this file can build
        project = ctx.resolver.project
        # The prefilter's answer (already known for a file that passed it through its
        # project): when no imported project name is or leads to a wrapper or a client, the
        # calls of this file reach none either, and only its own functions can be wrappers.
        self._project = project if isinstance(project, OutboundProject) and project.brings_clients() else None
        self._through_project = self._project is not None
        # A wrapper defined in this file must call a client this file imports (or one its
        # project brings).
        self._defines_functions = "def " in ctx.source.text and (
            self._through_project or catalog_imports(ctx.catalog)(ctx.source.text)
        )
        self._defined_names: Optional[FrozenSet[str]] = None  # of this file's functions
        self._calls: Dict[int, Optional[OutboundCall]] = {}
        self._constructions: Dict[int, Optional[OutboundCall]] = {}
        self._sites: Dict[int, Tuple[OutboundCall, ...]] = {}
        # The method names `sites` looks for (None: any), once known.
        self._first_look_methods: Optional[FrozenSet[str]] = None
        self._first_look_known = False

    def _client_methods(self) -> FrozenSet[str]:
        if self._file_methods is None:
            if self._through_project:
                # A client can arrive from a project module: any listed method may be its.
                self._file_methods = self.ctx.catalog.method_names
            else:
                self._file_methods = file_methods(self.ctx.catalog, self.ctx.source.text)
        return self._file_methods

    def _project_wrappers_possible(self, call: ast.Call) -> bool:
        """A cheap look before resolving a wrapper: the callee is a plain or dotted name, or a
        method of `self` / a project instance; the file defines a function or imports from
        the project."""
        if not (self._defines_functions or self._through_project):
            return False
        func = call.func
        # Only a function this file defines, or a wrapper its project modules define, can be
        # the wrapper: its name must match.
        if self._defined_names is None:
            # From the text, not a walk of the tree: a superset (a `def` in a string counts
            # too) that costs one regex pass.
            own = frozenset(_DEF_NAME.findall(self.ctx.source.text)) if self._defines_functions else frozenset()
            self._defined_names = own | self._project.wrapper_names() if self._project is not None else own
        final = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if final not in self._defined_names:
            return False
        while isinstance(func, ast.Attribute):
            func = func.value
        return isinstance(func, ast.Name)

    def call(self, call: ast.Call) -> Optional[OutboundCall]:
        key = id(call)
        if key not in self._calls:
            ctx = self.ctx
            self._calls[key] = classify_call(
                call, ctx.scope, ctx.resolver, ctx.catalog, self._stubs_possible, self._client_methods()
            )
        return self._calls[key]

    def construction(self, call: ast.Call) -> Optional[OutboundCall]:
        """The call builds a client whose constructor takes a timeout (`httpx.Client(...)`,
        `redis.Redis(...)`): that view of it, with api.kind == "client"; else None."""
        key = id(call)
        if key not in self._constructions:
            ctx = self.ctx
            self._constructions[key] = classify_construction(call, ctx.scope, ctx.resolver, ctx.catalog)
        return self._constructions[key]

    def sites(self, call: ast.Call) -> Tuple[OutboundCall, ...]:
        """Every view of `call` that takes a timeout: as an outbound call and as a client's
        construction (a factory such as `asyncpg.connect` is both); () for most calls."""
        key = id(call)
        sites = self._sites.get(key)
        if sites is None:
            sites = ()
            ctx = self.ctx
            # A first look: any method name at all when a gRPC stub may be the receiver.
            if not self._first_look_known:
                self._first_look_methods = (
                    None if self._stubs_possible else self._client_methods() | ctx.catalog.returning_methods
                )
                self._first_look_known = True
            methods = self._first_look_methods
            if may_be_listed(call.func, ctx.scope, ctx.resolver, ctx.catalog, methods):
                views = (self.call(call), self.construction(call))
                sites = tuple(view for view in views if view is not None)
            if not sites and self._project_wrappers_possible(call):
                wrapper, _ = _wrapper_site(call, ctx.scope, ctx.resolver, ctx.catalog)
                if wrapper is not None:
                    sites = (wrapper,)
                    self._calls[key] = wrapper
            self._sites[key] = sites
        return sites


def outbound_sites(ctx: "FileView", call: ast.Call) -> Tuple[OutboundCall, ...]:
    # Every outbound rule asks this of every call: answer a repeat from the cache directly.
    analysis = ctx.analysis(OutboundSites)
    found = analysis._sites.get(id(call))
    return found if found is not None else analysis.sites(call)


def outbound_call(ctx: "FileView", call: ast.Call) -> Optional[OutboundCall]:
    """The call as an outbound call, after the cheap first look (`outbound_sites`)."""
    return ctx.analysis(OutboundSites).call(call) if outbound_sites(ctx, call) else None


ForwardsTimeout.summarize = wrapper_summary  # the fact composes summaries as the rules do
