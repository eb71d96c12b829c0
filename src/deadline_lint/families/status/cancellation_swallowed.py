from __future__ import annotations

import ast
from typing import TYPE_CHECKING, FrozenSet, List, Optional, Sequence, Union

from deadline_lint.engine.edits import append_statement
from deadline_lint.engine.requires import Words, in_body, in_file
from deadline_lint.engine.rule import Rule, register
from deadline_lint.families.shared.errors.cancel_scopes import shielded
from deadline_lint.families.shared.errors.exceptions import CANCEL, ExceptionAnalysis
from deadline_lint.families.shared.errors.handling import HandlingAnalysis, except_keyword
from deadline_lint.families.status.cancel_branches import CancelBranches, block_of, cancel_leaks, hands_on_cancel
from deadline_lint.families.status.cancellation_flow import (
    calls_any,
    can_suspend,
    cancelled_before_loop,
    cancels_then_awaits,
    passes_caught_on,
    raised_later,
)
from deadline_lint.families.status.common import shown
from deadline_lint.families.status.handler_flow import (
    FALLS_THROUGH,
    RAISES_OTHER,
    reraises_on_some_path,
)
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.support.diagnostics import Applicability, Edit

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_TRY_TYPES = (ast.Try, ast.TryStar)
_CATCH_ALL_WORDS = ("BaseException", "except:")  # the only other spellings that catch it


def _cancel_words(rule: Rule) -> FrozenSet[str]:
    vocabulary = rule.catalog.exceptions
    words = {t.short_name for t in vocabulary.types.values() if t.kind == CANCEL and not t.status}
    words.update(vocabulary.conventions.get(CANCEL, ()))
    words.update(_CATCH_ALL_WORDS)
    return frozenset(words)


