"""Wall-clock instants that cross a function boundary inside one module.

A function reads the wall clock and keeps the instant (or a deadline built from it) where
another function finds it: on `self.<attr>` (read by the class's methods), on another
object's attribute (`request.state.deadline = time.time() + t`, `lease.expires = ...`), as a
keyword of a constructor call (`Lease(expires=time.time() + ttl)`), or as the return value of
a module-level function (`def deadline_in(t): return time.time() + t`). A later read of that
attribute or call is then a wall-clock instant for time_values.py, so comparing it with
`time.time()` there is DL201 (and sending it is DL202), and the read that made it is DL201
too when some other function of the module compares it with the wall clock.

Every store of the attribute must agree (a wall-clock instant read in the storing function,
or `None`): one store from elsewhere (a payload's field, a parsed header, a row) makes it
an instant of unknown origin, and the rules stay quiet. Fixes never span two functions: the
instants carry a stand-in read with no monotonic equivalent, so no fix is offered.
"""
from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Set, Tuple

from deadline_lint.analysis.clock_reads import ClockRead
from deadline_lint.analysis.function_body import function_body
from deadline_lint.analysis.scopes import FUNCTION, IMPORT, MODULE, Scope
from deadline_lint.catalog.clock import WALL

if TYPE_CHECKING:
    from deadline_lint.analysis.time_values import FunctionTimes, TimeValue, TimeValues

Key = Tuple[object, str]  # (class node id or "*" or "return", attribute or function name)
_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class KeptDeadlines:
    """Per file (built on the first question, and only when the text can hold a store)."""

    def __init__(self, times: "TimeValues", module: Scope, text: Optional[str]) -> None:
        self.times = times
        self.module = module
        self._building = False
        self._kept: Optional[Dict[Key, "TimeValue"]] = None
        self._stores: Dict[int, Key] = {}  # id of a stored value's clock read -> its key
        self._used: Dict[Key, Optional[str]] = {}
        self._functions: List[Scope] = []
        self._possible = text is None or bool(_STORE_TEXT.search(text))

    # -- what time_values asks -----------------------------------------------------------
    def value(self, expr: ast.AST, scope: Scope) -> Optional["TimeValue"]:
        """The kept instant `expr` reads (`self.deadline`, `deadline_in(5)`), or None."""
        if not self._possible or self._building:
            return None
        kept = self._build()
        if not kept:
            return None
        key = self._key_of_read(expr, scope)
        return kept.get(key) if key is not None else None

    def store_use(self, read: ClockRead) -> Optional[str]:
        """For a clock read stored for another function: the name of a function that
        compares it with the wall clock (None: not stored, or nobody does)."""
        if not self._possible or self._building:
            return None
        self._build()
        key = self._stores.get(id(read.node))
        if key is None:
            return None
        if key not in self._used:
            self._used[key] = None
            self._used[key] = self._first_user(key)
        return self._used[key]

    # -- keys --------------------------------------------------------------------------
    def _key_of_read(self, expr: ast.AST, scope: Scope) -> Optional[Key]:
        if isinstance(expr, ast.Attribute):
            return self._store_key(expr, scope)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
            bindings = scope.lookup(expr.func.id) or []
            if len(bindings) == 1 and bindings[0].scope is self.module:
                return ("return", expr.func.id)
        return None

    # -- building ----------------------------------------------------------------------
    def _build(self) -> Dict[Key, "TimeValue"]:
        if self._kept is not None:
            return self._kept
        self._building = True
        try:
            self._kept = self._collect()
        finally:
            self._building = False
        return self._kept

    def _collect(self) -> Dict[Key, "TimeValue"]:
        values: Dict[Key, List[Optional["TimeValue"]]] = {}
        for scope in self._function_scopes():
            times = self.times.function(scope)
            if times is None:
                continue
            for key, value in self._stores_of(scope):
                found = _kept_instant(times, value) if value is not None else None
                values.setdefault(key, []).append(found)
                if found is not None:
                    for read in found.reads:
                        self._stores[id(read.node)] = key
        kept: Dict[Key, "TimeValue"] = {}
        for key, stored in values.items():
            agreed = [v for v in stored if v is not None]
            if not agreed or len(agreed) != len(stored):
                continue
            first = agreed[0]
            if any((v.role, v.unit) != (first.role, first.unit) for v in agreed):
                continue
            reads = tuple(replace(r, monotonic=None) for v in agreed for r in v.reads)
            kept[key] = type(first)(first.role, WALL, first.unit, reads, True)
        self._stores = {read: key for read, key in self._stores.items() if key in kept}
        return kept

    def _stores_of(self, scope: Scope) -> Iterator[Tuple[Key, Optional[ast.expr]]]:
        """Each store of a key with its value (None: a store whose value cannot count, which
        still makes the key's stores disagree)."""
        body = function_body(scope)
        targets: List[Tuple[ast.expr, ast.expr]] = []
        for node in body.nodes(ast.Assign):
            targets.extend((target, node.value) for target in node.targets if isinstance(target, ast.Attribute))
        for annotated in body.nodes(ast.AnnAssign):
            if isinstance(annotated.target, ast.Attribute) and annotated.value is not None:
                targets.append((annotated.target, annotated.value))
        for target, value in targets:
            if _is_placeholder(value):
                continue  # `self.deadline = None`, `self.last = 0.0`: not set yet
            key = self._store_key(target, scope)  # type: ignore[arg-type]
            if key is not None:
                yield key, value if key[0] != "*" or self._kept_object(target.value, scope) else None  # type: ignore[attr-defined]
        for call in body.nodes(ast.Call):
            if call.keywords and self._constructs_module_class(call, scope):
                for keyword in call.keywords:
                    if keyword.arg is not None and not _is_placeholder(keyword.value):
                        yield ("*", keyword.arg), keyword.value
        if scope.parent is self.module and isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for returned in body.nodes(ast.Return):
                if returned.value is not None:
                    yield ("return", scope.node.name), returned.value

    def _store_key(self, target: ast.Attribute, scope: Scope) -> Optional[Key]:
        owner = _self_class(target.value, scope)
        if owner is not None:
            return (id(owner.node), target.attr)
        if _on_a_module(target.value, scope):
            return None  # a module's global (`settings.LAST_CHECK`): first set who knows where
        return ("*", target.attr)

    def _kept_object(self, receiver: ast.expr, scope: Scope) -> bool:
        """Another object's attribute counts as a place to keep an instant when the object is
        request state (`request.state`) or one this module's class built (`lease =
        Lease(...)`): an ORM row's `updated_at` is persisted, and read by others."""
        if isinstance(receiver, ast.Attribute) and receiver.attr == "state":
            return True
        if not isinstance(receiver, ast.Name):
            return False
        bindings = scope.lookup(receiver.id) or []
        return bool(bindings) and all(
            isinstance(b.value, ast.Call) and self._constructs_module_class(b.value, b.scope) for b in bindings
        )

    def _constructs_module_class(self, call: ast.Call, scope: Scope) -> bool:
        if not isinstance(call.func, ast.Name):
            return False
        bindings = scope.lookup(call.func.id) or []
        return len(bindings) == 1 and isinstance(bindings[0].value, ast.ClassDef) and bindings[0].scope is self.module

    def _function_scopes(self) -> List[Scope]:
        if self._functions:
            return self._functions
        resolver = self.times.resolver
        pending: List[Tuple[ast.AST, Scope]] = [(child, self.module) for child in _children(self.module.node)]
        while pending:
            node, parent = pending.pop()
            scope = resolver.scope_of(node, parent)
            if scope.kind == FUNCTION:
                self._functions.append(scope)
            pending.extend((child, scope) for child in _children(node))
        return self._functions

    def _first_user(self, key: Key) -> Optional[str]:
        """A function whose deadline uses read the kept value on the wall clock."""
        kept = self._build().get(key)
        if kept is None:
            return None
        kept_reads = {id(r.node) for r in kept.reads}
        for scope in self._function_scopes():
            times = self.times.function(scope)
            if times is None:
                continue
            for use in times.deadline_uses:
                if use.clock == WALL and use.local and any(id(r.node) in kept_reads for r in use.reads):
                    if any(id(r.node) not in kept_reads for r in use.reads):  # also a read of its own
                        return getattr(scope.node, "name", "<lambda>")
        return None


