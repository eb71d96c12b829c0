"""Helpers shared by the retry rules: trigger words, where a policy is reported, the budget in
scope, and dropping one class from a tuple (DL301's fix)."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, FrozenSet, Iterator, Optional, Sequence, Tuple

from deadline_lint.analysis.budget import Budget, budget_in_scope
from deadline_lint.analysis.retry import RetryAnalysis, RetryPolicy
from deadline_lint.diagnostics import Edit
from deadline_lint.rules.base import Rule
from deadline_lint.source import SourceFile

if TYPE_CHECKING:
    from deadline_lint.context import FileContext

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Words a file using a retry library or a client's own retries must contain.
_RETRY_WORDS = frozenset({"retry", "Retry", "retries", "backoff", "tenacity", "stamina", "retrying"})


class RetryRule(Rule):
    """Base of the retry family: the prefilter words come from the retry catalog and the
    profile's own retry decorators."""

    extra_words: FrozenSet[str] = frozenset()

    def trigger_words(self) -> Optional[FrozenSet[str]]:
        own = {name.rpartition(".")[2] for name in self.profile["retry_decorators"]}
        return _RETRY_WORDS | self.catalog.retry.modules | own | self.extra_words


@dataclass(frozen=True)
class Span:
    """A place to report that is not one ast node: `except (A, B):` without its body."""

    lineno: int
    col_offset: int
    end_lineno: int
    end_col_offset: int


def except_clause(handler: ast.ExceptHandler) -> Span:
    end = handler.type if handler.type is not None else None
    if end is None:
        return Span(handler.lineno, handler.col_offset, handler.lineno, handler.col_offset + len("except"))
    return Span(handler.lineno, handler.col_offset, end.end_lineno or end.lineno, end.end_col_offset or 0)  # type: ignore[attr-defined]


def policy_head(policy: RetryPolicy) -> ast.AST:
    """The decorator's first line: the callable's name (`backoff.on_exception`), not its
    arguments."""
    return policy.call.func if policy.call is not None else policy.node


def budget_of(ctx: "FileContext") -> Optional[Budget]:
    """The budget in the scope being visited."""
    return budget_in_scope(ctx)


def decorated_policies(ctx: "FileContext", node: ast.AST) -> Tuple[RetryPolicy, ...]:
    """The retry decorators of a def that retry at all (not `stop_after_attempt(1)`)."""
    return tuple(p for p in ctx.analysis(RetryAnalysis).decorators(node) if p.retries)


def called_policy(ctx: "FileContext", call: ast.Call) -> Optional[RetryPolicy]:
    """The retrying policy `call` builds (`Retrying(...)`, `Retry(...)`), unless it decorates
    a def (those are seen from the def) or makes one attempt only."""
    if is_decorator(ctx, call):
        return None
    policy = ctx.analysis(RetryAnalysis).policy_call(call, ctx.scope)
    return policy if policy is not None and policy.retries else None


def is_decorator(ctx: "FileContext", call: ast.AST) -> bool:
    parent = ctx.parent
    return isinstance(parent, (*_FUNCTIONS, ast.ClassDef)) and any(d is call for d in parent.decorator_list)


def enclosing_function(ctx: "FileContext") -> Optional[ast.AST]:
    for parent in reversed(ctx.parents):
        if isinstance(parent, _FUNCTIONS):
            return parent
        if isinstance(parent, (ast.Lambda, ast.ClassDef)):
            return None
    return None


def shown(ctx: "FileContext", node: ast.AST) -> str:
    return " ".join(ctx.source.segment(node).split())


def drop_element(source: SourceFile, siblings: Sequence[ast.expr], index: int, tuple_left: bool = False) -> Optional[Edit]:
    """Remove `siblings[index]` with the comma that joins it to its neighbour, when the text
    between them is only a comma and spaces (no comment, no parenthesised element). With
    `tuple_left`, a tuple left with one element keeps its trailing comma: `(A,)`."""
    if len(siblings) < 2 or any(isinstance(s, ast.Starred) for s in siblings):
        return None
    text = source.text
    spans = [source.node_span(s) for s in siblings]
    start, end = spans[index]
    single = tuple_left and len(siblings) == 2
    if index + 1 < len(spans):
        next_start, next_end = spans[index + 1]
        if text[end:next_start].strip() != ",":
            return None
        if single and not text[next_end:].lstrip().startswith(","):
            return Edit(start, next_end, text[next_start:next_end] + ",")
        return Edit(start, next_start, "")
    previous_end = spans[index - 1][1]
    between = text[previous_end:start]
    if between.strip() != ",":
        return None
    if single:
        return Edit(previous_end + between.index(",") + 1, end, "")
    return Edit(previous_end, end, "")


def elements_of(container: Optional[ast.AST]) -> Optional[Sequence[ast.expr]]:
    """The comma-separated classes written in place: a tuple/list literal's elements."""
    if isinstance(container, (ast.Tuple, ast.List)):
        return container.elts
    return None


def walk_here(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk that does not enter nested defs, lambdas and classes."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if not isinstance(child, (*_FUNCTIONS, ast.Lambda, ast.ClassDef)):
                stack.append(child)


def first_report(ctx: "FileContext", key: str, node: object) -> bool:
    """True the first time `node` is reported under `key` in this file (a tuple bound to a
    name and used by several policies is reported once)."""
    seen = ctx.module_scope.facts.setdefault(key, set())
    if id(node) in seen:  # type: ignore[operator]
        return False
    seen.add(id(node))  # type: ignore[union-attr]
    return True
