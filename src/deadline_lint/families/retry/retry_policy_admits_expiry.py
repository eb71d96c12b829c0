from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterable, Optional

from deadline_lint.catalog.retry import ALL, ALL_BUT, TYPES
from deadline_lint.engine.requires import Words, in_file
from deadline_lint.engine.rule import register
from deadline_lint.families.retry.analysis.base_class_filters import OS_ERROR_WORDS, Loop, os_error_phrase, report_loop
from deadline_lint.families.retry.common import (
    USES_A_RETRY_LIBRARY,
    RetryRule,
    budget_of,
    called_policy,
    decorated_policies,
    outside_requests,
    policy_head,
    reported_once,
)
from deadline_lint.families.retry.analysis.retry_policy import RetryPolicy
from deadline_lint.families.shared.budget.budget import BudgetAnalysis
from deadline_lint.families.shared.errors.exceptions import EXPIRY, Admitted, ExceptionAnalysis
from deadline_lint.families.shared.function_nodes import Function

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_ANY_ERROR = "Exception"
# A filter naming one of these retries everything, like no filter; a narrower base class
# (`requests.ConnectionError`, parent of `ConnectTimeout`) retries expiry only where the
# attempt's timeout is the caller's budget: outside one (a job with its own fixed timeout) a
# connect timeout is a transient error like any other.
# Libraries whose calls raise their expiry type only when given a timeout (none by default).
_NEEDS_A_TIMEOUT = ("requests.",)
_EVERY_ERROR = frozenset({"Exception", "BaseException", "builtins.Exception", "builtins.BaseException"})


