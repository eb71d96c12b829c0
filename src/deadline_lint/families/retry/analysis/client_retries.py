"""Clients that retry on their own: `client.method(...)` where the client was built with
retries (`Config(retries=...)`, `httpx.HTTPTransport(retries=3)`) or had an adapter with
retries mounted on it (`session.mount(prefix, HTTPAdapter(max_retries=3))`)."""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from deadline_lint.catalog.retry import RetryCatalog
from deadline_lint.families.retry.analysis.retry_policy import (
    MAX_DEPTH,
    assigned_value,
    given_argument,
    single_assignment,
    statements_here,
)
from deadline_lint.semantics.local.resolve import Resolver, dotted_parts
from deadline_lint.semantics.local.scopes import CLASS, Scope


class ClientRetries:
    def __init__(self, resolver: Resolver, catalog: RetryCatalog) -> None:
        self.resolver = resolver
        self.catalog = catalog

    def _qualname(self, expr: ast.expr, scope: Scope) -> Optional[str]:
        found = self.resolver.qualified_name(expr, scope)
        return self.catalog.canonical(found) if found else None

    def own_retries(self, call: ast.Call, scope: Scope) -> Optional[ast.Call]:
        """For `client.method(...)` / `self.client.method(...)`: the call that gave the client
        its own retries (`Config(retries=...)` among its arguments, `HTTPAdapter(max_retries=3)`
        mounted on it), or None. The client must be bound once."""
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr == "mount":
            return None
        receiver = func.value
        target = dotted_parts(receiver)
        if target is None or len(target) > 2:
            return None
        if isinstance(receiver, ast.Name):
            bound = single_assignment(receiver, scope)
        elif isinstance(receiver, ast.Attribute):  # `dotted_parts` took nothing else
            bound = self._self_attribute(receiver, scope)
        else:
            return None
        if bound is None:
            return None
        value, value_scope = bound
        return self._configured(value, value_scope, 0) or self._mounted(target, value_scope)

    def _self_attribute(self, expr: ast.Attribute, scope: Scope) -> Optional[Tuple[ast.expr, Scope]]:
        method: Optional[Scope] = scope
        while method is not None and method.enclosing_class is None:
            method = method.parent if method.kind != CLASS else None
        owner = method.enclosing_class if method is not None else None
        if method is None or owner is None or not isinstance(expr.value, ast.Name):
            return None
        params = method.function_params()
        if not params or params[0].arg != expr.value.id:
            return None
        bindings = self.resolver.attribute_bindings(owner).get(expr.attr)
        if not bindings or len(bindings) != 1:
            return None
        return assigned_value(bindings[0])

    def _configured(self, expr: ast.expr, scope: Scope, depth: int) -> Optional[ast.Call]:
        """A call with retries among `expr`'s arguments (following names bound once)."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name):
            bound = single_assignment(expr, scope)
            return self._configured(bound[0], bound[1], depth + 1) if bound else None
        if not isinstance(expr, ast.Call):
            return None
        argument = self.catalog.client_retry_argument(self._qualname(expr.func, scope))
        if argument is not None:
            if argument.keyword is None and argument.position is None:
                return expr  # the client always retries
            value = given_argument(expr, argument)
            if value is not None and self._retries(value, scope):
                return expr
        for value in [*expr.args, *(k.value for k in expr.keywords)]:
            found = self._configured(value, scope, depth + 1)
            if found is not None:
                return found
        return None

    def _retries(self, value: ast.expr, scope: Scope) -> bool:
        """A retries argument that may retry: not a literal 0 / False / None, nor a retry
        object built with one."""
        if isinstance(value, ast.Constant):
            return value.value not in (0, False, None)
        if isinstance(value, ast.Call):
            argument = self.catalog.retry_object_argument(self._qualname(value.func, scope))
            if argument is not None:
                count = given_argument(value, argument)
                return not (isinstance(count, ast.Constant) and count.value in (0, False))
        if isinstance(value, ast.Dict):  # botocore: {"max_attempts": 0}
            for key, item in zip(value.keys, value.values):
                if isinstance(key, ast.Constant) and key.value in ("max_attempts", "total_max_attempts"):
                    limit = 1 if key.value == "total_max_attempts" else 0
                    if isinstance(item, ast.Constant) and isinstance(item.value, int) and item.value <= limit:
                        return False
        return True

    def _mounted(self, target: List[str], scope: Scope) -> Optional[ast.Call]:
        """`target.mount(prefix, HTTPAdapter(max_retries=3))` in the scope the client is bound in."""
        for statement in statements_here(scope.node):
            if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
                continue
            mount = statement.value
            func = mount.func
            if (
                isinstance(func, ast.Attribute) and func.attr == "mount" and len(mount.args) == 2
                and dotted_parts(func.value) == target
            ):
                found = self._configured(mount.args[1], scope, 0)
                if found is not None:
                    return found
        return None
