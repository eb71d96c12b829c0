from __future__ import annotations

import ast
from typing import FrozenSet, Iterator, Optional, Sequence, Set, Tuple

from deadline_lint.analysis.exceptions import CANCEL, EXPIRY, Admission, Admitted, ExceptionAnalysis
from deadline_lint.analysis.retry import TYPES, RetryAnalysis, RetryPolicy
from deadline_lint.diagnostics import Applicability
from deadline_lint.rules.base import register
from deadline_lint.rules.retry.common import (
    RetryRule,
    called_policy,
    decorated_policies,
    drop_element,
    elements_of,
    except_clause,
    first_report,
    shown,
    pattern_filter,
)

_KINDS = (EXPIRY, CANCEL)
_WHY = {
    EXPIRY: "an expiry error: the deadline is gone, another attempt only spends time nobody waits for",
    CANCEL: "cancellation: the caller has gone, another attempt works for nobody",
}


@register
class RetryOnExpiryOrCancel(RetryRule):
    """
    ## What it does
    Flags a retry policy whose exception filter names an expiry or cancel type:
    `retry_if_exception_type((requests.Timeout, ConnectionError))`,
    `backoff.on_exception(backoff.expo, asyncio.TimeoutError)`, `stamina.retry(on=httpx.ReadTimeout)`,
    google-api-core `Retry(predicate=if_exception_type(DeadlineExceeded))`, and hand-written
    retry loops (`for attempt in range(n)` / `while` around `try`/`except` that tries again
    after the error) whose `except` clause names one. The types come from the exception
    vocabulary (catalog `exceptions.yaml`, the profile's `exceptions`, and classes named like
    `*Timeout*`, `*Deadline*`, `*Expired*`, `*Cancel(l)ed*`), through any import spelling, a
    tuple, or a name bound to a tuple. A filter that only admits expiry through a base class
    (`OSError`, `Exception`) is DL302's.

    A loop counts as a retry loop when it counts attempts (`range`, `itertools.count`) or is a
    `while`, leaves on success (`return`/`break` in the `try` or right after it) and the
    handler can reach the next iteration (it does not end in `raise`, `return` or `break`).
    Loops over data (`for item in items`), polling loops that never leave on success, and a
    `while` that checks an exit condition of its own (`if stop.is_set(): return`) and neither
    sleeps nor counts attempts (a socket timeout used as a tick) stay quiet, as does a handler
    whose type an earlier handler of the same `try` already catches.

    The finding is on the exception type inside the retry filter, and on the `except` clause
    of a hand-written loop.

    ## Why is this bad?
    An expired deadline does not get better by trying again: the caller has already given up
    (or is about to), and each new attempt spends the time of every hop below on a result
    nobody reads. Cancellation means the caller is gone. Retrying either one turns one slow
    dependency into a retry storm. Retries are for transient errors that may succeed within
    the remaining budget (a reset connection, a 503), never for expiry or cancel.

    ## Example
    ```python
    import requests
    from tenacity import retry, retry_if_exception_type

    @retry(retry=retry_if_exception_type((requests.Timeout, requests.ConnectionError)))
    def fetch(url):
        return requests.get(url, timeout=2)
    ```

    ## Use instead
    ```python
    import requests
    from tenacity import retry, retry_if_exception_type

    @retry(retry=retry_if_exception_type((requests.ConnectionError,)))
    def fetch(url):
        return requests.get(url, timeout=2)
    ```
    (`requests.ConnectionError` still includes `ConnectTimeout`: exclude it with
    `retry_if_not_exception_type(requests.Timeout)`, see DL302.)

    ## Fix safety
    Unsafe: the fix removes the type from the tuple it is written in (when the tuple holds
    other types too), so that error now propagates instead of being retried; callers see a
    failure where a later attempt might have succeeded. A type written alone, or in a tuple
    bound to a name elsewhere, gets no fix.

    ## Options
    - `exceptions.expiry`, `exceptions.cancel`: the organisation's own expiry and cancel types.
    - `retry_decorators`: the organisation's own retry decorators (their filters are not
      analysed; they matter to DL303 and DL304).
    """

    code = "DL301"
    name = "retry-on-expiry-or-cancel"
    summary = "a retry policy or retry loop whose exception filter names an expiry or cancel type"
    fix_applicability = Applicability.UNSAFE
    node_types = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Call, ast.For, ast.AsyncFor, ast.While)
    # Hand-written loops name the type itself: one of these is in the file's text.
    # (`from socket import timeout` then `except timeout:` is not among them: socket.timeout
    # has been TimeoutError since Python 3.10, and the bare lowercase word is everywhere.)
    loop_words = frozenset({"Timeout", "socket.timeout", "Deadline", "Cancel", "Expired", "TooSlow"})

    def _type_words(self) -> FrozenSet[str]:
        own = {name.rpartition(".")[2] for kind in _KINDS for name in getattr(self.profile.exceptions, kind)}
        return self.loop_words | frozenset(own)

    def trigger_words(self) -> Optional[FrozenSet[str]]:
        return self.policy_words() | self._type_words()

    def text_filter(self):
        # An except clause naming such a type, or a tuple of them bound to a constant first
        # (`RETRYABLE = (ReadTimeout, ...)`; a lowercase local tuple is left to the policies).
        words = self._type_words()
        pattern = r"(?m)\bexcept\b([^:]*):|^[ \t]*[A-Z_][A-Z0-9_]*[ \t]*=[ \t]*[(\[]([^)\]]*)"
        return pattern_filter(self.code, self.catalog, self.profile, pattern, words)

    judges_policy_calls = True

    def visit(self, node: ast.AST, ctx) -> None:
        if not (self._applies if ctx.source.text is self._text else self.applies(ctx)):
            return
        if not self._policies and isinstance(node, ast.Call):
            return
        retry = ctx.analysis(RetryAnalysis)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for policy in decorated_policies(ctx, node):
                self._policy(policy, ctx)
        elif isinstance(node, ast.Call):
            policy = called_policy(ctx, node)
            if policy is not None:
                self._policy(policy, ctx)
        else:
            loop = retry.loop(node, ctx.scope)
            if loop is None:
                return
            for attempt in loop.tries:
                caught: Set[str] = set()  # by an earlier handler of the same try: never reaches this one
                for handler in attempt.handlers:
                    admission = ctx.analysis(ExceptionAnalysis).handler(handler, ctx.scope)
                    if handler in loop.handlers:
                        self._handler(handler, admission, caught, ctx)
                    caught.update(e.qualname for e in admission.elements if e.qualname)

    def _policy(self, policy: RetryPolicy, ctx) -> None:
        for part in policy.filter:
            if part.state != TYPES or part.admission is None:
                continue
            for admitted in _named(part.admission):
                if not first_report(ctx, self.code, admitted.node):
                    continue
                fix = _drop(ctx, part.node, part.admission, admitted)
                message = (
                    f"the retry filter of `{policy.api.qualname}` names `{_short(ctx, admitted)}`, {_WHY[admitted.kind]}; "
                    f"remove it from the filter"
                )
                ctx.report(self, admitted.node, message, edits=fix, description=f"Remove `{_short(ctx, admitted)}` from the retry filter")

    def _handler(self, handler: ast.ExceptHandler, admission: Admission, caught: Set[str], ctx) -> None:
        named = [a for a in _named(admission) if a.named not in caught]
        if not named:
            return
        admitted = named[0]
        fix = _drop(ctx, handler.type, admission, admitted)
        message = (
            f"this retry loop catches `{_short(ctx, admitted)}` and tries again; that is {_WHY[admitted.kind]}; "
            f"let it propagate (or stop the loop) instead"
        )
        ctx.report(self, except_clause(handler), message, edits=fix, description=f"Stop retrying `{_short(ctx, admitted)}`")


