from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from deadline_lint.engine.edits import replace_node
from deadline_lint.engine.rule import register
from deadline_lint.families.outbound.analysis.budget_hops import BudgetHop
from deadline_lint.families.outbound.common import (
    BudgetValueRule,
    is_clamp_floor,
    single_assignment,
    timeout_values,
    timeouts_passed_on,
)
from deadline_lint.families.shared.budget.budget import SECONDS, Budget, BudgetAnalysis, budget_in_scope
from deadline_lint.families.shared.budget.budget_parameters import numeric_parameters
from deadline_lint.families.shared.time.time_values import INSTANT, MONOTONIC, time_value
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.scopes import PARAM
from deadline_lint.settings.profile import seconds_literal
from deadline_lint.support.diagnostics import Applicability

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


@register
class RemainderForwardedWithoutMargin(BudgetValueRule):
    """
    ## What it does
    Flags a raw remainder passed on as a timeout with no hop margin taken off: the result of
    a budget's method in the *raw remainder* role (`context.time_remaining()` on a gRPC
    context, `context.get_remaining_time_in_millis() / 1000` on AWS Lambda's, your budget
    type's `remaining()`: `budget.roles`), of one of the profile's `budget.accessors`, a
    name assigned once from one of those, or a numeric parameter named in
    `budget.seconds_parameters` (`budget_s`: the remaining time, which is what
    `fix --thread-budget` threads) and never rebound. A name also listed in
    `budget.timeout_parameters` is the time the caller gave, margin taken, and a seconds
    parameter passed on to a project function's own (`budget_s=budget_s`) is judged there.
    A method in the `hop_timeout` role (`budget.timeout()`) already has the margin off. It looks
    through tuples, timeout objects, `min(...)`, `float(...)` and clamps like `max(0.0, x)`.
    It judges the timeout of every outbound call the catalog knows, and also a value passed
    as `timeout=` (the catalog's `budget.hop_keywords`) to a call whose callee it cannot type
    (`self.inventory.reserve(sku, timeout=context.time_remaining())`): passing the budget
    there shows the call is a hop. A callee it knows is no hop stays quiet: builtins and the
    standard library, functions and methods of the project it can read, and waits on this
    process (`event.wait`, `thread.join`: the catalog's `budget.local_waits`).

    ## Why is this bad?
    The downstream service gets exactly the time this hop has left, so its answer (or its
    deadline error) arrives when this hop has nothing left to receive, serialise and reply
    with. The caller sees its own deadline expire instead of a clean error from below. Each hop
    keeps a margin: send `remaining - margin`.

    ## Example
    ```python
    import grpc
    from shop.protos import stock_pb2_grpc

    class Orders(stock_pb2_grpc.OrdersServicer):
        def __init__(self, channel):
            self.stock = stock_pb2_grpc.StockStub(channel)
            self.payments = stock_pb2_grpc.PaymentsStub(channel)

        def GetOrder(self, request, context):
            return self.stock.Reserve(request, timeout=context.time_remaining())
    ```

    ## Use instead
    ```python
    import grpc
    from shop.protos import stock_pb2_grpc

    class Orders(stock_pb2_grpc.OrdersServicer):
        def __init__(self, channel):
            self.stock = stock_pb2_grpc.StockStub(channel)
            self.payments = stock_pb2_grpc.PaymentsStub(channel)

        def GetOrder(self, request, context):
            remaining = context.time_remaining()  # None when the client set no deadline
            return self.stock.Reserve(request, timeout=max(0.001, (10.0 if remaining is None else remaining) - 0.05))
    ```

    ## Fix safety
    Unsafe: the fix subtracts the profile's hop margin from the remainder where it is passed,
    which changes the value sent. The result is floored at 1 ms like every timeout a fix
    derives from a budget (`max(0.001, remaining - 0.05)`), so it is never a value the
    library rejects (requests raises `ValueError` for 0 or less, `http.client` turns 0 into a
    non-blocking socket, aiohttp reads `total=0` as no limit); but when the budget is all but
    spent, a call that used to succeed with the last few milliseconds now fails with the
    library's timeout error. Refuse such work up front (DL106) rather than rely on it. At a
    call of unknown type the same edit applies: the value passed is already the remainder in
    seconds, and the edit only takes the margin off it. Where the remainder is a budget
    object's method in the raw-remainder role and its type has a method in the hop-timeout
    role (`budget.remaining()` and `budget.timeout()`, `budget.roles`), the fix calls that one
    instead: the type already takes its margin off.

    ## Options
    - `hop_margin_ms`: the margin subtracted (a margin of 0 turns this rule off).
    - `fix.seconds_expression`: the replacement's shape, with the remainder as `{budget}`
      (default `max(0.001, {budget} - {margin})`); inside an existing clamp only the margin
      is subtracted.
    - `budget.accessors`: your own functions returning the remaining seconds.
    - `budget.roles` / `budget.type_roles`: which methods of your budget types return the raw
      remainder (`raw_remainder`, `raw_remainder_ms`).
    - `budget.*`: what counts as a budget (a call of unknown type is judged only when its
      timeout derives from one).
    """

    code = "DL104"
    name = "remainder-forwarded-without-margin"
    summary = "the raw remainder is passed on with no hop margin subtracted"
    fix_applicability = Applicability.UNSAFE
    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        sites = timeouts_passed_on(ctx, node)
        margin = ctx.profile.hop_margin_s
        if not sites or margin <= 0:
            return
        budget = budget_in_scope(ctx)  # None: only accessor calls (`remaining_seconds()`) can be raw
        for call in sites:
            for value in timeout_values(call.timeout, ctx):
                if self._is_raw_remainder(value, budget, ctx, call):
                    self._report(value, call, margin, ctx, budget, _inside_clamp(value, call.timeout, ctx))

    def _is_raw_remainder(self, value: ast.expr, budget: Optional[Budget], ctx: "FileView", call: BudgetHop) -> bool:
        analysis = ctx.analysis(BudgetAnalysis)
        if isinstance(value, ast.Name):
            # Assigned once, straight from an accessor (`rem = context.time_remaining()`), or
            # a seconds parameter handed on whole.
            if budget is None or budget.kind_of(value.id) != SECONDS:
                return False
            if single_assignment(value.id, ctx.scope) is not None:
                return True
            return _remaining_parameter(value.id, analysis, ctx, call)
        if analysis.raw_remainder_call(value, budget):  # a method in the raw-remainder role
            return True
        if budget is not None and _left_of_remaining_parameter(value, analysis, ctx, call):
            return True
        if not isinstance(value, ast.Call) or value.args or value.keywords:
            return False
        name = ctx.resolver.qualified_name(value.func, ctx.scope)
        return name is not None and analysis.accessors.get(name) == SECONDS

    def _report(
        self, value: ast.expr, call: BudgetHop, margin: float, ctx: "FileView", budget: Optional[Budget], clamped: bool
    ) -> None:
        shown = ctx.source.segment(value)
        hop_timeout = ctx.analysis(BudgetAnalysis).hop_timeout_method(value, budget)
        # The budget type's own method has the margin off already; only a method call
        # (`budget.remaining()`) has such a role.
        if hop_timeout is not None and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            replacement = f"{ctx.source.segment(value.func.value)}.{hop_timeout}()"
            message = (
                f"`{call.display_name}` is given the raw remainder `{shown}`: "
                f"use the hop timeout (`{replacement}`)"
            )
            edit = replace_node(ctx.source, value, replacement)
            ctx.report(self, value, message, [edit], description=f"use {replacement}")
            return
        if clamped:  # the clamp around it already floors: only the margin comes off
            replacement = f"{shown} - {seconds_literal(margin)}"
        elif _may_be_none(value, budget, ctx):
            # No deadline from the client: the call used to wait without limit, and `None -
            # margin` would raise; the edge total stands in, as at the edge itself.
            edge = ctx.profile.render("edge_expression")
            replacement = ctx.profile.render("seconds_expression", f"({edge} if {shown} is None else {shown})")
        else:  # the remainder in seconds, through the profile's template like every fix
            replacement = ctx.profile.render("seconds_expression", shown)
        message = (
            f"`{call.display_name}` is given the raw remainder `{shown}`: "
            f"subtract the hop margin (`{replacement}`)"
        )
        edit = replace_node(ctx.source, value, replacement)
        ctx.report(self, value, message, [edit], description=f"use {replacement}")