@register
class CancellationSwallowed(Rule):
    """
    ## What it does
    In an `async def`, flags an `except` clause that catches the task's cancellation
    (`except asyncio.CancelledError` in any spelling, alone or in a tuple; trio's
    `Cancelled`; a bare `except:`; `except BaseException`) whose body can end, on some path,
    without re-raising it: by falling off its end, by `return`, `break` or `continue`, or by
    raising another exception (with or without `from`). Also flags
    `with contextlib.suppress(asyncio.CancelledError):` in an `async def`. The finding is on
    the `except` line (on the `suppress(...)` call).

    Quiet when every path re-raises (a bare `raise`, `raise <the caught name>`, or a new
    `CancelledError`), and when the code cancelled the task itself just before awaiting it
    (`task.cancel()` then `await task` or `await asyncio.wait_for(task, 1)` inside the `try`
    or `with`, or `for t in pending: t.cancel()` before a `for t in pending:` loop that awaits
    each): swallowing the cancellation it asked for is the point. Quiet too where no caller's
    cancellation can arrive: under a shielded scope (`with anyio.CancelScope(shield=True):`,
    catalog `cancellation.shields`), or in the cleanup of an enclosing handler that caught the
    cancellation and re-raises it on every path; and when the handler converts the
    cancellation on one branch only and re-raises it on the other (`if disconnected.is_set():
    raise ClientClosed()` then `raise`): the branch tells its own cancellation from the
    caller's. Synchronous code is not checked, nor a `try`
    that never waits: there `CancelledError` comes from a future (`future.result()`), not
    from the running task. Also quiet when the handler decides for itself: it asks
    `task.cancelling()`, hands the exception object to other code (`errors.append(exc)`,
    `fut.set_exception(exc)`, `sys.exc_info()`; logging it does not count), or an earlier
    clause of the same `try` already takes the cancellation (an earlier clause whose types
    cannot be resolved counts only when its text spells a cancel or catch-all type: a
    project's `except RETRYABLE_ERRORS:` does not hide `except CancelledError: break` after it).
    Leaving a loop (`break`, `continue`, `return`) from the handler swallows it too. A handler
    that only notes the cancellation in a flag (`cancelled = True`) is quiet when the function
    raises it again on every way out after the `try` (each `return`, and the end, right after
    `if cancelled: raise asyncio.CancelledError`): it is handed on, late.

    A coroutine that swallows its own cancellation and then ends (a server loop, a consumer
    task nobody waits for) is still reported: returning normally instead of ending cancelled
    breaks `asyncio.timeout()`, `TaskGroup` and `Task.cancel()` around it. Where that is
    deliberate, say so with `# noqa: DL403`.

    ## Why is this bad?
    Cancellation is how a caller that gave up (a client that went away, a timeout scope
    that expired, a TaskGroup whose sibling failed) stops the work done on its behalf.
    Swallowing it keeps the task running for nobody, and breaks the machinery built on it:
    `asyncio.timeout()` no longer turns into `TimeoutError`, a `TaskGroup` cannot cancel its
    children, and a shutdown waits forever. Converting it into another exception does the same
    damage: the error propagates, the cancellation does not (flake8-async's ASYNC104 counts it
    the same way).

    ## Example
    ```python
    import asyncio

    async def consume(queue):
        while True:
            try:
                item = await queue.get()
            except asyncio.CancelledError:
                log.info("consumer cancelled")
            await handle(item)
    ```

    ## Use instead
    ```python
    import asyncio

    async def consume(queue):
        while True:
            try:
                item = await queue.get()
            except asyncio.CancelledError:
                log.info("consumer cancelled")
                raise
            await handle(item)
    ```

    ## Fix safety
    Unsafe: the fix appends `raise` to a handler whose only way out is falling off its end
    (it replaces a lone `pass`), so the task now ends cancelled instead of going on: code
    after the `try` stops running. Handlers that `return`, `break`, `continue` or raise
    something else get no fix; where the cancellation should go is a decision for a person.

    ## Options
    None. The profile's `exceptions.cancel` types are errors (they derive from `Exception`),
    not the task's cancellation, which is asyncio's and trio's; raising one of them from the
    handler does count as handing the cancellation on.
    """

    code = "DL403"
    name = "cancellation-swallowed"
    summary = "async code catches the task's cancellation and can end without re-raising it"
    fix_applicability = Applicability.UNSAFE
    node_types = (ast.ExceptHandler, ast.With, ast.AsyncWith)

    # Only async code can swallow a task's cancellation.
    # A handler is judged only when its nearest enclosing function (a class stops the search)
    # is an `async def`, which lies inside any function or class around the handler.
    needs = (in_file(Words.of(_cancel_words) & Words("async ")), in_body(Words("async")))

    def visit_ExceptHandler(self, node: ast.ExceptHandler, ctx: "FileView") -> None:
        if _in_async_function(ctx):
            self._handler(node, ctx)

    def visit_With(self, node: ast.With, ctx: "FileView") -> None:
        if _in_async_function(ctx):
            self._suppress(node, ctx)

    def visit_AsyncWith(self, node: ast.AsyncWith, ctx: "FileView") -> None:
        if _in_async_function(ctx):
            self._suppress(node, ctx)

    def _handler(self, handler: ast.ExceptHandler, ctx: "FileView") -> None:
        handling = ctx.analysis(HandlingAnalysis)
        exceptions = ctx.analysis(ExceptionAnalysis)
        cancel_type = handling.task_cancel(exceptions.handler(handler))
        if cancel_type is None or self._caught_earlier(handler, ctx, handling, exceptions):
            return
        if not can_suspend(getattr(ctx.parent, "body", ())):
            return  # nothing in the `try` waits: the cancellation cannot be the task's
        if self._someone_else_decides(handler, ctx) or self._not_the_callers(ctx, handling, exceptions):
            return
        decide = CancelBranches(handler, ctx, handling, exceptions)
        if decide.unknown:
            return
        leaks = cancel_leaks(handler, decide, exceptions)
        if not leaks or self._cancelled_it_itself(ctx, ctx.parents[-1] if ctx.parents else None, ctx.parents[:-1]):
            return
        if all(leak.how == RAISES_OTHER for leak in leaks) and reraises_on_some_path(handler):
            return  # converted on one branch, re-raised on the other: the branch tells whose it is
        if all(leak.how == FALLS_THROUGH for leak in leaks) and len(ctx.parents) > 1 and raised_later(
            handler, ctx.parents[-1], ctx.parents[-2], hands_on_cancel(exceptions)
        ):
            return  # noted in a flag and raised again on every way out
        first = leaks[0]
        header = "except:" if handler.type is None else f"except {shown(ctx, handler.type)}"
        caught = "" if cancel_type in header else f" ({cancel_type})"
        if first.how == FALLS_THROUGH:
            how, advice = "can reach its end", "end the handler with `raise`"
        else:
            how, advice = f"{first.how} at line {first.node.lineno}", "re-raise it there (`raise`)"
        message = f"`{header}` catches the task's cancellation{caught} and {how} without re-raising it: {advice}"
        edits: List[Edit] = []
        if all(leak.how == FALLS_THROUGH for leak in leaks):
            edit = append_statement(ctx.source, handler, handler.body, "raise")
            edits = [edit] if edit is not None else []
        ctx.report(self, except_keyword(handler), message, edits, description="re-raise the cancellation")

    @staticmethod
    def _caught_earlier(
        handler: ast.ExceptHandler, ctx: "FileView", handling: HandlingAnalysis, exceptions: ExceptionAnalysis
    ) -> bool:
        """An earlier clause of the same `try` catches the cancellation, so this one never sees
        it. A clause whose types cannot all be resolved counts only when its text spells a
        cancel or catch-all type (`errors.Cancelled`, `BaseExceptionAlias`): measured on the
        corpus, none of the unresolved earlier clauses before an `except CancelledError`
        (project connection-error tuples, `self.CONNECTION_ERRORS`, `ClientSSLError`) catches
        cancellation, which derives from BaseException, not Exception."""
        statement = ctx.parent
        for earlier in getattr(statement, "handlers", ()):
            if earlier is handler:
                return False
            admission = exceptions.handler(earlier)
            if handling.task_cancel(admission) is not None:
                return True
            if not admission.complete and any(
                word in ctx.source.segment(earlier.type).lower() for word in _UNRESOLVED_CANCEL_WORDS
            ):
                return True
        return False

    @staticmethod
    def _someone_else_decides(handler: ast.ExceptHandler, ctx: "FileView") -> bool:
        """The handler asks whether its own task is being cancelled (`task.cancelling()`),
        hands the exception object to other code, or fetches it with `sys.exc_info()`."""
        cancellation = ctx.catalog.cancellation
        if calls_any(handler.body, cancellation.own_cancellation):
            return True
        if passes_caught_on(handler, cancellation.reporting_calls):
            return True
        access = cancellation.exception_access
        return any(
            isinstance(node, ast.Call) and ctx.resolver.qualified_name(node.func, ctx.scope) in access
            for stmt in handler.body
            for node in walk_nodes(stmt)
        )

    def _suppress(self, node: Union[ast.With, ast.AsyncWith], ctx: "FileView") -> None:
        suppressors = ctx.catalog.cancellation.suppressors
        handling = ctx.analysis(HandlingAnalysis)
        exceptions = ctx.analysis(ExceptionAnalysis)
        last_names = {name.rpartition(".")[2] for name in suppressors}
        for item in node.items:
            call = item.context_expr
            if not isinstance(call, ast.Call) or not call.args:
                continue
            func = call.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) not in last_names:
                continue
            if ctx.resolver.qualified_name(call.func, ctx.scope) not in suppressors:
                continue
            cancel_type = next(
                (found for found in (handling.task_cancel(exceptions.admits(a)) for a in call.args) if found), None
            )
            if cancel_type is None or not can_suspend(node.body) or self._cancelled_it_itself(ctx, node, ctx.parents):
                continue
            if self._not_the_callers(ctx, handling, exceptions):
                continue
            text = shown(ctx, call)
            caught = "" if cancel_type in text else f" ({cancel_type})"
            message = (
                f"`{text}` swallows the task's cancellation{caught}: "
                f"let it propagate (catch it only around a task you cancelled yourself)"
            )
            ctx.report(self, call, message)

    @staticmethod
    def _not_the_callers(ctx: "FileView", handling: HandlingAnalysis, exceptions: ExceptionAnalysis) -> bool:
        """No caller's cancellation reaches the handler: it lies under a shielded cancel scope
        (`with anyio.CancelScope(shield=True):`), or in the body of an enclosing handler of the
        same function that caught the cancellation already and re-raises it on every path (a
        second one swallowed during its cleanup loses nothing)."""
        if shielded(ctx):
            return True
        for ancestor in reversed(ctx.parents):
            if isinstance(ancestor, _FUNCTIONS):
                return False
            if not isinstance(ancestor, ast.ExceptHandler):
                continue
            if handling.task_cancel(exceptions.handler(ancestor)) is None:
                continue
            decide = CancelBranches(ancestor, ctx, handling, exceptions)
            if not decide.unknown and not cancel_leaks(ancestor, decide, exceptions):
                return True
        return False

    @staticmethod
    def _cancelled_it_itself(ctx: "FileView", statement: Optional[ast.AST], above: Sequence[ast.AST]) -> bool:
        """`task.cancel()` just before this `try` / `with`, then `await task` (or
        `await asyncio.wait_for(task, 1)`) inside it; or `for t in pending: t.cancel()` before
        the loop `for t in pending:` that holds it."""
        if statement is None:
            return False
        if isinstance(statement, ast.ExceptHandler):
            return False
        if not isinstance(statement, _TRY_TYPES + (ast.With, ast.AsyncWith)):
            return False
        waits = frozenset(
            name.rpartition(".")[2] for name in ctx.catalog.cancellation.waits_on
        )
        owner = above[-1] if above else None
        found = block_of(owner, statement)
        if found is None:
            return cancels_then_awaits([], 0, statement.body, waits)
        block, index = found
        if cancels_then_awaits(block, index, statement.body, waits):
            return True
        if isinstance(owner, (ast.For, ast.AsyncFor)) and len(above) > 1:
            outer = block_of(above[-2], owner)
            if outer is not None:
                return cancelled_before_loop(outer[0], outer[1], statement.body, waits)
        return False


_UNRESOLVED_CANCEL_WORDS = ("cancel", "baseexception", "interrupt")


def _in_async_function(ctx: "FileView") -> bool:
    for ancestor in reversed(ctx.parents):
        if isinstance(ancestor, _FUNCTIONS):
            return isinstance(ancestor, ast.AsyncFunctionDef)
    return False
