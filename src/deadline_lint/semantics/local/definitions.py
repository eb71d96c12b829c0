"""What a def's own body says, read from its `ast`: the names a class body binds, the values
a function returns. Shared by the summaries and the facts."""
from __future__ import annotations

import ast
from typing import Dict, List, Sequence, Tuple, Union

from deadline_lint.semantics.local.children import push_children

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def class_members(node: ast.ClassDef) -> Dict[str, ast.AST]:
    """The names a class body binds once (methods, properties, attributes: their def or
    value); a `@property` getter and its setter count once, as the getter."""
    found: Dict[str, ast.AST] = {}
    seen: Dict[str, int] = {}
    for stmt in node.body:
        names: List[Tuple[str, ast.AST]] = []
        if isinstance(stmt, (*FUNCTIONS, ast.ClassDef)):
            names.append((stmt.name, stmt))
        elif isinstance(stmt, ast.Assign):
            names.extend((t.id, stmt.value) for t in stmt.targets if isinstance(t, ast.Name))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            names.append((stmt.target.id, stmt.value if stmt.value is not None else stmt.annotation))
        for name, value in names:
            seen[name] = seen.get(name, 0) + 1
            found.setdefault(name, value)
    for name, count in seen.items():
        if count > 1:
            defs = [s for s in node.body if isinstance(s, FUNCTIONS) and s.name == name]
            if not (len(defs) == count and _is_property_pair(defs)):
                del found[name]
    return found


def _is_property_pair(defs: Sequence[Union[ast.FunctionDef, ast.AsyncFunctionDef]]) -> bool:
    return all(
        any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter") for d in node.decorator_list)
        for node in defs[1:]
    )


def own_returns(function: ast.AST) -> List[ast.expr]:
    """The values of the function's own `return`s (not nested defs'); empty when one returns
    nothing or the function is a generator."""
    found: List[ast.expr] = []
    stack: List[ast.AST] = list(getattr(function, "body", ()))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return []
        if isinstance(node, ast.Return):
            if node.value is None:
                return []
            found.append(node.value)
        push_children(stack, node)
    return found
