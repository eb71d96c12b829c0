"""Cancel scopes: `async with asyncio.timeout(2):` (and the catalog's others) bounds whatever
is awaited lexically inside it, in the same function. Asked from the walk's ancestors, so the
engine keeps no state for it."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, Tuple, Union

from deadline_lint.semantics.local.expressions import argument_at, is_unbounded
from deadline_lint.semantics.local.scopes import IMPORT, Scope

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_SCOPE_BOUNDARIES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class CancelScopes:
    """Per file: which `with` statements open a cancel scope (each judged once)."""

    def __init__(self, ctx: "FileView") -> None:
        self.ctx = ctx
        self.specs: Dict[str, dict] = dict(ctx.catalog.budget.cancel_scopes)
        self._opens: Dict[Tuple[int, bool], bool] = {}

    def is_cancel_scope(self, item: ast.withitem, scope: Scope, blocking: bool = False) -> bool:
        """`async with asyncio.timeout(2):` bounds what is awaited inside; `timeout(None)` and
        `move_on_after(math.inf)` bound nothing. `blocking`: only scopes that also interrupt
        a blocking call (`with gevent.Timeout(2):` in a green thread)."""
        expr = item.context_expr
        if not isinstance(expr, ast.Call):
            return False
        qualname = self.ctx.resolver.qualified_name(expr.func, scope)
        specs = [self.specs.get(qualname or "")] if qualname is not None else self._alternatives(expr.func, scope)
        known = [spec for spec in specs if spec is not None]
        if not specs or len(known) < len(specs) or any(blocking and not spec.get("blocking") for spec in known):
            return False
        # Alternatives agree on where the limit goes, or only what they share counts.
        positions = {spec.get("position") for spec in known}
        keywords = {spec.get("keyword") for spec in known}
        argument = argument_at(
            expr,
            positions.pop() if len(positions) == 1 else None,
            keywords.pop() if len(keywords) == 1 else None,
        )
        return argument is not None and not is_unbounded(argument, scope, self.ctx.resolver)

    def _alternatives(self, func: ast.expr, scope: Scope):
        """`try: from asyncio import timeout / except ImportError: from async_timeout import
        timeout`: the spec of each alternative (a cancel scope only when every one is)."""
        if not isinstance(func, ast.Name):
            return []
        bindings = scope.lookup(func.id)
        if not bindings or len(bindings) < 2 or any(b.kind != IMPORT for b in bindings):
            return []
        catalog = self.ctx.catalog
        return [self.specs.get(catalog.canonical(b.value)) if isinstance(b.value, str) else None for b in bindings]

    def opens_scope(self, node: Union[ast.With, ast.AsyncWith], blocking: bool = False) -> bool:
        key = (id(node), blocking)
        found = self._opens.get(key)
        if found is None:
            found = self._opens[key] = any(
                self.is_cancel_scope(item, self.ctx.scope, blocking) for item in node.items
            )
        return found

    def inside(self, blocking: bool = False) -> bool:
        """The walk is inside a cancel scope of the current function (a nested def or lambda
        starts afresh); `blocking`: one that interrupts blocking calls too."""
        for ancestor in reversed(self.ctx.parents):
            if isinstance(ancestor, _SCOPE_BOUNDARIES):
                return False
            if isinstance(ancestor, (ast.With, ast.AsyncWith)) and self.opens_scope(ancestor, blocking):
                return True
        return False


def is_awaited(ctx: "FileView", call: ast.Call) -> bool:
    """Awaited directly, or entered as `async with call(...)` / iterated by `async for`."""
    parent = ctx.parent
    if isinstance(parent, ast.Await):
        return True
    if isinstance(parent, ast.withitem) and len(ctx.parents) > 1:
        return isinstance(ctx.parents[-2], ast.AsyncWith)
    return isinstance(parent, ast.AsyncFor) and parent.iter is call


def bounded_by_cancel_scope(ctx: "FileView", call: ast.Call) -> bool:
    """Awaited inside a cancel scope, or made anywhere inside one that interrupts blocking
    calls (`with eventlet.Timeout(5):`)."""
    scopes = ctx.analysis(CancelScopes)
    if is_awaited(ctx, call):
        return scopes.inside()
    return scopes.inside(blocking=True)


def shielded(ctx: "FileView") -> bool:
    """The walk is inside `with anyio.CancelScope(shield=True):` (or another of the catalog's
    `cancellation.shields` called with `shield=True`) in the current function: no outer
    cancellation is delivered there."""
    shields = ctx.catalog.cancellation.shields
    for ancestor in reversed(ctx.parents):
        if isinstance(ancestor, _SCOPE_BOUNDARIES):
            return False
        if isinstance(ancestor, (ast.With, ast.AsyncWith)) and any(
            _shields(item.context_expr, shields, ctx) for item in ancestor.items
        ):
            return True
    return False


def _shields(expr: ast.expr, shields: "frozenset[str]", ctx: "FileView") -> bool:
    if not isinstance(expr, ast.Call):
        return False
    shield = next((k.value for k in expr.keywords if k.arg == "shield"), None)
    if not (isinstance(shield, ast.Constant) and shield.value is True):
        return False
    return ctx.resolver.qualified_name(expr.func, ctx.scope) in shields
