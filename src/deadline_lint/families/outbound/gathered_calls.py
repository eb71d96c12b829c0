"""Calls started together that a function waits for as a group: the coroutines handed to an
awaited `asyncio.gather(...)`, and the tasks of an `asyncio.TaskGroup` (`async with
asyncio.TaskGroup() as tg: tg.create_task(...)`). They share one remainder while they run;
all of them have finished when the `await` returns or the block ends (DL107)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, List, Optional, Tuple, Union

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

Chain = Tuple[ast.AST, ...]
_GATHERS = frozenset({"asyncio.gather"})
Group = Union[ast.Call, ast.AsyncWith]  # an awaited gather, or a TaskGroup's block


def awaited_group(node: ast.Call, ctx: "FileView") -> Optional[Tuple[Group, Chain]]:
    """(the `asyncio.gather(...)` call, its chain of ancestors) when `node` is one of its
    arguments and the gather is awaited in an async function: every call handed to it has
    finished when the `await` returns. Likewise (the `async with` statement, its chain) for a
    task of a `TaskGroup`, finished when the block ends."""
    parents = ctx.parents
    if len(parents) < 2 or not isinstance(ctx.scope.node, ast.AsyncFunctionDef):
        return None
    gather = parents[-1]
    if not isinstance(gather, ast.Call) or not any(a is node for a in gather.args):
        return None
    if _task_group_task(gather, parents, ctx):
        block = parents[-3]
        assert isinstance(block, ast.AsyncWith)  # what `_task_group_task` found
        return block, tuple(parents[:-3])
    if not isinstance(parents[-2], ast.Await):
        return None
    if ctx.resolver.qualified_name(gather.func, ctx.scope) not in _GATHERS:
        return None
    return gather, tuple(parents[:-1])


def _task_group_task(call: ast.Call, parents: List[ast.AST], ctx: "FileView") -> bool:
    """`tg.create_task(...)`, a statement in the body of `async with asyncio.TaskGroup() as
    tg:`: the task has finished when the block ends."""
    func = call.func
    if len(parents) < 3 or not (isinstance(func, ast.Attribute) and func.attr == "create_task"):
        return False
    statement, block = parents[-2], parents[-3]
    if not isinstance(statement, ast.Expr) or not isinstance(block, ast.AsyncWith) or statement not in block.body:
        return False
    for item in block.items:
        target, made = item.optional_vars, item.context_expr
        if isinstance(target, ast.Name) and isinstance(func.value, ast.Name) and target.id == func.value.id:
            if not isinstance(made, ast.Call):
                return False
            return ctx.resolver.qualified_name(made.func, ctx.scope) == "asyncio.TaskGroup"
    return False