def _named(admission: Admission) -> Iterator[Admitted]:
    """Expiry or cancel types the filter names itself (not through a base class)."""
    for element in admission.elements:
        for admitted in element.admitted:
            if admitted.kind in _KINDS and admitted.direct:
                yield admitted
                break


def _short(ctx, admitted: Admitted) -> str:
    """The type as the code spells it (`RT`, `exceptions.ReadTimeout`)."""
    if isinstance(admitted.node, ast.expr):
        return shown(ctx, admitted.node)
    return admitted.named


def _drop(ctx, container: Optional[ast.AST], admission: Admission, admitted: Admitted) -> Tuple:
    """Drop the type from the tuple written in place, when something else stays in it."""
    siblings: Optional[Sequence[ast.expr]] = elements_of(container)
    if siblings is None or not any(s is admitted.node for s in siblings):
        return ()
    flagged = {id(a.node) for a in _named(admission)}
    if all(id(s) in flagged for s in siblings):
        return ()  # nothing would be left to retry: a decision, not a rewrite
    index = next(i for i, s in enumerate(siblings) if s is admitted.node)
    edit = drop_element(ctx.source, siblings, index, tuple_left=isinstance(container, ast.Tuple) and container.elts is siblings and _written(ctx, container))
    return (edit,) if edit is not None else ()


def _written(ctx, container: ast.AST) -> bool:
    """A tuple in the source (not the arguments of `if_exception_type(A, B)` seen as one)."""
    return ctx.source.segment(container).startswith("(")