@register
class RetryPolicyAdmitsExpiry(RetryRule):
    """
    ## What it does
    Flags a retry policy that retries deadline expiry without naming it: one with no
    exception filter at all (a bare `@retry`, `@retry(stop=stop_after_attempt(3))`,
    `Retrying(...)` without `retry=`, `@retrying.retry`), a filter that is a base class of an
    expiry type (`Exception`, `OSError`, `requests.RequestException`,
    `requests.ConnectionError`, parent of `ConnectTimeout`, aiohttp's `ClientError`,
    `grpc.RpcError`, which carries `DEADLINE_EXCEEDED`) where a budget is in scope (the
    decorated def's, or the one the policy is built in: only then is the attempt's timeout the
    caller's deadline; outside a budget a connect timeout is a transient error like any other,
    while `Exception` retries everything anywhere), `retry_if_exception_type()` with no
    argument, or `retry_if_not_exception_type(X)` where `X` excludes no expiry type. The
    message names an expiry type the policy lets through (preferring a library the file uses)
    and how to keep it out in that library.

    `OSError` and its aliases (`IOError`, `EnvironmentError`, `socket.error`) include
    `TimeoutError`, and the message says so. A hand-written retry loop (as DL301 reads them)
    whose `except` clause admits `TimeoutError` only through that family (written there, or
    through a name or a parameter's default: `except retry_on:`) is reported when some call
    of its attempt is given a timeout (`timeout=5`, `sock.settimeout(5)`), the line the
    message names.

    Quiet when the filter cannot be read (a predicate function other than a lambda or a def
    of the project whose body only branches on the exception's class, an intersection
    `a & b`), when backoff's
    `giveup=` may already give up on it, for policies that retry results only
    (`backoff.on_predicate`, `retry_if_result`), for google-api-core's `Retry()` whose
    default predicate leaves `DeadlineExceeded` out, and for other hand-written loops:
    `except Exception` in a loop is too often polling, an `except OSError` whose attempt is
    given no timeout is about files or processes, and a loop that stops at a deadline of its
    own (`while time.monotonic() < deadline`, or a clock test in the handler) retries only
    until then (DL301 covers loops naming expiry).
    Quiet also where no request waits for the retry: start-up, shutdown, health probes and
    readiness waits (by the function's name), background jobs (a function handed to a
    scheduler or a thread, a task nobody awaits, and the private functions only they call)
    and scripts (`if __name__ == "__main__":`); catalog `retry.yaml` `outside_requests`.
    Also a def whose every caller in the project runs there, by the same rules in the
    caller's own module and then through its callers (`connect`, called only from another
    module's lifespan; a method only a background task of its file reaches). A def with no
    caller in the project (a library's public API, a route registered by a decorator), one
    handed on as a value, or one whose caller cannot be placed is still reported; test
    modules are judged by their own file only.

    Project decorators and helpers whose filter is one of their parameters
    (`@async_retry(exception_types=(Exception,))`, `call(fn, retry_on=(OSError,))`, defined
    in this module or another) are judged where they are used: the argument given there, or
    else the default they declare (the finding then lands on the name called).

    The finding is on the base class inside the filter (on the name the policy reaches it
    through, when the tuple or a `retry_if_exception(f)` test function is defined elsewhere),
    or on the decorator's (or policy call's) first line when there is no filter.

    ## Why is this bad?
    A policy that retries "everything" retries the one error that must never be retried: the
    deadline ran out. Each retry then runs after the caller has stopped waiting, and every
    layer below sees a burst of doomed work. Naming `Exception` or a library's base class
    looks harmless, but those include the timeout types.

    ## Example
    ```python
    import backoff
    import requests

    @backoff.on_exception(backoff.expo, requests.RequestException, max_tries=5)
    def fetch(url, budget):
        return requests.get(url, timeout=budget.timeout())
    ```

    ## Use instead
    ```python
    import backoff
    import requests

    @backoff.on_exception(
        backoff.expo,
        requests.RequestException,
        max_tries=5,
        giveup=lambda exc: isinstance(exc, requests.Timeout),
    )
    def fetch(url, budget):
        return requests.get(url, timeout=budget.timeout())
    ```

    ## Fix safety
    No fix: which errors are transient for this call is the author's decision.

    ## Options
    - `exceptions.expiry`: the organisation's own expiry types (taken to derive from
      `Exception`, so a filter of `Exception` admits them).
    """

    code = "DL302"
    name = "retry-policy-admits-expiry"
    summary = "a retry policy with no exception filter, or one admitting expiry through a base class"
    node_types = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Call, ast.For, ast.AsyncFor, ast.While)
    # Hand-written loops catching the OSError family around an attempt given a timeout.
    needs = (in_file(USES_A_RETRY_LIBRARY | (Words(*OS_ERROR_WORDS) & Words("timeout"))), RetryRule.POLICY_CALLS)

    def visit_FunctionDef(self, node: ast.FunctionDef, ctx: "FileView") -> None:
        self._decorated(node, ctx)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef, ctx: "FileView") -> None:
        self._decorated(node, ctx)

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        called = called_policy(ctx, node)
        if called is not None:
            self._policy(called, ctx, budget_of(ctx) is not None, None)

    def visit_For(self, node: ast.For, ctx: "FileView") -> None:
        self._loop(node, ctx)

    def visit_AsyncFor(self, node: ast.AsyncFor, ctx: "FileView") -> None:
        self._loop(node, ctx)

    def visit_While(self, node: ast.While, ctx: "FileView") -> None:
        self._loop(node, ctx)

    def _loop(self, node: Loop, ctx: "FileView") -> None:
        report_loop(self, node, ctx)

    def _decorated(self, function: Function, ctx: "FileView") -> None:
        policies = decorated_policies(ctx, function)
        if policies:
            budgeted = _budgeted_def(ctx, function)
            for policy in policies:
                self._policy(policy, ctx, budgeted, function)

    def _policy(self, policy: RetryPolicy, ctx: "FileView", budgeted: bool, function: Optional[Function]) -> None:
        """`function`: the def the policy decorates (None: one built in the code being walked)."""
        if policy.giveup:
            return
        hint = f"; keep expiry out with {policy.api.hint}" if policy.api.hint else ""
        name = policy.api.qualname
        own = policy.api.timeouts
        if policy.own_timeouts and own is not None:
            keep = f"; keep expiry out with {own.hint}" if own.hint else ""
            self._report(
                ctx, policy_head(policy),
                f"`{name}` retries {own.what} by default (`{own.type}`), so it retries deadline expiry{keep}",
                function,
            )
        for part in policy.filter:
            if part.state == ALL:
                witness = _any_error(ctx, part.node or policy_head(policy), function)
                where = part.node if part.node is not None else policy_head(policy)
                what = (
                    "has no exception filter" if part.node is None
                    else f"retries every error (`{_shown(ctx, part.node)}`)"
                )
                message = f"`{name}` {what}, so it retries deadline expiry too (`{witness}`){hint}"
                self._report(ctx, where, message, function)
            elif part.state == TYPES and part.admission is not None:
                for element in part.admission.elements:
                    through = _through_base(element.admitted)
                    if through is not None and (budgeted or through.named in _EVERY_ERROR):
                        where = part.place(element.node, policy.node)
                        via = "" if where is element.node else f" (through `{_shown(ctx, where)}`)"
                        if part.default:
                            via = f" (the default of `{part.default}`, not given here)"
                        if part.predicate:
                            via = f" ({part.predicate} returns True for it)"
                        named, admitted = f"`{through.named}`", through.type
                        family = os_error_phrase(ctx, element.node, through)
                        if family is not None:
                            named, admitted = family
                        spared = f" ({policy.spared} gives up on other errors only)" if policy.spared else ""
                        self._report(
                            ctx,
                            where,
                            f"{named}{via} in the retry filter of `{name}` includes `{admitted}`, so it "
                            f"retries deadline expiry{spared}{hint}",
                            function,
                        )
            elif (
                part.state == ALL_BUT and part.node is not None  # an ALL_BUT part always has its node
                and part.admission is not None and part.admission.admits(EXPIRY) is None
            ):
                witness = _any_error(ctx, part.node, function)
                excluded = f"`{_shown(ctx, part.node)}`"
                if part.tested:
                    types = ", ".join(
                        f"`{e.qualname if e.node is part.node and e.qualname else _shown(ctx, e.node)}`"
                        for e in part.admission.elements
                    )
                    excluded = f"what {part.predicate or excluded} tests for ({types})"
                self._report(
                    ctx,
                    part.node,
                    f"`{name}` retries every error except {excluded}, deadline expiry too (`{witness}`){hint}",
                    function,
                )

    def _report(self, ctx: "FileView", node: Optional[ast.AST], message: str, function: Optional[Function]) -> None:
        # Asked last: whether a request waits is a question about the whole file.
        if node is not None and not outside_requests(ctx, function, callers=True) and reported_once(self, ctx, node):
            ctx.report(self, node, message)


