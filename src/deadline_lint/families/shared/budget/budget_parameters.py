"""What a function's parameters hold for the budget analyses: which a caller may leave as
None, which always hold a number, and which is a method's `self`."""
from __future__ import annotations

import ast
from typing import Iterator, Optional

from deadline_lint.semantics.local.declared import is_none, is_number
from deadline_lint.semantics.local.resolve import dotted_parts
from deadline_lint.semantics.local.scopes import FUNCTION, PARAM, Scope

_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def is_self(node: ast.expr, scope: Scope) -> bool:
    """The method's first parameter (`self`), not rebound."""
    method = scope
    while method.kind == FUNCTION and method.enclosing_class is None and method.parent is not None:
        method = method.parent  # a closure inside a method sees the method's `self`
    if method.kind != FUNCTION or method.enclosing_class is None or not isinstance(method.node, _FUNCTION_NODES):
        return False
    args = method.node.args
    positional = [*args.posonlyargs, *args.args]
    if not positional or not isinstance(node, ast.Name) or node.id != positional[0].arg:
        return False
    bindings = scope.lookup(node.id) or []
    return len(bindings) == 1 and bindings[0].kind == PARAM


def optional_parameters(function: ast.AST) -> Iterator[str]:
    """Parameters a caller may leave as None: `budget=None`, `budget: Optional[Budget]`,
    `budget: Budget | None`."""
    args = getattr(function, "args", None)
    if args is None:
        return
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = [*zip(positional, defaults), *zip(args.kwonlyargs, args.kw_defaults)]
    for param, default in pairs:
        if is_none(default) or annotation_admits_none(param.annotation):
            yield param.arg


def numeric_parameters(function: ast.AST) -> Iterator[ast.arg]:
    """Parameters that hold a number whenever the function runs: a number default (not a
    bool) and no annotation admitting None, or annotated `float` / `int` with no None default."""
    args = getattr(function, "args", None)
    if args is None:
        return
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for param, default in [*zip(positional, defaults), *zip(args.kwonlyargs, args.kw_defaults)]:
        if is_none(default) or annotation_admits_none(param.annotation):
            continue
        annotated = isinstance(param.annotation, ast.Name) and param.annotation.id in ("float", "int")
        if annotated or is_number(default):
            yield param




def annotation_admits_none(annotation: Optional[ast.expr]) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value.replace(" ", "")
        return text.startswith("Optional[") or "|None" in text or "None|" in text
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return is_none(annotation.left) or is_none(annotation.right)
    if isinstance(annotation, ast.Subscript):
        parts = dotted_parts(annotation.value)
        return parts is not None and bool(parts) and parts[-1] == "Optional"
    return False
