from __future__ import annotations

import ast
from typing import Optional

from deadline_lint.analysis.expressions import argument_at, mentions_any
from deadline_lint.analysis.function_body import function_body
from deadline_lint.analysis.wire import WireValues
from deadline_lint.requires import Look, Text, Words
from deadline_lint.rules.base import Rule, register
from deadline_lint.rules.clock.common import (
    HEADER_WORDS,
    READ,
    inbound_header_read,
    key_text_filter,
    reads_literal_key_in_function,
    shown,
)

_SINK_WORDS = ("timeout", "deadline", "budget")
_TIME_SINK_WORDS = ("timeout", "deadline")


@register
class InboundBudgetNotCapped(Rule):
    """
    ## What it does
    Flags a budget read from an inbound header or gRPC metadata entry (the profile's
    `budget_header`, `grpc-timeout`, or a key naming a deadline, timeout or budget) that
    reaches a timeout or a budget (a `*timeout*`, `*deadline*` or `*budget*` argument, a
    sleep, a cancel scope such as `asyncio.timeout(...)`, or one of the profile's budget
    types; a key that names only a budget and no time unit, such as `max_budget`, which is as
    often money, counts only when it reaches a timeout, a sleep, a cancel scope or a budget
    type) without
    being capped with `min(value, cap)` (or one of the profile's `budget.clamps`), or without a
    check that rejects negative values (a comparison, or `max(0, value)`). It follows the value
    through local names. The finding is on the header read.

    ## Why is this bad?
    The inbound budget is the caller's claim. Used as is, a caller (or a bug upstream, or a
    unit mix-up between seconds and milliseconds) can grant this service more time than its
    own deadline allows: a caller must not be able to extend its own deadline. A negative or
    zero budget should be refused at once rather than handed to a client library, where it
    either raises or means "no limit".

    ## Example
    ```python
    import requests

    def handle(request):
        budget_s = int(request.headers["X-Request-Budget-Ms"]) / 1000
        return requests.get("http://stock/items", timeout=budget_s)
    ```

    ## Use instead
    ```python
    import requests

    MAX_BUDGET_S = 10.0

    def handle(request):
        budget_s = min(int(request.headers["X-Request-Budget-Ms"]) / 1000, MAX_BUDGET_S)
        if budget_s <= 0:
            raise TimeoutError("no time left")
        return requests.get("http://stock/items", timeout=budget_s)
    ```

    ## Fix safety
    No fix: the cap is the service's own limit, which the code does not state.

    ## Options
    - `budget_header`: the header your services use for the remaining budget.
    - `budget.types`: constructing one of these from the value counts as reaching a budget.
    - `budget.clamps`: your own functions that cap the value and reject negatives; passing
      the value through one of them satisfies the rule.
    """

    code = "DL204"
    name = "inbound-budget-not-capped"
    summary = "an inbound budget reaches a timeout without a cap or a check for negative values"
    node_types = (ast.Subscript, ast.Call)

    requires = Words(*HEADER_WORDS) & Text(
        lambda rule: key_text_filter(rule.catalog, rule.profile.budget_header, HEADER_WORDS, READ)
    )
    first_looks = dict.fromkeys(node_types, Look(reads_literal_key_in_function))

    def visit(self, node, ctx):
        read = inbound_header_read(node, ctx)
        if read is None or not read[0].is_budget_key(read[1]):
            return
        wire = read[0]
        derived = wire.derived_names(ctx.scope, node)
        body = function_body(ctx.scope)

        def carries(expr: ast.AST) -> bool:
            return any(sub is node for sub in ast.walk(expr)) or mentions_any(expr, derived)

        sink = self._sink(body, carries, wire, ctx, money=wire.may_be_money(read[1]))
        if sink is None:
            return
        capped = rejected = False
        for call in body.nodes(ast.Call):
            func = call.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name == "min" and len(call.args) >= 2 and any(carries(a) for a in call.args):
                capped = True
            elif name == "max" and len(call.args) >= 2 and any(carries(a) for a in call.args):
                rejected = True
            elif any(carries(a) for a in call.args) and self._is_clamp(call, wire, ctx):
                capped = rejected = True
        if not rejected:
            rejected = any(carries(compare) for compare in body.nodes(ast.Compare))
        if capped and rejected:
            return
        missing = (
            "cap it with `min(value, <your limit>)` and reject values of zero or less"
            if not capped and not rejected
            else "cap it with `min(value, <your limit>)`" if not capped else "reject values of zero or less"
        )
        ctx.report(self, node, f"the inbound budget `{shown(ctx, node)}` reaches `{sink}` unchecked: {missing}")

    @staticmethod
    def _is_clamp(call: ast.Call, wire: WireValues, ctx) -> bool:
        clamps = wire.vocabulary.clamps | frozenset(ctx.profile.budget.clamps)
        qualname = ctx.resolver.qualified_name(call.func, ctx.scope)
        if qualname is not None:
            return qualname in clamps
        func = call.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        # A helper defined in this module, or reached through an object: its bare name counts.
        return any(clamp.rpartition(".")[2] == name for clamp in clamps)

    def _sink(self, body, carries, wire: WireValues, ctx, money: bool = False) -> Optional[str]:
        """Where the value is used as a timeout or budget, shown for the message. A value that
        may be money reaches no `*budget*` argument."""
        types = {t.rsplit(".", 1)[-1] for t in ctx.profile.budget.types}
        cancel_scopes = (ctx.catalog.data.get("budget", {}) or {}).get("cancel_scopes", {}) or {}
        for call in body.nodes(ast.Call):
            for keyword in call.keywords:
                words = _TIME_SINK_WORDS if money else _SINK_WORDS
                if keyword.arg and any(w in keyword.arg.lower() for w in words) and carries(keyword.value):
                    return f"{keyword.arg}="
            if not call.args:
                continue
            qualname = ctx.resolver.qualified_name(call.func, ctx.scope)
            if qualname in wire.clocks.sleeps and carries(call.args[0]):
                return qualname
            spec = cancel_scopes.get(qualname or "")
            if spec is not None:
                argument = argument_at(call, spec.get("position"), spec.get("keyword"))
                if argument is not None and carries(argument):
                    return qualname
            func = call.func
            called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if called in types and any(carries(a) for a in call.args):
                return called
        return None
