"""Spawned work: which calls start a task, a thread or an executor job (from the catalog's
spawn section and the profile's `spawn_helpers`), and which objects are event loops,
executors or cancel tokens. Per file, asked for with `ctx.analysis(Spawns)`."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, Optional, Sequence, Tuple

from deadline_lint.families.shared.instances import InstanceTest, method_scope
from deadline_lint.families.spawn.spawn_catalog import SpawnCatalog, spawn_catalog
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.resolve import dotted_parts
from deadline_lint.semantics.local.scopes import OTHER, Scope
from deadline_lint.support.records import dataclass

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

TASK = "task"  # returns a task someone must own (DL501)
THREAD = "thread"  # threading.Thread(target=...)
EXECUTOR_JOB = "executor job"  # executor.submit(fn, ...), loop.run_in_executor(executor, fn, ...)
THREAD_OFFLOAD = "worker thread"  # asyncio.to_thread(fn, ...)
CHILD_KINDS = (THREAD, EXECUTOR_JOB, THREAD_OFFLOAD)


@dataclass(frozen=True)
class Spawn:
    kind: str
    display: str  # how the message names it: `asyncio.create_task`, `loop.create_task`
    call: ast.Call
    # Arguments that reach the child (for run_in_executor: not the executor).
    arguments: Sequence[ast.expr] = ()
    target: Optional[ast.expr] = None  # the callable the child runs, when known


class Spawns:
    def __init__(self, ctx: "FileView") -> None:
        self.resolver = ctx.resolver
        self.catalog: SpawnCatalog = spawn_catalog(ctx.catalog, ctx.profile.spawn_helpers)
        spawn = self.catalog
        self.loops = InstanceTest(self.resolver, spawn.loop_factories, spawn.loop_types)
        self.executors = InstanceTest(self.resolver, spawn.executor_classes, spawn.executor_classes)
        self.tokens = InstanceTest(self.resolver, spawn.cancel_tokens, spawn.cancel_tokens)
        self._final_names = spawn.task_words | spawn.child_words
        # Every spawn spells one of these words somewhere (an import under another name
        # still spells the original): a file without any needs no look at its calls.
        text = ctx.source.text
        self.possible = any(word in text for word in self._final_names)
        # DL501 and DL502 ask about the same calls; the node is kept with its answer so its
        # id cannot be reused while the answer is remembered.
        self._known: Dict[int, Tuple[ast.Call, Optional[Spawn]]] = {}

    def classify(self, call: ast.Call, scope: Scope) -> Optional[Spawn]:
        if not self.possible:
            return None
        func = call.func
        if isinstance(func, ast.Name):
            last = func.id
        elif isinstance(func, ast.Attribute):
            last = func.attr
        else:
            return None
        if last not in self._final_names and not (
            isinstance(func, ast.Name) and last in self.resolver.imported_names(scope)
        ):
            return None  # the common case: nothing here starts work (an import may rename one)
        known = self._known.get(id(call))
        if known is None:
            known = self._known[id(call)] = (call, self._resolve(call, func, last, scope))
        return known[1]

    def _resolve(self, call: ast.Call, func: ast.expr, last: str, scope: Scope) -> Optional[Spawn]:
        spawn = self.catalog
        qualname = self.resolver.qualified_name(func, scope)
        if qualname is not None:
            if qualname in spawn.tasks:
                return Spawn(TASK, qualname, call)
            if qualname in spawn.threads:
                target = _keyword(call, "target")
                if target is None and len(call.args) > 1:
                    target = call.args[1]  # Thread(group, target, ...)
                return Spawn(THREAD, qualname, call, _all_arguments(call), target)
            if qualname in spawn.thread_offloads:
                return Spawn(THREAD_OFFLOAD, qualname, call, _all_arguments(call), _first(call.args))
            return None
        if not isinstance(func, ast.Attribute):
            return None
        receiver = func.value
        if last in spawn.loop_task_methods and self.loops.matches(receiver, scope):
            return Spawn(TASK, f"{_spelled(receiver)}.{last}", call)
        if last in spawn.loop_executor_methods and self.loops.matches(receiver, scope):
            arguments = [*call.args[1:], *(k.value for k in call.keywords)]
            return Spawn(EXECUTOR_JOB, f"{_spelled(receiver)}.{last}", call, arguments, _first(call.args[1:]))
        if last in spawn.executor_methods and self.executors.matches(receiver, scope):
            return Spawn(EXECUTOR_JOB, f"{_spelled(receiver)}.{last}", call, _all_arguments(call), _first(call.args))
        return None

    def reaches_token(self, expr: ast.expr, scope: Scope) -> bool:
        """`expr` mentions a cancel token (a name or `self` attribute bound to an Event)."""
        for node in walk_nodes(expr):
            if isinstance(node, (ast.Name, ast.Attribute)) and self.tokens.matches(node, scope):
                return True
        return False

    def target_body(self, target: Optional[ast.expr], scope: Scope) -> Optional[ast.AST]:
        """The def a child runs, when it is a function of this module named directly."""
        if isinstance(target, ast.Name):
            bindings = scope.lookup(target.id)
            if bindings and len(bindings) == 1 and bindings[0].kind == OTHER:
                value = bindings[0].value
                if isinstance(value, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    return value
        return None

    def class_has_token(self, target: Optional[ast.expr], scope: Scope) -> bool:
        """`Thread(target=self.run)` in a class that keeps an Event in an attribute: the
        method can poll it (we do not follow methods to prove it does)."""
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
            return False
        method = method_scope(scope)
        if method is None or method.enclosing_class is None:
            return False
        for bindings in self.resolver.attribute_bindings(method.enclosing_class).values():
            if bindings and all(
                isinstance(b.value, ast.Call) and self.tokens.built_by(b.value, b.scope) for b in bindings
            ):
                return True
        return False


def _keyword(call: ast.Call, name: str) -> Optional[ast.expr]:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


def _first(args: Sequence[ast.expr]) -> Optional[ast.expr]:
    return args[0] if args and not isinstance(args[0], ast.Starred) else None


def _all_arguments(call: ast.Call):
    return [*call.args, *(k.value for k in call.keywords)]


def _spelled(expr: ast.expr) -> str:
    parts = dotted_parts(expr)
    return ".".join(parts) if parts else "loop"
