"""Wrapper summaries, the syntax half: a project function whose parameter (by name, or
through `**kwargs`) reaches an outbound call's timeout. `outbound.py` classifies the calls
and composes summaries; this module reads a function's parameters and body."""
from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Tuple

from deadline_lint.semantics.local.children import push_children
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.declared import FUNCTION_DEFS, is_plain_method
from deadline_lint.semantics.local.scopes import CLASS, PARAM, Scope
from deadline_lint.support.records import dataclass


@dataclass(frozen=True)
class WrapperSummary:
    """How a call to the wrapper sets the timeout of the library call it reaches."""

    name: str  # for messages: `get_json`, `Client._get`
    keyword: str  # the argument a caller passes (the wrapper's parameter, or the library's keyword)
    position: Optional[int]  # its positional index at a call (`self` not counted); None: keyword only
    default: Optional[ast.expr]  # the parameter's default; None when required or through **kwargs
    required: bool
    via_kwargs: bool
    is_method: bool
    inner_qualname: str  # the library API reached, at the end of the chain
    inner_default: Optional[float]  # that API's own default
    inner_library: str
    timeout_template: str
    imports: Tuple[str, ...]


def calls_in(function: ast.AST) -> Iterator[ast.Call]:
    """The calls a function makes itself (not those of functions or lambdas nested in it)."""
    stack: List[ast.AST] = list(getattr(function, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, (*FUNCTION_DEFS, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call):
            yield node
        push_children(stack, node)


def display_name(function: ast.AST, defined_in: Scope) -> str:
    name = getattr(function, "name", "?")
    return f"{defined_in.node.name}.{name}" if defined_in.kind == CLASS else name  # type: ignore[attr-defined]


def is_method(function: ast.AST, defined_in: Scope) -> bool:
    return defined_in.kind == CLASS and is_plain_method(function)


def forwarded_parameter(
    function: ast.AST, scope: Scope, value: ast.expr
) -> Optional[Tuple[str, Optional[int], Optional[ast.expr], bool]]:
    """When `value` is one of the function's own parameters, never rebound in it: (name,
    positional index at a call, default, required); else None."""
    if not isinstance(value, ast.Name):
        return None
    bindings = scope.bindings().get(value.id)
    if not bindings or len(bindings) != 1 or bindings[0].kind != PARAM:
        return None
    args = function.args  # type: ignore[attr-defined]
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    skip = 1 if scope.enclosing_class is not None and is_plain_method(function) else 0
    for index, (param, default) in enumerate(zip(positional, defaults)):
        if param.arg == value.id:
            if index < skip:
                return None  # `self`
            keyword = None if index < len(args.posonlyargs) else param.arg
            if keyword is None:
                return None  # positional-only: callers cannot name it (rare; stay quiet)
            return param.arg, index - skip, default, default is None
    for param, default in zip(args.kwonlyargs, args.kw_defaults):
        if param.arg == value.id:
            return param.arg, None, default, default is None
    return None


def forwards_kwargs(function: ast.AST, call: ast.Call, keyword: Optional[str], position: Optional[int] = None) -> bool:
    """`call` spreads the function's own `**kwargs` untouched and sets `keyword` neither
    itself nor anywhere else (`kwargs.setdefault("timeout", 5)` makes it the wrapper's own).
    A spread `*args` may carry the timeout only to an API that takes it by `position`
    (`requests.request(method, url, *args, **kwargs)`: `requests.request` takes no more
    positional arguments, so only the keywords can)."""
    args = function.args  # type: ignore[attr-defined]
    if keyword is None or args.kwarg is None:
        return False
    name = args.kwarg.arg
    spreads = [kw for kw in call.keywords if kw.arg is None]
    if len(spreads) != 1 or not (isinstance(spreads[0].value, ast.Name) and spreads[0].value.id == name):
        return False
    if any(kw.arg == keyword for kw in call.keywords):
        return False
    if position is not None and any(isinstance(a, ast.Starred) for a in call.args):
        return False
    spread_ids = {
        id(kw.value)
        for node in walk_nodes(function) if isinstance(node, ast.Call)
        for kw in node.keywords if kw.arg is None
    }
    parents = {id(child): node for node in walk_nodes(function) for child in ast.iter_child_nodes(node)}
    for node in walk_nodes(function):
        if isinstance(node, ast.Name) and node.id == name and id(node) not in spread_ids:
            if not _other_key_only(node, parents, keyword):
                return False  # read or changed elsewhere: cannot tell what reaches the call
    return True


def _other_key_only(node: ast.Name, parents, keyword: str) -> bool:
    """`kwargs.pop("verify", None)`, `kwargs.get("x")`, `kwargs["x"]`, `"x" in kwargs`: a use
    of another key, which leaves the timeout keyword as the caller passed it."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Attribute) and parent.attr in ("pop", "get"):
        call = parents.get(id(parent))
        return isinstance(call, ast.Call) and call.func is parent and _other_literal(call.args[:1], keyword)
    if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Load):
        return _other_literal([parent.slice], keyword)
    if isinstance(parent, ast.Compare) and len(parent.ops) == 1 and isinstance(parent.ops[0], (ast.In, ast.NotIn)):
        return parent.comparators[0] is node and _other_literal([parent.left], keyword)
    return False


def _other_literal(values, keyword: str) -> bool:
    return len(values) == 1 and isinstance(values[0], ast.Constant) and isinstance(values[0].value, str) and (
        values[0].value != keyword
    )


def spread_into(keyword: str, inner: Optional[WrapperSummary], common: dict) -> WrapperSummary:
    """A wrapper spreading its `**kwargs` into a call whose timeout keyword is `keyword`. Into
    a wrapper with a parameter of its own (`inner`), a caller not passing it gets that
    parameter's default (`timeout=120`), not the library's."""
    if inner is not None and not inner.via_kwargs:
        return WrapperSummary(
            keyword=inner.keyword, position=None, default=inner.default, required=inner.required, via_kwargs=False,
            **common,
        )
    return WrapperSummary(keyword=keyword, position=None, default=None, required=False, via_kwargs=True, **common)
