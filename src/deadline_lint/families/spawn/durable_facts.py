"""The spawn family's project fact about durable queues: a function that is a task of a
durable queue library (decorated `@shared_task`, `@app.task` on a Celery app, `@dramatiq.actor`,
...), or a module-level value that is such a library's app (`app = Celery(...)`). The payload is
the library's name (queues.yaml). Declared to the semantics layer, so a route that does
`from .tasks import build_report` and calls `build_report.delay(...)` knows what it calls.

`@app.task` where `app` is imported from another project module holds through that module's
value (`via`); where the module imports exactly one library that makes tasks with that
decorator, the decorator is that library's whatever `app` is (`from .worker import app` with
`import celery` beside it)."""
from __future__ import annotations

import ast
import hashlib
from typing import Dict, Optional, Set

from deadline_lint.families.spawn.queue_catalog import QueueCatalog
from deadline_lint.semantics.facts import Fact, Local
from deadline_lint.semantics.session import current
from deadline_lint.semantics.summary import FUNCTIONS, ModuleTree


class DurableTask(Fact[str]):
    """Payload: the queue library the task or app belongs to."""

    version = 2
    through_returns = False  # a task is made where it is decorated, not by what a def returns

    def __init__(self, queues: QueueCatalog) -> None:
        self.queues = queues
        self.name = "spawn.durable_task[" + hashlib.blake2b(queues.key.encode(), digest_size=8).hexdigest() + "]"
        words: Set[str] = set()
        for lib in queues.libraries:
            words.update(lib.imports)
            words.update(name.rpartition(".")[2] for name in (*lib.task_decorators, *lib.app_classes))
        self._words = tuple(sorted(words))

    def may_hold(self, text: str) -> bool:
        return any(word in text for word in self._words)

    def function(self, module: ModuleTree, node: ast.AST, klass: Optional[ast.ClassDef]) -> Optional[Local]:
        if klass is not None or not isinstance(node, FUNCTIONS):
            return None
        return self.decorated(module, node)

    def decorated(self, module: ModuleTree, node: ast.AST) -> Optional[Local]:
        """What the decorators of `node` (a def anywhere in `module`) make it, if a task."""
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return None  # nothing else is decorated
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            qualname = module.qualname_of(target)
            if qualname is not None:
                library = self.queues.decorator_library(self.queues.canonical(qualname))
                if library is not None:
                    return Local(library, node.name)
            if isinstance(target, ast.Attribute):
                found = self._app_decorator(module, target, node.name)
                if found is not None:
                    return found
        return None

    def _app_decorator(self, module: ModuleTree, target: ast.Attribute, step: str) -> Optional[Local]:
        candidates = [lib for lib in self.queues.libraries if target.attr in lib.app_decorators]
        if not candidates:
            return None
        owner = target.value  # `app` of `@app.task`, or `celeryconf.app` of `@celeryconf.app.task`
        value = module.values.get(owner.id) if isinstance(owner, ast.Name) else None
        if isinstance(value, ast.Call):
            library = self._app_built_by(module, value)
            if library is not None:
                return Local(library, step)
        imported = {top.split(".")[0] for top in module.summary.imports.values()}
        libraries = {lib.library for lib in candidates if lib.imports & imported}
        if len(libraries) == 1:
            return Local(libraries.pop(), step)
        qualname = module.qualname_of(owner)
        head = owner
        while isinstance(head, ast.Attribute):
            head = head.value
        if qualname is not None and isinstance(head, ast.Name) and head.id in module.summary.imports:
            return Local(None, step, (qualname,))  # the app of another project module
        return None

    def _app_built_by(self, module: ModuleTree, call: ast.Call) -> Optional[str]:
        qualname = module.qualname_of(call.func)
        return self.queues.app_library(self.queues.canonical(qualname)) if qualname is not None else None

    def value(self, module: ModuleTree, name: str, expr: ast.expr) -> Optional[Local]:
        if isinstance(expr, ast.Call):
            library = self._app_built_by(module, expr)
            if library is not None:
                return Local(library, name)
        return None


def durable_task(queues: QueueCatalog) -> DurableTask:
    """One fact per queue vocabulary (the profile's `durable_enqueues` extend it)."""
    facts: Dict[str, DurableTask] = current().memo(DurableTask, lasting=True)  # by vocabulary
    found = facts.get(queues.key)
    if found is None:
        found = facts[queues.key] = DurableTask(queues)
    return found
