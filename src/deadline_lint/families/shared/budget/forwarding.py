"""Budget forwarding: which calls go to a function of this module (or a method of the same
class, or a function of another project module: forwarding_facts.py) that accepts a budget
parameter, whether the call passes it, and what a caller with a budget would pass. Unknown
(callees decorated with anything but a retry policy of the catalog, `*args`/`**kwargs`,
redefined names) is None."""
from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Optional, Tuple

from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.families.shared.budget.budget import OBJECT, SECONDS, Budget, BudgetAnalysis
from deadline_lint.families.shared.budget.forwarding_facts import (
    BudgetParameter,
    ProjectBudgetReceivers,
    Vocabulary,
    budget_parameters,
)
from deadline_lint.families.shared.instances import method_scope
from deadline_lint.semantics.local.expressions import dotted_text
from deadline_lint.semantics.local.scopes import ASSIGN, OTHER, PARAM, Scope
from deadline_lint.settings.profile import Profile

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


class Forwarding:
    def __init__(self, ctx: "FileView") -> None:
        self.ctx = ctx
        self.resolver = ctx.resolver
        self.budgets = ctx.analysis(BudgetAnalysis)
        self.vocabulary = Vocabulary.of(self.budgets)

    def missing_budget(self, call: ast.Call, scope: Scope) -> Optional[BudgetParameter]:
        """The callee's budget parameter when this call does not pass it (and could)."""
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None  # `*args` / `**kwargs` may carry it
        callee, bound = self._callee(call, scope)
        if callee is not None:
            parameters = budget_parameters(callee, self.vocabulary.kind, bound)
            if isinstance(call.func, ast.Attribute) and _on_self(call.func, scope):
                parameters = [replace(p, on_self=True) for p in parameters]
        elif isinstance(call.func, ast.Attribute) and _on_self(call.func, scope):
            return None
        else:  # a function of another project module (the semantics layer's fact)
            parameters = self.ctx.analysis(ProjectBudgetReceivers).parameters(call, scope)
        for parameter in parameters:
            if any(k.arg == parameter.name for k in call.keywords):
                return None
            if parameter.position is not None and len(call.args) > parameter.position:
                return None
            return parameter
        return None

    def _retries(self, decorator: ast.expr) -> bool:
        """Whether a decorator is a retry policy of the catalog (`@tenacity.retry(...)`,
        `@backoff.on_exception(...)`): it calls the function again with the arguments it was
        given (`functools.wraps`, `*args, **kwargs`), so the signature is the def's."""
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        policy = self.ctx.catalog.retry.policy(self.resolver.qualified_name(target, self.ctx.module_scope))
        return policy is not None and policy.source == "catalog"

    def _callee(self, call: ast.Call, scope: Scope) -> Tuple[Optional[Function], bool]:
        """A def of this module called by its plain name, or `self.method(...)` of the
        caller's own class; and whether the call binds `self` first."""
        func = call.func
        if isinstance(func, ast.Name):
            bindings = scope.lookup(func.id)
            if bindings and len(bindings) == 1 and bindings[0].kind == OTHER and isinstance(bindings[0].value, _DEFS):
                function = bindings[0].value
                return (function, False) if _plain(function, retries=self._retries) else (None, False)
            return None, False
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            instance_method = _instance_method(func, scope, self._retries)
            if instance_method is not None:
                return instance_method, True
            method = method_scope(scope)
            if method is None:
                return None, False
            params = method.function_params()
            if not params or params[0].arg != func.value.id or _is_static_or_class(method.node):
                return None, False
            own = scope.lookup(func.value.id)
            if not own or len(own) != 1 or own[0].kind != PARAM:
                return None, False  # `self` rebound
            class_scope = method.enclosing_class
            assert class_scope is not None
            found = class_scope.bindings().get(func.attr, [])
            if len(found) == 1 and found[0].kind == OTHER and isinstance(found[0].value, _DEFS):
                function = found[0].value
                if _plain(function, allow_static=True):
                    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)
                    return function, not static
        return None, False


def forwarded_value(
    budget: Budget, kind: str, caller: Scope, profile: Profile, at: Optional[ast.AST] = None
) -> Optional[str]:
    """What a caller with `budget` passes for a parameter of `kind` at the call `at`: its
    budget object as it is, or remaining seconds (its own seconds parameter as it is, else the
    timeout it would give an outbound call, the hop margin already taken off). A source read
    into a local first (`budget = request.state.budget`) is passed by that local. None: it has
    no such value."""
    own_params = {p.arg for p in caller.function_params()}
    for name, source_kind in budget.kinds:
        if source_kind == kind == OBJECT:
            return local_alias(caller, name, at) or name
        if source_kind == kind == SECONDS and name in own_params:
            return name
    if kind == SECONDS:
        source = budget.primary
        alias = local_alias(caller, source.name, at) if source is not None else None
        return budget.timeout_expression(profile, spelled=alias)
    return None


def local_alias(scope: Scope, source: str, at: Optional[ast.AST]) -> Optional[str]:
    """The local `name` of `name = <source>` when that is a statement of the function body
    itself that ends before `at` (so it has run by then) and the name's only binding there:
    `budget = request.state.budget`. Only for a dotted source (a parameter is its own name)."""
    function = scope.node
    if at is None or "." not in source or not isinstance(function, _DEFS):
        return None
    where = (getattr(at, "lineno", 0), getattr(at, "col_offset", 0))
    for statement in function.body:
        if (statement.end_lineno or statement.lineno, statement.end_col_offset or 0) > where:
            return None
        if (
            isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and dotted_text(statement.value) == source
        ):
            name = statement.targets[0].id
            if len(scope.bindings().get(name, [])) == 1:
                return name
    return None


def _plain(
    function: Function, allow_static: bool = False, retries: Optional[Callable[[ast.expr], bool]] = None
) -> bool:
    """No decorator that could change the signature (staticmethod / classmethod are known, and
    `retries` tells the catalog's retry decorators, which keep it)."""
    for decorator in function.decorator_list:
        if allow_static and isinstance(decorator, ast.Name) and decorator.id in ("staticmethod", "classmethod"):
            continue
        if retries is None or not retries(decorator):
            return False
    return True


def _is_static_or_class(function: ast.AST) -> bool:
    return any(
        isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
        for d in getattr(function, "decorator_list", [])
    )


def _on_self(func: ast.Attribute, scope: Scope) -> bool:
    """`self.m(...)` / `cls.m(...)` in a method: this module's class, never another module's
    function."""
    method = method_scope(scope)
    if method is None or not isinstance(func.value, ast.Name):
        return False
    params = method.function_params()
    return bool(params) and params[0].arg == func.value.id


def _instance_method(func: ast.Attribute, scope: Scope, retries: Callable[[ast.expr], bool]) -> Optional[Function]:
    """`REPO.load` where `REPO = Repo()` is bound once at the top of this module to an instance
    of a class of this module: the class built there, never a subclass, so its own undecorated
    method is the one called."""
    assert isinstance(func.value, ast.Name)
    bindings = scope.lookup(func.value.id)
    if not bindings or len(bindings) != 1 or bindings[0].scope.parent is not None or bindings[0].kind != ASSIGN:
        return None
    value = bindings[0].value
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
        return None
    classes = bindings[0].scope.lookup(value.func.id)
    if not classes or len(classes) != 1 or classes[0].kind != OTHER or not isinstance(classes[0].value, ast.ClassDef):
        return None
    for statement in classes[0].value.body:
        if isinstance(statement, _DEFS) and statement.name == func.attr:
            return statement if _plain(statement, retries=retries) else None
    return None
