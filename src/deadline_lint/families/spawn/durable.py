"""Durable enqueues: which calls hand work to a queue that outlives the request (queues.yaml and
the profile's `durable_enqueues`), and whether the request then waits for the job. Per file,
asked for with `ctx.analysis(Enqueues)`.

A receiver counts only when the code shows what it is: a queue object built by a listed class
or factory (through locals, parameters and `self` attributes, `analysis/instances.py`), a
function the project fact `DurableTask` knows as a task (decorated here or in an imported
project module), a listed signature builder, or a function the profile names. A `.delay(...)`
on anything else is not taken for Celery's."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, FrozenSet, Optional, Tuple

from deadline_lint.families.shared.instances import InstanceTest
from deadline_lint.families.spawn.durable_facts import DurableTask, durable_task
from deadline_lint.families.spawn.queue_catalog import PROFILE_LIBRARY, QueueCatalog, QueueClass, queue_catalog
from deadline_lint.semantics.file import FileSemantics
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.resolve import dotted_parts
from deadline_lint.semantics.local.scopes import ASSIGN, IMPORT, OTHER, Scope
from deadline_lint.semantics.summary import FUNCTION, FUNCTIONS, VALUE, Symbol

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


@dataclass(frozen=True)
class Enqueue:
    library: str
    display: str  # how the message names the call: `build_report.apply_async`
    call: ast.Call
    options: Tuple[str, ...]  # the library's names for a job's own bound
    # The calls whose arguments reach the job: the enqueue, and the signature or kicker it is
    # made from (`task.s(x).apply_async()`, `task.kicker().with_labels(timeout=...).kiq()`).
    calls: Tuple[ast.Call, ...] = ()


class _QueueTest(InstanceTest):
    """Instances of one queue class; a generic factory (`boto3.client`) counts only when its
    first argument names this queue's service."""

    def __init__(self, enqueues: "Enqueues", queue: QueueClass) -> None:
        super().__init__(enqueues.resolver, queue.factories | {queue.qualname}, frozenset({queue.qualname}))
        self.queues = enqueues.queues
        self.queue = queue

    def built_by(self, call: ast.Call, scope: Scope) -> bool:
        qualname = self.resolver.qualified_name(call.func, scope)
        if qualname is None or self.queues.canonical(qualname) not in self.factories:
            return False
        if self.queue.service is None:
            return True
        first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "service_name"), None)
        return isinstance(first, ast.Constant) and first.value == self.queue.service


