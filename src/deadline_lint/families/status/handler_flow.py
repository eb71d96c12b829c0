"""Does an `except` body hand the caught exception on, on every path?

A path re-raises with a bare `raise`, `raise <the caught name>` (with or without `from`), or a
raise the caller counts as handing it on (for cancellation: raising a new cancel error). It
leaks when it falls off the end of the body, `return`s, `break`s or `continue`s out of the
handler, or raises something else (with or without `from`: the caught exception becomes the
new one's cause, it no longer propagates). What cannot be judged (a bare `raise` inside a
nested handler, a raise inside a `try` that may catch it) is never counted as a leak. Ending
the process (`sys.exit()`, `os._exit()`, `raise SystemExit`) ends the handler as surely as
`raise` and leaks nothing: there is no task left to go on.

Also here: "the code cancelled this task itself just before awaiting it" (`task.cancel()`
then `await task` under the handler's `try`), where swallowing the cancellation is the point.
"""
from __future__ import annotations

import ast
from typing import Callable, FrozenSet, List, Optional, Sequence, Set, Tuple

from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.expressions import last_name
from deadline_lint.support.records import dataclass, field

FALLS_THROUGH, RETURNS, BREAKS, CONTINUES, RAISES_OTHER = (
    "falls through", "returns", "breaks", "continues", "raises another exception"
)

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_TRY_TYPES = (ast.Try, ast.TryStar)
_PROCESS_EXITS = frozenset({("sys", "exit"), ("os", "_exit"), ("os", "abort"), ("exit",), ("quit",)})


@dataclass(frozen=True)
class Leak:
    """One way out of the handler that does not hand the exception on."""

    how: str  # FALLS_THROUGH, RETURNS, BREAKS, CONTINUES or RAISES_OTHER
    node: ast.AST  # the statement (for FALLS_THROUGH: the handler's last statement)


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
    return tuple(sorted(leaks, key=lambda leak: (leak.node.lineno, leak.node.col_offset)))  # type: ignore[attr-defined]


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

    def _loop(self, stmt: ast.stmt, loop_depth: int, nested_handler: bool, guarded: bool) -> _Block:
        body = self.block(stmt.body, loop_depth + 1, nested_handler, guarded)  # type: ignore[attr-defined]
        orelse = self.block(stmt.orelse, loop_depth, nested_handler, guarded)  # type: ignore[attr-defined]
        infinite = isinstance(stmt, ast.While) and _always_true(stmt.test)
        breaks = any(isinstance(n, ast.Break) for n in _loop_level(stmt.body))  # type: ignore[attr-defined]
        falls = breaks or (not infinite and orelse.falls_through)
        return _Block(falls, body.leaks + orelse.leaks)

    def _try(self, stmt: ast.stmt, loop_depth: int, nested_handler: bool, guarded: bool) -> _Block:
        handlers = stmt.handlers  # type: ignore[attr-defined]
        body = self.block(stmt.body, loop_depth, nested_handler, guarded or bool(handlers))  # type: ignore[attr-defined]
        orelse = self.block(stmt.orelse, loop_depth, nested_handler, guarded) if body.falls_through else _Block(False)  # type: ignore[attr-defined]
        result = _Block(orelse.falls_through, body.leaks + orelse.leaks)
        for inner in handlers:
            found = self.block(inner.body, loop_depth, True, guarded)
            result = self._either(result, found)
        final = stmt.finalbody  # type: ignore[attr-defined]
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


def _loop_level(body: Sequence[ast.stmt]):
    """Statements of a loop body that a `break` there would leave it from (not nested loops
    or definitions)."""
    stack = list(body)
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


# -- "I cancelled it myself" ------------------------------------------------------------------
def cancels_then_awaits(
    block: Sequence[ast.stmt], index: int, body: Sequence[ast.stmt], waits: FrozenSet[str] = frozenset()
) -> bool:
    """The statement at `block[index]` (a `try` or `with`) awaits a task in `body` that the
    code cancelled itself just before: `t.cancel()` among the earlier statements of `block`
    or of `body`, then `await t` in `body` (`t` any dotted name: `self._task`), or an awaited
    call whose last name is in `waits` with `t` first (`await asyncio.wait_for(t, 1)`)."""
    awaited = _awaited(body, waits)
    if not awaited:
        return False
    return any(_cancelled(node) in awaited for node in _expressions([*block[:index], *body]))


