"""Where an attribute store keeps a value another function reads: on a method's `self` (the
class's instance) or on a module's global, which kept_deadlines tells apart by the receiver."""
from __future__ import annotations

import ast
from typing import Optional

from deadline_lint.semantics.local.scopes import FUNCTION, IMPORT, Scope


def self_class(receiver: ast.expr, scope: Scope) -> Optional[Scope]:
    """The class whose instance `receiver` is, when it is a method's `self` (or `cls`)."""
    method: Optional[Scope] = scope
    while method is not None and method.kind == FUNCTION and method.enclosing_class is None:
        method = method.parent
    if method is None or method.kind != FUNCTION or method.enclosing_class is None:
        return None
    node = method.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return None
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    if not positional or not isinstance(receiver, ast.Name) or receiver.id != positional[0].arg:
        return None
    return method.enclosing_class


def on_a_module(receiver: ast.expr, scope: Scope) -> bool:
    """`settings.X`, `pkg.sub.X`: the receiver is (an attribute of) an imported name."""
    while isinstance(receiver, ast.Attribute):
        receiver = receiver.value
    if not isinstance(receiver, ast.Name):
        return False
    bindings = scope.lookup(receiver.id) or []
    return any(b.kind == IMPORT for b in bindings)


__all__ = ["on_a_module", "self_class"]
