from __future__ import annotations

import ast

from deadline_lint.analysis.outbound import FROM_DEFAULT
from deadline_lint.diagnostics import Applicability
from deadline_lint.edits import insert_keyword
from deadline_lint.rules.base import Rule, register
from deadline_lint.rules.outbound.common import describe_default, outbound_words


@register
class OutboundCallWithoutBudget(Rule):
    """
    ## What it does
    Flags a known outbound call (HTTP, gRPC, sockets, database clients) that passes no
    timeout when the library's own default is unbounded, or longer than the profile's
    `max_bounded_default_s` (default 60 s): `requests.get(url)` waits forever.

    ## Why is this bad?
    A call with no timeout outlives the request that made it. The caller gave up long ago, but
    this hop still holds a connection, a worker and a slot in the downstream queue. Every hop
    must forward the caller's remaining budget, minus a hop margin, as its timeout.

    ## Example
    ```python
    def fetch_user(user_id, budget):
        return requests.get(f"{USERS}/{user_id}")
    ```

    ## Use instead
    ```python
    def fetch_user(user_id, budget):
        return requests.get(f"{USERS}/{user_id}", timeout=budget.timeout())
    ```

    ## Fix safety
    Safe. The fix inserts `timeout=` built from the budget in scope using the profile's
    templates (`fix.budget_expression`, `fix.grpc_context_expression`,
    `fix.seconds_expression`); where no budget is in scope it inserts the profile's edge
    default (`fix.edge_expression`, the edge total in seconds): a missing deadline is the
    edge total, never infinite time. Calls that pass `**kwargs` are never flagged.

    ## Options
    - `max_bounded_default_s`: the largest library default that still counts as bounded.
    - `outbound`: the organisation's own clients, in the catalog's schema.
    - `fix.*` and `edge_total_ms`: what the fix inserts.
    """

    code = "DL101"
    name = "outbound-call-without-budget"
    summary = "outbound call with no timeout where the library default is unbounded"
    fix_applicability = Applicability.SAFE
    node_types = (ast.Call,)

    def trigger_words(self):
        return outbound_words(self.catalog)

    def visit(self, node, ctx):
        call = ctx.outbound_call(node)
        if call is None or call.source != FROM_DEFAULT or call.api.keyword is None:
            return
        default = call.default_timeout
        if default is not None and default <= self.profile["max_bounded_default_s"]:
            return
        if ctx.bounded_by_cancel_scope(node):
            return
        expression, from_budget = ctx.timeout_expression()
        source = "the budget in scope" if from_budget else "the edge default (no budget in scope)"
        message = (
            f"`{call.display_name}` {describe_default(default)}: pass `timeout={expression}` "
            f"from {source}"
        )
        edit = insert_keyword(ctx.source, node, call.api.keyword, expression)
        ctx.report(self, node, message, [edit] if edit else (), description=f"insert timeout={expression}")
