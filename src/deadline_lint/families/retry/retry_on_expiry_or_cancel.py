from __future__ import annotations

import ast
import re
from types import MappingProxyType
from typing import TYPE_CHECKING, Callable, FrozenSet, Optional, Set, Union

from deadline_lint.catalog.retry import TYPES
from deadline_lint.engine.requires import Text, Words, in_file
from deadline_lint.engine.rule import Rule, register
from deadline_lint.families.retry.common import (
    PROJECT_HELPERS,
    RetryRule,
    called_policy,
    decorated_policies,
    except_clause,
    library_imports,
    library_words,
    outside_requests,
    reported_once,
    shown,
)
from deadline_lint.families.retry.analysis.filter_types import (
    KINDS,
    drop_type,
    named_types,
    overall_deadline,
    qualnames,
    spelled,
    still_admitted,
)
from deadline_lint.families.retry.analysis.retry import RetryAnalysis
from deadline_lint.families.retry.analysis.retry_guards import Narrowing
from deadline_lint.families.retry.analysis.retry_policy import RetryPolicy
from deadline_lint.families.shared.errors.exceptions import (
    CANCEL,
    EXPIRY,
    Admission,
    ExceptionAnalysis,
    StatusTest,
)
from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.support.diagnostics import Applicability

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

Loop = Union[ast.For, ast.AsyncFor, ast.While]

# Hand-written loops name the type itself: one of these is in the file's text.
# (`from socket import timeout` then `except timeout:` is not among them: socket.timeout
# has been TimeoutError since Python 3.10, and the bare lowercase word is everywhere.)
LOOP_WORDS = frozenset({"Timeout", "socket.timeout", "Deadline", "Cancel", "Expired", "TooSlow"})
# An except clause, a constant tuple, or an `isinstance` test (a handler's guard on the way
# round, or a retry predicate's body).
_EXCEPT_OR_CONSTANT = re.compile(
    r"(?m)\bexcept\b([^:]*):|^[ \t]*[A-Z_][A-Z0-9_]*[ \t]*=[ \t]*[(\[]([^)\]]*)|\bisinstance\([^,()]*,([^)]*)\)"
)


def _type_words(rule: Rule) -> FrozenSet[str]:
    own = {name.rpartition(".")[2] for kind in KINDS for name in getattr(rule.profile.exceptions, kind)}
    return LOOP_WORDS | frozenset(own)


def _names_a_type(rule: Rule) -> Callable[[str], bool]:
    words = _type_words(rule)
    found: Callable[[str], bool] = rule.catalog.cached(
        _names_a_type, lambda: NamedInMatch(_EXCEPT_OR_CONSTANT, words), words
    )
    return found


class NamedInMatch:
    """True when some match of `pattern` has one of `words` in the group it matched (a plain
    regex with the words inside would backtrack)."""

    def __init__(self, pattern: "re.Pattern[str]", words: FrozenSet[str]) -> None:
        self._pattern = pattern
        self._words = tuple(sorted(words))

    def __call__(self, text: str) -> bool:
        words = self._words
        if any(word in text for word in words):
            for match in self._pattern.finditer(text):
                group = match.group(match.lastindex or 0)
                if any(word in group for word in words):
                    return True
        return False


_WHY = MappingProxyType({
    EXPIRY: "an expiry error: the deadline is gone, another attempt only spends time nobody waits for",
    CANCEL: "cancellation: the caller has gone, another attempt works for nobody",
})


