from __future__ import annotations

import ast
from typing import Optional

from deadline_lint.analysis.exceptions import EXPIRY, Admitted, ExceptionAnalysis
from deadline_lint.analysis.retry import ALL, ALL_BUT, TYPES, RetryPolicy
from deadline_lint.rules.base import register
from deadline_lint.rules.retry.common import RetryRule, called_policy, decorated_policies, first_report, policy_head

_ANY_ERROR = "Exception"


@register
class RetryPolicyAdmitsExpiry(RetryRule):
    """
    ## What it does
    Flags a retry policy that retries deadline expiry without naming it: one with no
    exception filter at all (a bare `@retry`, `@retry(stop=stop_after_attempt(3))`,
    `Retrying(...)` without `retry=`, `@retrying.retry`), a filter that is a base class of an
    expiry type (`Exception`, `OSError`, `requests.RequestException`,
    `requests.ConnectionError`, parent of `ConnectTimeout`, aiohttp's `ClientError`,
    `grpc.RpcError`, which carries `DEADLINE_EXCEEDED`), `retry_if_exception_type()` with no
    argument, or `retry_if_not_exception_type(X)` where `X` excludes no expiry type. The
    message names an expiry type the policy lets through (preferring a library the file uses)
    and how to keep it out in that library.

    Quiet when the filter cannot be read (a predicate function, an intersection
    `a & b`), when backoff's `giveup=` may already give up on it, for policies that retry
    results only (`backoff.on_predicate`, `retry_if_result`), for google-api-core's `Retry()`
    whose default predicate leaves `DeadlineExceeded` out, and for hand-written loops
    (`except Exception` in a loop is too often polling; DL301 covers loops naming expiry).

    The finding is on the base class inside the filter, or on the decorator's (or policy
    call's) first line when there is no filter.

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
    def fetch(url):
        return requests.get(url, timeout=2)
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
    def fetch(url):
        return requests.get(url, timeout=2)
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
    node_types = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Call)

    judges_policy_calls = True

    def visit(self, node: ast.AST, ctx) -> None:
        if not (self._applies if ctx.source.text is self._text else self.applies(ctx)):
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for policy in decorated_policies(ctx, node):
                self._policy(policy, ctx)
        else:
            policy = called_policy(ctx, node)  # type: ignore[arg-type]
            if policy is not None:
                self._policy(policy, ctx)

    def _policy(self, policy: RetryPolicy, ctx) -> None:
        if policy.giveup:
            return
        hint = f"; keep expiry out with {policy.api.hint}" if policy.api.hint else ""
        name = policy.api.qualname
        for part in policy.filter:
            if part.state == ALL:
                witness = _any_error(ctx, part.node or policy_head(policy))
                where = part.node if part.node is not None else policy_head(policy)
                what = "has no exception filter" if part.node is None else f"retries every error (`{_shown(ctx, part.node)}`)"
                self._report(ctx, where, f"`{name}` {what}, so it retries deadline expiry too (`{witness}`){hint}")
            elif part.state == TYPES and part.admission is not None:
                for element in part.admission.elements:
                    through = _through_base(element.admitted)
                    if through is not None:
                        self._report(
                            ctx,
                            element.node,
                            f"`{through.named}` in the retry filter of `{name}` includes `{through.type}`, so it "
                            f"retries deadline expiry{hint}",
                        )
            elif part.state == ALL_BUT and part.admission is not None and part.admission.admits(EXPIRY) is None:
                witness = _any_error(ctx, part.node)
                self._report(
                    ctx,
                    part.node,
                    f"`{name}` retries every error except `{_shown(ctx, part.node)}`, deadline expiry too (`{witness}`)"
                    f"{hint}",
                )

    def _report(self, ctx, node: Optional[ast.AST], message: str) -> None:
        if node is not None and first_report(ctx, self.code, node):
            ctx.report(self, node, message)


def _through_base(admitted) -> Optional[Admitted]:
    for found in admitted:
        if found.kind == EXPIRY:
            return None if found.direct else found
    return None


def _any_error(ctx, node: ast.AST) -> str:
    """The expiry type `except Exception` would let through, preferring a library in use."""
    witness = ctx.analysis(ExceptionAnalysis).witnesses(_ANY_ERROR, node)
    found = next((w for w in witness if w.kind == EXPIRY), None)
    return found.type if found is not None else "TimeoutError"


def _shown(ctx, node: ast.AST) -> str:
    return " ".join(ctx.source.segment(node).split())