def cancelled_before_loop(
    block: Sequence[ast.stmt], index: int, body: Sequence[ast.stmt], waits: FrozenSet[str] = frozenset()
) -> bool:
    """`block[index]` is `for t in pending:` whose body (`body`, holding the `try`) awaits
    `t`, and an earlier statement of `block` cancelled every one of them already:
    `for task in pending: task.cancel()` over the same iterable."""
    loop = block[index]
    if not isinstance(loop, (ast.For, ast.AsyncFor)) or not isinstance(loop.target, ast.Name):
        return False
    iterable = _reference(loop.iter)
    if iterable is None or _loaded(loop.target) not in _awaited(body, waits):
        return False
    for earlier in block[:index]:
        if (
            isinstance(earlier, (ast.For, ast.AsyncFor))
            and isinstance(earlier.target, ast.Name)
            and _reference(earlier.iter) == iterable
            and any(_cancelled(node) == _loaded(earlier.target) for node in _expressions(earlier.body))
        ):
            return True
    return False


def _loaded(target: ast.Name) -> Optional[str]:
    """The key of a loop variable as it is read (`_reference` of a load of the name)."""
    return _reference(ast.Name(id=target.id, ctx=ast.Load()))


def _awaited(body: Sequence[ast.stmt], waits: FrozenSet[str]) -> Set[str]:
    """References awaited in `body`: `await t`, or `await wait_for(t, ...)` for a wait in `waits`."""
    found: Set[str] = set()
    for node in _expressions(body):
        if not isinstance(node, ast.Await):
            continue
        value = node.value
        if isinstance(value, ast.Call) and value.args and last_name(value.func) in waits:
            value = value.args[0]
        key = _reference(value)
        if key is not None:
            found.add(key)
    return found