class Enqueues:
    def __init__(self, ctx: "FileView") -> None:
        self.ctx = ctx
        self.resolver = ctx.resolver
        self.queues: QueueCatalog = queue_catalog(ctx.catalog, ctx.profile.durable_enqueues)
        self.fact: DurableTask = durable_task(self.queues)
        self._tests = {queue.qualname: _QueueTest(self, queue) for queue in self.queues.queues}
        self._wrappers: FrozenSet[str] = frozenset(w for lib in self.queues.libraries for w in lib.wrappers)
        self._waits: FrozenSet[str] = frozenset(w for lib in self.queues.libraries for w in lib.waits)
        self._known: Dict[int, Tuple[ast.Call, Optional[Enqueue]]] = {}

    # -- which calls enqueue -----------------------------------------------------------------
    def classify(self, call: ast.Call, scope: Scope) -> Optional[Enqueue]:
        known = self._known.get(id(call))
        if known is None:
            known = self._known[id(call)] = (call, self._classify(call, scope))
        return known[1]

    def _classify(self, call: ast.Call, scope: Scope) -> Optional[Enqueue]:
        func = call.func
        if self.queues.functions:
            qualname = self.resolver.qualified_name(func, scope)
            if qualname is not None and qualname in self.queues.functions:
                return Enqueue(PROFILE_LIBRARY, qualname, call, ())
        if not isinstance(func, ast.Attribute):
            return None
        method, receiver = func.attr, func.value
        for queue in self.queues.queue_with(method):
            if self._tests[queue.qualname].matches(receiver, scope):
                return Enqueue(queue.library, f"{_spelled(receiver)}.{method}", call,
                               self.queues.options_of(queue.library))
        library = self.task_library(receiver, scope)
        found = self.queues.library(library) if library is not None else None
        if found is None or method not in found.enqueue_methods:
            return None
        made_from = tuple(node for node in walk_nodes(receiver) if isinstance(node, ast.Call))
        return Enqueue(found.library, f"{_spelled(receiver)}.{method}", call, found.options, (call, *made_from))

    def task_library(self, expr: ast.expr, scope: Scope) -> Optional[str]:
        """The library of the task (or app) `expr` is: a project task or app, or a signature
        built from one (`task.s(x)`, `celery.signature("name")`)."""
        while isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr in self._wrappers:
                expr = func.value
                continue
            qualname = self.resolver.qualified_name(func, scope)
            return self.queues.builder_library(self.queues.canonical(qualname)) if qualname else None
        return self._project_library(expr, scope)

    def _project_library(self, expr: ast.expr, scope: Scope) -> Optional[str]:
        semantics = self.ctx.analysis(FileSemantics)
        head = expr
        while isinstance(head, ast.Attribute):
            head = head.value
        if not isinstance(head, ast.Name):
            return None
        bindings = scope.lookup(head.id)
        if not bindings or len(bindings) != 1 or bindings[0].scope.parent is not None:
            return None  # a local, a parameter or a name bound twice: what it is cannot be told
        binding = bindings[0]
        if binding.kind == IMPORT:
            qualname = semantics.summary.qualname_of(expr)
            answer = semantics.facts.answer(self.fact, qualname) if qualname is not None else None
        elif expr is not head:
            return None  # an attribute of this module's own value
        elif binding.kind == OTHER and isinstance(binding.value, FUNCTIONS):
            answer = semantics.facts.about(self.fact, Symbol(semantics.own, (head.id,), FUNCTION))
        elif binding.kind == ASSIGN:
            answer = semantics.facts.about(self.fact, Symbol(semantics.own, (head.id,), VALUE))
        else:
            return None
        return answer.payload if answer is not None else None

    # -- what stays quiet --------------------------------------------------------------------
    def is_task(self, function: ast.AST) -> bool:
        """`function` is itself a durable task (a worker): the deadline it holds is its own."""
        semantics = self.ctx.analysis(FileSemantics)
        local = self.fact.decorated(semantics.summary, function)
        if local is None:
            return False
        if local.payload is not None:
            return True
        return any(semantics.facts.answer(self.fact, name) is not None for name in local.via)

    def waited(self, call: ast.Call, parents, function: Optional[ast.AST]) -> bool:
        """The request waits for the job: the enqueue's result (awaited or not) is asked for
        its outcome, chained (`task.delay(x).get(timeout=...)`) or through the name it is
        bound to in the same function (`job = ...; job.result(timeout=...)`)."""
        node: ast.AST = call
        chain = list(parents)
        if chain and isinstance(chain[-1], ast.Await) and chain[-1].value is call:
            node = chain.pop()
        parent = chain[-1] if chain else None
        if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in self._waits:
            return True
        target = _bound_name(parent, node)
        if target is None or function is None:
            return False
        for found in walk_nodes(function):
            if (
                isinstance(found, ast.Call)
                and isinstance(found.func, ast.Attribute)
                and found.func.attr in self._waits
                and isinstance(found.func.value, ast.Name)
                and found.func.value.id == target
            ):
                return True
        return False


def _bound_name(parent: Optional[ast.AST], value: ast.AST) -> Optional[str]:
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is value:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            return targets[0].id
    if isinstance(parent, ast.NamedExpr) and parent.value is value:
        return parent.target.id
    return None


def _spelled(expr: ast.expr) -> str:
    """`build_report`, `self.queue`, or the signature a job is made from: `send_receipt.s(...)`."""
    made = False
    while True:
        if isinstance(expr, ast.Call):
            made, expr = True, expr.func
        elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Call):
            expr = expr.value
        else:
            break
    parts = dotted_parts(expr)
    name = ".".join(parts) if parts else "queue"
    return f"{name}(...)" if made else name
