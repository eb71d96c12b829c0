"""Budget sources: expressions that yield the request's budget without it being a parameter.

- request-scoped state under one of the profile's budget names (`budget.parameters` for a
  budget object, `budget.seconds_parameters` for seconds): `request.state.<name>`
  (Starlette/FastAPI), `flask.g.<name>`, `request[<"name">]` (aiohttp), `request.<name>`
  (Django: an attribute a middleware set on the `request` parameter);
- `<var>.get()` of a module-level `contextvars.ContextVar` the profile names
  (`budget.context_vars`), annotated `ContextVar[<budget type>]`, or created under a budget
  name (`ContextVar("budget")`);
- a call of a budget type or one of its class methods (`Budget.from_header(h)`).

Attribute-shaped sources are also recognised where they are read, not only assigned: a
function that reads `request.state.budget` has a budget in scope. `self.<attr>` is a source in
every method of a class when each value the class stores there is a budget object.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Mapping, Optional, Tuple

from deadline_lint.catalog import Catalog
from deadline_lint.families.shared.budget.budget_types import BudgetType, BudgetTypes
from deadline_lint.semantics.local.expressions import dotted_text
from deadline_lint.semantics.local.function_body import function_body
from deadline_lint.semantics.local.resolve import dotted_parts
from deadline_lint.semantics.local.scopes import ASSIGN, PARAM, Binding, Scope
from deadline_lint.settings.profile import Profile

if TYPE_CHECKING:
    from deadline_lint.semantics.local.resolve import Resolver
    from deadline_lint.support.source import SourceFile

SECONDS = "seconds"
_REQUEST_NAMES = frozenset({"request", "req"})
_CONTEXT_VAR = "contextvars.ContextVar"

Found = Tuple[str, BudgetType]  # (kind, type)


class BudgetSources:
    def __init__(self, resolver: "Resolver", catalog: Catalog, profile: Profile, types: BudgetTypes) -> None:
        self.resolver = resolver
        self.types = types
        budget = profile.budget
        self.object_names = frozenset(budget.parameters)
        self.seconds_names = frozenset(budget.seconds_parameters)
        self.context_vars = frozenset(budget.context_vars)
        self.flask_globals = catalog.budget.flask_globals
        self._vars: Optional[Dict[str, Found]] = None
        self._type_tails = frozenset(name.rpartition(".")[2] for name in types.names)

    @property
    def state_names(self) -> FrozenSet[str]:
        return self.object_names | self.seconds_names

    def _named(self, name: object) -> Optional[Found]:
        if name in self.object_names:
            return self.types.default.kind, self.types.default
        if name in self.seconds_names:
            return SECONDS, self.types.default
        return None

    # -- one expression ----------------------------------------------------------------
    def source(self, expr: ast.AST, scope: Scope) -> Optional[Found]:
        """What budget `expr` yields by itself, or None."""
        if isinstance(expr, ast.Attribute):
            return self.attribute_source(expr, scope)
        if isinstance(expr, ast.Subscript):
            key = expr.slice
            if isinstance(key, ast.Constant) and self._is_request(expr.value, scope):
                return self._named(key.value)
            return None
        if isinstance(expr, ast.Call):
            return self._call_source(expr, scope)
        return None

    def attribute_source(self, expr: ast.Attribute, scope: Scope) -> Optional[Found]:
        if expr.attr not in self.state_names:
            return None  # most attributes: a cheap exit
        receiver = expr.value
        if isinstance(receiver, ast.Attribute) and receiver.attr == "state":
            return self._named(expr.attr)  # `request.state.budget`, `websocket.state.budget`
        if self.flask_globals and self.resolver.qualified_name(receiver, scope) in self.flask_globals:
            return self._named(expr.attr)
        if self._is_request(receiver, scope):
            return self._named(expr.attr)
        return None

    def _is_request(self, receiver: ast.expr, scope: Scope) -> bool:
        """A parameter called `request` (or `req`) of the function or an enclosing one."""
        if not isinstance(receiver, ast.Name) or receiver.id not in _REQUEST_NAMES:
            return False
        bindings = scope.lookup(receiver.id) or []
        return len(bindings) == 1 and bindings[0].kind == PARAM

    def _call_source(self, call: ast.Call, scope: Scope) -> Optional[Found]:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "get" and not call.args and not call.keywords:
            if isinstance(func.value, ast.Name):
                return self.context_var(func.value.id, scope)
            return None
        # `Budget(...)`, `Budget.from_header(...)`: a budget type's constructor or class method.
        parts = dotted_parts(func)
        if not parts or not (parts[-1] in self._type_tails or len(parts) > 1 and parts[-2] in self._type_tails):
            return None  # most calls: no budget type's name in sight
        for candidate in (func, func.value if isinstance(func, ast.Attribute) else None):
            if candidate is None:
                continue
            qualname = self.resolver.qualified_name(candidate, scope)
            if qualname is None:
                spelled = dotted_parts(candidate)  # a class of this module
                qualname = ".".join(spelled) if spelled else None
            budget_type = self.types.type_named(qualname)
            if budget_type is not None and budget_type.kind == self.types.default.kind:
                return budget_type.kind, budget_type
        return None

    # -- context variables -----------------------------------------------------------------
    def context_var(self, name: str, scope: Scope) -> Optional[Found]:
        bindings = scope.lookup(name) or []
        if len(bindings) != 1 or bindings[0].scope.parent is not None:
            return None  # a module-level name bound once
        if self._vars is None:
            self._vars = {}
        key = name
        if key not in self._vars:
            self._vars[key] = self._context_var(name, bindings[0], bindings[0].scope)  # type: ignore[assignment]
        return self._vars[key]

    def _context_var(self, name: str, binding: Binding, module: Scope) -> Optional[Found]:
        value = binding.value
        if binding.kind != ASSIGN or not isinstance(value, ast.Call):
            return None
        if self.resolver.qualified_name(value.func, module) != _CONTEXT_VAR:
            return None
        typed = self.types.of_annotation(binding.annotation, module, self.resolver)
        if typed is not None:
            return typed.kind, typed
        if name in self.context_vars:
            return self.types.default.kind, self.types.default
        first = value.args[0] if value.args else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return self._named(first.value)
        return None


def inline_accessors(
    scope: Scope, source: Optional["SourceFile"], resolver: "Resolver", accessors: Mapping[str, str],
) -> List[Tuple[str, str]]:
    """Calls of a seconds accessor the function makes inline (`if remaining_seconds() < 0.1`,
    `timeout=max(0.001, remaining_seconds() - 0.05)`), named by their text: the budget is in
    scope as much as through a name read from it, and a fix's template renders the call
    afresh. Seconds only: an absolute deadline (`instant`) has no template, and the catalog's
    are trio's and anyio's, read beside their cancel scopes."""
    tails = {name.rpartition(".")[2] for name, kind in accessors.items() if kind == SECONDS}
    if not tails or source is None:
        return []
    text = source.segment(scope.node)
    if not any(f"{tail}(" in text for tail in tails):
        return []  # most functions: no accessor spelled in them
    found: Dict[str, str] = {}
    for call in function_body(scope).nodes(ast.Call):
        if call.args or call.keywords:
            continue
        qualname = resolver.qualified_name(call.func, scope)
        if qualname is None or accessors.get(qualname) != SECONDS:
            continue
        spelled = dotted_text(call.func)
        if spelled is not None:
            found.setdefault(f"{spelled}()", SECONDS)
    return sorted(found.items())
