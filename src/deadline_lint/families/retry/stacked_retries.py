from __future__ import annotations

import ast
from typing import TYPE_CHECKING, FrozenSet, List, Optional

from deadline_lint.engine.requires import Text, Words, in_file
from deadline_lint.engine.rule import Rule, register
from deadline_lint.families.retry.common import (
    RetryRule,
    enclosing_function,
    library_imports,
    library_words,
    shown,
)
from deadline_lint.families.retry.analysis.retry import RetryAnalysis
from deadline_lint.families.retry.analysis.retry_facts import ProjectRetries

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _client_builders(rule: Rule) -> FrozenSet[str]:
    return frozenset(name.rpartition(".")[2] for name in rule.catalog.retry.client_retries)


@register
class StackedRetries(RetryRule):
    """
    ## What it does
    Flags a call, made where retries already happen, to something that retries on its own:

    - where: the body of a function carrying a retry decorator (tenacity, backoff, stamina,
      retrying, the profile's `retry_decorators`), the body of a `for attempt in
      Retrying(...)` / `stamina.retry_context(...)` loop, or the `try` of a hand-written retry
      loop (see DL301);
    - what: a function of the same module (or a method of the same class, called on `self`)
      that carries a retry decorator itself, or a client that was given its own retries where
      it was built (`Config(retries=...)`, `httpx.HTTPTransport(retries=3)`,
      `urllib3.PoolManager(retries=...)`, or a `requests` session with
      `mount(..., HTTPAdapter(max_retries=3))`). Retries set to 0 / `False` do not count.

    The finding is on the inner retrying call.

    ## Why is this bad?
    Retries multiply: three layers of three attempts each make 27 calls to the bottom
    service for one request, most of them after the caller gave up, exactly when that service
    is already struggling. One layer owns retries (usually the outermost, which knows the
    budget); the others fail fast.

    ## Example
    ```python
    from tenacity import retry, stop_after_attempt

    @retry(stop=stop_after_attempt(3))
    def load_profile(user_id):
        return fetch_user(user_id)

    @retry(stop=stop_after_attempt(3))
    def fetch_user(user_id):
        return session.get(f"{USERS}/{user_id}", timeout=2)
    ```

    ## Use instead
    ```python
    from tenacity import retry, stop_after_attempt

    @retry(stop=stop_after_attempt(3))
    def load_profile(user_id):
        return fetch_user(user_id)

    def fetch_user(user_id):
        return session.get(f"{USERS}/{user_id}", timeout=2)
    ```

    ## Fix safety
    No fix: which layer owns the retries is a design decision.

    ## Options
    - `retry_decorators`: the organisation's own retry decorators.
    """

    code = "DL304"
    name = "stacked-retries"
    summary = "a retrying function calls another retrying function or a client with its own retries"
    node_types = (ast.Call,)
    # A client given its own retries is built with a retries argument (or is aiohttp_retry's).
    client_words = frozenset({"retries", "aiohttp_retry"})
    retry_arguments = frozenset({"retries=", "retries =", "aiohttp_retry"})

    # ... and its constructor is spelled in the file (`HTTPAdapter`, `Config`, `PoolManager`).
    needs = (
        in_file(
            (Words.of(library_words) | Words(*client_words))
            & (Text(library_imports) | Words(*retry_arguments) & Words.of(_client_builders))
        ),
    )

    def visit_Call(self, call: ast.Call, ctx: "FileView") -> None:
        outer = self._retrying_context(call, ctx)
        if outer is None:
            return
        retry = ctx.analysis(RetryAnalysis)
        inner = retry.called_function(call, ctx.scope)
        decorator = retry.retry_decorator(inner) if inner is not None and inner is not enclosing_function(ctx) else None
        through = None
        if decorator is None and inner is None:
            through = ctx.analysis(ProjectRetries).retried(call, ctx.scope)
        if decorator is not None and inner is not None:
            how = shown(ctx, decorator)
            message = (
                f"{outer} calls `{inner.name}`, which retries on its own (`@{_head(how)}`): the attempts "
                f"multiply; let one layer own retries"
            )
        elif through is not None:
            message = (
                f"{outer} calls `{shown(ctx, call.func)}`, which retries on its own (`@{through.payload}`): "
                "the attempts multiply; let one layer own retries"
            )
        else:
            configured = retry.own_retries(call, ctx.scope)
            if configured is None:
                return
            message = (
                f"{outer} calls a client that retries on its own (`{_head(shown(ctx, configured))}`): the attempts "
                f"multiply; let one layer own retries"
            )
        ctx.report(self, call, message)

    def _retrying_context(self, node: ast.Call, ctx: "FileView") -> Optional[str]:
        """How retries already happen around the call being visited, or None."""
        retry = ctx.analysis(RetryAnalysis)
        parents = ctx.parents
        child: ast.AST = node
        for parent in reversed(parents):
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if child in parent.decorator_list or child in parent.args.defaults:
                    return None
                decorator = retry.retry_decorator(parent)
                return f"`{parent.name}` retries (`@{_head(shown(ctx, decorator))}`) and" if decorator else None
            if isinstance(parent, (ast.Lambda, ast.ClassDef)):
                return None
            if isinstance(parent, (ast.For, ast.AsyncFor)) and child is not parent.iter and any(
                child is s for s in parent.body
            ):
                policy = retry.policy_loop(parent, ctx.scope)
                if policy is not None:
                    return f"this `{policy.api.qualname}` loop"
            if isinstance(parent, _LOOPS) and any(child is s for s in parent.body):
                loop = retry.loop(parent, ctx.scope)
                if loop is not None and any(_inside_try_body(t, parents) for t in loop.tries):
                    return "this retry loop"
            child = parent
        return None


def _inside_try_body(attempt: ast.Try, parents: List[ast.AST]) -> bool:
    for index, parent in enumerate(parents):
        if parent is attempt:
            following = parents[index + 1] if index + 1 < len(parents) else None
            return following is None or any(following is s for s in attempt.body)
    return False


def _head(text: str) -> str:
    """`backoff.on_exception(backoff.expo, ...)` -> `backoff.on_exception(...)`."""
    name, paren, _ = text.partition("(")
    return f"{name}(...)" if paren else name
