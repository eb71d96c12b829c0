"""Which names a scope reads: every `Load` of a name in a function body, nested functions
and lambdas included (a closure that reads a local keeps it alive). Built once per scope,
only when a rule asks at the end of that scope (e.g. DL501's "bound to a local never used
again", judged like ruff's deferred scopes)."""
from __future__ import annotations

import ast
from typing import FrozenSet

from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.scopes import Scope


def loaded_names(scope: Scope) -> FrozenSet[str]:
    cached = scope.facts.get("loaded_names")
    if cached is None:
        node = scope.node
        body = getattr(node, "body", [])
        roots = body if isinstance(body, list) else [body]
        cached = frozenset(
            n.id for root in roots for n in walk_nodes(root)
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)
        )
        scope.facts["loaded_names"] = cached
    return cached  # type: ignore[return-value]


def string_constants(scope: Scope) -> FrozenSet[str]:
    """Every string literal in a function body (nested ones included), e.g. to see whether
    a span attribute name is set anywhere in it."""
    cached = scope.facts.get("string_constants")
    if cached is None:
        body = getattr(scope.node, "body", [])
        roots = body if isinstance(body, list) else [body]
        cached = frozenset(
            n.value for root in roots for n in walk_nodes(root)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        )
        scope.facts["string_constants"] = cached
    return cached  # type: ignore[return-value]
