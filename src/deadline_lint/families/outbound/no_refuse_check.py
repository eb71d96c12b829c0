from __future__ import annotations

import ast
from typing import ClassVar, List, Mapping, Optional, Tuple, Type

from deadline_lint.catalog import CALL
from deadline_lint.engine.requires import Look
from deadline_lint.engine.rule import register
from deadline_lint.families.outbound.analysis.outbound import outbound_call
from deadline_lint.families.outbound.common import OutboundRule
from deadline_lint.families.shared.budget.budget import BudgetAnalysis, budget_in_scope
from deadline_lint.families.shared.budget.budget_types import CHECK_ROLES
from deadline_lint.semantics.local.expressions import mentions_any
from deadline_lint.semantics.local.scopes import FUNCTION

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
Position = Tuple[int, int]


@register
class NoRefuseCheck(OutboundRule):
    """
    ## What it does
    Opt-in. Flags the first downstream call in a function that has its own budget (a budget
    parameter, a gRPC servicer's `context`, a remainder read from an accessor) when nothing
    before that call compares the remainder against a threshold: no
    `if context.time_remaining() < REFUSE_BELOW_S:`, no `if budget.remaining() < ...`, no call
    to a budget method in the `refuse_check` or `expired_check` role (`budget.check()`,
    `budget.raise_if_expired()`, `if not context.is_active():`; `budget.roles` in the profile,
    `refuse_methods` in the catalog's budget.yaml). One finding per function, at the first
    such call.

    ## Why is this bad?
    A request that arrives with 5 ms left cannot be served, but without a check it still
    fans out: every downstream service starts work whose answer nobody will read, and under
    overload that wasted work is what keeps the system overloaded. Refusing early, with the
    refused-too-late status, is cheap and tells the caller the truth.

    ## Example
    ```python
    import grpc
    from shop.protos import stock_pb2_grpc

    class Orders(stock_pb2_grpc.OrdersServicer):
        def __init__(self, channel):
            self.stock = stock_pb2_grpc.StockStub(channel)
            self.payments = stock_pb2_grpc.PaymentsStub(channel)

        def GetQuote(self, request, context):
            return self.stock.Price(request, timeout=context.time_remaining() - 0.05)
    ```

    ## Use instead
    ```python
    import grpc
    from shop.protos import stock_pb2_grpc

    class Orders(stock_pb2_grpc.OrdersServicer):
        def __init__(self, channel):
            self.stock = stock_pb2_grpc.StockStub(channel)
            self.payments = stock_pb2_grpc.PaymentsStub(channel)

        def GetQuote(self, request, context):
            if context.time_remaining() < REFUSE_BELOW_S:
                context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "refused: too little time left")
            return self.stock.Price(request, timeout=context.time_remaining() - 0.05)
    ```

    ## Fix safety
    No fix: where to refuse, and with what status, is the service's decision.

    ## Options
    - Opt-in: select `DL106` by its exact code (`--extend-select DL106`).
    - `refuse_below_ms`: the threshold your checks should use.
    - `budget.*`: what counts as a budget.
    """

    code = "DL106"
    name = "no-refuse-check"
    summary = "a budgeted function calls downstream without checking the remainder first"
    default_enabled = False
    node_types = (ast.Call, ast.Compare)
    leave_node_types = _FUNCTIONS
    first_looks: ClassVar[Mapping[Type[ast.AST], Look]] = {}  # its refuse checks are no outbound calls

    def visit(self, node, ctx):
        if ctx.scope.kind != FUNCTION:
            return
        if isinstance(node, ast.Compare) or _on_a_refuse_method(node, ctx):
            budget = budget_in_scope(ctx)
            if budget is not None and _is_refuse_check(node, budget, ctx) and _in_body(node, ctx):
                function = ctx.state(self, _Function)
                position = (node.lineno, node.col_offset)
                if function.first_check is None or position < function.first_check:
                    function.first_check = position
            return
        call = outbound_call(ctx, node)
        if call is None or call.api.kind != CALL:
            return
        budget = budget_in_scope(ctx)
        if budget is None or not _has_own_budget(budget, ctx):
            return
        ctx.state(self, _Function).calls.append((node, call.display_name))

    def leave(self, node, ctx):
        """One finding per function, at its first call to downstream that no refuse check
        precedes: the check belongs at its top."""
        function = ctx.state(self, _Function)
        for call, display_name in function.calls:
            if function.first_check is not None and function.first_check < (call.lineno, call.col_offset):
                continue
            ms = self.profile.refuse_below_ms
            message = (
                f"`{display_name}` starts downstream work without checking the remaining budget first: "
                f"refuse when less than {ms} ms remain"
            )
            ctx.report(self, call, message)
            return


class _Function:
    """What DL106 saw in one function: its outbound calls with their budget, in walk order, and
    where it first compares the remainder with something."""

    __slots__ = ("calls", "first_check")

    def __init__(self) -> None:
        self.calls: List[Tuple[ast.Call, str]] = []
        self.first_check: Optional[Position] = None


def _has_own_budget(budget, ctx) -> bool:
    """The function reads its own budget (a closure only borrowing one is its outer
    function's business); a source it reads itself (`request.state.budget`) counts."""
    own = ctx.scope.bindings()
    return any(name in own or "." in name for name, _ in budget.kinds)


def _on_a_refuse_method(call: ast.Call, ctx) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in ctx.analysis(BudgetAnalysis).check_methods


def _in_body(node: ast.AST, ctx) -> bool:
    """The node is in the body of the function being walked (not in its decorators, defaults
    or annotations, which are evaluated outside it)."""
    function = ctx.scope.node
    parents = ctx.parents
    for index in range(len(parents) - 1, -1, -1):
        if parents[index] is function:
            child = parents[index + 1] if index + 1 < len(parents) else node
            body = function.body
            return any(child is stmt for stmt in body) if isinstance(body, list) else child is body
    return False


def _is_refuse_check(node: ast.AST, budget, ctx) -> bool:
    """A comparison that reads the budget, or a budget method in the `expired_check` or
    `refuse_check` role (`budget.check()`, `if not context.is_active():`)."""
    if isinstance(node, ast.Compare):
        return mentions_any(node, budget.names)
    return ctx.analysis(BudgetAnalysis).role(node, budget) in CHECK_ROLES