def _remaining_parameter(name: str, analysis: BudgetAnalysis, ctx: "FileView", call: BudgetHop) -> bool:
    """A numeric parameter of `budget.seconds_parameters`, never rebound: the remaining time
    (what `--thread-budget`'s `budget_s` is). A name also in `budget.timeout_parameters` is
    the time the caller gave this function, margin taken, and may be handed on whole; so is
    a seconds parameter of a project function (`budget_s=budget_s`), which judges its own."""
    if name not in analysis.seconds_parameters or name in analysis.timeout_parameters:
        return False
    if any(kw.value is call.timeout and kw.arg in analysis.seconds_parameters for kw in call.node.keywords):
        return False
    bindings = ctx.scope.lookup(name)
    if not bindings or len(bindings) != 1 or bindings[0].kind != PARAM:
        return False
    owner = bindings[0].scope.node
    # A number default or a `float`/`int` annotation: a `None` default would make the fix's
    # `budget_s - margin` raise where the call used to wait without limit.
    return any(p is bindings[0].value for p in numeric_parameters(owner))


def _left_of_remaining_parameter(value: ast.expr, analysis: BudgetAnalysis, ctx: "FileView", call: BudgetHop) -> bool:
    """`deadline - time.monotonic()` where `deadline = time.monotonic() + budget_s` and
    `budget_s` is a remaining parameter: what is left of it now, as raw as the parameter
    itself. DL107's fix writes this when a hop spends the parameter a second time."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Sub) and isinstance(value.left, ast.Name)):
        return False
    if not _reads_monotonic(value.right, ctx):
        return False
    assigned = single_assignment(value.left.id, ctx.scope)
    taken = assigned.value if assigned is not None else None
    if not (isinstance(taken, ast.BinOp) and isinstance(taken.op, ast.Add) and _reads_monotonic(taken.left, ctx)):
        return False
    seconds = taken.right
    return isinstance(seconds, ast.Name) and _remaining_parameter(seconds.id, analysis, ctx, call)


def _reads_monotonic(node: ast.expr, ctx: "FileView") -> bool:
    """A reading of a monotonic clock in seconds (`time.monotonic()`, the clock catalog's)."""
    found = time_value(ctx, node)
    return found is not None and found.role == INSTANT and found.clock == MONOTONIC and found.unit == "s"


def _may_be_none(value: ast.expr, budget: Optional[Budget], ctx: "FileView") -> bool:
    """`context.time_remaining()` on a gRPC context, or a name assigned once from it."""
    if isinstance(value, ast.Name):
        assigned = single_assignment(value.id, ctx.scope)
        value = assigned.value if assigned is not None else value
    return ctx.analysis(BudgetAnalysis).remainder_may_be_none(value, budget)


def _inside_clamp(value: ast.expr, timeout: ast.expr, ctx: "FileView") -> bool:
    """`max(0.0, value)` already keeps the result from going below its floor."""
    for node in walk_nodes(timeout):
        if isinstance(node, ast.Call) and any(a is value for a in node.args) and len(node.args) == 2:
            if ctx.resolver.qualified_name(node.func, ctx.scope) == "max":
                return any(is_clamp_floor(a) for a in node.args if a is not value)
    return False
