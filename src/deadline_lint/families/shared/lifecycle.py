"""Code no request waits for: start-up, shutdown, readiness probes, background jobs, scripts.

A retry there spends nobody's deadline, so the retry rules leave it alone (catalog
`retry.yaml` `outside_requests`). A function is outside any request when

- its module is a script (`if __name__ == "__main__":` at module level, other than a test
  module's `unittest.main()`);
- its name says so (`startup`, `on_shutdown`, `health_check`, `wait_until_ready`, ...);
- it runs on its own: passed to a scheduler or a thread (`add_job(self._sync)`,
  `Thread(target=poll)`), or made a task nobody waits for
  (`self._task = asyncio.create_task(self._run())`, the task dropped, or bound to a local the
  function only keeps: `self.tasks.add(task)`, `task.add_done_callback(...)`). A name handed
  as an attribute (`self._run`) is a method, a bare name a function: a method and a nested
  def sharing a name are not confused;
- it is private to the file (`_name`, or a def nested in another) and every use of its name
  in the file is a call made from code outside any request (or hands it to a scheduler).

`Lifecycle` reads only this file: a public function may be called from a request elsewhere,
so it is never inferred from its callers there. `ProjectLifecycle` (DL302) adds the project's
callers (`semantics/callers.py`): a def whose every caller in the project runs outside any
request (start-up code in another module, a background task of this file, import time), by
these same rules in the caller's own module and then through its callers in turn, runs
outside too. A def with no caller in the project (a library's public API, a route handler
registered by a decorator), one handed on as a value, or one with a caller we cannot place
stays inside: precision first means the retry is still reported.
"""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Set, Tuple

from deadline_lint.catalog.retry import OutsideRequests
from deadline_lint.semantics.callers import Callers, is_test_path
from deadline_lint.semantics.facts import MAX_HOPS
from deadline_lint.semantics.local.expressions import last_name
from deadline_lint.semantics.modules import ModuleSource
from deadline_lint.semantics.summary import CLASS, FUNCTION, Symbol, content_key

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_TEST_RUNNERS = frozenset({"unittest", "pytest"})


