from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, List, Optional, Sequence, Tuple

from deadline_lint.catalog import Catalog
from deadline_lint.engine.requires import Aliases, Look, Names, Project, Words
from deadline_lint.engine.rule import Rule, register
from deadline_lint.families.spawn.common import imports_task_wrapper, may_start, start_first_look, task_words
from deadline_lint.families.spawn.spawn import TASK, Spawns
from deadline_lint.families.spawn.spawn_catalog import spawn_catalog
from deadline_lint.families.spawn.spawn_facts import TaskWrappers
from deadline_lint.semantics.local.scopes import FUNCTION, GLOBAL
from deadline_lint.semantics.local.usage import loaded_names
from deadline_lint.settings.profile import Profile

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

# A task bound to a local name, judged when the walk leaves its function: (the name, the
# call, how a message shows the call).
Pending = Tuple[str, ast.Call, str]


@register
class TaskWithoutOwner(Rule):
    """
    ## What it does
    Flags `asyncio.create_task(...)`, `asyncio.ensure_future(...)`, `loop.create_task(...)`
    (on a loop from `asyncio.get_running_loop()` / `get_event_loop()` / `new_event_loop()`,
    held in a local, a parameter or attribute annotated as an event loop, or a `self`
    attribute bound to one) and the profile's `spawn_helpers` when the task is dropped: the
    call is a statement of its own (also inside a list, tuple, conditional or comprehension
    that is itself a statement), its result is only tested (`if`, `x if task else y`, a
    comprehension's `if`, a comparison), assigned to `_`, or bound to a local that the
    function never reads again. A task that is awaited, returned, passed to
    anything (`asyncio.gather`, `tasks.add`), stored in an attribute or collection, or given
    a done-callback has an owner and is not flagged; neither is `TaskGroup.create_task` or a
    trio/anyio nursery's `start_soon`, whose group owns the child.

    This covers what ruff's RUF006 flags (dropped results, a local never used, loops from
    `get_running_loop()` and friends) and what flake8-async's ASYNC300 flags for tasks
    nobody keeps (statements, displays and generators as statements, truth tests), and also
    `_ = create_task(...)`, loops held in parameters and attributes, `from asyncio import
    create_task` under any alias, and the organisation's own spawn helpers. ASYNC300 also
    flags a task that is awaited or returned; those have an owner and stay quiet here.

    ## Why is this bad?
    Nobody can cancel a task nobody holds. When the request that started it is cancelled or
    its deadline expires, the orphan keeps running, calling downstream services with time
    nobody has. The event loop keeps only a weak reference to it, so it may also vanish
    mid-flight, and its exception is never seen.

    ## Example
    ```python
    import asyncio

    async def handle(request):
        asyncio.create_task(refresh_cache(request.key))
        return await render(request)
    ```

    ## Use instead
    ```python
    import asyncio

    async def handle(request):
        async with asyncio.TaskGroup() as group:
            group.create_task(refresh_cache(request.key))
            return await render(request)
    ```

    ## Fix safety
    No fix: who should own the task (a TaskGroup, a set with a done-callback, the caller)
    is a design decision.

    ## Options
    - `spawn_helpers`: the organisation's own functions that start a task.
    """

    code = "DL501"
    name = "task-without-owner"
    summary = "task started and dropped: nobody awaits, stores or cancels it"
    node_types = (ast.Call,)
    leave_node_types = (ast.FunctionDef, ast.AsyncFunctionDef)

    # A call the vocabulary names, or (through the project facts) a project function or method
    # that hands back a task it started: only where an imported project module holds one, or
    # this file defines one (it then spells a task word itself).
    _wrappers = Project(lambda rule: imports_task_wrapper(rule.profile, rule.catalog))
    requires = Words.of(lambda rule: task_words(rule.profile, rule.catalog)) | _wrappers
    # Every finding starts at a call that may start a task: `x.<word>()`, `<word>()` or an
    # imported name, under its own name (a word) or another; or at a project wrapper's call.
    body_requires = Names.of(lambda rule: task_words(rule.profile, rule.catalog)) | Aliases() | _wrappers
    first_looks = {ast.Call: Look.of(lambda rule: _lose_first_look(rule.profile, rule.catalog))}

    def __init__(self, profile: Profile, catalog: Catalog) -> None:
        super().__init__(profile, catalog)
        self._words = task_words(profile, catalog)
        self._discarding = spawn_catalog(catalog, profile.spawn_helpers).discarding_callbacks

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        spawn = None
        if may_start(node.func, self._words, ctx):
            spawn = ctx.analysis(Spawns).classify(node, ctx.scope)
        if spawn is not None and spawn.kind == TASK:
            display = f"`{spawn.display}(...)`"
        elif spawn is None and _may_lose(node, ctx.parents):
            answer = ctx.analysis(TaskWrappers).reached(node, ctx.scope)
            if answer is None:
                return
            display = answer.names()
        else:
            return
        parent = ctx.parent
        if _dropped(node, ctx.parents) or self._returned_to_a_discarding_callback(node, ctx.parents):
            ctx.report(self, node, f"{display} drops its task: nobody can await or cancel it; "
                       "start it in a TaskGroup or keep it (and cancel it with the request)")
            return
        target = _single_name_target(parent, node)
        if target is None:
            return
        if target == "_":
            ctx.report(self, node, f"{display} is assigned to `_`: nobody can await or cancel the task; "
                       "start it in a TaskGroup or keep it (and cancel it with the request)")
            return
        scope = ctx.scope
        if scope.kind != FUNCTION or any(b.kind == GLOBAL for b in scope.bindings().get(target, [])):
            return  # a module, class or global name may be read from anywhere
        pending: List[Pending] = ctx.state(self, list)
        pending.append((target, node, display))  # judged when the walk leaves the function

    def _returned_to_a_discarding_callback(self, call: ast.Call, parents: Sequence[ast.AST]) -> bool:
        """`fut.add_done_callback(lambda _: asyncio.create_task(...))`, `loop.call_later(5,
        lambda: asyncio.ensure_future(...))`: the lambda returns the task to a caller that
        throws it away."""
        if len(parents) < 2 or not isinstance(parents[-1], ast.Lambda) or parents[-1].body is not call:
            return False
        registering = parents[-2]
        return (
            isinstance(registering, ast.Call)
            and isinstance(registering.func, ast.Attribute)
            and registering.func.attr in self._discarding
            and any(arg is parents[-1] for arg in registering.args)
        )

    def leave_FunctionDef(self, node: ast.FunctionDef, ctx: "FileView") -> None:
        self._judge_pending(ctx)

    def leave_AsyncFunctionDef(self, node: ast.AsyncFunctionDef, ctx: "FileView") -> None:
        self._judge_pending(ctx)

    def _judge_pending(self, ctx: "FileView") -> None:
        pending: List[Pending] = ctx.state(self, list)
        if not pending:
            return
        used = loaded_names(ctx.scope)
        for target, call, display in pending:
            if target not in used:
                ctx.report(self, call, f"{display} is bound to `{target}`, which is never used again: nobody "
                           "awaits or cancels the task; await it, keep it, or start it in a TaskGroup")