def _budgeted_def(ctx: "FileView", function: Function) -> bool:
    """The decorated def has a budget (its parameters, or a servicer method's `context`)."""
    outer = ctx.scope if ctx.scope.node is not function else ctx.scope.parent
    if outer is None:
        return False
    scope = ctx.resolver.scope_of(function, outer)
    return scope is not None and ctx.analysis(BudgetAnalysis).budget_of(scope) is not None


def _through_base(admitted: Iterable[Admitted]) -> Optional[Admitted]:
    for found in admitted:
        if found.kind == EXPIRY:
            return None if found.direct else found
    return None


def _any_error(ctx: "FileView", node: ast.AST, function: Optional[ast.AST] = None) -> str:
    """The expiry type `except Exception` would let through, preferring a library in use,
    and one the retried def can raise: requests raises `requests.Timeout` only for a call
    given a timeout, so a def whose text sets none gets the builtin `TimeoutError`."""
    witness = ctx.analysis(ExceptionAnalysis).witnesses(_ANY_ERROR, node)
    found = next((w for w in witness if w.kind == EXPIRY), None)
    if found is None:
        return "TimeoutError"
    if (
        found.type.startswith(_NEEDS_A_TIMEOUT) and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        and "timeout" not in ctx.source.segment(function)
    ):
        return "TimeoutError"
    return found.type


def _shown(ctx: "FileView", node: ast.AST) -> str:
    return " ".join(ctx.source.segment(node).split())