def _cancelled(node: ast.AST) -> Optional[str]:
    """The reference `node` cancels, when it is a `t.cancel()` call."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "cancel":
        return _reference(node.func.value)
    return None


def _expressions(statements: Sequence[ast.stmt]):
    """Every node under `statements`, not entering nested definitions."""
    stack: List[ast.AST] = list(statements)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _DEFINITIONS + (ast.Lambda,)):
                stack.append(child)


def _reference(expr: Optional[ast.AST]) -> Optional[str]:
    """A key for a plain reference (`task`, `self._task`, `app[listener]`), None for anything
    that may evaluate to something else each time (a call)."""
    if expr is None or any(isinstance(node, (ast.Call, ast.Await)) for node in walk_nodes(expr)):
        return None
    if not isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript)):
        return None
    return ast.dump(expr, annotate_fields=False)


# -- "someone else decides" -------------------------------------------------------------------
def passes_caught_on(handler: ast.ExceptHandler, describing: "frozenset") -> bool:
    """The handler hands the caught exception object to other code: stores it, returns or
    yields it, or passes it to a call that does more than describe it (`describing` are the
    last names of calls that only describe it: logging, `str`, `isinstance`). That code may
    re-raise it later (`errors.append(exc)`, `self._convert_error(exc)`)."""
    name = handler.name
    if name is None:
        return False
    described: Set[int] = set()
    for node in _expressions(handler.body):
        if isinstance(node, ast.Raise):
            described.update(id(n) for part in (node.exc, node.cause) if part is not None for n in walk_nodes(part))
        elif isinstance(node, ast.Call) and last_name(node.func) in describing:
            described.update(id(n) for arg in [*node.args, *node.keywords] for n in walk_nodes(arg))
    return any(
        isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) and id(node) not in described
        for node in _expressions(handler.body)
    )


def calls_any(statements: Sequence[ast.stmt], methods: "frozenset") -> bool:
    """Some call under `statements` is to a method or function whose last name is in `methods`."""
    return any(isinstance(n, ast.Call) and last_name(n.func) in methods for n in _expressions(statements))



def can_suspend(statements: Sequence[ast.stmt]) -> bool:
    """Code that can be interrupted by its task's cancellation: it awaits (or is an async
    generator that yields, where `athrow` can deliver it). Without such a point a
    `CancelledError` comes from elsewhere (`future.result()` of a cancelled future)."""
    return any(
        isinstance(node, (ast.Await, ast.AsyncWith, ast.AsyncFor, ast.Yield, ast.YieldFrom))
        for node in _expressions(statements)
    )


def waits_after(
    node: ast.AST, parents: Sequence[ast.AST], leaving_loop: bool = False,
    ending: Callable[[str], bool] = lambda name: False,
) -> bool:
    """Once `node` (an except clause, a `with`) completes normally, or with `leaving_loop`
    breaks out of the innermost loop around it, the function goes on to wait: a loop around
    it goes round again, or a statement on the way to the function's end (the rest of each
    enclosing block, a `try`'s `else`) can suspend. A `finally` does not count: it runs
    whether or not the exception goes on; nor do waits that are the function's own ending:
    an awaited call whose last name `ending` accepts (`await self._shutdown()`), and waiting
    for tasks it has just cancelled (`for t in tasks: t.cancel()`, then
    `await asyncio.gather(*tasks)`)."""
    child = node
    for ancestor in reversed(parents):
        if isinstance(ancestor, _DEFINITIONS + (ast.Lambda,)):
            return _goes_on(_rest_after(ancestor, child), ending)
        if isinstance(ancestor, _LOOPS) and not _holds(ancestor.orelse, child):
            if not leaving_loop:
                return True  # it goes round again
            leaving_loop = False
            rest: List[ast.stmt] = []
        else:
            rest = _rest_after(ancestor, child)
        if _goes_on(rest, ending):
            return True
        child = ancestor
    return False


_GATHERS = frozenset({"gather", "wait"})


def _goes_on(rest: Sequence[ast.stmt], ending: Callable[[str], bool]) -> bool:
    """Some statement of `rest` can suspend other than to end (see `waits_after`)."""
    cancelled: Set[str] = set()  # iterables whose every task an earlier loop of `rest` cancelled
    for stmt in rest:
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and _cancels_each(stmt):
            cancelled.add(_reference(stmt.iter) or "")
        if not can_suspend([stmt]):
            continue
        value = stmt.value if isinstance(stmt, ast.Expr) else None
        call = value.value if isinstance(value, ast.Await) else None
        if not isinstance(call, ast.Call) or any(
            isinstance(n, (ast.Await, ast.AsyncWith, ast.AsyncFor, ast.Yield, ast.YieldFrom))
            for n in _expressions([ast.Expr(value=a) for a in [*call.args, *(k.value for k in call.keywords)]])
        ):
            return True
        name = last_name(call.func) or ""
        if ending(name):
            continue
        given = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
        if name in _GATHERS and given and all(_reference(a) in cancelled - {""} for a in given):
            continue
        return True
    return False


def _cancels_each(loop: ast.AST) -> bool:
    """`for t in tasks: t.cancel()` (the loop's body cancels its target)."""
    target = getattr(loop, "target", None)
    return isinstance(target, ast.Name) and _reference(getattr(loop, "iter", None)) is not None and any(
        _cancelled(node) == _loaded(target) for node in _expressions(loop.body)  # type: ignore[attr-defined]
    )


def _holds(block: Sequence[ast.AST], child: ast.AST) -> bool:
    return any(stmt is child for stmt in block)


def _rest_after(ancestor: ast.AST, child: ast.AST) -> List[ast.stmt]:
    """The statements of `ancestor` that run after `child` completes normally."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(ancestor, name, None)
        if isinstance(block, list) and _holds(block, child):
            rest = block[[i for i, stmt in enumerate(block) if stmt is child][0] + 1:]
            if name == "body" and isinstance(ancestor, _TRY_TYPES):
                rest = [*rest, *ancestor.orelse]
            return rest
    return []


def raised_later(
    handler: ast.ExceptHandler, statement: ast.AST, function: ast.AST, hands_on: Callable[[ast.Raise], bool]
) -> bool:
    """The handler only notes the cancellation in a flag (`cancelled = True`), and the function
    raises it again on every way out after `statement` (the handler's `try`, a statement of
    the function's own body): each `return` after it, and the function's end, come right after
    `if cancelled: raise CancelledError` (`hands_on` judges the raise). The flag is bound
    nowhere else after the `try`. The cancellation is handed on, late."""
    flags = [
        t.id for stmt in handler.body if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
        for t in stmt.targets
        if isinstance(t, ast.Name) and isinstance(stmt.value, ast.Constant) and stmt.value.value is True
    ]
    body = function.body if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    if len(flags) != 1 or body is None or not _holds(body, statement):
        return False
    flag = flags[0]
    rest = body[[i for i, stmt in enumerate(body) if stmt is statement][0] + 1:]
    if not rest:
        return False
    for node in _expressions(rest):
        if isinstance(node, ast.Name) and node.id == flag and not isinstance(node.ctx, ast.Load):
            return False  # bound again: the flag may not hold any more
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return False

    def raises_first(block: Sequence[ast.stmt], index: int) -> bool:
        before = block[index - 1] if index > 0 else None
        return (
            isinstance(before, ast.If) and isinstance(before.test, ast.Name) and before.test.id == flag
            and len(before.body) == 1 and isinstance(before.body[0], ast.Raise) and hands_on(before.body[0])
        )

    if not (isinstance(rest[-1], ast.Return) or raises_first(rest, len(rest))):
        return False  # falling off the function's end without the raise
    stack: List[Sequence[ast.stmt]] = [rest]
    while stack:
        block = stack.pop()
        for index, stmt in enumerate(block):
            if isinstance(stmt, ast.Return) and not raises_first(block, index):
                return False
            if isinstance(stmt, _DEFINITIONS):
                continue
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, name, None)
                if isinstance(inner, list):
                    stack.append(inner)
            stack.extend(h.body for h in getattr(stmt, "handlers", ()) or ())
            stack.extend(c.body for c in getattr(stmt, "cases", ()) or ())
    return True


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
