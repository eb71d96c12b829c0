"""Code no request waits for, across the project: `ProjectLifecycle` (DL302) adds to
`Lifecycle` (`lifecycle.py`) the project's callers (`semantics/callers.py`). A def whose every
caller in the project runs outside any request (start-up code in another module, a background
task of this file, import time), by the same rules in the caller's own module and then
through its callers in turn, runs outside too. A def with no caller in the project (a
library's public API, a route handler registered by a decorator), one handed on as a value,
or one with a caller we cannot place stays inside: precision first means the retry is still
reported. `ProjectTaskRoots` (DL403) asks the same of coroutines nobody waits for."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, FrozenSet, Optional, Set, Tuple

from deadline_lint.catalog.retry import OutsideRequests
from deadline_lint.families.shared.background_helpers import hands_to_background
from deadline_lint.families.shared.lifecycle import Lifecycle
from deadline_lint.semantics.callers import Callers, is_test_path
from deadline_lint.semantics.facts import MAX_HOPS
from deadline_lint.semantics.session import current
from deadline_lint.semantics.modules import ModuleSource
from deadline_lint.semantics.summary import CLASS, FUNCTION, Symbol, content_key

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class OutsidePaths:
    """The run's memo of `_outside_in`, by module content and spec."""


def _outside_in(module: ModuleSource, spec: OutsideRequests) -> FrozenSet[Tuple[str, ...]]:
    key = (content_key(module), id(spec))
    paths: Dict[Tuple[str, int], FrozenSet[Tuple[str, ...]]] = current().memo(OutsidePaths, lasting=True)
    found = paths.get(key)
    if found is None:
        tree = module.tree
        found = paths[key] = Lifecycle.of_tree(spec, tree).outside_paths() if tree is not None else frozenset()
    return found


class ProjectLifecycle:
    """Per file (`ctx.analysis(ProjectLifecycle)`): `Lifecycle`, and the defs whose every
    caller in the project runs outside any request."""

    def __init__(self, ctx: "FileView") -> None:
        from deadline_lint.semantics.file import FileSemantics

        self.ctx = ctx
        self.local = ctx.analysis(Lifecycle)
        self.spec = ctx.catalog.retry.outside_requests
        self._semantics: Optional[FileSemantics] = None
        self._answers: Dict[Tuple[str, Tuple[str, ...]], bool] = {}
        self._active: Set[Tuple[str, Tuple[str, ...]]] = set()
        self._own: Optional[FrozenSet[Tuple[str, ...]]] = None

    def outside(self, function: Optional[ast.AST]) -> bool:
        if self.local.outside(function):
            return True
        if not isinstance(function, _FUNCTIONS):
            return False
        from deadline_lint.semantics.file import FileSemantics

        if self._semantics is None:
            self._semantics = self.ctx.analysis(FileSemantics)
        semantics = self._semantics
        modules = semantics.names.modules
        if modules is None or is_test_path(_relative(semantics.own.path, modules.root)):
            return False  # a test's retries are judged by this file alone
        path = _path_of(function, semantics.summary.defs)
        if path is None:
            return False
        return self._only_outside(Symbol(semantics.own, path, FUNCTION), Callers(semantics.names), 0)

    def _only_outside(self, symbol: Symbol, callers: Callers, hops: int, alias: bool = False) -> bool:
        """Every caller of `symbol` in the project runs outside requests (an alias with no
        caller at all is no way in)."""
        key = (symbol.module.path, symbol.path)
        if key in self._answers:
            return self._answers[key]
        if key in self._active or hops > MAX_HOPS:
            return False  # a cycle, or a chain too long: unknown
        self._active.add(key)
        try:
            found = self._callers_outside(symbol, callers, hops, alias)
        finally:
            self._active.discard(key)
        self._answers[key] = found
        return found

    def _callers_outside(self, symbol: Symbol, callers: Callers, hops: int, alias: bool) -> bool:
        found = callers.of(symbol)
        if found is None:
            return False  # callers cannot be known
        if not found:
            return alias  # no caller in the project (a library's API, a registered handler)
        pending = []
        seen = False
        for caller in found:
            site = caller.site
            if caller.module.path == symbol.module.path and site.within[: len(symbol.path)] == symbol.path:
                continue  # its own body calling it again (or a same-named call inside)
            seen = True
            if site.handed in self.spec.background and (site.handed not in self.spec.spawns or site.dropped):
                continue  # run in the background
            if site.dropped and self._semantics is not None and hands_to_background(
                self._semantics.names, caller.module, site.within, site.handed, self.spec.background,
            ):
                continue  # ... by a project helper: the same verdict as by the API it calls
            if not site.called and not site.awaited and not site.handed.startswith("="):
                return False  # handed on as a value, to who knows (`handlers.append(f)`)
            pending.append(caller)
        for caller in sorted(pending, key=lambda c: not self._named_outside(c.site.within)):  # cheap ones first
            site = caller.site
            if site.handed.startswith("="):  # an alias in a class body or at module level
                other = Symbol(caller.module, (*site.within, site.handed[1:]), FUNCTION)
                if not self._only_outside(other, callers, hops + 1, alias=True):
                    return False
            elif not self._runs_outside(caller.module, site.within, callers, hops):
                return False  # (a value handed to a call awaited there, `await run(partial(f))`, runs there)
        return seen or alias

    def _named_outside(self, within: Tuple[str, ...]) -> bool:
        return not within or self.local.named(within[-1])

    def _runs_outside(self, module: ModuleSource, within: Tuple[str, ...], callers: Callers, hops: int) -> bool:
        if self._named_outside(within):
            return True  # module-level code runs at import; a start-up function by its name
        from deadline_lint.semantics.summary import summary_of

        summary = summary_of(module)
        if summary is None:
            return False
        if len(within) == 1 and summary.kinds.get(within[0]) == CLASS:
            return True  # a class body runs at import
        if len(within) == 1 and summary.kinds.get(within[0]) == FUNCTION or (
            len(within) == 2 and within[0] in summary.classes
            and summary.classes[within[0]].members.get(within[1]) == FUNCTION
        ):  # its callers first: a scan of texts, where the module's own reading is a walk of it
            if self._only_outside(Symbol(module, within, FUNCTION), callers, hops + 1):
                return True
        own = self._semantics is not None and module is self._semantics.own
        return within in (self._own_paths() if own else _outside_in(module, self.spec))

    def _own_paths(self) -> FrozenSet[Tuple[str, ...]]:
        if self._own is None:
            self._own = self.local.outside_paths()
        return self._own


