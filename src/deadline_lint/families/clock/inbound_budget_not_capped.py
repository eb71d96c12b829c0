from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Optional, Tuple, Union

from deadline_lint.engine.requires import Look, Text, Words, in_file
from deadline_lint.engine.rule import Rule, register
from deadline_lint.families.clock.common import (
    HEADER_WORDS,
    READ,
    inbound_header_read,
    key_text_filter,
    reads_literal_key_in_function,
    shown,
)
from deadline_lint.families.clock.inbound_readers import InboundReaders, Reader
from deadline_lint.families.clock.wire import WireValues
from deadline_lint.semantics.local.expressions import argument_at
from deadline_lint.semantics.local.function_body import FunctionBody, function_body
from deadline_lint.semantics.local.scopes import FUNCTION, Scope

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

# Whether an expression carries the inbound value (`WireValues.carrier`).
Carries = Callable[[ast.AST], bool]

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
    check that rejects negative values (a comparison other than `is None`, or `max(0, value)`).
    It follows the value through local names, into `data["timeout"] = value` (an item that is
    no header), and out of this module's helpers that return it (`timeout_from(headers)`):
    the finding is on the header read, or on the helper's call where its caller uses it.

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

    needs = (
        in_file(
            Words(*HEADER_WORDS)
            & Text(lambda rule: key_text_filter(rule.catalog, rule.profile.budget_header, HEADER_WORDS, READ))
        ),
    )
    first_looks = {
        ast.Subscript: Look(reads_literal_key_in_function),
        ast.Call: Look(lambda node, ctx: reads_literal_key_in_function(node, ctx) or bool(_reader_call(node, ctx))),
    }

    def visit_Subscript(self, node: ast.Subscript, ctx: "FileView") -> None:
        self._judge_header_read(node, ctx)

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        if self._judge_header_read(node, ctx):
            return
        reader = _reader_call(node, ctx)
        if reader is not None:  # `_get_timeout_from_request(headers)`: the read is in there
            wire = ctx.analysis(WireValues)
            self._judge(node, reader.key, wire, ctx, f"`{shown(ctx, node)}` (header `{reader.key}`)", reader)

    def _judge_header_read(self, node: Union[ast.Subscript, ast.Call], ctx: "FileView") -> bool:
        """Judges the node when it reads an inbound header; False when it reads none."""
        read = inbound_header_read(node, ctx)
        if read is None:
            return False
        wire, key = read
        if wire.is_budget_key(key):
            self._judge(node, key, wire, ctx, f"`{shown(ctx, node)}`")
        return True

    def _judge(
        self,
        node: ast.expr,
        key: str,
        wire: WireValues,
        ctx: "FileView",
        shown_as: str,
        reader: Optional[Reader] = None,
    ) -> None:
        body = function_body(ctx.scope)
        carries = wire.carrier(ctx.scope, node)
        sink = self._sink(body, carries, wire, ctx, money=wire.may_be_money(key))
        if sink is None:
            return
        capped, rejected = self._checks(body, carries, wire, ctx)
        if reader is not None:  # what the helper itself does with the value counts too
            carries_there = wire.carrier(reader.scope, reader.read)
            there = self._checks(function_body(reader.scope), carries_there, wire, ctx, reader.scope)
            capped, rejected = capped or there[0], rejected or there[1]
        if capped and rejected:
            return
        missing = (
            "cap it with `min(value, <your limit>)` and reject values of zero or less"
            if not capped and not rejected
            else "cap it with `min(value, <your limit>)`" if not capped else "reject values of zero or less"
        )
        ctx.report(self, node, f"the inbound budget {shown_as} reaches `{sink}` unchecked: {missing}")

    def _checks(
        self, body: FunctionBody, carries: Carries, wire: WireValues, ctx: "FileView", scope: Optional[Scope] = None
    ) -> Tuple[bool, bool]:
        """(capped, rejected): `min(value, cap)`, `max(0, value)`, a clamp, a comparison that
        can reject a negative value (`is None` cannot)."""
        capped = rejected = False
        for call in body.nodes(ast.Call):
            func = call.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name == "min" and len(call.args) >= 2 and any(carries(a) for a in call.args):
                capped = True
            elif name == "max" and len(call.args) >= 2 and any(carries(a) for a in call.args):
                rejected = True
            elif any(carries(a) for a in call.args) and self._is_clamp(call, wire, ctx, scope):
                capped = rejected = True
        if not rejected:
            rejected = any(
                carries(compare) and not all(isinstance(op, (ast.Is, ast.IsNot)) for op in compare.ops)
                for compare in body.nodes(ast.Compare)
            )
        return capped, rejected

    @staticmethod
    def _is_clamp(call: ast.Call, wire: WireValues, ctx: "FileView", scope: Optional[Scope] = None) -> bool:
        clamps = wire.vocabulary.clamps | frozenset(ctx.profile.budget.clamps)
        qualname = ctx.resolver.qualified_name(call.func, scope or ctx.scope)
        if qualname is not None:
            return qualname in clamps
        func = call.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        # A helper defined in this module, or reached through an object: its bare name counts.
        return any(clamp.rpartition(".")[2] == name for clamp in clamps)

    def _sink(
        self, body: FunctionBody, carries: Carries, wire: WireValues, ctx: "FileView", money: bool = False
    ) -> Optional[str]:
        """Where the value is used as a timeout or budget, shown for the message. A value that
        may be money reaches no `*budget*` argument."""
        types = {t.rsplit(".", 1)[-1] for t in ctx.profile.budget.types}
        words = _TIME_SINK_WORDS if money else _SINK_WORDS
        for assign in body.nodes(ast.Assign):  # `data["timeout"] = value` (not a header write)
            if not carries(assign.value):
                continue
            for target in assign.targets:
                if not isinstance(target, ast.Subscript):
                    continue
                key = target.slice
                if (
                    isinstance(key, ast.Constant) and isinstance(key.value, str)
                    and any(w in key.value.lower() for w in words)
                    and not wire.is_container(target.value, ctx.scope)
                ):
                    return shown(ctx, target)
        cancel_scopes = ctx.catalog.budget.cancel_scopes
        for call in body.nodes(ast.Call):
            for keyword in call.keywords:
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


def _reader_call(node: ast.Call, ctx: "FileView") -> Optional[Reader]:
    """A call, in a function, of this module's function that returns an inbound budget read."""
    if ctx.scope.kind != FUNCTION:
        return None
    readers = ctx.analysis(InboundReaders)
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if name not in readers.names:
        return None
    return readers.reader_at(node, ctx.scope)
