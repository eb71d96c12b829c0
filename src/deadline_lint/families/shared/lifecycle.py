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
so it is never inferred from its callers there; its callers in the project are
`project_lifecycle.py`.
"""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Set, Tuple, Type

from deadline_lint.catalog.retry import OutsideRequests
from deadline_lint.semantics.local.children import node_types
from deadline_lint.semantics.local.expressions import last_name

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


def _fields_of(node_type: type) -> Tuple[str, ...]:
    return tuple(f for f in getattr(node_type, "_fields", ()) if f not in _NO_NODES)


# Every node type the interpreter defines, filled at import and never written: the walk keeps
# no memo. A plain dict: looked up for every node (a read-only proxy's lookup costs twice).
_FIELDS: Dict[type, Tuple[str, ...]] = {t: _fields_of(t) for t in node_types()}


def _node_fields(node_type: Type[ast.AST]) -> Tuple[str, ...]:
    fields = _FIELDS.get(node_type)
    return fields if fields is not None else _fields_of(node_type)


def _is_script(tree: ast.Module) -> bool:
    """`if __name__ == "__main__":` at module level, unless all it does is run the module's
    tests (`unittest.main()`, `pytest.main([__file__])`): a test module is not a script."""
    for stmt in tree.body:
        test = stmt.test if isinstance(stmt, ast.If) else None
        if (
            isinstance(stmt, ast.If)
            and isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == "__name__"
            and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__"
        ):
            return not all(_runs_tests(s) for s in stmt.body)
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
