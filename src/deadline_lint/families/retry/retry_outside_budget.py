from __future__ import annotations

import ast
from typing import TYPE_CHECKING, FrozenSet, Iterable, Optional

from deadline_lint.catalog.retry import ATTEMPTS, DELAY, NEVER
from deadline_lint.engine.requires import Text, Words, in_file
from deadline_lint.engine.rule import Rule, register
from deadline_lint.families.retry.common import (
    RetryRule,
    budget_of,
    called_policy,
    decorated_policies,
    enclosing_function,
    library_imports,
    policy_head,
    reported_once,
    shown,
)
from deadline_lint.families.retry.analysis.retry import RetryAnalysis
from deadline_lint.families.retry.analysis.retry_policy import RetryLoop, RetryPolicy, Stop, walk_here
from deadline_lint.families.shared.budget.budget import BudgetAnalysis, mentions_any
from deadline_lint.families.shared.budget.budget_text import budget_words
from deadline_lint.families.shared.function_nodes import Function

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_KNOWN_STOPS = (ATTEMPTS, DELAY, NEVER)


def _budget_words(rule: Rule) -> FrozenSet[str]:
    return budget_words(rule.profile, rule.catalog)


def _sleep_words(rule: Rule) -> FrozenSet[str]:
    return frozenset(name.rpartition(".")[2] for name in rule.catalog.retry.sleeps)


@register
class RetryOutsideBudget(RetryRule):
    """
    ## What it does
    In a budgeted function (a budget parameter, a gRPC servicer's `context`, a name derived
    from a budget accessor), flags:

    - a retry policy whose stops are only attempt counts or fixed delays
      (`stop_after_attempt(3)`, `max_tries=5`, `max_time=30`, stamina's default 45 s,
      google-api-core's default 120 s) or that never stops, with no stop that reads the
      budget: a decorator on the budgeted function, or a policy built inside it
      (`Retrying(...)`, `stamina.retry_context(...)`, `Retry(...)`);
    - a hand-written retry loop (see DL301) that sleeps or backs off between attempts without
      checking the remainder first: no `if`/`while` test in the loop mentions the budget and
      the sleep does not read it;
    - a retried function of this module with no budget of its own, called by its name from a
      budgeted function that passes it nothing read from the budget: its policy (the same
      stops as above) knows nothing of the caller's deadline. `fix --thread-budget` leaves such
      a function unthreaded on purpose (the decorator calls it again with the same arguments,
      so a budget in seconds would be spent again by every attempt), and this finding is what
      says so.

    Quiet when a stop mentions a budget name (`stop_after_delay(budget.remaining())`,
    `max_time=lambda: budget.remaining()`), when a stop is something the catalog does not know
    (a custom stop reading the budget), and outside budgeted functions.

    The finding is on the policy's first line (for a retried callee, its decorator), and on
    the sleep or backoff call of a loop.

    ## Why is this bad?
    Retries that do not know the deadline outlive it. Three attempts with exponential
    backoff can take longer than the whole request had; the last attempts run after the
    caller gave up, and sleeping without looking at the remainder wastes the time that was
    left. Retries must live inside the same budget: stop starting new attempts once the
    remainder is below what an attempt needs (the response-reserve boundary).

    ## Example
    ```python
    import time

    import requests

    def fetch(url, budget):
        for attempt in range(3):
            try:
                return requests.get(url, timeout=budget.timeout())
            except requests.ConnectionError:
                time.sleep(2 ** attempt)
    ```

    ## Use instead
    ```python
    import time

    import requests

    MIN_ATTEMPT_S = 0.2

    def fetch(url, budget):
        for attempt in range(3):
            try:
                return requests.get(url, timeout=budget.timeout())
            except requests.ConnectionError:
                if budget.remaining() < 2 ** attempt + MIN_ATTEMPT_S:
                    raise
                time.sleep(2 ** attempt)
    ```

    ## Fix safety
    No fix: how much time an attempt needs is the author's knowledge.

    ## Options
    - `budget.*`: what counts as a budget.
    - `retry_decorators`: the organisation's own retry decorators (their stops are not known,
      so they are not reported here).
    """

    code = "DL303"
    name = "retry-outside-budget"
    summary = "retries or backoff with attempt/delay stops not tied to the budget in scope"
    node_types = (ast.Call, ast.For, ast.AsyncFor, ast.While)
    leave_node_types = (ast.FunctionDef, ast.AsyncFunctionDef)

    # Only budgeted functions are judged, for a policy or for a loop that sleeps.
    needs = (
        in_file(Words.of(_budget_words) & (Text(library_imports) | Words.of(_sleep_words))),
        RetryRule.POLICY_CALLS,
    )

    def leave_FunctionDef(self, node: ast.FunctionDef, ctx: "FileView") -> None:
        self._decorated(node, ctx)

    def leave_AsyncFunctionDef(self, node: ast.AsyncFunctionDef, ctx: "FileView") -> None:
        self._decorated(node, ctx)

    def _decorated(self, function: Function, ctx: "FileView") -> None:
        if not function.decorator_list:
            return
        budget = budget_of(ctx)  # the decorated function's own scope, at its end
        if budget is None:
            return
        for policy in decorated_policies(ctx, function):
            self._policy(policy, budget.names, ctx, f"`{function.name}` takes a budget, but ")

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        policy = called_policy(ctx, node)
        if policy is None:
            self._retried_callee(node, ctx)
            return
        if _in_signature(ctx):
            return  # a parameter's default is built once, when the def runs: outside its budget
        budget = budget_of(ctx)
        if budget is not None:
            self._policy(policy, budget.names, ctx, "a budget is in scope, but ")

    def visit_For(self, node: ast.For, ctx: "FileView") -> None:
        self._loop(node, ctx)

    def visit_AsyncFor(self, node: ast.AsyncFor, ctx: "FileView") -> None:
        self._loop(node, ctx)

    def visit_While(self, node: ast.While, ctx: "FileView") -> None:
        self._loop(node, ctx)

    def _loop(self, statement: ast.stmt, ctx: "FileView") -> None:
        budget = budget_of(ctx)
        if budget is None:
            return
        loop = ctx.analysis(RetryAnalysis).loop(statement, ctx.scope)
        if loop is None or not loop.sleeps or _checks_remainder(loop, budget.names):
            return
        sleep = loop.sleeps[0]  # nested retry loops share it: the engine drops the repeat
        ctx.report(
            self,
            sleep,
            f"this retry loop waits (`{shown(ctx, sleep.func)}`) and tries again without checking the remaining "
            f"budget first: stop retrying when what is left cannot cover the wait and another attempt",
        )

    def _retried_callee(self, call: ast.Call, ctx: "FileView") -> None:
        """`fetch(url)` in a budgeted function, where `fetch` is this module's retried function
        with no budget of its own: its policy does not know the caller's deadline. Judged only
        when the call passes nothing that reads the budget (`fetch(url, timeout=budget.timeout())`
        gives each attempt time from it) and `fetch` is the one def that name is bound to."""
        callee = _retried_callee(ctx, call)
        if callee is None:
            return
        budget = budget_of(ctx)
        caller = enclosing_function(ctx)
        if budget is None or caller is None or mentions_any(call, budget.names):
            return
        callee_scope = ctx.resolver.scope_of(callee, ctx.module_scope)
        if ctx.analysis(BudgetAnalysis).budget_of(callee_scope) is not None:
            return  # it takes a budget: judged at its own end (`leave`)
        name = callee.name
        lead = f"`{getattr(caller, 'name', '?')}` has a budget but calls `{name}`, which takes none, and "
        advice = (
            f"pass `{name}` the caller's deadline and tie a stop to it (`--thread-budget` does not thread a retried "
            f"function: every attempt gets the same arguments, so a budget in seconds would be spent again by each)"
        )
        for policy in decorated_policies(ctx, callee):
            self._policy(policy, frozenset(), ctx, lead, advice)

    def _policy(self, policy: RetryPolicy, names: FrozenSet[str], ctx: "FileView", lead: str,
                advice: str = "tie a stop to the remaining budget") -> None:
        stops = policy.stops
        if any(stop.kind not in _KNOWN_STOPS for stop in stops):
            return  # a custom stop may well read the budget
        if any(stop.node is not None and mentions_any(stop.node, names) for stop in stops):
            return
        head = policy_head(policy)
        if reported_once(self, ctx, head):
            ctx.report(
                self,
                head,
                f"{lead}`{policy.api.qualname}` {_describe(stops, ctx)}: {advice}",
            )