def _path_of(function: ast.AST, defs: Dict[str, ast.AST]) -> Optional[Tuple[str, ...]]:
    """A top-level def's or a top-level class's method's path in its module."""
    for name, node in defs.items():
        if node is function:
            return (name,)
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if stmt is function and isinstance(stmt, (*_FUNCTIONS, ast.ClassDef)):
                    return (name, stmt.name)
    return None


def _relative(path: str, root: str) -> str:
    import os

    located = os.path.abspath(path)
    return os.path.relpath(located, root) if located.startswith(root.rstrip(os.sep) + os.sep) else located


# -- task roots (DL403) ----------------------------------------------------------------------
def task_spec(ctx: "FileView") -> OutsideRequests:
    """`outside_requests` with the catalog's `cancellation.task_roots` counted as running their
    coroutine on its own (`asyncio.run(main())`'s caller is synchronous and has no
    cancellation to lose, though a request may wait for it, so the retry rules do not use
    it; `start_server(handle)` runs a task per connection that nobody awaits), and without
    the script rule: a module's demo `__main__` block does not make its defs task roots."""
    base = ctx.catalog.retry.outside_requests
    specs: Dict[int, Tuple[OutsideRequests, OutsideRequests]] = current().memo(TaskRoots, lasting=True)  # by base
    found = specs.get(id(base))
    if found is None or found[0] is not base:
        mains = ctx.catalog.cancellation.task_roots
        derived = OutsideRequests(base.names, base.background | frozenset(mains), base.spawns, scripts=False)
        found = specs[id(base)] = (base, derived)
    return found[1]


class TaskRoots(Lifecycle):
    """Per file: `Lifecycle` where an event loop's main coroutine also runs on its own."""

    def __init__(self, ctx: "FileView") -> None:
        self._init(task_spec(ctx), ctx.tree)


class ProjectTaskRoots(ProjectLifecycle):
    """Per file (DL403): `ProjectLifecycle` over `TaskRoots`: a coroutine nobody waits for
    (a task dropped or only kept, a loop's main, start-up and shutdown code) or whose every
    caller in the project is such code."""

    def __init__(self, ctx: "FileView") -> None:
        super().__init__(ctx)
        self.local = ctx.analysis(TaskRoots)
        self.spec = task_spec(ctx)

