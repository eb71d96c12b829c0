"""DL107's view of a call of a project function: a function of this module (by name, a method
on `self`, or on a module-level instance of a class of this module) that makes outbound calls
of its own, directly or through other functions of this module. Run to completion before the
caller goes on, it spends time: a remainder read before it is stale after it.

A function of another project module (imported by name, through its module, a method on an
instance of a project class, or a module-level instance imported from where it is built) is
asked of the project (`spending_facts.MakesHops`); a call whose callee cannot be told stays
quiet."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Tuple, Union

from deadline_lint.engine.rule import Rule
from deadline_lint.families.outbound.analysis.outbound_calls import classify_call, file_methods
from deadline_lint.families.outbound.common import is_statement, outbound_first_look
from deadline_lint.families.outbound.spending_facts import ProjectSpending
from deadline_lint.families.shared.errors.cancel_scopes import is_awaited
from deadline_lint.semantics.local.function_body import function_body
from deadline_lint.semantics.local.scopes import ASSIGN, OTHER, PARAM, Binding, Scope

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

Def = Union[ast.FunctionDef, ast.AsyncFunctionDef]
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DEPTH = 4  # functions of this module followed below the one called


class ModuleSpending:
    """Per file (`ctx.analysis(ModuleSpending)`): its module-level functions and methods, and
    which of them make outbound calls."""

    def __init__(self, ctx: "FileView") -> None:
        self.ctx = ctx
        tree = ctx.tree
        self.functions: Dict[str, Def] = {n.name: n for n in tree.body if isinstance(n, _DEFS)}
        self.classes: Dict[str, ast.ClassDef] = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        self._methods = file_methods(ctx.catalog, ctx.source.text)
        self._stubs = any(p.module_suffix in ctx.source.text for p in ctx.catalog.stubs)
        self._hops: Dict[int, bool] = {}

    # -- which function a call runs ----------------------------------------------------------
    def callee(self, call: ast.Call, scope: Scope) -> Optional[Tuple[Def, Scope]]:
        func = call.func
        if isinstance(func, ast.Name):
            found = self.functions.get(func.id)
            bindings = scope.lookup(func.id)
            if found is None or not bindings or len(bindings) != 1 or bindings[0].value is not found:
                return None
            return found, self._scope(found, None)
        if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
            return None
        klass = self._class_of(func.value, scope)
        if klass is None:
            return None
        method = next((n for n in klass.body if isinstance(n, _DEFS) and n.name == func.attr), None)
        if method is None or method.decorator_list:
            return None  # inherited, or a static/class method or property: not followed
        return method, self._scope(method, klass)

    def _class_of(self, receiver: ast.Name, scope: Scope) -> Optional[ast.ClassDef]:
        """`self` in a method of a class of this module, or a module-level name bound once to
        an instance of one (`STOCK = Stock()`)."""
        if receiver.id == "self":
            owner = scope.enclosing_class
            node = owner.node if owner is not None else None
            return node if isinstance(node, ast.ClassDef) and self.classes.get(node.name) is node else None
        bindings = scope.lookup(receiver.id)
        if not bindings or len(bindings) != 1 or bindings[0].scope.parent is not None:
            return None
        value = bindings[0].value
        if bindings[0].kind != ASSIGN or not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
            return None
        klass = self.classes.get(value.func.id)
        class_bindings = scope.lookup(value.func.id)
        if klass is None or not class_bindings or len(class_bindings) != 1 or class_bindings[0].kind != OTHER:
            return None
        return klass

    def _scope(self, node: Def, klass: Optional[ast.ClassDef]) -> Scope:
        resolver, module = self.ctx.resolver, self.ctx.module_scope
        parent = resolver.scope_of(klass, module) if klass is not None else module
        return resolver.scope_of(node, parent)

    # -- whether it makes hops ---------------------------------------------------------------
    def makes_hops(self, function: Def, scope: Scope, depth: int = 0) -> bool:
        key = id(function)
        if key not in self._hops:
            self._hops[key] = False  # a recursive call does not make it one
            self._hops[key] = self._compute(function, scope, depth)
        return self._hops[key]

    def _compute(self, function: Def, scope: Scope, depth: int) -> bool:
        ctx = self.ctx
        calls = function_body(scope).nodes(ast.Call)
        for call in calls:
            if classify_call(call, scope, ctx.resolver, ctx.catalog, self._stubs, self._methods) is not None:
                return True
        if depth >= _DEPTH:
            return False
        for call in calls:
            inner = self.callee(call, scope)
            if inner is not None and self.makes_hops(inner[0], inner[1], depth + 1):
                return True
        return False


def first_look(rule: Rule) -> Callable[[ast.Call, "FileView"], bool]:
    """The outbound calls' look, and calls that pass a budget's seconds on by keyword."""
    keywords = frozenset(rule.profile.budget.seconds_parameters)

    def look(node: ast.Call, ctx: "FileView") -> bool:
        if any(k.arg in keywords for k in node.keywords) or outbound_first_look(node, ctx):
            return True
        func = node.func  # a function of this module, or a method: project_spending.py decides
        if isinstance(func, ast.Attribute):
            func = func.value
        return isinstance(func, ast.Name) and func.id in ctx.analysis(DefinedNames).names

    return look


class DefinedNames:
    """Per file: the names a call of one of its functions or methods can start with (a first
    look, from the text: the module's functions and classes, `self`, every name assigned at
    the top level, where an instance may be kept, and every name a `from` import binds)."""

    def __init__(self, ctx: "FileView") -> None:
        names = {"self"}
        for statement in ctx.tree.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(statement.name)
            elif isinstance(statement, ast.Assign):
                names.update(t.id for t in statement.targets if isinstance(t, ast.Name))
            elif isinstance(statement, ast.ImportFrom):
                # A function or instance of another module of the project (spending_facts.py).
                names.update((a.asname or a.name) for a in statement.names)
        self.names = frozenset(names)


def spending_callee(call: ast.Call, ctx: "FileView", together: bool = False) -> Optional[str]:
    """How `call` names the function of this module it runs to completion, one that makes
    outbound calls (None: not such a call). `together`: the call is handed to an awaited
    `gather`, which runs a coroutine it makes to completion too."""
    spending = ctx.analysis(ModuleSpending)
    found = spending.callee(call, ctx.scope)
    caller = ctx.scope.node
    if not isinstance(caller, _DEFS):
        return None
    if found is not None:
        function, scope = found
        if isinstance(function, ast.AsyncFunctionDef):
            if not isinstance(caller, ast.AsyncFunctionDef) or not (together or is_awaited(ctx, call)):
                return None  # a coroutine handed on (`gather`, a task): it runs beside the caller
        if spending.makes_hops(function, scope):
            return ctx.source.segment(call.func)
    # Elsewhere in the project (or through it): whether the def is a coroutine function is not
    # read there, so an async caller is judged where it awaits the call, or where the call is
    # a statement of its own (what runs there is a plain function: `is_statement`).
    if isinstance(caller, ast.AsyncFunctionDef) and not (together or is_awaited(ctx, call) or is_statement(ctx)):
        return None
    answer = ctx.analysis(ProjectSpending).makes_hops(call, ctx.scope)
    return ctx.source.segment(call.func) if answer is not None else None


Spent = Dict[str, List[Tuple[ast.AST, Tuple[ast.AST, ...], str]]]


def record_spending(
    call: Union[ast.expr, ast.stmt], callee: str, chain: Tuple[ast.AST, ...], snapshots: Dict[str, Binding],
    spent: Spent,
) -> None:
    """Each snapshot read before `call` (a seconds parameter: on entry) was spent by it."""
    start = (call.lineno, call.col_offset)
    for name, binding in snapshots.items():
        read = binding.value
        if binding.kind == PARAM or isinstance(read, ast.expr) and _ends(read) <= start:
            spent.setdefault(name, []).append((call, chain, callee))


def _ends(node: ast.expr) -> Tuple[int, int]:
    return node.end_lineno or node.lineno, node.end_col_offset or 0
