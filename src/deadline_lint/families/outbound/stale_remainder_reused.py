from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple, Union, cast

from deadline_lint.catalog import CLIENT
from deadline_lint.engine.edits import replace_node
from deadline_lint.engine.requires import Look
from deadline_lint.engine.rule import register
from deadline_lint.families.outbound.analysis.outbound import outbound_call
from deadline_lint.families.outbound.analysis.outbound_calls import FROM_CALL, OutboundCall
from deadline_lint.families.outbound.analysis.timeout_objects import timeout_object
from deadline_lint.families.outbound.common import OutboundRule, is_sequential, is_statement, name_occurrences
from deadline_lint.families.outbound.fixes.spend_deadline import spend_from_a_deadline
from deadline_lint.families.outbound.gathered_calls import Group, awaited_group
from deadline_lint.families.outbound.project_spending import first_look, record_spending, spending_callee
from deadline_lint.families.outbound.stale_reads import TRANSPARENT_CALLS, bare, drop_if_dead, fresh_read, wrapped
from deadline_lint.families.shared.budget.budget import INSTANT, SECONDS, Budget, budget_in_scope
from deadline_lint.families.shared.errors.cancel_scopes import is_awaited
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.expressions import mentions_any
from deadline_lint.semantics.local.flow import enclosing_loop, runs_before
from deadline_lint.semantics.local.scopes import ASSIGN, PARAM, Binding
from deadline_lint.support.diagnostics import Applicability, Edit

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


