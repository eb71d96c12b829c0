"""The values of one function: what each expression and each local name holds (an instant, a
deadline, a span; see time_values.py for the analysis as a whole). `FunctionTimes`
(function_times.py) adds where they are used as deadlines and whether they leave the function."""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Protocol, Set, Tuple

from deadline_lint.families.shared.time.clock_catalog import ClockCatalog
from deadline_lint.families.shared.time.clock_reads import ClockRead
from deadline_lint.families.shared.time.kept_deadlines import KeptDeadlines
from deadline_lint.families.shared.time.time_value import (
    DEADLINE,
    INSTANT,
    PASS_THROUGH,
    SPAN,
    TimeValue,
    agree,
    combine,
    is_number,
    with_local,
)
from deadline_lint.semantics.local.declared import is_none
from deadline_lint.semantics.local.function_body import function_body
from deadline_lint.semantics.local.scopes import ASSIGN, FUNCTION, PARAM, Scope


class TimeAnalysis(Protocol):
    """What a function's values ask of the file's analysis (`TimeValues`, time_values.py),
    named here so that module can build them without this one importing it back."""

    clocks: ClockCatalog

    def clock_read(self, call: ast.AST, scope: Scope) -> Optional[ClockRead]: ...
    def is_duration_call(self, call: ast.Call, scope: Scope) -> bool: ...
    def is_sleep(self, call: ast.Call, scope: Scope) -> bool: ...
    def deadline_parameter(self, expr: ast.AST, scope: Scope) -> Optional[TimeValue]: ...
    def function(self, scope: Scope) -> Optional["FunctionValues"]: ...
    def kept(self, scope: Scope) -> KeptDeadlines: ...
    def parameter_instant(self, name: str, scope: Scope) -> Optional[TimeValue]: ...


