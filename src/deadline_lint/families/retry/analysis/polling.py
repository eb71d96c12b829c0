"""Polling, not retrying: a loop's attempt that only waits on this process.

A `try` around `q.get(timeout=1)`, `event.wait()`, `fut.result(timeout=1)` or
`await asyncio.wait_for(q.get(), 1)`, whose handler catches the timeout and goes round again,
waits again for something that may arrive; it sends nothing downstream, so it is not a retry
(DL301, DL303). The calls that count as waits are catalog data (retry.yaml `local_waits`).

    only_waits_locally(ctx, attempt, qualname) -> bool
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Iterator, List, Optional, Set

from deadline_lint.catalog.retry import LocalWaits
from deadline_lint.families.outbound.analysis.outbound import outbound_call

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_QUEUE_KEYWORDS = frozenset({"block", "timeout"})
_WAIT_KEYWORDS = frozenset({"timeout", "block", "blocking", "n", "size", "bufsize", "separator"})
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)  # their bodies run elsewhere


def only_waits_locally(
    ctx: "FileView", attempt: ast.Try, waits: LocalWaits, qualname: Callable[[ast.expr], Optional[str]]
) -> bool:
    """The attempt (a `try` body) waits on this process and calls nothing that may send: no
    outbound call the catalog knows, no method that sends (`sendall`, `request`), nothing
    awaited but a local wait."""
    calls: List[ast.Call] = []
    awaited: Set[int] = set()
    for statement in attempt.body:
        for node in _inside(statement):
            if isinstance(node, ast.Call):
                calls.append(node)
            elif isinstance(node, ast.Await):
                awaited.add(id(node.value))
    waited_on: Set[int] = set()
    found = False
    for call in calls:
        if id(call) in waited_on:
            continue
        if qualname(call.func) in waits.wrappers:
            if not _waits_on_local(call, waits, qualname, waited_on):
                return False
            found = True
        elif _local_wait(call, waits):
            found = True
        elif _sends(call, waits) or id(call) in awaited or outbound_call(ctx, call) is not None:
            return False
    return found


def _waits_on_local(
    wrapper: ast.Call, waits: LocalWaits, qualname: Callable[[ast.expr], Optional[str]], waited_on: Set[int]
) -> bool:
    """What `wrapper` waits on is a local wait, or an existing future, task or event (waiting
    again on one sends nothing); a wrapper inside a wrapper is looked through."""
    inner = wrapper.args[0] if wrapper.args else None
    if isinstance(inner, (ast.Name, ast.Attribute)):
        return True
    if not isinstance(inner, ast.Call):
        return False
    waited_on.add(id(inner))
    if _local_wait(inner, waits):
        return True
    return qualname(inner.func) in waits.wrappers and _waits_on_local(inner, waits, qualname, waited_on)


def _local_wait(call: ast.Call, waits: LocalWaits) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute) or isinstance(func.value, ast.Constant):
        return False
    if func.attr in waits.queue_methods:
        return _queue_form(call)
    if func.attr not in waits.methods:
        return False
    if len(call.args) > 1 or any(k.arg not in _WAIT_KEYWORDS for k in call.keywords):
        return False
    return not call.args or isinstance(call.args[0], (ast.Constant, ast.Name, ast.Attribute, ast.BinOp))


def _queue_form(call: ast.Call) -> bool:
    """`q.get()`, `q.get(timeout=1)`, `q.get(True, 1)`: not `requests.get(url)` nor `d.get(key)`."""
    if any(k.arg not in _QUEUE_KEYWORDS for k in call.keywords):
        return False
    if not call.args:
        return True
    first = call.args[0]
    return isinstance(first, ast.Constant) and isinstance(first.value, bool) and len(call.args) <= 2


def _sends(call: ast.Call, waits: LocalWaits) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return name in waits.sends


def _inside(node: ast.AST) -> Iterator[ast.AST]:
    """The node and what it holds, not what nested defs, lambdas and classes hold, in pre-order
    (a wrapper before the wait it wraps). A loop, not recursion: deeply nested code is input."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        children = [c for c in ast.iter_child_nodes(current) if not isinstance(c, _NESTED)]
        stack.extend(reversed(children))