@register
class StaleRemainderReused(OutboundRule):
    """
    ## What it does
    Flags a remaining-time value that was read once (`remaining = context.time_remaining() -
    0.05`, `t = budget.timeout()`) and is then passed to a second outbound call that runs
    after the first one, or to a call repeated in a loop. A budget's seconds given as a
    parameter (`budget.seconds_parameters`, `budget_s` by default, which `fix
    --thread-budget` adds) are such a value too: the time left when the function was called,
    so a second hop that spends them, an outbound call or a call handing them on
    (`fetch(url, budget_s=budget_s)`), is flagged the same way, as is a hop after a call of a
    function of this module that makes outbound calls of its own (`audit(order)`, run to
    completion in between: project_spending.py). A retry loop that always runs its body
    (`for attempt in range(3):`, `while True:`) spends the time its hops take before what
    follows it. Calls started together (coroutines handed to `asyncio.gather` or to the
    `create_task` of an `asyncio.TaskGroup`, grpc `.future()`) share one remainder
    legitimately and stay quiet among themselves, but an awaited `gather` has run them all
    when it returns, and a `TaskGroup` when its block ends: a hop after it is flagged as after
    any other, and one of them is flagged when something before the group spent its remainder.
    Calls on exclusive branches of an `if` stay quiet.

    ## Why is this bad?
    The value was true when it was read. After the first call took 800 ms, the second call's
    "remaining" timeout is 800 ms longer than the time actually left: in a sequential chain each
    hop must deduct the time spent before it. Retry loops that reuse the value overspend once
    per attempt.

    ## Example
    ```python
    import grpc
    from shop.protos import stock_pb2_grpc

    class Orders(stock_pb2_grpc.OrdersServicer):
        def __init__(self, channel):
            self.stock = stock_pb2_grpc.StockStub(channel)
            self.payments = stock_pb2_grpc.PaymentsStub(channel)

        def Checkout(self, request, context):
            remaining = context.time_remaining() - 0.05
            stock = self.stock.Reserve(request, timeout=remaining)
            return self.payments.Charge(request, timeout=remaining)
    ```

    ## Use instead
    ```python
    import grpc
    from shop.protos import stock_pb2_grpc

    class Orders(stock_pb2_grpc.OrdersServicer):
        def __init__(self, channel):
            self.stock = stock_pb2_grpc.StockStub(channel)
            self.payments = stock_pb2_grpc.PaymentsStub(channel)

        def Checkout(self, request, context):
            stock = self.stock.Reserve(request, timeout=context.time_remaining() - 0.05)
            return self.payments.Charge(request, timeout=context.time_remaining() - 0.05)
    ```

    ## Fix safety
    Unsafe: the fix replaces the stale name in the later call with the expression it was
    computed from, so the remainder is read again at that call. It changes the timeout the
    call gets (that is the point), and is offered only when that expression reads nothing but
    the budget, numbers and module-level names, so re-evaluating it has no other effect.
    When that call held the name's only uses, the fix also removes the read it leaves unused
    (`t = budget.timeout()` on a line of its own), so no dead local remains; a read with a
    comment on its line, or sharing its line, is kept. A seconds parameter cannot be read
    again: the fix takes a deadline from it on entry (`budget_deadline_s = time.monotonic() +
    budget_s`, adding `import time` if needed) and gives the later call what is left of it
    (`budget_deadline_s - time.monotonic()`); where `time` is rebound in the file, or the
    function has nested scopes, it only reports.

    ## Options
    - `budget.*`: what counts as a budget and its accessors.
    """

    code = "DL107"
    name = "stale-remainder-reused"
    summary = "one remainder value passed to several sequential outbound calls"
    fix_applicability = Applicability.UNSAFE
    first_looks = {ast.Call: Look.of(lambda rule: first_look(rule))}

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        hop = _hop(node, ctx)
        group = awaited_group(node, ctx)
        if group is not None:
            if hop is not None:
                self._judge(node, hop, ctx, group)
            self._gathered(node, hop, group, ctx)
            return
        if hop is None or hop[1] is None:  # handing seconds on to a project function spends time too
            self._project_call(node, ctx)
        if hop is not None:
            self._judge(node, hop, ctx)

    def _judge(
        self,
        node: ast.Call,
        hop: Tuple[ast.expr, Optional[OutboundCall]],
        ctx: "FileView",
        gathered: Optional[Tuple[Group, Tuple[ast.AST, ...]]] = None,
    ) -> None:
        """Whether the hop's timeout reuses a read something before it spent. A hop handed to
        an awaited `gather` is judged from the `gather` (its siblings share one remainder and
        what they spend is recorded there, by `_gathered`)."""
        timeout, call = hop
        budget = budget_in_scope(ctx)
        if budget is None:
            return
        function, snapshots = self._function(ctx, budget)
        if not snapshots or gathered is None and not _sequential(node, call, ctx):
            return
        used = [n for n in snapshots if mentions_any(timeout, (n,))]
        uses = function.uses
        chain = tuple(ctx.parents)
        fresh = not used or _recomputed_here(timeout, ctx)
        if gathered is not None:
            if not fresh:
                self._stale(node, chain, gathered, timeout, used, snapshots, function, ctx, budget, record=False)
            return
        if fresh:
            if mentions_any(timeout, budget.names):
                # A hop bounded by a fresh read still spends time: a seconds parameter used
                # after it is stale (`f(budget_s=deadline - time.monotonic()); g(budget_s)`).
                for name, binding in snapshots.items():
                    if binding.kind == PARAM:
                        uses.setdefault(name, []).append((node, chain))
                if call is not None:  # so is a name read from the budget before it (`t = budget.timeout()`)
                    record_spending(node, f"the outbound call `{ctx.source.segment(node.func)}()` ran since", chain,
                                    snapshots, function.spent)
            return
        self._stale(node, chain, (node, chain), timeout, used, snapshots, function, ctx, budget, record=True)

    def _stale(
        self, node: ast.Call, chain: Tuple[ast.AST, ...], at: Tuple[ast.AST, Tuple[ast.AST, ...]],
        timeout: ast.expr, used: List[str], snapshots: Dict[str, Binding], function: "_Function",
        ctx: "FileView", budget: Budget, record: bool,
    ) -> None:
        """Report the timeout when a use or a spending of its read runs before `at` (the node
        and its parents); with `record`, count this hop as a use for the hops after it."""
        at_node, at_chain = at
        # Uses are counted per read: `derived = remaining - 0.01` is the same read as `remaining`.
        reads = sorted({root for name in used for root in _roots(name, snapshots)})
        stale = None
        for read in reads:
            earlier = function.uses.setdefault(read, [])
            loop = enclosing_loop(chain, node, ctx.scope.node, _read_node(snapshots[read]))
            if stale is None and (loop or any(runs_before(p, p_chain, at_node, at_chain) for p, p_chain in earlier)):
                stale = (read, loop, "")
            if stale is None:
                spent = function.spent.get(read, ())
                by = next((name for p, p_chain, name in spent if runs_before(p, p_chain, at_node, at_chain)), None)
                if by is not None:
                    stale = (read, None, by)
            if record:
                earlier.append((node, chain))
        if stale is not None:
            self._report(timeout, used, snapshots, stale[0], stale[1], ctx, budget, stale[2])

    def _function(self, ctx: "FileView", budget: Budget) -> Tuple["_Function", Dict[str, Binding]]:
        """What DL107 knows of the function being walked, and its snapshots of the budget
        (read at the first call that asks)."""
        function = ctx.state(self, _Function)
        if function.snapshots is None:
            function.snapshots = _snapshots(ctx, budget)
        return function, function.snapshots

    def _project_call(self, node: ast.Call, ctx: "FileView") -> None:
        """A call of a function of this module making hops spends time (project_spending.py)."""
        budget = budget_in_scope(ctx)
        callee = spending_callee(node, ctx) if budget is not None else None
        if budget is None or callee is None:
            return
        function, snapshots = self._function(ctx, budget)
        spent_by = f"`{callee}()` ran since, making outbound calls of its own"
        record_spending(node, spent_by, tuple(ctx.parents), snapshots, function.spent)

    def _gathered(
        self,
        node: ast.Call,
        hop: Optional[Tuple[ast.expr, Optional[OutboundCall]]],
        group: Tuple[Group, Tuple[ast.AST, ...]],
        ctx: "FileView",
    ) -> None:
        """A call handed to an awaited `asyncio.gather(...)` runs beside the others gathered
        there (they share a remainder), but all of them have finished when the `await` returns:
        a hop bounded by the budget, a forward of it, or a call of a project function making
        hops spends a remainder read before the `gather`, for what comes after it."""
        budget = budget_in_scope(ctx)
        if budget is None:
            return
        function, snapshots = self._function(ctx, budget)
        if not snapshots:
            return
        if hop is not None:
            spends = mentions_any(hop[0], budget.names) or mentions_any(hop[0], snapshots)
        else:
            spends = spending_callee(node, ctx, together=True) is not None
        if not spends:
            return
        gather, chain = group
        if isinstance(gather, ast.Call):
            spent_by = f"the calls gathered by `{ctx.source.segment(gather.func)}()` ran since"
        else:
            spent_by = "the tasks of the `TaskGroup` above ran since"
        record_spending(gather, spent_by, chain, snapshots, function.spent)

    def _report(
        self,
        timeout: ast.expr,
        used: List[str],
        snapshots: Dict[str, Binding],
        read: str,
        loop: Optional[ast.AST],
        ctx: "FileView",
        budget: Budget,
        spent_by: str = "",
    ) -> None:
        occurrences = [n for n in name_occurrences(timeout, used)]
        name = occurrences[0].id
        line = _read_node(snapshots[read]).lineno
        why = "is reused on every iteration of this loop" if loop else "was already used by an earlier call"
        why = spent_by or why
        deadline = spend_from_a_deadline(ctx, snapshots)
        fresh = {n: fresh_read(n, snapshots, ctx, budget, deadline) for n in set(o.id for o in occurrences)}
        reads = {n: f for n, f in fresh.items() if f is not None}
        imports: Tuple[str, ...] = ()
        edits: List[Edit]
        if len(reads) == len(fresh):
            advice = f"read it again here (`{bare(reads[name])}`)"
            # As the whole argument the expression needs no parentheses of its own.
            edits = [
                replace_node(ctx.source, o, bare(reads[o.id]) if o is timeout else wrapped(reads[o.id]))
                for o in occurrences
            ]
            if deadline is not None and any(deadline.name in bare(f) for f in reads.values()):
                edits += deadline.opening
                imports = deadline.imports
            else:
                edits += drop_if_dead(name, occurrences, snapshots, ctx)
        else:
            advice, edits = "read the remainder again for this call", []
        if snapshots[read].kind == PARAM:
            what = f"`{name}` is the time left when the function was called" if name == read else (
                f"`{name}` comes from `{read}`, the time left when the function was called,"
            )
        else:
            what = f"`{name}` was read once (line {line})" if name == read else (
                f"`{name}` comes from `{read}`, read once (line {line}),"
            )
        message = f"{what} and {why}: {advice}"
        ctx.report(self, occurrences[0], message, edits, description=f"recompute {name} for this call",
                   imports=imports)


