from __future__ import annotations

from deadline_lint.support.diagnostics import Applicability
from deadline_lint.engine.edits import replace_node
from deadline_lint.engine.rule import register
from deadline_lint.families.shared.errors.exceptions import EXPIRY
from deadline_lint.families.shared.errors.status_catalog import status_vocabulary
from deadline_lint.families.shared.errors.statuses import QUOTA, StatusAnalysis
from deadline_lint.families.status.common import (
    HandlingRule,
    first_per_statement,
    kind_words,
    profile_statuses,
    shown,
    status_words,
)


@register
class ExpiryMappedTo429(HandlingRule):
    """
    ## What it does
    Flags code that handles a deadline expiry and answers with a quota status: inside
    `except <expiry error>` (`asyncio.TimeoutError`, `requests.Timeout`, `httpx.TimeoutException`,
    the profile's own, classes named `*Timeout*` / `*Deadline*` / `*Expired*`), or in a branch on
    `isinstance(err, <expiry error>)` or `err.code() == grpc.StatusCode.DEADLINE_EXCEEDED`, a
    statement that produces 429 or gRPC `RESOURCE_EXHAUSTED`: `status=429`, `status_code=429`,
    `HTTPStatus.TOO_MANY_REQUESTS`, `status.HTTP_429_TOO_MANY_REQUESTS`,
    `web.HTTPTooManyRequests`, `HTTPException(429)`, `Response(body, 429)`, `abort(429)`,
    `return body, 429` in a Flask view, `context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, ...)`,
    `context.set_code(...)`. The finding is on that statement. A function a framework calls
    for an expiry error it is registered for (`@app.exception_handler(asyncio.TimeoutError)`,
    `app.add_exception_handler(Timeout, handler)`, `Starlette(exception_handlers={Timeout:
    handler})`, Flask's `@app.errorhandler(Timeout)`, Sanic's `@app.exception(Timeout)`,
    Falcon's `add_error_handler`) is such a handler too; one registered for a type the checker
    cannot read stays quiet. Hooks that receive every exception (Django's
    `process_exception`, DRF's `exception_handler`, aiohttp middlewares, gRPC server
    interceptors) handle expiry in their `isinstance` branch or `except` clause for it.

    A 429 outside an expiry handler (rate limiting) is quiet, and so is a handler that only
    reaches expiry through a base class (`except Exception`): it is not about expiry.

    ## Why is this bad?
    429 and `RESOURCE_EXHAUSTED` tell the caller "you are sending too much: slow down and retry
    later". An expired deadline is not a quota: the caller's retry and backoff logic reacts to
    the wrong thing (client libraries back off and retry 429s, often honouring `Retry-After`),
    dashboards count time as load, and the request that ran out of time is retried into a
    budget that is already spent.

    ## Example
    ```python
    import asyncio
    from aiohttp import web

    async def page(request):
        try:
            return await asyncio.wait_for(render(request), 2.0)
        except asyncio.TimeoutError:
            return web.json_response({"error": "busy"}, status=429)
    ```

    ## Use instead
    ```python
    import asyncio
    from aiohttp import web

    async def page(request):
        try:
            return await asyncio.wait_for(render(request), 2.0)
        except asyncio.TimeoutError:
            return web.json_response({"error": "deadline exceeded"}, status=504)
    ```

    ## Fix safety
    Unsafe: the fix writes the profile's expired status (504, `GATEWAY_TIMEOUT`,
    `DEADLINE_EXCEEDED`) in the spelling used (`504`, `HTTPStatus.GATEWAY_TIMEOUT`,
    `web.HTTPGatewayTimeout`, `grpc.StatusCode.DEADLINE_EXCEEDED`), and clients see another
    status. It is offered only when the handler catches nothing but expiry errors; a handler
    that also catches a rate-limit error is reported without a fix.

    ## Options
    - `statuses.expired`, `statuses.grpc_expired`: what the fix writes.
    - `exceptions.expiry`: the organisation's own expiry errors.
    """

    code = "DL401"
    name = "expiry-mapped-to-429"
    summary = "a handler for an expiry error produces 429 / TOO_MANY_REQUESTS / RESOURCE_EXHAUSTED"
    fix_applicability = Applicability.UNSAFE

    def word_groups(self):
        expired = profile_statuses(self, "expired", "grpc_expired")
        quota = status_words(self, status_vocabulary(self.catalog).quota)
        return quota, kind_words(self, EXPIRY) | status_words(self, expired)

    def visit(self, node, ctx):
        for handling in self.handlings(node, ctx):
            witness = handling.witness(EXPIRY)
            if witness is None:
                continue
            statuses = ctx.analysis(StatusAnalysis)
            quota = [
                o for o in handling.outcomes if o.status is not None and QUOTA in statuses.meanings(o.status.status)
            ]
            for outcome in first_per_statement(quota):
                produced = outcome.status
                target = statuses.expired_like(produced.status)
                value = shown(ctx, produced.value)
                respelled = statuses.respell(produced, target) if handling.exact else None
                use = f"`{respelled[0]}`" if respelled else f"{target}"
                message = (
                    f"deadline expiry (`{witness.named}`) is reported as {produced.status} (`{value}`), "
                    f"a quota status: report {use} instead"
                )
                if respelled is None:
                    ctx.report(self, outcome.statement, message)
                    continue
                text, imports = respelled
                edit = replace_node(ctx.source, produced.value, text)
                ctx.report(self, outcome.statement, message, [edit], description=f"report {text}", imports=imports)