def _lose_first_look(profile: Profile, catalog: Catalog) -> Callable[[ast.Call, "FileView"], bool]:
    """The first look: the call may start a task by its name, or its value is dropped or bound
    to a name (it may be a project wrapper's task)."""
    start = start_first_look(profile, catalog)
    return catalog.cached(
        _lose_first_look, lambda: lambda node, ctx: start(node, ctx) or _may_lose(node, ctx.parents), id(start)
    )


def _may_lose(call: ast.Call, parents: Sequence[ast.AST]) -> bool:
    """A cheap look before asking the project: the call's value is dropped, or bound to one
    plain name."""
    return _dropped(call, parents) or _single_name_target(parents[-1] if parents else None, call) is not None


# Where a task's value passes through unchanged (it may still end up kept) ...
_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Starred, ast.BoolOp)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp)
# ... and where it is only tested or compared, then lost.
_TESTS = (ast.If, ast.While, ast.IfExp, ast.Assert)


def _dropped(call: ast.Call, parents: Sequence[ast.AST]) -> bool:
    """The task ends up nowhere: an expression statement (also inside a list, tuple,
    conditional or comprehension that is itself a statement), or only tested for truth
    (`if`, `while`, `x if task else y`, a comprehension's `if`, `not`, a comparison)."""
    child: ast.AST = call
    for parent in reversed(parents):
        if isinstance(parent, ast.Expr):
            return True
        if isinstance(parent, _TESTS) and getattr(parent, "test", None) is child:
            return True
        if isinstance(parent, ast.comprehension):
            return child in parent.ifs
        if isinstance(parent, (ast.Compare, ast.UnaryOp)) and not isinstance(getattr(parent, "op", None), ast.USub):
            return True
        if isinstance(parent, _CONTAINERS) or (isinstance(parent, ast.IfExp) and child is not parent.test):
            child = parent
            continue
        if isinstance(parent, _COMPREHENSIONS) and getattr(parent, "elt", None) is child:
            child = parent
            continue
        return False
    return False


def _single_name_target(parent: Optional[ast.AST], call: ast.Call) -> Optional[str]:
    """`t = call` / `t: Task = call`: the one plain name the task is bound to."""
    target: ast.expr
    if isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1:
        target = parent.targets[0]
    elif isinstance(parent, ast.AnnAssign) and parent.value is call:
        target = parent.target
    else:
        return None
    return target.id if isinstance(target, ast.Name) else None