@register
class RetryOnExpiryOrCancel(RetryRule):
    """
    ## What it does
    Flags a retry policy whose exception filter names an expiry or cancel type:
    `retry_if_exception_type((requests.Timeout, ConnectionError))`,
    `backoff.on_exception(backoff.expo, asyncio.TimeoutError)`, `stamina.retry(on=httpx.ReadTimeout)`,
    google-api-core `Retry(predicate=if_exception_type(DeadlineExceeded))`, aiohttp_retry's
    `ExponentialRetry(exceptions={asyncio.TimeoutError})`, tenacity's
    `retry_if_exception(is_transient)` where `is_transient` is a lambda, a def of the file or
    a def imported from another project module whose body only branches on the exception's
    class (`if isinstance(exc, T): return True`, `type(exc) in (...)`, `return isinstance(exc,
    T)`) and returns True for an expiry type that no branch ahead of it may decide first (so
    is retrying's `retry_on_exception=`; the message names the predicate's line), tenacity's
    `retry=` given such a lambda or def of the file taking the retry state, read the same way
    when it tests `isinstance(retry_state.outcome.exception(), T)`, filters
    combined with `|` (either side) or `&` (a side whose every kind of error gets through the
    other too: `retry_if_exception_type(Timeout) & retry_if_exception(is_timeout)`; quiet when
    one side retries no expiry or cancellation), and hand-written
    retry loops (`for attempt in range(n)` / `while` around `try`/`except` that tries again
    after the error) whose `except` clause names one. The types come from the exception
    vocabulary (catalog `exceptions.yaml`, the profile's `exceptions`, and classes named like
    `*Timeout*`, `*Deadline*`, `*Expired*`, `*Cancel(l)ed*`), through any import spelling, a
    tuple, or a name bound to a tuple. A filter that only admits expiry through a base class
    (`OSError`, `Exception`) is DL302's. Also: a redis-py `Retry(..., supported_errors=...)`
    naming `TimeoutError`, a redis client built with `retry_on_timeout=True`, and a gRPC retry
    loop whose handler goes round for `DEADLINE_EXCEEDED` or `CANCELLED` (`if err.code() in
    (UNAVAILABLE, DEADLINE_EXCEEDED): continue`, or `if err.code() not in RETRYABLE: raise`
    with `RETRYABLE` holding one of them). Project decorators and helpers whose filter is one
    of their parameters (`@async_retry(exception_types=[asyncio.TimeoutError])` where
    `async_retry` loops and catches `except exception_types:`; `call(fn, retry_on=(Timeout,))`;
    a mixin's `retry_decorator(**kwargs)` reading `kwargs.get("retry_exceptions", ())` under
    the key's own name and handing it to `retry_if_exception_type`) are judged where they are
    used, in this module or another: the argument given there, or else the default the def
    declares (the finding then lands on the name called); one
    attempt (`tries=1`, `retries=0` where the loop is `range(tries)` / `range(retries + 1)`)
    or a def that re-raises what it catches is no retry.

    A loop counts as a retry loop when it counts attempts (`range`, `itertools.count`) or is a
    `while`, leaves on success (`return`/`break` in the `try` or right after it) and the
    handler can reach the next iteration (it does not end in `raise`, `return` or `break`, or
    it reaches a `continue` before it does: `if attempt < last: continue` then `raise`). A
    handler whose way round passes a test on the caught error is judged by that test:
    `if isinstance(err, (ConnectionError, Timeout)): continue`, or `if not
    self._is_retryable(err): raise` where the predicate is a def of this file that returns
    True for `isinstance(error, T)` (the finding is on the type in the `isinstance`, or on the
    predicate's call); a type that leaves first (`if isinstance(err, Timeout): raise`) is not
    reported, and a predicate that cannot be read narrows nothing.
    Loops over data (`for item in items`), polling loops that never leave on success, an
    attempt that only waits on this process (`q.get(timeout=1)`, `event.wait()`,
    `fut.result(timeout=1)`, `asyncio.wait_for(q.get(), 1)`: waiting again sends nothing
    downstream; catalog `retry.yaml` `local_waits`), and a
    `while` that checks an exit condition of its own (`if stop.is_set(): return`) and neither
    sleeps nor counts attempts (a socket timeout used as a tick) stay quiet, as does a handler
    whose type an earlier handler of the same `try` already catches. Retries where no request
    waits stay quiet too (start-up, shutdown, readiness waits such as `wait_until_ready`,
    background jobs, scripts: catalog `retry.yaml` `outside_requests`, as for DL302).

    A policy that stops at an overall deadline is quiet about expiry types (not about
    cancellation): google-api-core's `Retry(timeout=...)` (or `deadline=`), and a delay stop
    tied to the budget in scope (tenacity `stop=stop_after_delay(budget.remaining())`,
    `stop_before_delay(...)`). Its retries end when that deadline does, so the expiry each
    attempt may raise is that attempt's own timeout, not the request's.

    The finding is on the exception type inside the retry filter (on the name the policy
    reaches it through, when the tuple or the test function is defined elsewhere: each policy
    using it gets its own finding), on the `except` clause
    of a hand-written loop, on the status test of a gRPC loop, and on `retry_on_timeout=True`.

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

    # A gRPC retry loop tests the status code in the handler's body.
    status_words = frozenset({"DEADLINE_EXCEEDED", "CANCELLED"})

    # A policy, or an except clause naming such a type or a tuple of them bound to a constant
    # first (`RETRYABLE = (ReadTimeout, ...)`; a lowercase local tuple is left to the policies),
    # or a status-code test of a gRPC retry loop.
    needs = (
        in_file(
            (Words.of(library_words) | Words.of(_type_words)) & (Text(library_imports) | Text(_names_a_type))
            | Words(*status_words)
            | PROJECT_HELPERS
        ),
        RetryRule.POLICY_CALLS,
    )

    def visit_FunctionDef(self, node: ast.FunctionDef, ctx: "FileView") -> None:
        self._decorated(node, ctx)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef, ctx: "FileView") -> None:
        self._decorated(node, ctx)

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        called = called_policy(ctx, node)
        if called is not None:
            self._policy(called, ctx, None)
        elif node.keywords:
            self._timeout_flag(node, ctx)

    def visit_For(self, node: ast.For, ctx: "FileView") -> None:
        self._loop(node, ctx)

    def visit_AsyncFor(self, node: ast.AsyncFor, ctx: "FileView") -> None:
        self._loop(node, ctx)

    def visit_While(self, node: ast.While, ctx: "FileView") -> None:
        self._loop(node, ctx)

    def _decorated(self, function: Function, ctx: "FileView") -> None:
        for policy in decorated_policies(ctx, function):
            self._policy(policy, ctx, function)

    def _loop(self, statement: Loop, ctx: "FileView") -> None:
        loop = ctx.analysis(RetryAnalysis).loop(statement, ctx.scope)
        if loop is None:
            return
        for _handler, test, found in loop.status_retries:
            self._status(test, found, ctx)
        for attempt in loop.tries:
            caught: Set[str] = set()  # by an earlier handler of the same try: never reaches this one
            for handler in attempt.handlers:
                admission = ctx.analysis(ExceptionAnalysis).handler(handler, ctx.scope)
                if handler in loop.handlers:
                    self._ways_round(handler, admission, caught, ctx)
                caught.update(e.qualname for e in admission.elements if e.qualname)

    def _ways_round(self, handler: ast.ExceptHandler, admission: Admission, caught: Set[str], ctx: "FileView") -> None:
        """Judge the `except` clause by what goes round without a test on the error, and each
        test on the error (`isinstance(err, T)`, a predicate) by what gets past it."""
        paths = ctx.analysis(RetryAnalysis).round_paths(handler, ctx.scope)
        open_ways = [p for p in paths if p.narrowing is None]
        if open_ways:
            left = set.intersection(*({q for a in p.excluded for q in qualnames(a)} for p in open_ways))
            self._handler(handler, admission, caught | left, ctx)
        for narrowing in dict.fromkeys(p.narrowing for p in paths if p.narrowing is not None):
            self._narrowed(narrowing, admission, caught, ctx)

    def _narrowed(self, narrowing: Narrowing, admission: Admission, caught: Set[str], ctx: "FileView") -> None:
        for admitted in named_types(narrowing.admission):
            if admitted.named in caught or admission.admits(admitted.kind) is None:
                continue  # an earlier clause took it, or this clause never catches it
            if outside_requests(ctx) or not reported_once(self, ctx, narrowing.node):
                return
            if narrowing.via is not None:
                where: ast.AST = narrowing.node
                how = f"`{narrowing.via}` returns True for `{spelled(ctx, admitted)}`"
            else:
                where = admitted.node if isinstance(admitted.node, ast.expr) else narrowing.node
                how = f"`{shown(ctx, narrowing.node)}` lets `{spelled(ctx, admitted)}` through"
            message = (
                f"this retry loop tries again when {how}; that is {_WHY[admitted.kind]}; "
                f"let it propagate (or stop the loop) instead"
            )
            ctx.report(self, where, message)
            return

    def _policy(self, policy: RetryPolicy, ctx: "FileView", function: Optional[Function]) -> None:
        """`function`: the def the policy decorates (None: one built in the code being walked)."""
        overall = overall_deadline(policy, ctx)
        for part in policy.filter:
            if part.state != TYPES or part.admission is None:
                continue
            for admitted in named_types(part.admission):
                if overall and admitted.kind == EXPIRY:
                    continue  # an attempt's own expiry, retried only while the overall deadline lasts
                where = part.place(admitted.node, policy.node)
                if outside_requests(ctx, function) or not reported_once(self, ctx, where):
                    continue
                fix = drop_type(ctx, part.node, part.admission, admitted)
                through = "" if where is admitted.node else f" (through `{shown(ctx, where)}`)"
                short = spelled(ctx, admitted)
                if part.default:
                    short, through = admitted.named, f" (the default of `{part.default}`, not given here)"
                if part.predicate:
                    if where is not admitted.node or admitted.node is part.node:
                        short = admitted.named  # read in the predicate, possibly in another module
                    fix = ()
                    message = (
                        f"the retry filter of `{policy.api.qualname}` retries `{short}` because {part.predicate} "
                        f"returns True for it, {_WHY[admitted.kind]}; make the predicate return False for it"
                    )
                    ctx.report(self, where, message, edits=fix, description=f"Stop retrying `{short}`")
                    continue
                message = (
                    f"the retry filter of `{policy.api.qualname}` names `{short}`{through}, "
                    f"{_WHY[admitted.kind]}; "
                    + (f"pass `{part.default}=` without it" if part.default else "remove it from the filter")
                ) + still_admitted(
                    part.admission, admitted, ctx, "exclude that too (`retry_if_not_exception_type`, see DL302)"
                )
                description = f"Remove `{short}` from the retry filter"
                ctx.report(self, where, message, edits=fix, description=description)

    def _status(self, test: ast.Compare, found: StatusTest, ctx: "FileView") -> None:
        status = next(s for s in found.statuses if s.kind in KINDS)
        assert status.kind is not None  # one of KINDS
        short = status.qualname.rpartition(".")[2]
        if outside_requests(ctx):
            return
        message = (
            f"this retry loop tries again when the status is `{short}` (`{shown(ctx, test)}`); that is "
            f"{_WHY[status.kind]}; let it propagate instead"
        )
        ctx.report(self, test, message)

    def _timeout_flag(self, call: ast.Call, ctx: "FileView") -> None:
        """`redis.Redis(retry_on_timeout=True)`: the client retries its own timeouts."""
        catalog = ctx.analysis(RetryAnalysis).catalog
        flag = next((k for k in call.keywords if isinstance(k.value, ast.Constant) and k.value.value is True), None)
        if flag is None or flag.arg != catalog.timeout_flag(ctx.resolver.qualified_name(call.func, ctx.scope)):
            return
        if outside_requests(ctx):
            return
        message = (
            f"`{flag.arg}=True` makes this client retry its timeouts; that is {_WHY[EXPIRY]}; "
            f"leave it off (the default)"
        )
        ctx.report(self, flag, message)

    def _handler(self, handler: ast.ExceptHandler, admission: Admission, caught: Set[str], ctx: "FileView") -> None:
        named = [a for a in named_types(admission) if a.named not in caught]
        if not named or outside_requests(ctx):
            return
        admitted = named[0]
        fix = drop_type(ctx, handler.type, admission, admitted)
        message = (
            f"this retry loop catches `{spelled(ctx, admitted)}` and tries again; that is {_WHY[admitted.kind]}; "
            f"let it propagate (or stop the loop) instead"
        ) + still_admitted(
            admission, admitted, ctx, "re-raise it in a clause before this one (`except {type}: raise`)"
        )
        description = f"Stop retrying `{spelled(ctx, admitted)}`"
        ctx.report(self, except_clause(handler), message, edits=fix, description=description)

