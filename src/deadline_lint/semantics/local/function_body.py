"""One function's body, walked once on request and shared by the analyses that need to see
every use of a local name: each node's parent, the loads of each name, and the nodes of each
type. Nodes inside nested functions, lambdas and classes are marked: a use there runs
whenever the closure does.

Ask with `function_body(scope)`; it is cached on the scope, so two analyses pay for one walk."""
from __future__ import annotations

import ast
from typing import Dict, List, Set, Type, TypeVar, cast

from deadline_lint.semantics.local.children import child_nodes
from deadline_lint.semantics.local.scopes import Scope

_N = TypeVar("_N", bound=ast.AST)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class FunctionBody:
    def __init__(self, function: ast.AST):
        self.function = function
        self.parents: Dict[int, ast.AST] = {}
        self.loads: Dict[str, List[ast.Name]] = {}
        self.nested: Set[int] = set()  # ids of nodes inside nested scopes
        self._by_type: Dict[type, List[ast.AST]] = {}
        body = [function.body] if isinstance(function, ast.Lambda) else list(getattr(function, "body", []))
        stack = [(child, False) for child in body]
        for child in body:
            self.parents[id(child)] = function
        while stack:
            node, nested = stack.pop()
            if nested:
                self.nested.add(id(node))
            else:
                self._by_type.setdefault(type(node), []).append(node)
            if type(node) is ast.Name and type(node.ctx) is ast.Load:
                self.loads.setdefault(node.id, []).append(node)
            inner = nested or isinstance(node, _SCOPES)
            for child in child_nodes(node):
                self.parents[id(child)] = node
                stack.append((child, inner))

    def nodes(self, node_type: Type[_N]) -> List[_N]:
        """This function's own nodes of one type (not those of nested scopes)."""
        # Filed under their own type: every node listed for `node_type` is one.
        return cast(List[_N], self._by_type.get(node_type, []))

    def parent(self, node: ast.AST):
        return self.parents.get(id(node))


def function_body(scope: Scope) -> FunctionBody:
    found = scope.facts.get("function_body")
    if found is None:
        found = scope.facts["function_body"] = FunctionBody(scope.node)
    return found
