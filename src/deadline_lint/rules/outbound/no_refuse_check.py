from __future__ import annotations

import ast
from typing import Optional, Tuple

from deadline_lint.analysis.budget import budget_in_scope
from deadline_lint.analysis.expressions import mentions_any
from deadline_lint.analysis.outbound import outbound_call
from deadline_lint.catalog import CALL
from deadline_lint.rules.base import register
from deadline_lint.rules.outbound.common import OutboundRule

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
    to a budget method that refuses work (`budget.check()`, `budget.raise_if_expired()`, see
    `refuse_methods` in the catalog's budget.yaml).

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
    def visit(self, node, ctx):
        facts = ctx.scope.facts
        if facts.get("DL106.reported"):
            return  # one finding per function: the check belongs at its top
        call = outbound_call(ctx, node)
        if call is None or call.api.kind != CALL:
            return
        budget = budget_in_scope(ctx)
        if budget is None or not _has_own_budget(budget, ctx):
            return
        first_check = _first_refuse_check(ctx, budget)
        if first_check is not None and first_check < (node.lineno, node.col_offset):
            return
        facts["DL106.reported"] = True
        ms = self.profile.refuse_below_ms
        message = (
            f"`{call.display_name}` starts downstream work without checking the remaining budget first: "
            f"refuse when less than {ms} ms remain"
        )
        ctx.report(self, node, message)


def _has_own_budget(budget, ctx) -> bool:
    """The function reads its own budget (a closure only borrowing one is its outer
    function's business)."""
    own = ctx.scope.bindings()
    return any(name in own for name, _ in budget.kinds)


def _first_refuse_check(ctx, budget) -> Optional[Position]:
    """Where the function first compares the remainder with something, cached per function."""
    facts = ctx.scope.facts
    if "DL106.first_check" in facts:
        return facts["DL106.first_check"]  # type: ignore[return-value]
    refuse_methods = frozenset((ctx.catalog.data.get("budget", {}) or {}).get("refuse_methods", []) or [])
    found: Optional[Position] = None
    function = ctx.scope.node
    body = getattr(function, "body", [])
    stack = list(body) if isinstance(body, list) else [body]
    while stack:
        node = stack.pop()
        if isinstance(node, _FUNCTIONS) or isinstance(node, ast.ClassDef):
            continue  # a nested function's checks do not guard this one's calls
        if _is_refuse_check(node, budget.names, refuse_methods):
            position = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
            found = position if found is None or position < found else found
            continue
        stack.extend(ast.iter_child_nodes(node))
    facts["DL106.first_check"] = found
    return found


def _is_refuse_check(node: ast.AST, names, refuse_methods) -> bool:
    if isinstance(node, ast.Compare):
        return mentions_any(node, names)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        receiver = node.func.value
        return node.func.attr in refuse_methods and isinstance(receiver, ast.Name) and receiver.id in names
    return False