class Lifecycle:
    """Per file: which function definitions run outside any request."""

    def __init__(self, ctx: "FileView") -> None:
        self._init(ctx.catalog.retry.outside_requests, ctx.tree)

    @classmethod
    def of_tree(cls, spec: OutsideRequests, tree: ast.Module) -> "Lifecycle":
        found = cls.__new__(cls)
        found._init(spec, tree)
        return found

    def _init(self, spec: OutsideRequests, tree: ast.Module) -> None:
        self._patterns = [re.compile(p) for p in spec.names]
        self._background = spec.background
        self._spawns = spec.spawns
        self._script = spec.scripts and _is_script(tree)
        self._outside: Optional[Set[int]] = None
        self._tree = tree

    def outside_paths(self) -> FrozenSet[Tuple[str, ...]]:
        """The defs outside any request, by their path in the module (`("C", "m")`); every
        def when the module is a script."""
        found: Set[Tuple[str, ...]] = set()
        stack: List[Tuple[ast.AST, Tuple[str, ...]]] = [(self._tree, ())]
        while stack:
            node, path = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (*_FUNCTIONS, ast.ClassDef)):
                    inner = (*path, child.name)
                    if isinstance(child, _FUNCTIONS) and self.outside(child):
                        found.add(inner)
                    stack.append((child, inner))
                else:
                    stack.append((child, path))
        return frozenset(found)

    def outside(self, function: Optional[ast.AST]) -> bool:
        """`function` (a def) runs outside any request; module-level code of a script too."""
        if self._script:
            return True
        if not isinstance(function, _FUNCTIONS):
            return False
        if self._outside is None:
            self._outside = self._compute()
        return id(function) in self._outside

    def named(self, name: str) -> bool:
        """The name says it runs outside requests (`startup`, `health_check`, ...)."""
        return self._named(name)

    def _named(self, name: str) -> bool:
        bare = name.lstrip("_").lower()
        return any(p.fullmatch(bare) for p in self._patterns)

    def _compute(self) -> Set[int]:
        defs: Dict[str, List[ast.AST]] = {}
        enclosing: Dict[int, Optional[ast.AST]] = {}  # node id -> innermost def around it
        nested: Set[int] = set()
        parents: Dict[int, ast.AST] = {}
        # (name, spelled as an attribute?) given to a scheduler, a thread or a task nobody awaits
        handed: Set[Tuple[str, bool]] = set()
        handed_nodes: Set[int] = set()
        methods: Set[int] = set()  # defs directly in a class body
        uses: Dict[str, List[ast.AST]] = {}  # name -> its loads (Name, or Attribute by attr)
        calls: List[ast.Call] = []
        stack: List[tuple] = [(self._tree, None)]
        while stack:  # one walk, recording what the questions below need
            node, owner = stack.pop()
            if isinstance(node, ast.ClassDef):
                methods.update(id(s) for s in node.body if isinstance(s, _FUNCTIONS))
            if isinstance(node, _FUNCTIONS):
                defs.setdefault(node.name, []).append(node)
                if owner is not None:
                    nested.add(id(node))
            elif isinstance(node, ast.Call):
                if last_name(node.func) in self._background or _dotted(node.func) in self._background:
                    calls.append(node)
            elif isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    uses.setdefault(node.id, []).append(node)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                uses.setdefault(node.attr, []).append(node)
            inner = node if isinstance(node, _FUNCTIONS) else owner
            for field in _node_fields(type(node)):
                value = getattr(node, field, None)
                for child in value if type(value) is list else (value,):
                    if isinstance(child, ast.AST):
                        if isinstance(child, _ASKED_ABOUT):  # the only nodes asked about below
                            parents[id(child)] = node
                            enclosing[id(child)] = inner
                        stack.append((child, inner))
        outside = {id(d) for name, found in defs.items() if self._named(name) for d in found}
        for call in calls:
            if last_name(call.func) in self._spawns and not _unawaited(call, parents, enclosing, uses):
                continue
            for argument in [*call.args, *(k.value for k in call.keywords)]:
                target = argument.func if isinstance(argument, ast.Call) else argument
                name = last_name(target)
                if name is not None:
                    handed.add((name, isinstance(target, ast.Attribute)))
                    handed_nodes.add(id(target))
        # `self._run` is a method, a bare `nudge` a function: a method and a nested def of the
        # same name are two functions
        outside.update(
            id(d) for name, attribute in handed for d in defs.get(name, ()) if (id(d) in methods) == attribute
        )
        changed = True
        while changed:
            changed = False
            for name, found in defs.items():
                if all(id(d) in outside for d in found):
                    continue
                private = (name.startswith("_") and not name.endswith("__")) or all(id(d) in nested for d in found)
                loads = uses.get(name, [])
                if not private or not loads:
                    continue
                if all(
                    id(use) in handed_nodes
                    or (_is_called(use, parents) and id(enclosing.get(id(use))) in outside)
                    for use in loads
                ):
                    outside.update(id(d) for d in found)
                    changed = True
        return outside


# Nodes whose parent or enclosing def the questions above ask for: calls (handed to a
# scheduler?) and the loads of a name (called?).
_ASKED_ABOUT = (ast.Call, ast.Name, ast.Attribute)
# Fields that never hold a node: expression contexts and operators are not walked.
_NO_NODES = frozenset({"ctx", "op", "ops"})
_FIELDS: Dict[type, List[str]] = {}


def _node_fields(node_type: type) -> List[str]:
    fields = _FIELDS.get(node_type)
    if fields is None:
        fields = _FIELDS[node_type] = [f for f in node_type._fields if f not in _NO_NODES]  # type: ignore[attr-defined]
    return fields


def _is_script(tree: ast.Module) -> bool:
    """`if __name__ == "__main__":` at module level, unless all it does is run the module's
    tests (`unittest.main()`, `pytest.main([__file__])`): a test module is not a script."""
    for stmt in tree.body:
        test = stmt.test if isinstance(stmt, ast.If) else None
        if (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == "__name__"
            and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__"
        ):
            return not all(_runs_tests(s) for s in stmt.body)  # type: ignore[attr-defined]
    return False


def _runs_tests(stmt: ast.stmt) -> bool:
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return True
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    func = call.func if isinstance(call, ast.Call) else None
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "main"
        and isinstance(func.value, ast.Name)
        and func.value.id in _TEST_RUNNERS
    )


