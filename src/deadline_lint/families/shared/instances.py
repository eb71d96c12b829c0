""""Is this expression an instance of one of these?" for objects the outbound catalog does not
describe (event loops, executors, tracers, metrics, events): bound by a call to a listed
factory, by `with factory() as x`, or annotated with a listed type, through locals,
parameters and `self` attributes. Every binding must agree; anything else is unknown (False).
"""
from __future__ import annotations

import ast
from typing import FrozenSet, List, Optional

from deadline_lint.semantics.local.resolve import Resolver
from deadline_lint.semantics.local.scopes import ANNOTATED, ASSIGN, CLASS, PARAM, WITH, Binding, Scope

_MAX_DEPTH = 6


class InstanceTest:
    """One kind of object: the calls that build it and the annotations that name it."""

    def __init__(self, resolver: Resolver, factories: FrozenSet[str], types: FrozenSet[str] = frozenset()) -> None:
        self.resolver = resolver
        self.factories = factories
        self.types = types

    def matches(self, expr: ast.expr, scope: Scope, depth: int = 0) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.Await):
            expr = expr.value
        if isinstance(expr, ast.Call):
            return self.built_by(expr, scope)
        if isinstance(expr, ast.Name):
            found = scope.lookup(expr.id)
            return bool(found) and all(self._binding(b, depth) for b in found or ())
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            bindings = self_attribute_bindings(self.resolver, expr, scope)
            return bool(bindings) and all(self._binding(b, depth) for b in bindings)
        return False

    def built_by(self, call: ast.Call, scope: Scope) -> bool:
        return self.resolver.qualified_name(call.func, scope) in self.factories

    def _binding(self, binding: Binding, depth: int) -> bool:
        # What `matches` can tell apart is an expression; any other value matches nothing.
        if binding.kind in (ASSIGN, WITH) and isinstance(binding.value, ast.expr):
            if self.matches(binding.value, binding.scope, depth + 1):
                return True
        if binding.kind in (ASSIGN, PARAM, ANNOTATED) and binding.annotation is not None:
            return self.resolver.annotation_class(binding.annotation, binding.scope) in self.types
        return False


def self_attribute_bindings(resolver: Resolver, expr: ast.Attribute, scope: Scope) -> List[Binding]:
    """The bindings of `self.<attr>` in the class of the method (or closure in a method) that
    `expr` sits in, and its class-level assignments and annotations; [] when unknown."""
    method = method_scope(scope)
    if method is None:
        return []
    params = method.function_params()
    if not params or not isinstance(expr.value, ast.Name) or expr.value.id != params[0].arg:
        return []
    class_scope = method.enclosing_class
    assert class_scope is not None
    bindings = list(resolver.attribute_bindings(class_scope).get(expr.attr, []))
    bindings.extend(b for b in class_scope.bindings().get(expr.attr, []) if b.kind in (ASSIGN, ANNOTATED))
    return bindings


def method_scope(scope: Scope) -> Optional[Scope]:
    """The method `scope` is, or is nested in (a closure in a method still sees `self`)."""
    current: Optional[Scope] = scope
    while current is not None and current.enclosing_class is None:
        if current.kind == CLASS or current.parent is None:
            return None
        current = current.parent
    return current
