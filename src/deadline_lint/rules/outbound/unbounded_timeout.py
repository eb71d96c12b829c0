from __future__ import annotations

import ast

from deadline_lint.analysis.outbound import FROM_CALL, FROM_CONSTRUCTOR, is_unbounded
from deadline_lint.diagnostics import Applicability
from deadline_lint.edits import replace_node
from deadline_lint.rules.base import Rule, register
from deadline_lint.rules.outbound.common import outbound_words


@register
class UnboundedTimeout(Rule):
    """
    ## What it does
    Flags an outbound call (or the client that makes it) whose timeout is explicitly
    unbounded: `timeout=None`, `float("inf")`, `math.inf`, or a `(connect, read)` tuple
    with an unbounded part.

    ## Why is this bad?
    `timeout=None` reads like a decision but means "wait forever": the call can outlive the
    request and every retry budget above it. A missing inbound deadline means the edge total,
    never infinite time.

    ## Example
    ```python
    requests.post(url, json=body, timeout=None)
    ```

    ## Use instead
    ```python
    requests.post(url, json=body, timeout=budget.timeout())
    ```

    ## Fix safety
    Unsafe: the fix replaces the unbounded value with a timeout from the budget in scope (or
    the edge default), which changes behaviour for calls that were meant to stream forever.

    ## Options
    - `fix.*` and `edge_total_ms`: what the fix inserts.
    """

    code = "DL103"
    name = "unbounded-timeout"
    summary = "timeout=None, float('inf') and friends"
    fix_applicability = Applicability.UNSAFE
    node_types = (ast.Call,)

    def trigger_words(self):
        return outbound_words(self.catalog)

    def visit(self, node, ctx):
        call = ctx.outbound_call(node)
        if call is None or call.timeout is None or call.source not in (FROM_CALL, FROM_CONSTRUCTOR):
            return
        if call.source == FROM_CONSTRUCTOR:
            return  # reported once, at the constructor, by the client-construction check
        if not is_unbounded(call.timeout, ctx.scope, ctx.resolver):
            return
        if ctx.bounded_by_cancel_scope(node):
            return
        expression, _ = ctx.timeout_expression()
        message = (
            f"`{call.display_name}` is given an unbounded timeout "
            f"(`{ctx.source.segment(call.timeout)}`): pass `{expression}` instead"
        )
        edit = replace_node(ctx.source, call.timeout, expression)
        ctx.report(self, call.timeout, message, [edit], description=f"replace with {expression}")
