"""Project wrappers seen as outbound calls: `get_json(url, timeout=t)` where `get_json`
passes its `timeout` on to `requests.get`. A wrapper's summary (`wrappers.py` reads its
parameters and body) is composed here with the classification of the calls it makes, through
wrappers of wrappers up to `MAX_HOPS`, and cached on the function's scope."""
from __future__ import annotations

import ast
from typing import AbstractSet, FrozenSet, List, Optional, Set, Tuple, cast

from deadline_lint.catalog import Catalog, OutboundApi
from deadline_lint.families.outbound.analysis.outbound_calls import (
    FROM_CALL,
    FROM_DEFAULT,
    HIDDEN,
    OutboundCall,
    classify_call,
    file_methods,
    hides_arguments,
)
from deadline_lint.families.outbound.analysis.outbound_facts import MODULE_TEXT, ForwardsTimeout
from deadline_lint.families.outbound.analysis.outbound_project import OutboundProject
from deadline_lint.families.outbound.analysis.wrappers import (
    SummaryCommon,
    WrapperSummary,
    calls_in,
    display_name,
    forwarded_parameter,
    forwards_kwargs,
    is_method,
    spread_into,
)
from deadline_lint.semantics.local.declared import FUNCTION_DEFS, is_number
from deadline_lint.semantics.local.expressions import argument_at
from deadline_lint.semantics.local.resolve import Definition, Resolver
from deadline_lint.semantics.local.scopes import Scope
from deadline_lint.semantics.session import current

MAX_HOPS = 3  # wrappers composed between a call and the library call it reaches, at most
_IN_PROGRESS = object()  # a summary being computed: a recursive chain ends here, unknown


class Cuts:
    """How many summaries a recursive chain has cut short so far, in this run."""

    def __init__(self) -> None:
        self.count = 0


_NO_CUTS: FrozenSet[int] = frozenset()


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
    if cached is _IN_PROGRESS or (
        cached is None and key in facts and depth in cast(AbstractSet[int], facts.get("wrapper_cut_at", _NO_CUTS))
    ):
        current().state(Cuts, lasting=True).count += 1
        return None
    if key in facts:
        return cast(Optional[WrapperSummary], cached)  # written below only
    facts[key] = _IN_PROGRESS
    counted = current().state(Cuts, lasting=True)
    cuts = counted.count
    found = None
    try:
        found = _summarize(definition, definition.own_scope, catalog, depth)
    finally:
        facts[key] = found
    if found is None:
        if counted.count == cuts:
            facts["wrapper_none_from"] = depth if none_from is None else min(depth, none_from)
        else:
            cast(Set[int], facts.setdefault("wrapper_cut_at", set())).add(depth)
    return found


def _summarize(definition: Definition, scope: Scope, catalog: Catalog, depth: int) -> Optional[WrapperSummary]:
    function, resolver = definition.node, definition.resolver
    if not isinstance(function, FUNCTION_DEFS):
        return None  # `wrapper_summary` asks of functions only
    candidates = cast(Optional[List[ast.Call]], scope.facts.get("wrapper_candidates"))  # written here only
    if candidates is None:  # the same at every depth: one walk of the body
        params = {p.arg for p in scope.function_params()}
        # A call that forwards nothing of the wrapper's is not the one its timeout reaches.
        candidates = [c for c in calls_in(function) if _passes_a_parameter(c, params)]
        scope.facts["wrapper_candidates"] = candidates
    if not candidates:
        return None
    stubs_possible, methods = _module_reach(resolver, catalog)
    for call in candidates:
        site = classify_call(call, scope, resolver, catalog, stubs_possible, methods)
        inner: Optional[WrapperSummary] = None
        if site is None:
            site, inner = wrapper_site(call, scope, resolver, catalog, depth + 1)
        if site is None or site.api.keyword is None:
            continue
        if inner is not None:
            qualname, default, library = inner.inner_qualname, inner.inner_default, inner.inner_library
            template, imports = inner.timeout_template, inner.imports
        else:
            qualname, default, library = site.api.qualname, site.api.default_timeout, site.api.library
            template, imports = site.api.timeout_template, site.api.imports
        common = SummaryCommon(
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
                if is_number(param_default):
                    # A number by default: the wrapper takes seconds, whatever the library spells
                    # (`http_query(..., timeout=20)` may also hand it to `asyncio.timeout`).
                    common["timeout_template"], common["imports"] = "{timeout}", ()
                return WrapperSummary(
                    keyword=name, position=position, default=param_default, required=required, via_kwargs=False,
                    **common,
                )
        elif forwards_kwargs(function, call, site.api.keyword, site.api.position):
            return spread_into(site.api.keyword, inner, common)
    return None


def _module_reach(resolver: Resolver, catalog: Catalog) -> Tuple[bool, FrozenSet[str]]:
    """For the calls of a module's functions: whether a gRPC stub may be a receiver, and the
    client methods the module can reach (once per module)."""
    cached = cast(Optional[Tuple[bool, FrozenSet[str]]], resolver.memo.get(_REACH))
    if cached is None:
        text = cast(Optional[str], resolver.memo.get(MODULE_TEXT))
        stubs_possible = text is None or any(p.module_suffix in text for p in catalog.stubs)
        methods = catalog.method_names if text is None else file_methods(catalog, text)
        cached = (stubs_possible, methods)
        resolver.memo[_REACH] = cached
    return cached


_REACH = "outbound.module_reach"  # in `Resolver.memo`


def _passes_a_parameter(call: ast.Call, params: AbstractSet[str]) -> bool:
    values = [*call.args, *(kw.value for kw in call.keywords)]
    return any(isinstance(v, ast.Name) and v.id in params for v in values)


def wrapper_site(
    call: ast.Call, scope: Scope, resolver: Resolver, catalog: Catalog, depth: int = 0
) -> Tuple[Optional["OutboundCall"], Optional[WrapperSummary]]:
    """A call to a project wrapper seen as the outbound call it makes, and its summary: a
    function of this module, or (through the project's facts) of another module."""
    definition = resolver.definition(call.func, scope)
    api: Optional[OutboundApi]
    if definition is None:
        project = resolver.project
        if not isinstance(project, OutboundProject):
            return None, None
        remote = project.wrapper_at(call.func, scope)
        if remote is None:
            return None, None
        summary, key = remote
        api = project.apis.get(key)
        if api is None:
            api = project.apis[key] = _wrapper_api(summary)
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
    if hides_arguments(call):
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


ForwardsTimeout.summarize = wrapper_summary  # the fact composes summaries as the rules do
