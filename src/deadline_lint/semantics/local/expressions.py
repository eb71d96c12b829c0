"""Small questions about expressions that every family asks: which argument a call passes
for a parameter, the last name of a callee, whether an expression mentions a name, whether a
timeout value bounds nothing."""
from __future__ import annotations

import ast
import functools
from typing import FrozenSet, Optional

from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.resolve import Resolver, dotted_parts
from deadline_lint.semantics.local.scopes import Scope


def argument_at(call: ast.Call, position: Optional[int], keyword: Optional[str]) -> Optional[ast.expr]:
    """The argument passed for a parameter, by keyword or by position (None if absent or hidden
    behind *args)."""
    if keyword is not None:
        for kw in call.keywords:
            if kw.arg == keyword:
                return kw.value
    if position is not None and len(call.args) > position:
        if not any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
            return call.args[position]
    return None


def last_name(func: ast.AST) -> Optional[str]:
    """`attr` of `a.b.attr`, `name` of a plain name, None for anything else (a call, a subscript):
    the cheap look a catalog's method names are matched by before resolving anything."""
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def mentions_any(expr: ast.AST, names) -> bool:
    """`expr` reads one of `names`: a name, an attribute path spelled with dots
    (`request.state.budget`, `self.budget`: how a budget read from a source is named), or a
    call with no arguments spelled with its parentheses (`remaining_seconds()`)."""
    if not names:
        return False
    tails = _dotted_tails(names) if isinstance(names, frozenset) else None
    calls = tails is not None and _CALLED in tails
    for node in walk_nodes(expr):
        if type(node) is ast.Name:
            if node.id in names:
                return True
        elif tails and type(node) is ast.Attribute and node.attr in tails:
            if dotted_text(node) in names:
                return True
        elif calls and type(node) is ast.Call and not node.args and not node.keywords:
            spelled = dotted_text(node.func)
            if spelled is not None and f"{spelled}()" in names:
                return True
    return False


_CALLED = "()"  # among the tails: some name is a call's text (an accessor read inline)


@functools.lru_cache(maxsize=256)
def _dotted_tails(names: FrozenSet[str]) -> FrozenSet[str]:
    tails = {name.rpartition(".")[2] for name in names if "." in name}
    if any(name.endswith(_CALLED) for name in names):
        tails.add(_CALLED)  # no attribute is spelled so
    return frozenset(tails)


def dotted_text(node: ast.AST) -> Optional[str]:
    """`a.b.c` for a chain of attributes on a name, else None."""
    parts = dotted_parts(node) if isinstance(node, ast.expr) else None
    return ".".join(parts) if parts else None


def is_unbounded(expr: ast.expr, scope: Scope, resolver: Resolver) -> bool:
    """`None`, `float("inf")`, `math.inf`, or a (connect, read) tuple with an unbounded part."""
    if isinstance(expr, ast.Constant):
        return expr.value is None or expr.value == float("inf")
    if isinstance(expr, ast.Tuple):
        return any(is_unbounded(element, scope, resolver) for element in expr.elts)
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
        if resolver.qualified_name(expr.func, scope) == "float":
            argument = expr.args[0]
            return (
                isinstance(argument, ast.Constant)
                and isinstance(argument.value, str)
                and argument.value.strip().lower().lstrip("+") in ("inf", "infinity")
            )
        return False
    if isinstance(expr, ast.Attribute):
        return resolver.qualified_name(expr, scope) in ("math.inf", "numpy.inf", "sys.maxsize")
    return False
