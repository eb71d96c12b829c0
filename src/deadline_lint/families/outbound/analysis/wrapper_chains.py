"""Wrappers of wrappers across modules: `fetch(url, **kwargs)` in one module calls
`get_json(url, **kwargs)` from another, which passes `timeout` to `requests.get`.

A module's fact may depend on its own text only (facts are stored by content), so a wrapper
that forwards to a wrapper of another module is stored as *how* it forwards (a `via`
payload: the callee's absolute name, the parameters it passes and at which keyword or
position, whether it spreads its `**kwargs` untouched for each timeout keyword); the summary
is composed when a file asks, from the callee's own fact, at most `MAX_HOPS` deep."""
from __future__ import annotations

import ast
from typing import Callable, FrozenSet, Iterator, Optional, Tuple

from deadline_lint.families.outbound.analysis.wrappers import (
    WrapperSummary,
    calls_in,
    display_name,
    forwarded_parameter,
    forwards_kwargs,
    is_method,
    spread_into,
)
from deadline_lint.semantics.local.declared import is_none
from deadline_lint.semantics.local.resolve import Definition
from deadline_lint.semantics.local.scopes import Scope

VIA = "->via"  # no Python name: a direct payload starts with the wrapper's name
# A parameter handed on: (callee keyword or None, callee position or None, the wrapper's own
# parameter name, its position at a call, its default is None, it is required).
Handed = Tuple[Optional[str], Optional[int], str, Optional[int], bool, bool]


def forwarding_payload(
    definition: Definition, absolute: Callable[[ast.expr, Scope], Optional[str]], keywords: FrozenSet[str]
) -> Optional[tuple]:
    """`(VIA, callee, name, is_method, spread keywords, handed parameters)` for the first call
    of the function to a function of another project module that passes it a parameter or
    its `**kwargs`; `absolute` names the callee (None: not a project function)."""
    function, scope = definition.node, definition.own_scope
    own_kwargs = function.args.kwarg.arg if function.args.kwarg is not None else None  # type: ignore[attr-defined]
    for call in calls_in(function):
        if not isinstance(call.func, (ast.Name, ast.Attribute)):
            continue
        # Cheapest first: most calls pass on nothing of the function's; then, only a spread of
        # its own `**kwargs` is worth the per-keyword walk `forwards_kwargs` makes.
        handed = tuple(_handed(function, scope, call))
        spreads = own_kwargs is not None and any(
            kw.arg is None and isinstance(kw.value, ast.Name) and kw.value.id == own_kwargs for kw in call.keywords
        )
        if not handed and not spreads:
            continue
        callee = absolute(call.func, scope)
        if callee is None:
            continue
        spread = tuple(sorted(k for k in keywords if forwards_kwargs(function, call, k))) if spreads else ()
        if not handed and not spread:
            continue
        return (
            VIA, callee, display_name(function, definition.scope), is_method(function, definition.scope), spread, handed
        )
    return None


def _handed(function: ast.AST, scope: Scope, call: ast.Call) -> Iterator[Handed]:
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return
        found = forwarded_parameter(function, scope, arg)
        if found is not None:
            yield None, index, found[0], found[1], is_none(found[2]), found[3]
    for keyword in call.keywords:
        if keyword.arg is None:
            continue
        found = forwarded_parameter(function, scope, keyword.value)
        if found is not None:
            yield keyword.arg, None, found[0], found[1], is_none(found[2]), found[3]


def composed(
    payload: tuple, summary_of: Callable[[str, int], Optional[WrapperSummary]], depth: int
) -> Optional[WrapperSummary]:
    """The summary of a `via` payload, given the callee's summary (`summary_of(name, depth)`)."""
    _, callee, name, method, spread, handed = payload
    inner = summary_of(callee, depth + 1)
    if inner is None:
        return None
    common = dict(
        name=name, is_method=method, inner_qualname=inner.inner_qualname, inner_default=inner.inner_default,
        inner_library=inner.inner_library, timeout_template=inner.timeout_template, imports=inner.imports,
    )
    for keyword, position, own, own_position, default_none, required in handed:
        if (keyword is not None and keyword == inner.keyword) or (position is not None and position == inner.position):
            return WrapperSummary(
                keyword=own, position=own_position, default=ast.Constant(None) if default_none else NOT_NONE,
                required=required, via_kwargs=False, **common,  # type: ignore[arg-type]
            )
    return spread_into(inner.keyword, inner, common) if inner.keyword in spread else None


NOT_NONE = ast.Name("default", ast.Load())  # a default that is not None (its value stays in its module)
