from __future__ import annotations

import ast
from typing import TYPE_CHECKING, ClassVar, List, Mapping, Optional, Tuple, Type, Union

from deadline_lint.catalog import CALL
from deadline_lint.engine.requires import Look
from deadline_lint.engine.rule import register
from deadline_lint.families.outbound.analysis.outbound import outbound_call
from deadline_lint.families.outbound.common import OutboundRule
from deadline_lint.families.outbound.project_spending import spending_callee
from deadline_lint.families.shared.budget.budget import Budget, BudgetAnalysis, budget_in_scope
from deadline_lint.families.shared.budget.budget_types import CHECK_ROLES
from deadline_lint.semantics.local.expressions import mentions_any
from deadline_lint.semantics.local.flow import runs_before
from deadline_lint.semantics.local.scopes import FUNCTION

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

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

    Not the handler's first act: a downstream call that is the only one in the function's
    first statement (after a docstring; also first inside a `with`, `try` or `if` that is),
    outside any loop or comprehension, starts before anything has spent the budget, and a
    check there would only repeat what the caller's own deadline already says. The next
    downstream call is judged as usual.

    A check holds until something spends the budget: a downstream call bounded by it, or a
    call of a project function that makes downstream calls (as DL107 counts them). The next
    downstream call, or call of such a function, after that needs a check of its own, one
    that runs after the spending; a function whose calls are all checked at its top gets one
    finding there instead. A call with a fixed timeout spends nothing of the budget.

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
            price = self.stock.Price(request, timeout=context.time_remaining() - 0.05)
            return self.payments.Quote(price, timeout=context.time_remaining() - 0.05)
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
            price = self.stock.Price(request, timeout=context.time_remaining() - 0.05)
            if context.time_remaining() < REFUSE_BELOW_S:
                context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "refused: too little time left")
            return self.payments.Quote(price, timeout=context.time_remaining() - 0.05)
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

    def visit_Compare(self, node: ast.Compare, ctx: "FileView") -> None:
        if ctx.scope.kind == FUNCTION:
            self._note_refuse_check(node, ctx)

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        if ctx.scope.kind != FUNCTION:
            return
        if _on_a_refuse_method(node, ctx):
            self._note_refuse_check(node, ctx)
            return
        budget = budget_in_scope(ctx)
        if budget is None or not _has_own_budget(budget, ctx):
            return
        call = outbound_call(ctx, node)
        chain = tuple(ctx.parents)
        if call is None or call.api.kind != CALL:
            callee = spending_callee(node, ctx)
            if callee is not None:
                function = ctx.state(self, _Function)
                function.spends.append((node, chain))
                function.later.append((node, f"{callee}()", chain))
            return
        function = ctx.state(self, _Function)
        function.calls.append((node, call.display_name, _first_act(node, ctx)))
        function.later.append((node, call.display_name, chain))
        if call.timeout is not None and mentions_any(call.timeout, budget.names):
            # bounded by the budget, it spends it (a fixed timeout is its own business, as for DL107)
            function.spends.append((node, chain))

    def _note_refuse_check(self, node: Union[ast.Compare, ast.Call], ctx: "FileView") -> None:
        budget = budget_in_scope(ctx)
        if budget is not None and _is_refuse_check(node, budget, ctx) and _in_body(node, ctx):
            function = ctx.state(self, _Function)
            position = (node.lineno, node.col_offset)
            if function.first_check is None or position < function.first_check:
                function.first_check = position
            function.checks.append((node, tuple(ctx.parents)))

    def leave_FunctionDef(self, node: ast.FunctionDef, ctx: "FileView") -> None:
        self._report_unchecked(ctx)

    def leave_AsyncFunctionDef(self, node: ast.AsyncFunctionDef, ctx: "FileView") -> None:
        self._report_unchecked(ctx)

    def leave_Lambda(self, node: ast.Lambda, ctx: "FileView") -> None:
        self._report_unchecked(ctx)

    def _report_unchecked(self, ctx: "FileView") -> None:
        """One finding per function, at its first call to downstream that no refuse check
        precedes: the check belongs at its top."""
        function = ctx.state(self, _Function)
        first_acts = [call for call, _, first in function.calls if first]
        exempt = first_acts[0] if len(first_acts) == 1 else None  # the one call of the first statement
        for call, display_name, _ in function.calls:
            if call is exempt:
                continue
            if function.first_check is not None and function.first_check < (call.lineno, call.col_offset):
                continue
            ms = self.profile.refuse_below_ms
            message = (
                f"`{display_name}` starts downstream work without checking the remaining budget first: "
                f"refuse when less than {ms} ms remain"
            )
            ctx.report(self, call, message)
            return
        for call, display_name, chain in function.later:
            spent = [(s, c) for s, c in function.spends if _before(s, c, call, chain)]
            if not spent:
                continue
            if any(_before(k, kc, call, chain) and all(_before(s, c, k, kc) for s, c in spent)
                   for k, kc in function.checks):
                continue
            ms = self.profile.refuse_below_ms
            by = ctx.source.segment(spent[-1][0].func)
            message = (
                f"`{display_name}` starts downstream work after `{by}()` spent time, without checking "
                f"the remaining budget again: refuse when less than {ms} ms remain"
            )
            ctx.report(self, call, message)
            return


