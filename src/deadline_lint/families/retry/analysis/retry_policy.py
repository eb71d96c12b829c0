"""What a retry policy is: the parts of its filter and its stops, as read from a decorator or
a policy call (`policy_reader.py`), and what a hand-written retry loop is; with the syntax
helpers reading arguments and bound names that the retry analyses share.

A policy's filter is a union of parts (`retry_if_exception_type(A) | retry_if_result(f)`);
each part is ALL (no filter: every Exception), TYPES (the classes of its `admission`),
ALL_BUT (every Exception except those of its `admission`), NOTHING (results only), or UNKNOWN
(a callable, an intersection, anything not in the catalog): rules stay quiet on UNKNOWN parts.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator, List, Mapping, Optional, Tuple

from deadline_lint.catalog.retry import ATTEMPTS, Argument, RetryApi
from deadline_lint.families.shared.errors.exceptions import Admission, StatusTest
from deadline_lint.semantics.local.scopes import ASSIGN, Binding, Scope

UNKNOWN = "unknown"
MAX_DEPTH = 6


@dataclass(frozen=True)
class FilterPart:
    state: str  # ALL, TYPES, ALL_BUT, NOTHING or UNKNOWN
    node: Optional[ast.AST]  # the predicate / classes as written (None: the library default)
    admission: Optional[Admission] = None  # TYPES: what is retried; ALL_BUT: what is excluded
    tested: bool = False  # read from a function of the exception (`retry_if_exception(f)`)
    default: str = ""  # the project helper's parameter whose default this is (none given here)
    predicate: str = ""  # how a message names the function it was read from (`f` at line 12)

    def place(self, node: ast.AST, policy: Optional[ast.AST]) -> ast.AST:
        """Where a finding about `node` (a class of this part's admission) is shown: on it
        when it is written in the policy (`policy`, its call or decorator), else on the name
        the policy uses to reach it (`retry_if_exception_type(RETRYABLE)`,
        `retry_if_exception(is_transient)`), where the reader is."""
        if self.node is None or policy is None or _within(node, policy) or not _within(self.node, policy):
            return node
        return self.node


@dataclass(frozen=True)
class Stop:
    kind: str  # ATTEMPTS, DELAY, NEVER or UNKNOWN
    node: Optional[ast.AST]  # the value as written; None for the library default
    keyword: Optional[str] = None  # the policy's argument it was given as

    def single(self, retries: bool = False) -> bool:
        """An attempt count of at most 1 (with `retries`, a count of retries of 0 / False),
        written as a literal: no retry at all."""
        value = self.node
        if isinstance(value, ast.Call) and len(value.args) == 1:
            value = value.args[0]
        if not isinstance(value, ast.Constant):
            return False
        if retries:
            return value.value is not None and value.value in (0, False)
        return type(value.value) is int and value.value <= 1


@dataclass(frozen=True)
class RetryPolicy:
    api: RetryApi
    node: ast.expr  # the decorator expression or the policy call
    call: Optional[ast.Call]  # None for a bare `@retry`
    filter: Tuple[FilterPart, ...]  # a union
    filter_given: bool  # False: the library default decides what is retried
    stops: Tuple[Stop, ...]  # a union: retrying ends at the first that fires
    giveup: bool  # a giveup callable may exclude some errors
    own_timeouts: bool = False  # retries the library's own expiry type (api.timeouts) as written
    spared: str = ""  # a giveup callable read to spare expiry errors: how a message names it

    @property
    def library(self) -> str:
        return self.api.library

    @property
    def retries(self) -> bool:
        """False for a policy that makes one attempt only (`stop_after_attempt(1)`, `max_tries=1`)."""
        retries = self.api.counts_retries
        return not any(stop.kind == ATTEMPTS and stop.single(retries) for stop in self.stops)


@dataclass(frozen=True)
class RetryLoop:
    """A for/while loop around try/except where some handler goes round again."""

    loop: ast.stmt
    handlers: Tuple[ast.ExceptHandler, ...]  # the handlers that retry
    sleeps: Tuple[ast.Call, ...]  # waits between attempts (in those handlers or after the try)
    tries: Tuple[ast.Try, ...]
    # `if err.code() in RETRYABLE: continue` / `if err.code() not in RETRYABLE: raise`: the
    # handler, the test, and the expiry / cancel status codes it goes round for
    status_retries: Tuple[Tuple[ast.ExceptHandler, ast.Compare, StatusTest], ...] = ()


def given_argument(call: Optional[ast.Call], where: Argument) -> Optional[ast.expr]:
    if call is None:
        return None
    if where.keyword is not None:
        for keyword in call.keywords:
            if keyword.arg == where.keyword:
                return keyword.value
    if where.position is not None and len(call.args) > where.position:
        if not any(isinstance(a, ast.Starred) for a in call.args[: where.position + 1]):
            return call.args[where.position]
    return None


def turned_off(call: Optional[ast.Call], keywords: Tuple[str, ...], positions: Mapping[str, int]) -> bool:
    """One of `keywords` is given a literal 0 / False (`Retry(read=0)`; None defers to `total`)."""
    for keyword in keywords:
        value = given_argument(call, Argument(keyword, positions.get(keyword)))
        if isinstance(value, ast.Constant) and value.value is not None and value.value in (0, False):
            return True
    return False


def passes_unpacked(call: ast.Call) -> bool:
    return any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args)


def combined(expr: ast.expr, scope: Scope, depth: int) -> Iterator[Tuple[ast.expr, Scope, int]]:
    """The parts of a filter or stop combined with `|` (`a | b`), names bound once followed to
    their value: each leaf with the scope it is read in and its depth. A leaf deeper than
    MAX_DEPTH is handed back as it is, for the caller to call unknown."""
    if depth > MAX_DEPTH:
        yield expr, scope, depth
    elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
        yield from combined(expr.left, scope, depth + 1)
        yield from combined(expr.right, scope, depth + 1)
    else:
        bound = single_assignment(expr, scope) if isinstance(expr, ast.Name) else None
        if bound is not None:
            yield from combined(bound[0], bound[1], depth + 1)
        else:
            yield expr, scope, depth


def single_assignment(name: ast.Name, scope: Scope) -> Optional[Tuple[ast.expr, Scope]]:
    bindings = scope.lookup(name.id)
    if not bindings or len(bindings) != 1:
        return None
    return assigned_value(bindings[0])


def assigned_value(binding: Binding) -> Optional[Tuple[ast.expr, Scope]]:
    """The value an assignment binds (an ASSIGN binding always holds an expression) and the
    scope it is read in; None for any other kind of binding."""
    value = binding.value
    if binding.kind != ASSIGN or not isinstance(value, ast.expr):
        return None
    return value, binding.scope


def module_body(module: Scope) -> List[ast.stmt]:
    """The statements of the module scope's tree."""
    return module.node.body if isinstance(module.node, ast.Module) else []


def _within(node: ast.AST, outer: ast.AST) -> bool:
    """`node` lies in the source span of `outer`."""
    (start, end), (outer_start, outer_end) = _span(node), _span(outer)
    return outer_start <= start and end <= outer_end


def _span(node: ast.AST) -> Tuple[Tuple[int, int], Tuple[int, int]]:
    start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    end = (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)
    return start, end


def is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def walk_here(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk without descending into nested defs, lambdas and classes."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)


def statements_here(node: ast.AST) -> Iterator[ast.stmt]:
    for child in walk_here(node):
        if isinstance(child, ast.stmt) and child is not node:
            yield child


def or_operands(expr: Optional[ast.expr]) -> List[ast.expr]:
    """`a or b or c` -> [a, b, c]; anything else alone (none for None)."""
    if expr is None:
        return []
    if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.Or):
        return list(expr.values)
    return [expr]
