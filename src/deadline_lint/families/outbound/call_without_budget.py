from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from deadline_lint.catalog import CLIENT
from deadline_lint.engine.edits import insert_keyword, replace_node
from deadline_lint.engine.rule import register
from deadline_lint.families.outbound.analysis.outbound import outbound_sites
from deadline_lint.families.outbound.analysis.outbound_calls import FROM_DEFAULT, OutboundCall
from deadline_lint.families.outbound.common import (
    OutboundRule,
    bounded_externally,
    describe_default,
    fix_timeout,
)
from deadline_lint.support.diagnostics import Applicability
from deadline_lint.families.shared.budget.fix_tags import INSERTS_BUDGET_TAGS

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


@register
class OutboundCallWithoutBudget(OutboundRule):
    """
    ## What it does
    Flags a known outbound call (HTTP, gRPC, sockets, database clients) that passes no
    timeout when the library's own default is unbounded, or longer than the profile's
    `max_bounded_default_s` (default 60 s): `requests.get(url)` waits forever, an
    `aiohttp` session waits 300 s. Clients whose calls take no timeout of their own
    (`redis.Redis`, `http.client.HTTPConnection`) are flagged where they are built without
    one. Calls awaited inside a cancel scope (`async with asyncio.timeout(...)`) or handed to
    a bounded `asyncio.wait_for` are already bounded and stay quiet.

    A receiver that may hold one of several clients (`self._session = session or
    aiohttp.ClientSession()`, an attribute assigned in two methods, a name bound by two
    `with` statements) is followed through its bindings: when one is a client built here
    without a timeout and none built here sets one, the call is reported and the message
    names that binding (`self._session` may be the `aiohttp.ClientSession()` built at line
    12). The other bindings (a parameter, a name from elsewhere) are not known to set one.
    A parameter declared a client (`session: aiohttp.ClientSession`, or `self.session` set
    from one in `__init__`) is followed to its callers: when every caller in the project is
    known and passes a client built right there without a timeout, the call is reported and
    the message names each caller's file and line; one caller passing a client with a
    timeout, or anything else, keeps it quiet, and so does a def in a test module (the
    project's callers are looked up outside test modules, so its own cannot all be known).
    A client a base class in another project module builds without a timeout and keeps on
    `self` (`self._http = aiohttp.ClientSession()` in its `__init__`) is reported at the calls
    a subclass makes through it, naming the base and the line; a subclass that rebinds the
    attribute, a base no project module defines or a base in a test module keeps it quiet.

    ## Why is this bad?
    A call with no timeout outlives the request that made it. The caller gave up long ago, but
    this hop still holds a connection, a worker and a slot in the downstream queue. Every hop
    must forward the caller's remaining budget, minus a hop margin, as its timeout.

    ## Example
    ```python
    import requests

    def fetch_user(user_id, budget):
        return requests.get(f"{USERS}/{user_id}")
    ```

    ## Use instead
    ```python
    import requests

    def fetch_user(user_id, budget):
        return requests.get(f"{USERS}/{user_id}", timeout=budget.timeout())
    ```

    ## Fix safety
    The fix inserts a timeout: from the budget in scope through the profile's templates
    (`fix.budget_expression`, `fix.grpc_context_expression`, `fix.seconds_expression`), else
    the profile's edge default (`fix.edge_expression`). Libraries that spell a timeout as an
    object get one (`aiohttp.ClientTimeout(total=...)`); an API with no timeout parameter
    (`asyncio.open_connection`) is wrapped in `asyncio.wait_for(..., timeout=...)`. Its class
    is decided per finding:

    - **Safe** when the timeout is derived from a budget the function already has and the
      library would otherwise wait forever. The function has accepted a deadline: its caller
      stops waiting when that budget runs out, so a call still running after it can only
      finish work nobody receives. The timeout turns that silent overrun into the error the
      caller already sees; no answer the caller could use is lost, and no value sent changes.
      One caveat: once the budget is spent, the default templates clamp at `0.0`, which
      gRPC treats as already expired but requests rejects with `ValueError` rather than a
      timeout; list DL101 in `extend_unsafe_fixes` if your error handling tells them apart.
    - **Unsafe** when no budget is in scope and the edge default is inserted: the call could
      run longer than the edge total before, and a slow success becomes a timeout error.
    - **Unsafe** when the library's own default is finite (aiohttp's 300 s total): a shorter
      total can fail a call that used to succeed.

    The codemod and `fix --thread-budget` exist to insert budgets and apply this fix whatever
    its class; `fix` and the pre-commit fix hook apply the unsafe ones only with
    `--unsafe-fixes`, or for codes listed in `extend_safe_fixes`. Calls that pass `**kwargs`
    are never flagged.

    ## Options
    - `max_bounded_default_s`: the largest library default that still counts as bounded.
    - `outbound`: the organisation's own clients, in the catalog's schema.
    - `fix.*` and `edge_total_ms`: what the fix inserts.
    """

    code = "DL101"
    name = "outbound-call-without-budget"
    summary = "outbound call with no timeout where the library default is unbounded"
    fix_applicability = Applicability.SAFE

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        for call in outbound_sites(ctx, node):
            api = call.api
            if call.source != FROM_DEFAULT or (api.kind == CLIENT and not api.checked):
                continue  # an unchecked client's missing timeout is reported at its calls
            if api.keyword is None and api.wrap is None:
                continue  # takes no timeout: its client's constructor is where one goes
            default = call.default_timeout
            if default is not None and default <= self.profile.max_bounded_default_s:
                continue
            if bounded_externally(node, ctx):
                continue
            self._report(node, call, ctx)

    def _report(self, node: ast.Call, call: OutboundCall, ctx: "FileView") -> None:
        api = call.api
        expression, from_budget = fix_timeout(ctx, node)
        source = "the budget in scope" if from_budget else "the edge default (no budget in scope)"
        if api.keyword is not None:
            argument = f"{api.keyword}={api.render_timeout(expression)}"
            edit = insert_keyword(ctx.source, node, api.keyword, api.render_timeout(expression))
            advice = f"pass `{argument}`"
        elif api.wrap is not None:
            argument = api.wrap.format(call="...", timeout=expression)
            edit = replace_node(ctx.source, node, api.wrap.format(call=ctx.source.segment(node), timeout=expression))
            advice = f"bound it: `{argument}`"
        else:
            return  # takes no timeout at all: `visit_Call` passed it over
        message = f"`{call.display_name}` {describe_default(call.default_timeout)}: {advice} from {source}"
        if call.built is not None and isinstance(node.func, ast.Attribute):
            receiver = ctx.source.segment(node.func.value)
            built = " ".join(ctx.source.segment(call.built).split())
            message = (
                f"`{receiver}` may be the `{built}` built at line {call.built.lineno}, which "
                f"{describe_default(call.default_timeout)}: {advice} from {source}"
            )
        passed = call.passed
        if passed is not None and isinstance(node.func, ast.Attribute):
            receiver = ctx.source.segment(node.func.value)
            callers = ", ".join(passed.where)  # type: ignore[attr-defined]
            message = (
                f"`{receiver}` is the `{passed.shown}` {passed.who} ({callers}), which "  # type: ignore[attr-defined]
                f"{describe_default(call.default_timeout)}: {advice} from {source}"
            )
        ctx.report(
            self,
            node,
            message,
            [edit] if edit else (),
            description=f"insert {argument}",
            imports=api.imports if edit else (),
            applicability=Applicability.SAFE if from_budget and call.default_timeout is None else Applicability.UNSAFE,
            tags=INSERTS_BUDGET_TAGS,
        )