def _unawaited(
    call: ast.Call, parents: Dict[int, ast.AST], enclosing: Dict[int, Optional[ast.AST]], uses: Dict[str, List[ast.AST]]
) -> bool:
    """A task made as a statement (dropped), kept on an attribute (`self._task = ...`), or
    bound to a local that the function only keeps (`self.tasks.add(task)`, `pending[k] = task`,
    `task.add_done_callback(...)`, `task.cancel()`), never awaits, returns or hands elsewhere."""
    parent = parents.get(id(call))
    if isinstance(parent, ast.Expr):
        return True
    if not isinstance(parent, (ast.Assign, ast.AnnAssign)):
        return False
    targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
    if all(isinstance(t, ast.Attribute) for t in targets):
        return True
    if len(targets) != 1 or not isinstance(targets[0], ast.Name):
        return False
    owner = enclosing.get(id(call))
    if owner is None:
        return False  # a module-level name: anyone may import and await it
    loads = [u for u in uses.get(targets[0].id, ()) if isinstance(u, ast.Name) and enclosing.get(id(u)) is owner]
    return all(_only_keeps(use, parents) for use in loads)


_KEEPING_METHODS = frozenset({"add_done_callback", "remove_done_callback", "cancel", "set_name"})
_STORING_METHODS = frozenset({"add", "append"})


def _only_keeps(use: ast.AST, parents: Dict[int, ast.AST]) -> bool:
    """`use` (a load of the task's local) stores the task or asks it for a callback or a
    cancel: nothing waits for it there."""
    parent = parents.get(id(use))
    if isinstance(parent, ast.Attribute):  # `task.add_done_callback(f)`
        call = parents.get(id(parent))
        return parent.attr in _KEEPING_METHODS and isinstance(call, ast.Call) and call.func is parent
    if isinstance(parent, ast.Assign):  # `self.consumers[pid] = task`
        return parent.value is use and all(isinstance(t, (ast.Attribute, ast.Subscript)) for t in parent.targets)
    if isinstance(parent, ast.Call):  # `self.tasks.add(task)`
        return (
            use in parent.args and isinstance(parent.func, ast.Attribute) and parent.func.attr in _STORING_METHODS
            and isinstance(parents.get(id(parent)), ast.Expr)
        )
    return False


def _dotted(func: ast.expr) -> Optional[str]:
    """`asyncio.run` for `asyncio.run(...)`: a module-qualified spelling, as written."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return None


def _is_called(use: ast.AST, parents: Dict[int, ast.AST]) -> bool:
    parent = parents.get(id(use))
    return isinstance(parent, ast.Call) and parent.func is use



_PATHS: Dict[Tuple[str, int], FrozenSet[Tuple[str, ...]]] = {}  # by module content and spec


def _outside_in(module: ModuleSource, spec: OutsideRequests) -> FrozenSet[Tuple[str, ...]]:
    key = (content_key(module), id(spec))
    found = _PATHS.get(key)
    if found is None:
        tree = module.tree
        found = _PATHS[key] = Lifecycle.of_tree(spec, tree).outside_paths() if tree is not None else frozenset()
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
                if stmt is function:
                    return (name, stmt.name)  # type: ignore[attr-defined]
    return None


def _relative(path: str, root: str) -> str:
    import os

    located = os.path.abspath(path)
    return os.path.relpath(located, root) if located.startswith(root.rstrip(os.sep) + os.sep) else located


# -- task roots (DL403) ----------------------------------------------------------------------
_TASK_SPECS: Dict[int, Tuple[OutsideRequests, OutsideRequests]] = {}


def task_spec(ctx: "FileView") -> OutsideRequests:
    """`outside_requests` with the catalog's `cancellation.task_roots` counted as running their
    coroutine on its own (`asyncio.run(main())`'s caller is synchronous and has no
    cancellation to lose, though a request may wait for it, so the retry rules do not use
    it; `start_server(handle)` runs a task per connection that nobody awaits), and without
    the script rule: a module's demo `__main__` block does not make its defs task roots."""
    base = ctx.catalog.retry.outside_requests
    found = _TASK_SPECS.get(id(base))
    if found is None or found[0] is not base:
        mains = (ctx.catalog.data.get("cancellation") or {}).get("task_roots") or ()
        derived = OutsideRequests(base.names, base.background | frozenset(mains), base.spawns, scripts=False)
        found = _TASK_SPECS[id(base)] = (base, derived)
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

