"""A budget's seconds given as a parameter (`budget_s`) are the time left when the function was
called. A function that spends them more than once (two hops, a hop and a forward, a hop in a
loop) gives every later hop the time the earlier ones already used. The mechanical cure, shared
by `--thread-budget` (thread_budget.py) and DL107's fix: turn the parameter into a deadline on
entry (`budget_deadline_s = time.monotonic() + budget_s`) and spend what is left of it at each
later hop (`budget_deadline_s - time.monotonic()`).

Prove or bail: only where `time` is the standard module everywhere in the file (never rebound,
never `from time import ...` under that name), the function binds no `time` and no name the
deadline would take, has no nested scope (a nested def has its own budget or none), and its
first statement has a line of its own to go before.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.scopes import PARAM, Binding
from deadline_lint.support.diagnostics import Edit
from deadline_lint.support.source import SourceFile

THREADED_PARAMETER = "budget_s"  # what --thread-budget adds; its deadline has a fixed name
THREADED_DEADLINE = "budget_deadline_s"


def deadline_name(parameter: str) -> str:
    return THREADED_DEADLINE if parameter == THREADED_PARAMETER else f"{parameter}_deadline"


def remaining_text(parameter: str) -> str:
    return f"{deadline_name(parameter)} - time.monotonic()"


@dataclass(frozen=True)
class Deadline:
    parameter: str
    name: str
    remaining: str  # what is left of it now (not parenthesised)
    opening: Tuple[Edit, ...]  # the statement that takes it, () when the function already does
    imports: Tuple[str, ...]


def spend_from_a_deadline(ctx, snapshots: Dict[str, Binding]) -> Optional[Deadline]:
    """For DL107: the deadline the function's one seconds parameter can be turned into."""
    parameters = [name for name, binding in snapshots.items() if binding.kind == PARAM]
    if len(parameters) != 1:
        return None
    parameter = parameters[0]
    function = ctx.scope.node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    name = deadline_name(parameter)
    remaining = remaining_text(parameter)
    if has_deadline(function, name):
        return Deadline(parameter, name, remaining, (), ())
    if not can_take_deadline(ctx.tree, function, name):
        return None
    opening = prepend_statement(ctx.source, function, f"{name} = time.monotonic() + {parameter}")
    if opening is None:
        return None
    imports = () if imports_time(ctx.tree) else ("time",)
    return Deadline(parameter, name, remaining, (opening,), imports)


def can_take_deadline(tree: ast.Module, function: Function, name: str) -> bool:
    return (
        module_time_is_the_module(tree) and not mentions_name(function, name)
        and not binds_name(function, "time") and not has_nested_scope(function)
    )


def has_deadline(function: Function, name: str) -> bool:
    """The body opens with `name = ...`, after its docstring and, at an edge `adopt` minted,
    after the mint that binds the budget the deadline is taken from."""
    first = first_statement(function)
    if first is not None and _binds(first, THREADED_PARAMETER):
        after = function.body.index(first) + 1
        first = function.body[after] if after < len(function.body) else None
    return first is not None and _binds(first, name)


def _binds(statement: ast.stmt, name: str) -> bool:
    """`name = ...`, or a `try:` opening with it (an inbound header's mint)."""
    if isinstance(statement, ast.Try) and statement.body:
        statement = statement.body[0]
    return (
        isinstance(statement, ast.Assign) and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == name
    )


def first_statement(function: Function) -> Optional[ast.stmt]:
    body = list(function.body)
    if (
        body and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return body[0] if body else None


def prepend_statement(source: SourceFile, function: Function, statement: str) -> Optional[Edit]:
    """`statement` on a line of its own before the body's first statement (after a docstring)."""
    first = first_statement(function)
    if first is None or first.lineno == function.lineno:
        return None
    line = source.line_text(first.lineno)
    indent = line[: source.char_column(first.lineno, first.col_offset)]
    if indent.strip(" \t"):
        return None  # shares its line with the docstring (`"doc"; x = 1`)
    ending = line[len(line.rstrip("\r\n")):] or "\n"
    at = source.line_starts[first.lineno - 1]
    return Edit(at, at, f"{indent}{statement}{ending}")


def imports_time(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.Import) and any(a.name == "time" and a.asname is None for a in node.names)
        for node in tree.body
    )


def has_nested_scope(function: Function) -> bool:
    """A nested def or lambda has its own `budget_s` (or none): its edits are not ours."""
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) and node is not function
        for node in walk_nodes(function)
    )


def mentions_name(function: Function, name: str) -> bool:
    return any(
        (isinstance(node, ast.Name) and node.id == name) or (isinstance(node, ast.arg) and node.arg == name)
        for node in walk_nodes(function)
    )


def binds_name(function: Function, name: str) -> bool:
    """A parameter, local or nested import called `name` in the function."""
    for node in walk_nodes(function):
        if isinstance(node, ast.arg) and node.arg == name:
            return True
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
            (a.asname or a.name.split(".")[0]) == name for a in node.names
        ):
            return True
    return False


def module_time_is_the_module(tree: ast.Module) -> bool:
    """`time` at module level is unbound or only ever `import time`."""
    for node in walk_nodes(tree):
        if isinstance(node, ast.Import):
            if any((a.asname or a.name.split(".")[0]) == "time" and a.name != "time" for a in node.names):
                return False
        elif isinstance(node, ast.ImportFrom):
            if any((a.asname or a.name) == "time" for a in node.names):
                return False
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == "time":
            return False
        elif isinstance(node, ast.Name) and node.id == "time" and not isinstance(node.ctx, ast.Load):
            return False
    return True
