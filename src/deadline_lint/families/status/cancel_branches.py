"""What the `except` clause of DL403 does with a task's cancellation: which way each `if` in it
goes when the caught exception is the cancellation, which raises hand it on, and so which
ways out of the handler leak it."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, List, Optional, Tuple

from deadline_lint.families.shared.errors.exceptions import CANCEL, Admission, ExceptionAnalysis
from deadline_lint.families.shared.errors.handling import HandlingAnalysis
from deadline_lint.families.status.handler_flow import Leak, handler_leaks
from deadline_lint.semantics.local.children import walk as walk_nodes

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


def block_of(owner: Optional[ast.AST], statement: ast.stmt) -> Optional[Tuple[List[ast.stmt], int]]:
    """The statement list of `owner` that holds `statement`, and its index there."""
    if owner is None:
        return None
    blocks = [getattr(owner, field, None) for field in ("body", "orelse", "finalbody")]
    blocks += [handler.body for handler in getattr(owner, "handlers", ()) or ()]
    blocks += [case.body for case in getattr(owner, "cases", ()) or ()]
    for block in blocks:
        if isinstance(block, list):
            for index, stmt in enumerate(block):
                if stmt is statement:
                    return block, index
    return None


def hands_on_cancel(exceptions: ExceptionAnalysis) -> Callable[[ast.Raise], bool]:
    """A `raise` of the task's cancellation type (`raise asyncio.CancelledError`)."""

    def hands_on(raise_node: ast.Raise) -> bool:
        if raise_node.exc is None:
            return False
        raised = raise_node.exc.func if isinstance(raise_node.exc, ast.Call) else raise_node.exc
        found = exceptions.type_of(raised)
        return found is not None and found.kind == CANCEL and not found.status

    return hands_on


def cancel_leaks(
    handler: ast.ExceptHandler, decide: "CancelBranches", exceptions: ExceptionAnalysis
) -> Tuple[Leak, ...]:
    return handler_leaks(handler, hands_on_cancel(exceptions), decide)


class CancelBranches:
    """Which way an `if` in the handler goes when the caught exception is the cancellation:
    `isinstance(exc, OSError)` never holds, `not isinstance(exc, Exception)` always does.
    A test against a type that cannot be resolved makes the whole handler `unknown`."""

    def __init__(
        self, handler: ast.ExceptHandler, ctx: "FileView", handling: HandlingAnalysis, exceptions: ExceptionAnalysis
    ) -> None:
        self.caught = handler.name
        self.handling = handling
        self.exceptions = exceptions
        self.scope = ctx.scope
        self.unknown = self.caught is not None and any(
            not found[1].complete
            for stmt in handler.body
            for found in map(self._isinstance_of_caught, walk_nodes(stmt))
            if found is not None
        )

    def __call__(self, test: ast.expr) -> Optional[bool]:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            parts = [self(value) for value in test.values]
            if isinstance(test.op, ast.And):
                return False if False in parts else (True if all(p is True for p in parts) else None)
            return True if True in parts else (False if all(p is False for p in parts) else None)
        found = self._isinstance_of_caught(test)
        if found is None:
            return None
        admission = found[1]
        if not admission.complete:
            return None
        return self.handling.task_cancel(admission) is not None

    def _isinstance_of_caught(self, node: ast.AST) -> Optional[Tuple[ast.expr, Admission]]:
        found = self.exceptions.isinstance_test(node, self.scope) if isinstance(node, ast.Call) else None
        if found is None or not isinstance(found[0], ast.Name) or found[0].id != self.caught:
            return None
        return found
