from __future__ import annotations

from deadline_lint.engine.rule import register
from deadline_lint.families.shared.errors.exceptions import BREAKER, EXPIRY
from deadline_lint.families.shared.errors.statuses import EXPIRED, StatusAnalysis
from deadline_lint.families.status.common import (
    HandlingRule,
    first_per_statement,
    kind_words,
    profile_statuses,
    shown,
    status_words,
)


@register
class BreakerReportedAsDeadline(HandlingRule):
    """
    ## What it does
    Flags an open-circuit-breaker error turned into a deadline error: inside
    `except <open breaker error>` (pybreaker / aiobreaker / circuitbreaker
    `CircuitBreakerError`, the profile's own, classes named `*CircuitOpen*` / `*BreakerOpen*`)
    or a branch on `isinstance(err, <open breaker error>)`, a statement that raises an expiry
    error (`raise TimeoutError(...)`, `raise DeadlineExceeded(...)`) or produces the
    profile's expired status (504, `GATEWAY_TIMEOUT`, `DEADLINE_EXCEEDED`). The finding is on
    that statement. A function a framework calls for an open breaker error it is registered
    for (`@app.exception_handler(CircuitBreakerError)`, `app.add_exception_handler(...)`,
    `exception_handlers={CircuitBreakerError: handler}`, Flask's `@app.errorhandler(...)`) is
    such a handler too.

    ## Why is this bad?
    An open breaker refused the call at once, without spending any time: nothing expired.
    Reported as a deadline error, it sends the caller looking for latency that is not there,
    makes retry layers that (rightly) never retry expiry give up on a dependency that may be
    back in a second, and hides the breaker from the people who need to see it trip. Report
    it as what it is: unavailable (503 / `UNAVAILABLE`), ideally with a `Retry-After`.

    ## Example
    ```python
    import pybreaker

    def reserve(breaker, inventory, order):
        try:
            return breaker.call(inventory.reserve, order)
        except pybreaker.CircuitBreakerError:
            raise TimeoutError("inventory did not answer")
    ```

    ## Use instead
    ```python
    import pybreaker

    def reserve(breaker, inventory, order):
        try:
            return breaker.call(inventory.reserve, order)
        except pybreaker.CircuitBreakerError:
            raise InventoryUnavailable("inventory circuit is open") from None
    ```

    ## Fix safety
    No fix: the right error or status for an open circuit is the service's choice.

    ## Options
    - `exceptions.breaker`: the organisation's own open-breaker errors.
    - `statuses.expired`, `statuses.grpc_expired`: what counts as the expired status.
    """

    code = "DL404"
    name = "breaker-reported-as-deadline"
    summary = "an open-circuit-breaker error converted into a deadline/timeout error or status"

    def word_groups(self):
        expired = profile_statuses(self, "expired", "grpc_expired")
        return kind_words(self, BREAKER), kind_words(self, EXPIRY) | status_words(self, expired)

    def visit(self, node, ctx):
        found = self.handlings(node, ctx)
        statuses = ctx.analysis(StatusAnalysis) if found else None
        for handling in found:
            witness = handling.witness(BREAKER)
            if witness is None:
                continue
            wrong = [
                o
                for o in handling.outcomes
                if (o.raised is not None and o.raised.kind == EXPIRY)
                or (o.status is not None and EXPIRED in statuses.meanings(o.status.status))
            ]
            for outcome in first_per_statement(wrong):
                if outcome.raised is not None and outcome.raised.kind == EXPIRY:
                    what = f"a deadline error (`{shown(ctx, outcome.raised_node)}`)"
                else:
                    what = f"the expired status {outcome.status.status} (`{shown(ctx, outcome.status.value)}`)"
                message = (
                    f"an open circuit breaker (`{witness.named}`) is reported as {what}: nothing expired, "
                    f"the call was refused; report it as unavailable"
                )
                ctx.report(self, outcome.statement, message)