def _describe(stops: Iterable[Stop], ctx: "FileView") -> str:
    parts = []
    for stop in stops:
        if stop.kind == NEVER:
            return "never stops, not even when the budget runs out"
        if stop.node is None:
            parts.append(f"the library's default {'attempt count' if stop.kind == ATTEMPTS else 'delay'}")
        elif stop.keyword is not None and stop.keyword != "stop":
            parts.append(f"`{stop.keyword}={shown(ctx, stop.node)}`")
        else:
            parts.append(f"`{shown(ctx, stop.node)}`")
    return "stops only at " + " or ".join(dict.fromkeys(parts)) + ", not when the budget runs out"


def _checks_remainder(loop: RetryLoop, names: FrozenSet[str]) -> bool:
    """A test in the loop (its own condition, an `if`, an `assert`) or a sleep that reads the
    budget, or a call on the budget object (`budget.check()`)."""
    statement = loop.loop
    if isinstance(statement, ast.While) and mentions_any(statement.test, names):
        return True
    if any(mentions_any(sleep, names) for sleep in loop.sleeps):
        return True
    for node in walk_here(statement):
        if (
            isinstance(node, (ast.If, ast.While, ast.Assert))
            and mentions_any(node.test, names) and not _presence(node.test, names)
        ):
            return True
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and _on_budget(node.value.func, names):
            return True
    return False


def _retried_callee(ctx: "FileView", call: ast.Call) -> Optional[Function]:
    """The def `call` runs, when it calls by plain name the only def of a module-level name
    and that def has a retry decorator that retries."""
    if not isinstance(call.func, ast.Name):
        return None
    bindings = ctx.scope.lookup(call.func.id)
    if not bindings or len(bindings) != 1:
        return None
    binding = bindings[0]
    target = binding.value
    if binding.scope is not ctx.module_scope or not isinstance(target, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if not target.decorator_list or not decorated_policies(ctx, target):
        return None
    return target


def _in_signature(ctx: "FileView") -> bool:
    return any(isinstance(parent, ast.arguments) for parent in reversed(ctx.parents))


def _presence(test: ast.expr, names: FrozenSet[str]) -> bool:
    """`if budget:` / `if budget is None:` asks whether there is a budget, not what is left.
    (A conditional expression, `budget.timeout() if budget else 2.0`, chooses a timeout: it
    checks nothing either, so it is not looked at.)"""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
        test = test.left if isinstance(test.comparators[0], ast.Constant) else test
    return isinstance(test, ast.Name) and test.id in names


def _on_budget(func: ast.expr, names: FrozenSet[str]) -> bool:
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in names
