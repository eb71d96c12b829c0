"""What a definition declares about the values it produces, read from its syntax alone:
the expressions a function returns, whether its decorators keep its return value, and which
methods a class body defines. The resolver turns these into receiver types."""
from __future__ import annotations

import ast
from typing import FrozenSet, List, Optional

from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.scopes import NESTED_STATEMENTS

FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def is_none(expr: Optional[ast.AST]) -> bool:
    """The literal `None` (a default, a value assigned, a side of `X | None`)."""
    return isinstance(expr, ast.Constant) and expr.value is None

# Decorators that hand back what the function returns (the value itself, or cached).
_KEEPING_DECORATORS = frozenset(
    {"property", "cached_property", "cache", "lru_cache", "staticmethod", "classmethod", "abstractmethod"}
)
# Of those, the ones that make `obj.name` (no call) the returned value.
PROPERTY_DECORATORS = frozenset({"property", "cached_property"})


def is_number(expr: Optional[ast.AST]) -> bool:
    """A number written in place (`10`, `-1.5`), not a bool."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.UAdd, ast.USub)):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)


def decorator_names(function: ast.AST) -> List[Optional[str]]:
    """The last name of each decorator (`functools.lru_cache(maxsize=1)` -> "lru_cache");
    None for a decorator that is not a (called) dotted name."""
    names: List[Optional[str]] = []
    for decorator in getattr(function, "decorator_list", []):
        if isinstance(decorator, ast.Call):
            decorator = decorator.func
        if isinstance(decorator, ast.Attribute):
            names.append(decorator.attr)
        elif isinstance(decorator, ast.Name):
            names.append(decorator.id)
        else:
            names.append(None)
    return names


def keeps_return_value(function: ast.AST) -> bool:
    """Calling the decorated function still returns what its body returns."""
    return all(name in _KEEPING_DECORATORS for name in decorator_names(function))


def is_property(function: ast.AST) -> bool:
    return any(name in PROPERTY_DECORATORS for name in decorator_names(function))


def is_plain_method(function: ast.AST) -> bool:
    """A method whose first parameter is the instance (not a static or class method)."""
    return not any(name in ("staticmethod", "classmethod") for name in decorator_names(function))


def returned_values(function: ast.AST) -> Optional[List[ast.expr]]:
    """The expressions `function` returns (nested definitions excluded); None when it is a
    generator, or returns nothing we can see (a bare `return`, or no return at all)."""
    values: List[ast.expr] = []
    stack: List[ast.AST] = list(getattr(function, "body", []))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (*FUNCTION_DEFS, ast.ClassDef)):
            continue  # its own returns
        if isinstance(stmt, ast.Return):
            if stmt.value is None:
                return None
            values.append(stmt.value)
        for node in _expressions(stmt):
            if isinstance(node, (ast.Yield, ast.YieldFrom)):
                return None
        nested = NESTED_STATEMENTS.get(type(stmt))
        if nested is not None:
            for field in nested:
                stack.extend(getattr(stmt, field))
    return values or None


def _expressions(stmt: ast.AST):
    """The expressions directly in a statement (not in statements nested in it)."""
    for field, value in ast.iter_fields(stmt):
        if field in ("body", "orelse", "finalbody", "handlers", "cases"):
            continue
        values = value if isinstance(value, list) else [value]
        for item in values:
            if isinstance(item, ast.expr):
                for node in walk_nodes(item):
                    if not isinstance(node, ast.Lambda):
                        yield node


def defined_names(class_node: ast.ClassDef) -> FrozenSet[str]:
    """Names a class body binds itself: its methods and class attributes."""
    names = set()
    for stmt in class_node.body:
        if isinstance(stmt, (*FUNCTION_DEFS, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Assign):
            names.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            names.add(stmt.target.id)
    return frozenset(names)