# An attribute, keyword or return statement on a line that calls a wall clock: the only text
# a kept instant can come from (most files have none, and skip the walk).
_STORE_TEXT = re.compile(
    r"(?:\.\w+\s*(?::[^=\n]*)?=(?!=)|[(,]\s*\w+=(?!=)|\breturn\b)[^\n]*\b(?:time|now|utcnow|time_ns)\s*\("
)


def _kept_instant(times: "FunctionTimes", value: ast.expr) -> Optional["TimeValue"]:
    """The value as a kept wall-clock instant: read here, on the wall clock, an instant or a
    deadline (not a span: an elapsed time means nothing later)."""
    from deadline_lint.analysis.time_values import DEADLINE, INSTANT

    found = times.value(value)
    if found is None or found.clock != WALL or not found.local or found.role not in (INSTANT, DEADLINE):
        return None
    if not found.reads or found.unit not in ("s", "ns", "datetime"):
        return None
    return found


def _self_class(receiver: ast.expr, scope: Scope) -> Optional[Scope]:
    """The class whose instance `receiver` is, when it is a method's `self` (or `cls`)."""
    method: Optional[Scope] = scope
    while method is not None and method.kind == FUNCTION and method.enclosing_class is None:
        method = method.parent
    if method is None or method.kind != FUNCTION or method.enclosing_class is None:
        return None
    args = method.node.args  # type: ignore[attr-defined]
    positional = [*args.posonlyargs, *args.args]
    if not positional or not isinstance(receiver, ast.Name) or receiver.id != positional[0].arg:
        return None
    return method.enclosing_class


def _on_a_module(receiver: ast.expr, scope: Scope) -> bool:
    """`settings.X`, `pkg.sub.X`: the receiver is (an attribute of) an imported name."""
    while isinstance(receiver, ast.Attribute):
        receiver = receiver.value
    if not isinstance(receiver, ast.Name):
        return False
    bindings = scope.lookup(receiver.id) or []
    return any(b.kind == IMPORT for b in bindings)


def _children(node: ast.AST) -> Iterator[ast.AST]:
    """The functions and classes defined directly in `node`'s body (at any statement depth)."""
    stack: List[ast.AST] = list(getattr(node, "body", []) or [])
    seen: Set[int] = set()
    while stack:
        child = stack.pop()
        if id(child) in seen:
            continue
        seen.add(id(child))
        if isinstance(child, _SCOPE_NODES):
            yield child
            continue
        if isinstance(child, (ast.expr, ast.Lambda)):
            continue
        for value in ast.iter_child_nodes(child):
            if isinstance(value, (ast.stmt, ast.excepthandler, ast.match_case)):
                stack.append(value)


def _is_placeholder(node: Optional[ast.AST]) -> bool:
    """`None`, or the zero instant (`0`, `0.0`: "never", so the first check passes)."""
    if not isinstance(node, ast.Constant):
        return False
    return node.value is None or type(node.value) in (int, float) and node.value == 0


__all__ = ["KeptDeadlines", "MODULE"]
