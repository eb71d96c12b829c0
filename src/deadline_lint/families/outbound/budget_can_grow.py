from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Collection, Dict, Iterator, List, Set, Tuple

from deadline_lint.engine.rule import register
from deadline_lint.families.outbound.common import (
    BudgetValueRule,
    is_clamp_floor,
    is_non_positive_constant,
    single_assignment,
    timeouts_passed_on,
)
from deadline_lint.families.shared.budget.budget import budget_in_scope
from deadline_lint.families.shared.time.time_values import INSTANT, time_value
from deadline_lint.semantics.local.declared import is_number
from deadline_lint.semantics.local.children import walk as walk_nodes

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_MAX_FOLLOW = 4


@register
class BudgetCanGrow(BudgetValueRule):
    """
    ## What it does
    Flags a timeout computed from the budget in a way that can come out *larger* than the
    remainder: `max(remaining, 5)`, `remaining + 2`, `remaining or 30`. It looks at the
    timeout an outbound call is given and at the assignments of the names it is made of;
    also at a value passed as `timeout=` (the catalog's `budget.hop_keywords`) to a call whose
    callee it cannot type (`client.fetch(key, timeout=max(budget.timeout(), 1.0))`), since
    passing the budget there shows the call is a hop. Builtins, the standard library, project
    functions it can read and waits on this process (`budget.local_waits`) are not hops.
    Clamps at zero or at the fixes' 1 ms floor (`max(0.0, remaining - margin)`,
    `max(0.001, remaining - margin)`) and subtracting are fine.

    ## Why is this bad?
    The whole point of forwarding the remainder is that a hop can never get more time than its
    caller has left. `max(remaining, 5)` gives a request with 50 ms left five full seconds;
    `remaining or 30` turns an expired budget (0) into thirty seconds. The downstream work then
    runs for nobody.

    ## Example
    ```python
    import requests

    def fetch(url, budget):
        return requests.get(url, timeout=max(budget.timeout(), 1.0))
    ```

    ## Use instead
    ```python
    import requests

    def fetch(url, budget):
        if budget.timeout() < 0.1:
            raise RefusedTooLate()
        return requests.get(url, timeout=budget.timeout())
    ```

    ## Fix safety
    No fix: what the code should do when the budget is short (refuse, fail fast, degrade) is a
    decision, not a rewrite.

    ## Options
    - `budget.*`: what counts as a budget.
    """

    code = "DL105"
    name = "budget-can-grow"
    summary = "the timeout expression can exceed the remainder (max, +, or)"

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        sites = timeouts_passed_on(ctx, node)
        budget = budget_in_scope(ctx) if sites else None
        if budget is None:
            return
        for call in sites:
            # A shared assignment reached from several calls is one finding (the engine drops
            # the repeats).
            for growth, how, inner in _growth(call.timeout, budget.names, ctx):
                # A growth inside another is part of the same expression: one finding, at the
                # outermost, that names both (`max(budget + 0.5, 1.0)` was two DL105s).
                also = "".join(f"; and in `{self._shown(ctx, node)}`, {why}" for node, why in inner)
                message = (
                    f"`{self._shown(ctx, growth)}` can exceed the remaining budget ({how}{also}): never give a "
                    f"hop more time than its caller has left; refuse or fail fast when the budget is short"
                )
                ctx.report(self, growth, message)

    @staticmethod
    def _shown(ctx, node: ast.AST) -> str:
        return " ".join(ctx.source.segment(node).split())

def _growth(
    expr: ast.expr, names: Collection[str], ctx: "FileView"
) -> Iterator[Tuple[ast.AST, str, List[Tuple[ast.AST, str]]]]:
    """(node, why, growths inside it) for every outermost part of `expr` (and of the
    assignments of the names it uses) that can make it larger than the budget it is computed
    from."""
    pending: List[ast.expr] = [expr]
    followed: Set[str] = set()
    while pending:
        current = pending.pop()
        nodes = list(walk_nodes(current))
        mentions = _mentions_by_node(nodes, names)
        covered: Set[int] = set()  # inner additions of a chain already reported at its top
        found: List[Tuple[ast.AST, str, List[Tuple[ast.AST, str]]]] = []
        inside: Dict[int, int] = {}  # a node below a growth -> that growth's place in `found`
        for node in nodes:  # parents before children
            why = "" if id(node) in covered else _grows(node, mentions, ctx)
            if why:
                outer = inside.get(id(node))
                if outer is not None:
                    found[outer][2].append((node, why))
                else:
                    found.append((node, why, []))
                    for below in walk_nodes(node):  # once per outermost growth: they are disjoint
                        if below is not node:
                            inside[id(below)] = len(found) - 1
                covered.update(_inner_additions(node, mentions))
            follow = isinstance(node, ast.Name) and node.id in names and node.id not in followed
            if isinstance(node, ast.Name) and follow and len(followed) < _MAX_FOLLOW:
                followed.add(node.id)
                binding = single_assignment(node.id, ctx.scope)
                if binding is not None and binding.scope is ctx.scope:
                    pending.append(binding.value)
        yield from found


def _inner_additions(node: ast.AST, mentions: Dict[int, bool]) -> Iterator[int]:
    """`budget + 1 + 2` is `(budget + 1) + 2`: one finding for the chain, at its top. The walk
    lists the top first, so the additions on its budget side are marked as seen."""
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        inner = node.left if mentions.get(id(node.left), False) else node.right
        if not (isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Add)):
            return
        yield id(inner)
        node = inner


def _mentions_by_node(nodes: List[ast.AST], names: Collection[str]) -> Dict[int, bool]:
    """For each node of a walked expression: does it mention a budget name? One pass from the
    leaves up (a walk lists parents before children), not one walk per node: a chain of
    2,500 additions was quadratic."""
    mentions: Dict[int, bool] = {}
    for node in reversed(nodes):
        mentions[id(node)] = (isinstance(node, ast.Name) and node.id in names) or any(
            mentions.get(id(child), False) for child in ast.iter_child_nodes(node)
        )
    return mentions


def _grows(node: ast.AST, mentions: Dict[int, bool], ctx: "FileView") -> str:
    def mentioned(expr: ast.AST) -> bool:
        return mentions.get(id(expr), False)

    if isinstance(node, ast.Call) and node.args and not node.keywords:
        if ctx.resolver.qualified_name(node.func, ctx.scope) == "max" and len(node.args) >= 2:
            if any(isinstance(a, ast.Starred) for a in node.args):
                return ""
            from_budget = [a for a in node.args if mentioned(a)]
            others = [a for a in node.args if not mentioned(a) and not is_clamp_floor(a)]
            if from_budget and others:
                return "`max()` puts a floor under it that is not derived from the budget"
        return ""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = mentioned(node.left), mentioned(node.right)
        if left != right:
            other = node.right if left else node.left
            if is_number(other) and is_non_positive_constant(other):
                return ""
            if _is_clock_instant(other, ctx):
                return ""  # `time.monotonic() + budget` is a deadline: what is left of it is judged where taken
            return "something not derived from the budget is added to it"
        return ""
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        fallbacks = [v for v in node.values[1:] if not mentioned(v) and not is_non_positive_constant(v)]
        if mentioned(node.values[0]) and fallbacks:
            return "`or` turns a spent (zero) budget into a fixed timeout"
    return ""


def _is_clock_instant(expr: ast.expr, ctx: "FileView") -> bool:
    found = time_value(ctx, expr)
    return found is not None and found.role == INSTANT