class _Function:
    """What DL106 saw in one function: its outbound calls with their budget, in walk order, and
    where it first compares the remainder with something."""

    __slots__ = ("calls", "first_check", "later", "spends", "checks")

    def __init__(self) -> None:
        self.calls: List[Tuple[ast.Call, str, bool]] = []  # with: in the first statement (`_first_act`)
        self.first_check: Optional[Position] = None
        # downstream work judged after something spent time: outbound calls, and calls of
        # project functions making them
        self.later: List[Tuple[ast.Call, str, Tuple[ast.AST, ...]]] = []
        self.spends: List[Tuple[ast.Call, Tuple[ast.AST, ...]]] = []
        self.checks: List[Tuple[ast.AST, Tuple[ast.AST, ...]]] = []


Chain = Tuple[ast.AST, ...]


def _before(first: ast.AST, first_chain: Chain, second: ast.AST, second_chain: Chain) -> bool:
    """`first` comes earlier in the function and has run whenever `second` runs."""
    earlier = (first.lineno, first.col_offset) < (second.lineno, second.col_offset)  # type: ignore[attr-defined]
    return earlier and runs_before(first, first_chain, second, second_chain)


def _has_own_budget(budget: Budget, ctx: "FileView") -> bool:
    """The function reads its own budget (a closure only borrowing one is its outer
    function's business); a source it reads itself (`request.state.budget`) counts."""
    own = ctx.scope.bindings()
    return any(name in own or "." in name for name, _ in budget.kinds)


def _on_a_refuse_method(call: ast.Call, ctx: "FileView") -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in ctx.analysis(BudgetAnalysis).check_methods


def _in_body(node: ast.AST, ctx: "FileView") -> bool:
    """The node is in the body of the function being walked (not in its decorators, defaults
    or annotations, which are evaluated outside it)."""
    function = ctx.scope.node
    parents = ctx.parents
    for index in range(len(parents) - 1, -1, -1):
        if parents[index] is function:
            child = parents[index + 1] if index + 1 < len(parents) else node
            if isinstance(function, ast.Lambda):
                return child is function.body
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return any(child is stmt for stmt in function.body)
            return False
    return False


_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_ENTERED = (ast.With, ast.AsyncWith, ast.Try, ast.If)  # their first statement runs first too


def _first_act(node: ast.AST, ctx: "FileView") -> bool:
    """The call sits in the first statement the function runs (a docstring aside), or first
    in a `with`, `try` or `if` that is, and in no loop or comprehension."""
    function = ctx.scope.node
    parents = ctx.parents
    index = next((i for i in range(len(parents) - 1, -1, -1) if parents[i] is function), None)
    if index is None or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    path = [*parents[index + 1:], node]
    if not path or not _first_of(function.body, path[0], docstring=True):
        return False
    for outer, inner in zip(path, path[1:]):
        if isinstance(outer, _LOOPS):
            return False
        if isinstance(inner, ast.stmt):
            if not isinstance(outer, _ENTERED):
                return False
            bodies = (outer.body, outer.orelse) if isinstance(outer, ast.If) else (outer.body,)
            if not any(_first_of(body, inner) for body in bodies):
                return False
    return True


def _first_of(body: List[ast.stmt], statement: ast.AST, docstring: bool = False) -> bool:
    skip = 1 if docstring and len(body) > 1 and _is_docstring(body[0]) else 0
    return len(body) > skip and body[skip] is statement


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _is_refuse_check(node: ast.AST, budget: Budget, ctx: "FileView") -> bool:
    """A comparison that reads the budget, or a budget method in the `expired_check` or
    `refuse_check` role (`budget.check()`, `if not context.is_active():`)."""
    if isinstance(node, ast.Compare):
        return mentions_any(node, budget.names)
    return ctx.analysis(BudgetAnalysis).role(node, budget) in CHECK_ROLES