class FunctionValues:
    """What each expression and local name of one function holds (see time_values.py)."""

    def __init__(self, analysis: TimeAnalysis, scope: Scope) -> None:
        self.analysis = analysis
        self.scope = scope
        self._values: Dict[int, Tuple[ast.AST, Optional[TimeValue]]] = {}
        self._names: Optional[Dict[str, TimeValue]] = None
        self._compared: Optional[Dict[str, TimeValue]] = None
        self._computing: Set[str] = set()
        self._parents: Optional[Dict[int, ast.AST]] = None
        self._loads: Dict[str, List[ast.Name]] = {}
        self._nested: Set[int] = set()  # ids of nodes inside nested functions and classes
        self._compares: List[ast.Compare] = []
        self._arithmetic: List[ast.BinOp] = []
        self._calls: List[ast.Call] = []

    # -- values ---------------------------------------------------------------------
    def value(self, expr: Optional[ast.AST]) -> Optional[TimeValue]:
        if expr is None:
            return None
        if self._compared is None:
            self._compared_names()
        known = self._values.get(id(expr))
        if known is not None:
            return known[1]
        found = self._value(expr)
        self._values[id(expr)] = (expr, found)
        return found

    def _value(self, expr: ast.AST) -> Optional[TimeValue]:
        if isinstance(expr, ast.Call):
            return self._call_value(expr)
        if isinstance(expr, ast.Name):
            found = self._name_value(expr.id)
            if found is None and self._compared is not None:
                found = self._compared.get(expr.id)
            return found
        if isinstance(expr, ast.BinOp):
            return self._binop_value(expr)
        if isinstance(expr, ast.Attribute):
            return self.analysis.kept(self.scope).value(expr, self.scope)  # `self.deadline`
        if isinstance(expr, ast.IfExp):
            sides = [s for s in (expr.body, expr.orelse) if not is_none(s)]
            values = [self.value(s) for s in sides]
            return agree(values)
        return None

    def _call_value(self, call: ast.Call) -> Optional[TimeValue]:
        read = self.analysis.clock_read(call, self.scope)
        if read is not None:
            if read.unit == "text":
                return None
            return TimeValue(INSTANT, read.clock, read.unit, (read,), True)
        if isinstance(call.func, ast.Name):
            kept = self.analysis.kept(self.scope).value(call, self.scope)  # `deadline_in(5)`
            if kept is not None:
                return kept
        func = call.func
        if isinstance(func, ast.Name) and func.id in PASS_THROUGH and not call.keywords:
            values = [self.value(a) for a in call.args]
            known = [v for v in values if v is not None]
            if not known:
                return None
            merged = agree(known)
            unknown = any(v is None and not is_number(a) for v, a in zip(values, call.args))
            if merged is not None and merged.role != SPAN and unknown and func.id in ("min", "max"):
                # `min(deadline, other)`: the other is an instant from who knows where.
                # (`min(remaining, cap)` is a span capped by a duration: still local.)
                return with_local(merged, False)
            return merged
        if isinstance(func, ast.Attribute) and not call.args and not call.keywords:
            inner = self.value(func.value)
            if inner is None:
                return None
            if func.attr == "total_seconds" and inner.role == SPAN:
                return TimeValue(SPAN, inner.clock, "s", inner.reads, inner.local)
            method = self.analysis.clocks.instant_methods.get(func.attr)
            if method is not None and method.unit != "text" and inner.unit == "datetime" and inner.role != SPAN:
                return TimeValue(inner.role, inner.clock, method.unit, inner.reads, inner.local)
        return None

    def _binop_value(self, expr: ast.BinOp) -> Optional[TimeValue]:
        left, right = self.value(expr.left), self.value(expr.right)
        op = expr.op
        if isinstance(op, (ast.Mult, ast.Div, ast.FloorDiv)):
            # Scaling (`time.time() * 1000`, `elapsed / 60`): same role, another unit of it.
            side, other = (left, expr.right) if left is not None else (right, expr.left)
            if side is None or self.value(other) is not None:
                return None
            return TimeValue(side.role, side.clock, "scaled", side.reads, side.local)
        if isinstance(op, ast.Add):
            if left is not None and right is not None:
                if left.role == SPAN and right.role == SPAN and left.clock == right.clock:
                    return combine(SPAN, left, right)
                if SPAN in (left.role, right.role) and left.clock == right.clock:
                    point = left if left.role != SPAN else right
                    return combine(DEADLINE, point, left if point is right else right)
                return None
            known = left or right
            if known is None or self._aligned(expr.right if left is not None else expr.left):
                return None
            role = DEADLINE if known.role != SPAN else SPAN
            return TimeValue(role, known.clock, known.unit, known.reads, known.local)
        if isinstance(op, ast.Sub):
            if left is not None and right is not None:
                if left.clock != right.clock:
                    return None
                if left.role != SPAN and right.role != SPAN:
                    return combine(SPAN, left, right)
                if left.role != SPAN:
                    return combine(DEADLINE, left, right)
                return combine(SPAN, left, right) if right.role == SPAN else None
            if left is not None and left.role != SPAN:
                if self._is_duration(expr.right):
                    return TimeValue(DEADLINE, left.clock, left.unit, left.reads, left.local)
                # `time.time() - created`: the age of an instant that may come from elsewhere.
                return TimeValue(SPAN, left.clock, left.unit, left.reads, False)
            if right is not None and right.role != SPAN:
                # `retry_at - time.time()`: the time left until an instant from elsewhere.
                return TimeValue(SPAN, right.clock, right.unit, right.reads, False)
            if left is not None:  # span - x
                return left
            if right is not None and right.role == SPAN and self._is_duration_like(expr.left):
                # `period - (time.time() - start)`: what is left of a period.
                return right
        return None

    def _aligned(self, expr: ast.expr) -> bool:
        """The expression takes an instant modulo a period (`ONE_HOUR - time.time() %
        ONE_HOUR`): an instant plus it is the next boundary of the calendar, which the wall
        clock is the right source for."""
        for node in ast.walk(expr):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
                value = self.value(node.left)
                if value is not None and value.role == INSTANT:
                    return True
        return False

    def _is_duration_like(self, expr: ast.expr) -> bool:
        """A number, or a name or attribute holding no time value we know of (`period`,
        `self.interval`): not an instant."""
        return self._is_duration(expr) or isinstance(expr, (ast.Name, ast.Attribute)) and self.value(expr) is None

    def _is_duration(self, expr: ast.expr) -> bool:
        """A number, a timedelta, or arithmetic of those: never an instant."""
        if is_number(expr):
            return True
        if isinstance(expr, ast.Call):
            return self.analysis.is_duration_call(expr, self.scope)
        if isinstance(expr, ast.BinOp):
            return self._is_duration(expr.left) and self._is_duration(expr.right)
        return False

    # -- names ------------------------------------------------------------------------
    @property
    def names(self) -> Dict[str, TimeValue]:
        if self._names is None:
            self._names = {}
            bindings = self.scope.bindings()
            for name in bindings:
                value = self._name_value(name)
                if value is not None:
                    self._names[name] = value
            for name, value in self._compared_names().items():
                self._names.setdefault(name, value)
        return self._names

    def _name_value(self, name: str) -> Optional[TimeValue]:
        if self._compared is None:
            # Compared names first, as `value` does: worked out later, from inside a name's
            # own computation, they would meet its cycle guard and memoise its None.
            self._compared_names()
        own = self.scope.bindings().get(name)
        if own is None:
            found = self.scope.lookup(name)
            if not found or found[0].scope.kind != FUNCTION or found[0].scope is self.scope:
                return None
            outer = self.analysis.function(found[0].scope)
            return outer._name_value(name) if outer is not None else None
        key = f"time_values.name:{name}"
        if key in self.scope.facts:
            stored = self.scope.facts[key]  # stored below, by this method: a value or None
            return stored if isinstance(stored, TimeValue) else None
        if name in self._computing:
            return None  # `x = x + 1`: a cycle says nothing
        self._computing.add(name)
        try:
            values: List[Optional[TimeValue]] = []
            if len(own) == 1 and own[0].kind == PARAM:
                values = [self.analysis.parameter_instant(name, self.scope)]
            for binding in own if not values else ():
                # (an ASSIGN binding's value is always an expression)
                if binding.kind != ASSIGN or not isinstance(binding.value, ast.expr):
                    values = [None]
                    break
                if is_none(binding.value):  # `deadline = None` placeholders
                    continue
                values.append(self.value(binding.value))
            result = agree(values) if values and all(v is not None for v in values) else None
        finally:
            self._computing.discard(name)
        self.scope.facts[key] = result
        return result

    def _compared_names(self) -> Dict[str, TimeValue]:
        """Names with no time value of their own, compared with an instant or a deadline."""
        if self._compared is not None:
            return self._compared
        self._compared = {}  # while looking, values know no compared names
        self._walk()
        found: Dict[str, TimeValue] = {}
        for compare in self._compares:
            operands = [compare.left, *compare.comparators]
            for a, b in zip(operands, operands[1:]):
                for point, other in ((a, b), (b, a)):
                    value = self.value(point)
                    if value is None or value.role == SPAN or not isinstance(other, ast.Name):
                        continue
                    if self._name_value(other.id) is None and other.id in self.scope.bindings():
                        found.setdefault(other.id, TimeValue(DEADLINE, value.clock, value.unit, (), False))
        # Values asked for before this point did not know these names: forget them.
        self._values.clear()
        self._compared = found
        return found

    # -- the function body, walked once ---------------------------------------------------
    def _walk(self) -> None:
        if self._parents is not None:
            return
        body = function_body(self.scope)
        self._parents, self._loads, self._nested = body.parents, body.loads, body.nested
        self._compares = body.nodes(ast.Compare)
        self._arithmetic = body.nodes(ast.BinOp)
        self._calls = body.nodes(ast.Call)
