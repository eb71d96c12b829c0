"""The spawn family's project fact: a function or method that starts a task and hands it to its
caller without keeping it (`return loop.create_task(coro)`), so a caller that drops the result
drops the task. Declared to the semantics layer; answered across modules.

A wrapper that keeps the task (adds it to a set, gives it a done-callback, stores it) before
returning it is not one: the task has an owner whatever the caller does. Only plain `def`s
count (an `async def` hands back a coroutine, not its task), and every `return` must return a
task, directly or through another such function."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Tuple

from deadline_lint.families.spawn.spawn_catalog import SpawnCatalog, spawn_catalog
from deadline_lint.semantics.facts import Fact, Local
from deadline_lint.semantics.file import FactUse
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.scopes import ASSIGN, PARAM, Scope
from deadline_lint.semantics.receivers import kept_class_name
from deadline_lint.semantics.session import current
from deadline_lint.semantics.summary import CLASS, ModuleTree, Symbol, own_returns

# The receivers `x.create_task(...)` is a loop's, spelled so: a TaskGroup's or a nursery's
# `create_task` keeps its task, so anything else is not taken for a loop.
if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_LOOP_NAMES = frozenset({"loop", "_loop", "event_loop", "_event_loop", "ioloop", "_ioloop"})


class ReturnsTask(Fact[str]):
    """Payload: how a message names the call that starts the task (`loop.create_task`)."""

    # 2: `return self.attr.method(...)` follows the class the class declares `attr` holds
    version = 2

    def __init__(self, spawn: SpawnCatalog) -> None:
        self.tasks = spawn.tasks
        self.loop_methods = spawn.loop_task_methods
        self.loop_factories = spawn.loop_factories
        key = ",".join(sorted(self.tasks | self.loop_methods | self.loop_factories))
        self.name = f"spawn.returns_task[{key}]"
        self._words = tuple(sorted(spawn.task_words))

    def may_hold(self, text: str) -> bool:
        return any(word in text for word in self._words)

    def terminal(self, payload: str) -> Optional[str]:
        return payload

    def function(self, summary: ModuleTree, node: ast.AST, klass: Optional[ast.ClassDef]) -> Optional[Local]:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        own = ".".join(p for p in (summary.module.name, klass.name if klass else "", node.name) if p)
        if own in self.tasks:  # the profile's `spawn_helpers` name it (a method, too)
            return Local(own, node.name)
        if not isinstance(node, ast.FunctionDef):
            return None  # an async def hands back a coroutine
        returns = own_returns(node)
        if not returns:
            return None
        scope = Scope(node, summary.scope)
        shadowed = tuple(scope.bindings())
        payload: Optional[str] = None
        via: List[str] = []
        for value in returns:
            value = _unbind(value, node, scope)
            if not isinstance(value, ast.Call):
                return None
            started = self._starts(value, summary, scope, shadowed)
            if started is not None:
                payload = payload or started
                continue
            target = _callee_name(value.func, summary, node, klass, shadowed)
            if target is None:
                return None
            via.append(target)
        if payload is not None and via:
            return None  # mixed: some returns start a task here, some elsewhere: unknown
        return Local(payload, node.name, tuple(via))

    def _starts(self, call: ast.Call, summary: ModuleTree, scope: Scope, shadowed: Tuple[str, ...]) -> Optional[str]:
        func = call.func
        qualname = summary.qualname_of(func, shadowed)
        if qualname is not None and qualname in self.tasks:
            return qualname
        if isinstance(func, ast.Attribute) and func.attr in self.loop_methods:
            receiver = func.value
            if self._is_loop(receiver, summary, scope, shadowed):
                return f"loop.{func.attr}"
        return None

    def _is_loop(self, receiver: ast.expr, summary: ModuleTree, scope: Scope, shadowed: Tuple[str, ...]) -> bool:
        if isinstance(receiver, ast.Call):
            qualname = summary.qualname_of(receiver.func, shadowed)
            return qualname is not None and qualname in self.loop_factories
        if isinstance(receiver, ast.Attribute):
            return receiver.attr in _LOOP_NAMES
        if isinstance(receiver, ast.Name):
            bindings = scope.bindings().get(receiver.id)
            if not bindings:
                value = summary.values.get(receiver.id)  # a module-level loop
                return isinstance(value, ast.Call) and self._is_loop(value, summary, summary.scope, ())
            if len(bindings) != 1:
                return False
            if bindings[0].kind == ASSIGN:
                bound = bindings[0].value
                return isinstance(bound, ast.Call) and self._is_loop(bound, summary, scope, shadowed)
            return bindings[0].kind == PARAM and receiver.id in _LOOP_NAMES
        return False


def _unbind(value: ast.expr, function: ast.FunctionDef, scope: Scope) -> ast.expr:
    """`task = start(); return task`: the call, when `task` is bound once and read only by
    the `return` (anything else may keep it: `tasks.add(task)`, `task.add_done_callback`)."""
    if not isinstance(value, ast.Name):
        return value
    bindings = scope.bindings().get(value.id)
    if not bindings or len(bindings) != 1 or bindings[0].kind != ASSIGN:
        return value
    reads = sum(
        1 for n in walk_nodes(function) if isinstance(n, ast.Name) and n.id == value.id and isinstance(n.ctx, ast.Load)
    )
    bound = bindings[0].value
    return bound if reads == 1 and isinstance(bound, ast.expr) else value


def _callee_name(
    func: ast.expr, summary: ModuleTree, node: ast.FunctionDef, klass: Optional[ast.ClassDef],
    shadowed: Tuple[str, ...],
) -> Optional[str]:
    """The absolute name of the project function a `return f(...)` calls: a module-level
    name, or `self.m(...)` in a method (looked up from this class)."""
    own_class = klass if klass is not None and summary.defs.get(klass.name) is klass and node.args.args else None
    if own_class is not None and isinstance(func, ast.Attribute):
        if _is_self(func.value, node):
            return ".".join(p for p in (summary.module.name, own_class.name, func.attr) if p)
        if isinstance(func.value, ast.Attribute) and _is_self(func.value.value, node):
            # `self.coresys.create_task(...)`, where the class declares what `self.coresys`
            # holds (`coresys: CoreSys`): that class's method, looked up from there.
            held = kept_class_name(Symbol(summary.module, (own_class.name,), CLASS), func.value.attr)
            return f"{held}.{func.attr}" if held is not None else None
    return summary.qualname_of(func, shadowed)


def _is_self(expr: ast.expr, node: ast.FunctionDef) -> bool:
    return isinstance(expr, ast.Name) and expr.id == node.args.args[0].arg


def returns_task(spawn: SpawnCatalog) -> ReturnsTask:
    """One fact per spawn vocabulary (the profile's `spawn_helpers` extend it)."""
    key = spawn.tasks | spawn.loop_task_methods | spawn.loop_factories
    facts: Dict[FrozenSet[str], ReturnsTask] = current().memo(ReturnsTask, lasting=True)  # by vocabulary
    found = facts.get(key)
    if found is None:
        found = facts[key] = ReturnsTask(spawn)
    return found


class TaskWrappers(FactUse):
    """Per file (`ctx.analysis(TaskWrappers)`): calls that reach a task wrapper of this module
    or an imported project module."""

    def __init__(self, ctx: "FileView") -> None:
        super().__init__(ctx, returns_task(spawn_catalog(ctx.catalog, ctx.profile.spawn_helpers)))
