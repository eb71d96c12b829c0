"""The shape of a hand-written retry loop, read from statements alone: shared by the retry
analysis of the file being checked and by the project fact about retry helpers (which reads
other modules, and so cannot depend on the analysis)."""
from __future__ import annotations

import ast
from typing import Iterator, List

from deadline_lint.semantics.local.resolve import dotted_parts


def _loop_level(statement: ast.stmt) -> Iterator[ast.stmt]:
    """The statement and those nested in its if/with blocks (not in loops or defs)."""
    yield statement
    if isinstance(statement, ast.If):
        for child in [*statement.body, *statement.orelse]:
            yield from _loop_level(child)
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        for child in statement.body:
            yield from _loop_level(child)


def _exits_on_success(attempt: ast.Try, after: List[ast.stmt]) -> bool:
    """The loop ends when the attempt works: a return/break in the try body or its else,
    or right after the try."""
    for statement in [*attempt.body, *attempt.orelse]:
        for node in _loop_level(statement):
            if isinstance(node, (ast.Return, ast.Break)):
                return True
    return bool(after) and isinstance(after[0], (ast.Return, ast.Break))


def _goes_round(handler: ast.ExceptHandler) -> bool:
    """The handler can reach the next iteration: its last statement does not leave the loop,
    or it reaches a `continue` first (`if attempts_left: continue` then `raise`)."""
    return not _leaves(handler.body[-1]) or continues(handler.body)


def continues(block: List[ast.stmt]) -> bool:
    """A `continue` of the loop is reached in the block (inside its if/with blocks, not in a
    nested loop or def)."""
    return any(isinstance(node, ast.Continue) for statement in block for node in _loop_level(statement))


def _leaves(last: ast.stmt) -> bool:
    if isinstance(last, (ast.Raise, ast.Return, ast.Break)):
        return True
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        name = dotted_parts(last.value.func)
        if name and name[-1] in ("exit", "_exit", "abort"):
            return True
    return False