def _hop(node: ast.Call, ctx: "FileView") -> Optional[Tuple[ast.expr, Optional[OutboundCall]]]:
    """(the value that bounds the hop, its outbound view or None) for an outbound call, or a
    call handing a budget's seconds on (`fetch(url, budget_s=...)`: the callee spends them)."""
    call = outbound_call(ctx, node)
    if call is not None:
        if call.source != FROM_CALL or call.timeout is None or call.api.kind == CLIENT:
            return None
        return call.timeout, call
    keywords = ctx.profile.budget.seconds_parameters
    forwarded = [k.value for k in node.keywords if k.arg in keywords]
    return (forwarded[0], None) if len(forwarded) == 1 else None


def _sequential(node: ast.Call, call: Optional[OutboundCall], ctx: "FileView") -> bool:
    if call is not None:
        if call.blocking and is_statement(ctx):
            return True  # a statement of its own: it blocks (a sync client in async code too)
        return is_sequential(node, call, ctx)
    function = ctx.scope.node
    if isinstance(function, ast.AsyncFunctionDef):
        # A coroutine handed to `gather` starts with the others; a statement of its own runs
        # a plain function to completion.
        return is_awaited(ctx, node) or is_statement(ctx)
    return isinstance(function, ast.FunctionDef)


class _Function:
    """What DL107 knows of one function: its snapshots of the budget (computed at its first
    outbound call), and per snapshot the calls that used it so far, in walk order."""

    __slots__ = ("snapshots", "uses", "spent")

    def __init__(self) -> None:
        self.snapshots: Optional[Dict[str, Binding]] = None
        self.uses: Dict[str, List[Tuple[ast.AST, Tuple[ast.AST, ...]]]] = {}
        # per snapshot, the calls of project functions making hops that ran after it was read
        self.spent: Dict[str, List[Tuple[ast.AST, Tuple[ast.AST, ...], str]]] = {}


