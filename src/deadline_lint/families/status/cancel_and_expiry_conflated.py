from __future__ import annotations

from deadline_lint.engine.rule import register
from deadline_lint.families.shared.errors.exceptions import CANCEL, EXPIRY
from deadline_lint.families.shared.errors.statuses import CANCELLED, EXPIRED, StatusAnalysis
from deadline_lint.families.status.common import (
    HandlingRule,
    first_per_statement,
    kind_words,
    profile_statuses,
    shown,
    status_words,
)


@register
class CancelAndExpiryConflated(HandlingRule):
    """
    ## What it does
    Flags code that reports a cancellation as a deadline expiry, or the reverse:
    - one `except` clause naming both a cancel and an expiry error
      (`except (asyncio.CancelledError, asyncio.TimeoutError):`), or one branch on both status
      codes (`err.code() in (DEADLINE_EXCEEDED, CANCELLED)`), that produces a status or raises
      an expiry or cancel error for both alike; reported on the `except` line (or the test);
    - a cancel handler that produces the profile's expired status (504, `DEADLINE_EXCEEDED`)
      or raises an expiry error (`raise TimeoutError`), reported on that statement;
    - an expiry handler that produces the profile's cancelled status (499, `CANCELLED`) or
      raises a cancel error, reported on that statement.

    A function a framework calls for the types it is registered for
    (`@app.exception_handler(...)`, `app.add_exception_handler(...)`,
    `exception_handlers={...}`, Flask's `@app.errorhandler(...)`) handles them as an `except`
    clause would; one registered for both kinds is reported on the first registered type.

    A handler that tells the two apart in its body (`isinstance(err, CancelledError)`, a
    status-code test) is quiet, as is one that only re-raises. A cancel handler that reports
    expiry only under a condition (`if loop.time() >= deadline: raise TimeoutError`) is
    quiet: that is how a timeout built on cancellation reports its own timer firing.

    ## Why is this bad?
    Expiry and cancellation are two terminal outcomes with two statuses. Expiry means this hop
    ran out of budget: a capacity or latency problem to page someone about. Cancellation means
    the caller gave up or went away: nobody is waiting for the answer, and nothing is wrong
    here. Reporting one as the other makes dashboards, alerts and retry logic react to the
    wrong thing: cancelled requests counted as timeouts hide real timeouts, and timeouts
    reported as cancellations never page.

    ## Example
    ```python
    import asyncio
    from aiohttp import web

    async def middleware(request, handler):
        try:
            return await handler(request)
        except (asyncio.CancelledError, asyncio.TimeoutError):
            return web.json_response({"error": "timeout"}, status=504)
    ```

    ## Use instead
    ```python
    import asyncio
    from aiohttp import web

    async def middleware(request, handler):
        try:
            return await handler(request)
        except asyncio.TimeoutError:
            return web.json_response({"error": "timeout"}, status=504)
        except asyncio.CancelledError:
            log.info("client went away")
            raise
    ```

    ## Fix safety
    No fix: which status each outcome deserves is a decision for a person.

    ## Options
    - `statuses.expired`, `statuses.cancelled`, `statuses.grpc_expired`,
      `statuses.grpc_cancelled`: what counts as the expired and the cancelled status.
    - `exceptions.expiry`, `exceptions.cancel`: the organisation's own error types.
    """

    code = "DL402"
    name = "cancel-and-expiry-conflated"
    summary = "one handler maps cancel and expiry to the same status, or maps one to the other's status"

    def word_groups(self):
        cancelled = profile_statuses(self, "cancelled", "grpc_cancelled")
        expired = profile_statuses(self, "expired", "grpc_expired")
        return (
            kind_words(self, CANCEL) | status_words(self, cancelled),
            kind_words(self, EXPIRY) | status_words(self, expired),
        )

    def visit(self, node, ctx):
        found = self.handlings(node, ctx)
        statuses = ctx.analysis(StatusAnalysis) if found else None
        for handling in found:
            both = handling.kinds >= {CANCEL, EXPIRY}
            if both:
                self._both(handling, ctx)
            elif CANCEL in handling.kinds:
                self._one(handling, ctx, statuses, CANCEL, EXPIRED, EXPIRY, "a cancellation", "expiry")
            elif EXPIRY in handling.kinds:
                self._one(handling, ctx, statuses, EXPIRY, CANCELLED, CANCEL, "a deadline expiry", "cancellation")

    def _both(self, handling, ctx):
        if handling.distinguishes:
            return
        outcome = next(
            (
                o for o in handling.outcomes
                if o.status is not None or o.raised is not None and o.raised.kind in (CANCEL, EXPIRY)
            ),
            None,
        )
        if outcome is None:
            return
        what = (
            f"status {outcome.status.status}" if outcome.status is not None else f"`{shown(ctx, outcome.raised_node)}`"
        )
        cancel, expiry = handling.witness(CANCEL), handling.witness(EXPIRY)
        message = (
            f"cancellation (`{cancel.named}`) and deadline expiry (`{expiry.named}`) are handled alike "
            f"and both reported as {what} (line {outcome.statement.lineno}): handle them separately, "
            f"re-raise the cancellation"
        )
        ctx.report(self, handling.report_node, message)

    def _one(self, handling, ctx, statuses, kind, other_status, other_kind, subject, other):
        witness = handling.witness(kind)
        wrong = []
        for outcome in handling.outcomes:
            if outcome.conditional:
                continue  # the code tells why it got here (its own timer fired): its call
            if outcome.status is not None and other_status in statuses.meanings(outcome.status.status):
                wrong.append(outcome)
            elif outcome.raised is not None and outcome.raised.kind == other_kind:
                wrong.append(outcome)
        for outcome in first_per_statement(wrong):
            if outcome.status is not None:
                what = f"the {other} status {outcome.status.status} (`{shown(ctx, outcome.status.value)}`)"
            else:
                error = "an expiry error" if other_kind == EXPIRY else "a cancel error"
                what = f"{error} (`{shown(ctx, outcome.raised_node)}`)"
            message = f"{subject} (`{witness.named}`) is reported as {what}: keep cancellation and expiry apart"
            ctx.report(self, outcome.statement, message)
