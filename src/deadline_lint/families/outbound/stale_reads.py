"""DL107's fix: what reads the remainder again instead of a stale name, and the read that
fix leaves unused."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple, cast

from deadline_lint.families.outbound.fixes.spend_deadline import Deadline
from deadline_lint.families.shared.budget.budget import Budget, BudgetAnalysis
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.function_body import function_body
from deadline_lint.semantics.local.scopes import IMPORT, PARAM, Binding, is_builtin
from deadline_lint.support.diagnostics import Edit

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

# A fresh read of the remainder: its text, and whether it needs no parentheses inside a
# larger expression.
FreshRead = Tuple[str, bool]

TRANSPARENT_CALLS = frozenset({"min", "max", "float", "int"})
_ATOMIC = (ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.Subscript)


def fresh_read(
    name: str,
    snapshots: Dict[str, Binding],
    ctx: "FileView",
    budget: Budget,
    deadline: Optional[Deadline],
    depth: int = 0,
) -> Optional[FreshRead]:
    """Text that reads the remainder again instead of `name` (and whether it is atomic), or
    None when re-evaluating its value could do anything else (call a helper, read a local
    that may have changed). A seconds parameter is read again as what is left of the
    deadline taken on entry (`deadline`), when there can be one."""
    if snapshots[name].kind == PARAM:
        return (deadline.remaining, False) if deadline is not None and deadline.parameter == name else None
    value = cast(ast.expr, snapshots[name].value)
    own = ctx.scope.bindings()
    inner: List[ast.Name] = []  # snapshot names inside the value: expanded in turn
    for node in walk_nodes(value):
        if isinstance(node, ast.Call):
            func = node.func
            receiver = func.value if isinstance(func, ast.Attribute) else None
            on_budget = isinstance(receiver, ast.Name) and receiver.id in budget.names
            called = ctx.resolver.qualified_name(func, ctx.scope)
            if not (on_budget or called in TRANSPARENT_CALLS or called in ctx.analysis(BudgetAnalysis).accessors):
                return None
        elif isinstance(node, ast.Name):
            if node.id in snapshots and node.id != name:
                inner.append(node)
                continue
            bindings = own.get(node.id)
            if bindings is None:
                if ctx.scope.lookup(node.id) is None and not is_builtin(node.id):
                    return None
            elif not all(b.kind in (PARAM, IMPORT) for b in bindings):
                return None  # a local: it may hold something else by now
        elif isinstance(node, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            return None
    start, end = ctx.source.node_span(value)
    text = ctx.source.text
    pieces: List[str] = []
    position = start
    for occurrence in sorted(inner, key=lambda n: ctx.source.node_span(n)[0]):
        expanded = fresh_read(occurrence.id, snapshots, ctx, budget, deadline, depth + 1) if depth < 4 else None
        if expanded is None:
            return None
        at, until = ctx.source.node_span(occurrence)
        pieces.extend([text[position:at], wrapped(expanded)])
        position = until
    pieces.append(text[position:end])
    rendered = "".join(pieces)
    if "\n" in rendered or "\r" in rendered:
        return None
    return rendered, isinstance(value, _ATOMIC)


def bare(fresh: FreshRead) -> str:
    return fresh[0]


def wrapped(fresh: FreshRead) -> str:
    """Parenthesised unless atomic, to sit safely inside a larger expression."""
    text, atomic = fresh
    return text if atomic else f"({text})"


def drop_if_dead(name: str, occurrences: List[ast.Name], snapshots: Dict[str, Binding], ctx: "FileView") -> List[Edit]:
    """The fix also removes `name = <read>` when this call held its only uses, so no dead
    local is left (pyflakes F841). Only a plain `name = value` statement on lines of its own
    with no comment; a name read anywhere else in the function (a nested one too) stays."""
    value = snapshots[name].value
    body = function_body(ctx.scope)  # the function's one shared walk (loads include nested scopes')
    statement = next((n for n in body.nodes(ast.Assign) if n.value is value), None)
    if statement is None or len(statement.targets) != 1 or not isinstance(statement.targets[0], ast.Name):
        return []
    replaced = {id(o) for o in occurrences}
    if any(id(load) not in replaced for load in body.loads.get(name, ())):
        return []
    source = ctx.source
    start, end = source.node_span(statement)
    end_line = statement.end_lineno or statement.lineno
    first = source.line_text(statement.lineno)
    last = source.line_text(end_line)
    line_start = source.line_starts[statement.lineno - 1]
    last_start = source.line_starts[end_line - 1]
    if source.text[line_start:start].strip(" \t\f") or source.text[end:last_start + len(last)].strip():
        return []  # shares a line with another statement or a comment
    return [Edit(line_start, last_start + len(last), "")] if first else []