def _read_node(snapshot: Binding) -> Union[ast.expr, ast.arg]:
    """Where a snapshot was read: the value assigned (`remaining = budget.timeout()`), or the
    seconds parameter itself (`budget_s`), as `_snapshots` collects them."""
    return cast(Union[ast.expr, ast.arg], snapshot.value)


def _assigned_value(snapshot: Binding) -> ast.expr:
    """The value of a snapshot that is no parameter: `_snapshots` keeps ASSIGN bindings with one."""
    return cast(ast.expr, snapshot.value)


def _roots(name: str, snapshots: Dict[str, Binding]) -> List[str]:
    """The reads a snapshot name is computed from (itself, when it reads the budget)."""
    value = _assigned_value(snapshots[name])
    inner = [n.id for n in walk_nodes(value) if isinstance(n, ast.Name) and n.id in snapshots and n.id != name]
    if not inner:
        return [name]
    return [root for other in inner for root in _roots(other, snapshots)]


def _snapshots(ctx: "FileView", budget: Budget) -> Dict[str, Binding]:
    """Names of this function bound once to a value read from the budget at that moment: the
    value mentions the budget and calls something (`budget.timeout()`, an accessor, a helper
    given the budget), or is computed from another such name."""
    found: Dict[str, Binding] = {}
    own = ctx.scope.bindings()
    for name, kind in budget.kinds:
        # A budget's seconds given as a parameter are what was left when the function was
        # called: a snapshot from the first line (`fetch(url, budget_s=budget.timeout())`).
        bindings = own.get(name, [])
        if kind == SECONDS and len(bindings) == 1 and bindings[0].kind == PARAM:
            found[name] = bindings[0]
    candidates: List[Tuple[str, Binding, ast.expr]] = []
    for name, bindings in ctx.scope.bindings().items():
        if name in budget.names and len(bindings) == 1 and bindings[0].kind == ASSIGN and bindings[0].value is not None:
            if budget.kind_of(name) != INSTANT:
                candidates.append((name, bindings[0], _assigned_value(bindings[0])))
    candidates.sort(key=lambda found: (found[2].lineno, found[2].col_offset))
    for name, binding, value in candidates:
        reads_now = mentions_any(value, budget.names) and any(isinstance(n, ast.Call) for n in walk_nodes(value))
        if reads_now or mentions_any(value, found):
            found[name] = binding
    return found


def _recomputed_here(timeout: ast.expr, ctx: "FileView") -> bool:
    """A timeout that calls something itself (`deadline - time.monotonic()`) is fresh."""
    for node in walk_nodes(timeout):
        if isinstance(node, ast.Call):
            if timeout_object(node, ctx.scope, ctx.resolver, ctx.catalog) is not None:
                continue
            if ctx.resolver.qualified_name(node.func, ctx.scope) in TRANSPARENT_CALLS:
                continue
            return True
    return False
