"""Does an `except` body hand the caught exception on, on every path?

A path re-raises with a bare `raise`, `raise <the caught name>` (with or without `from`), or a
raise the caller counts as handing it on (for cancellation: raising a new cancel error). It
leaks when it falls off the end of the body, `return`s, `break`s or `continue`s out of the
handler, or raises something else (with or without `from`: the caught exception becomes the
new one's cause, it no longer propagates). What cannot be judged (a bare `raise` inside a
nested handler, a raise inside a `try` that may catch it) is never counted as a leak. Ending
the process (`sys.exit()`, `os._exit()`, `raise SystemExit`) ends the handler as surely as
`raise` and leaks nothing: there is no task left to go on.

What happens around the handler (a task cancelled on purpose, waits after it, a flag raised
later) is `cancellation_flow.py`.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Iterator, List, Optional, Sequence, Tuple, Union

FALLS_THROUGH, RETURNS, BREAKS, CONTINUES, RAISES_OTHER = (
    "falls through", "returns", "breaks", "continues", "raises another exception"
)

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
Loop = Union[ast.For, ast.AsyncFor, ast.While]
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_TRY_TYPES = (ast.Try, ast.TryStar)
_PROCESS_EXITS = frozenset({("sys", "exit"), ("os", "_exit"), ("os", "abort"), ("exit",), ("quit",)})


@dataclass(frozen=True)
class Leak:
    """One way out of the handler that does not hand the exception on."""

    how: str  # FALLS_THROUGH, RETURNS, BREAKS, CONTINUES or RAISES_OTHER
    node: ast.stmt  # the statement (for FALLS_THROUGH: the handler's last statement)


@dataclass
class _Block:
    falls_through: bool = True
    leaks: List[Leak] = field(default_factory=list)


Decide = Callable[[ast.expr], Optional[bool]]


def handler_leaks(
    handler: ast.ExceptHandler,
    hands_on: Callable[[ast.Raise], bool] = lambda raise_: False,
    decide: Decide = lambda test: None,
) -> Tuple[Leak, ...]:
    """Every way out of `handler` that does not re-raise the caught exception, in source
    order; empty when every path re-raises it. `hands_on` says whether an explicit raise of
    something else still counts as handing it on; `decide` whether an `if` test is always
    (True) or never (False) true for the exception in question (`isinstance(exc, OSError)`
    never is for a cancellation), None when it cannot tell."""
    walker = _Walker(handler.name, hands_on, decide)
    block = walker.block(handler.body, loop_depth=0, nested_handler=False)
    leaks = list(block.leaks)
    if block.falls_through:
        leaks.append(Leak(FALLS_THROUGH, handler.body[-1]))
    return tuple(sorted(leaks, key=lambda leak: (leak.node.lineno, leak.node.col_offset)))


class _Walker:
    def __init__(self, caught: Optional[str], hands_on: Callable[[ast.Raise], bool], decide: Decide) -> None:
        self.caught = caught
        self.hands_on = hands_on
        self.decide = decide

    def block(self, body: Sequence[ast.stmt], loop_depth: int, nested_handler: bool, guarded: bool = False) -> _Block:
        """`guarded`: inside a `try` body with handlers, where a raise may be caught."""
        result = _Block()
        for stmt in body:
            if not result.falls_through:
                break  # unreachable code cannot leak
            step = self.statement(stmt, loop_depth, nested_handler, guarded)
            result.leaks.extend(step.leaks)
            result.falls_through = step.falls_through
        return result

    def statement(self, stmt: ast.stmt, loop_depth: int, nested_handler: bool, guarded: bool) -> _Block:
        if isinstance(stmt, ast.Raise):
            return _Block(False, [] if self._reraises(stmt, nested_handler, guarded) else [Leak(RAISES_OTHER, stmt)])
        if isinstance(stmt, ast.Return):
            return _Block(False, [Leak(RETURNS, stmt)])
        if isinstance(stmt, ast.Expr) and ends_process(stmt.value):
            return _Block(False)
        if isinstance(stmt, (ast.Break, ast.Continue)):
            if loop_depth:
                return _Block(False)  # leaves an inner loop, not the handler
            return _Block(False, [Leak(BREAKS if isinstance(stmt, ast.Break) else CONTINUES, stmt)])
        if isinstance(stmt, ast.If):
            taken = self.decide(stmt.test)
            if taken is not None:
                return self.block(stmt.body if taken else stmt.orelse, loop_depth, nested_handler, guarded)
            return self._either(
                self.block(stmt.body, loop_depth, nested_handler, guarded),
                self.block(stmt.orelse, loop_depth, nested_handler, guarded),
            )
        if isinstance(stmt, _LOOPS):
            return self._loop(stmt, loop_depth, nested_handler, guarded)
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            return self.block(stmt.body, loop_depth, nested_handler, guarded)
        if isinstance(stmt, _TRY_TYPES):
            return self._try(stmt, loop_depth, nested_handler, guarded)
        if isinstance(stmt, ast.Match):
            cases = [self.block(case.body, loop_depth, nested_handler, guarded) for case in stmt.cases]
            result = _Block(not any(_is_wildcard(case) for case in stmt.cases))
            for case in cases:
                result = self._either(result, case)
            return result
        return _Block(True)  # simple statements and nested definitions

    def _reraises(self, stmt: ast.Raise, nested_handler: bool, guarded: bool) -> bool:
        if stmt.exc is None or _is_system_exit(stmt.exc):
            return True  # ours, or (in a nested handler) not something we can judge; or the process ends
        if isinstance(stmt.exc, ast.Name) and stmt.exc.id == self.caught:
            return True
        return guarded or self.hands_on(stmt)

    @staticmethod
    def _either(first: _Block, second: _Block) -> _Block:
        return _Block(first.falls_through or second.falls_through, first.leaks + second.leaks)

    def _loop(self, stmt: Loop, loop_depth: int, nested_handler: bool, guarded: bool) -> _Block:
        body = self.block(stmt.body, loop_depth + 1, nested_handler, guarded)
        orelse = self.block(stmt.orelse, loop_depth, nested_handler, guarded)
        infinite = isinstance(stmt, ast.While) and _always_true(stmt.test)
        breaks = any(isinstance(n, ast.Break) for n in _loop_level(stmt.body))
        falls = breaks or (not infinite and orelse.falls_through)
        return _Block(falls, body.leaks + orelse.leaks)

    def _try(self, stmt: Union[ast.Try, ast.TryStar], loop_depth: int, nested_handler: bool, guarded: bool) -> _Block:
        handlers = stmt.handlers
        body = self.block(stmt.body, loop_depth, nested_handler, guarded or bool(handlers))
        orelse = self.block(stmt.orelse, loop_depth, nested_handler, guarded) if body.falls_through else _Block(False)
        result = _Block(orelse.falls_through, body.leaks + orelse.leaks)
        for inner in handlers:
            found = self.block(inner.body, loop_depth, True, guarded)
            result = self._either(result, found)
        final = stmt.finalbody
        if final:
            after = self.block(final, loop_depth, nested_handler, guarded)
            result.leaks.extend(after.leaks)
            if not after.falls_through:
                result.falls_through = False
        return result


def ends_process(expr: ast.expr) -> bool:
    """`sys.exit(...)`, `os._exit(...)`, `exit()`: the process ends here."""
    if not isinstance(expr, ast.Call):
        return False
    parts: List[str] = []
    func = expr.func
    while isinstance(func, ast.Attribute):
        parts.insert(0, func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.insert(0, func.id)
    return tuple(parts) in _PROCESS_EXITS


def _is_system_exit(exc: ast.expr) -> bool:
    target = exc.func if isinstance(exc, ast.Call) else exc
    return isinstance(target, ast.Name) and target.id == "SystemExit"


def _always_true(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and bool(test.value) is True


def _loop_level(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a loop body that a `break` there would leave it from (not nested loops
    or definitions)."""
    stack: List[ast.stmt] = list(body)
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, _LOOPS + _DEFINITIONS):
            continue
        for name in ("body", "orelse", "finalbody"):
            stack.extend(getattr(stmt, name, ()) or ())
        for handler in getattr(stmt, "handlers", ()) or ():
            stack.extend(handler.body)
        for case in getattr(stmt, "cases", ()) or ():
            stack.extend(case.body)


def _is_wildcard(case: ast.AST) -> bool:
    pattern = getattr(case, "pattern", None)
    return (
        getattr(case, "guard", None) is None
        and isinstance(pattern, ast.MatchAs)
        and getattr(pattern, "pattern", None) is None
    )


def reraises_on_some_path(handler: ast.ExceptHandler) -> bool:
    """Some statement of the handler (not of a handler nested in it, nor a nested definition)
    is a bare `raise` or `raise <the caught name>`: on that path the exception goes on."""
    stack: List[ast.stmt] = list(handler.body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.Raise):
            exc = stmt.exc
            if exc is None or (isinstance(exc, ast.Name) and exc.id == handler.name):
                return True
        if isinstance(stmt, _DEFINITIONS):
            continue
        for name in ("body", "orelse", "finalbody"):
            stack.extend(getattr(stmt, name, ()) or ())
        for case in getattr(stmt, "cases", ()) or ():
            stack.extend(case.body)
    return False
