"""Filters that admit `TimeoutError` through the `OSError` family (DL302).

`OSError` is spelled four ways (`IOError`, `EnvironmentError`, `socket.error` are aliases of
it) and `TimeoutError` derives from it, so a filter naming any of them retries socket and
`urlopen` timeouts. The messages say so in those words, naming the spelling the code used.

A hand-written retry loop (`retry.py`: a counting loop or a `while` that leaves on success)
whose `except` clause admits `TimeoutError` only through that family is reported when its
attempt can raise one: some call in the `try` is given a timeout of its own (`timeout=5`,
`sock.settimeout(5)`), the line the message names. Without one, an `except OSError` around
file or process work is no retry of a deadline, so it stays quiet. `Exception` in a loop
is left alone (too often polling: DL302's policies only), as are handlers that test the
error before going round, and clauses that name an expiry type themselves (DL301's). So is a
loop that stops at a deadline of its own (`while time.monotonic() < deadline`, or a handler
that compares a clock read before going round): its attempts end when that deadline does,
so the timeout each attempt may raise is the attempt's own (a wait for a port to open).
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterable, Optional, Set, Tuple, Union

from deadline_lint.families.retry.common import except_clause, outside_requests, reported_once, shown
from deadline_lint.families.retry.analysis.retry import RetryAnalysis
from deadline_lint.families.shared.errors.admissions import Admission, Admitted
from deadline_lint.families.shared.errors.exceptions import EXPIRY, ExceptionAnalysis
from deadline_lint.families.shared.time.time_values import TimeValues
from deadline_lint.semantics.local.children import walk as walk_nodes

if TYPE_CHECKING:
    from deadline_lint.engine.rule import Rule
    from deadline_lint.semantics.file_view import FileView

Loop = Union[ast.For, ast.AsyncFor, ast.While]

OS_ERROR = "OSError"
# What a prefilter looks for: the family's spellings, and a timeout given to the attempt.
OS_ERROR_WORDS = ("OSError", "IOError", "EnvironmentError", "error")
_TIMEOUT_SETTERS = ("settimeout",)
_BUILTIN_TIMEOUT = "TimeoutError"


def os_error_phrase(ctx: "FileView", element: ast.AST, through: Admitted) -> Optional[Tuple[str, str]]:
    """For a filter element of the family: how to name it (`IOError` (an alias of
    `OSError`)) and the expiry type it includes (`TimeoutError`); None for another base."""
    if through.named != OS_ERROR:
        return None
    spelled = shown(ctx, element) if isinstance(element, ast.expr) else OS_ERROR
    alias = "" if spelled.rpartition(".")[2] == OS_ERROR else f" (an alias of `{OS_ERROR}`)"
    return f"`{spelled}`{alias}", _BUILTIN_TIMEOUT


def report_loop(rule: "Rule", statement: Loop, ctx: "FileView") -> None:
    retry = ctx.analysis(RetryAnalysis)
    loop = retry.loop(statement, ctx.scope)
    if loop is None:
        return
    if _own_deadline(ctx, [statement.test] if isinstance(statement, ast.While) else []):
        return
    exceptions = ctx.analysis(ExceptionAnalysis)
    for attempt in loop.tries:
        timed = _timeout_given(attempt.body)
        caught: Set[str] = set()  # by an earlier clause of the same `try`
        for handler in attempt.handlers:
            admission = exceptions.handler(handler, ctx.scope)
            if handler in loop.handlers and timed is not None and _expiry_first_here(caught):
                _judge(rule, handler, admission, timed, ctx)
            caught.update(e.qualname for e in admission.elements if e.qualname)
            caught.update(a.type for e in admission.elements for a in e.admitted if a.kind == EXPIRY)


def _judge(rule: "Rule", handler: ast.ExceptHandler, admission: Admission, timed: ast.Call, ctx: "FileView") -> None:
    if any(a.direct for a in admission.all(EXPIRY)):
        return  # it names an expiry type itself: DL301's
    if _own_deadline(ctx, handler.body):
        return
    paths = ctx.analysis(RetryAnalysis).round_paths(handler, ctx.scope)
    if not paths or any(p.narrowing is not None or p.excluded for p in paths):
        return  # the way round tests the error first: what gets past is DL301's to judge
    for element in admission.elements:
        through = next((a for a in element.admitted if a.kind == EXPIRY and not a.direct), None)
        family = os_error_phrase(ctx, element.node, through) if through is not None else None
        if family is None:
            continue
        if outside_requests(ctx) or not reported_once(rule, ctx, handler):
            return
        clause = shown(ctx, handler.type or handler)
        default = "" if _written_in_clause(element.node, handler) else f" (through `{clause}`)"
        message = (
            f"this retry loop catches {family[0]}{default}, which includes `{family[1]}`, and tries again: "
            f"the attempt is given a timeout at line {timed.lineno} (`{shown(ctx, timed.func)}(...)`), and once "
            f"that runs out another attempt only spends time nobody waits for; re-raise it first "
            f"(`except {_BUILTIN_TIMEOUT}: raise`) or catch the transient errors only"
        )
        ctx.report(rule, except_clause(handler), message)
        return


def _own_deadline(ctx: "FileView", nodes: Iterable[ast.AST]) -> bool:
    """Some comparison among `nodes` reads a clock (`time.monotonic() >= deadline`)."""
    times = ctx.analysis(TimeValues)
    for top in nodes:
        for node in walk_nodes(top):
            if isinstance(node, ast.Compare) and any(
                isinstance(inner, ast.Call) and times.clock_read(inner, ctx.scope) is not None
                for operand in (node.left, *node.comparators)
                for inner in walk_nodes(operand)
            ):
                return True
    return False


def _expiry_first_here(caught: Iterable[str]) -> bool:
    """No earlier clause of the `try` takes `TimeoutError` (or the whole family) first."""
    return not any(name in (OS_ERROR, _BUILTIN_TIMEOUT, "socket.timeout") for name in caught)


def _written_in_clause(node: ast.AST, handler: ast.ExceptHandler) -> bool:
    kind = handler.type
    return kind is not None and any(child is node for child in ast.walk(kind))


def _timeout_given(body: Iterable[ast.stmt]) -> Optional[ast.Call]:
    """The first call of the attempt given a timeout of its own: a `timeout=` (or
    `*_timeout=`) keyword that is not `None`, or `settimeout(x)`."""
    for statement in body:
        for node in walk_nodes(statement):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _TIMEOUT_SETTERS and node.args:
                if not _none(node.args[0]):
                    return node
            for keyword in node.keywords:
                if keyword.arg is not None and keyword.arg.endswith("timeout") and not _none(keyword.value):
                    return node
    return None


def _none(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value is None
