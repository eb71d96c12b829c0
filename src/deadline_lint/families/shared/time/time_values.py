"""Time values: which expressions and local names inside a function hold an instant read from
a clock, a deadline, or a span between two instants, and on which clock.

The clocks are data (catalog `clock.yaml`, typed in `catalog/clock.py`): `time.time()`,
`time.time_ns()`, `datetime.now()/utcnow()/today()` (any import spelling or alias, e.g.
`from time import time as now`) read the WALL clock; `time.monotonic()`, `perf_counter` and
their `_ns` variants and an event loop's `loop.time()` read a MONOTONIC one.

API (ask through the context: `times = ctx.analysis(TimeValues)`):

- `times.clock_read(call, scope) -> ClockRead | None`: the call reads a clock
  (`clock_reads.py`). `datetime.now().timestamp()` is one read (in seconds, with a monotonic
  equivalent).
- `times.function(scope) -> FunctionTimes | None` (None outside a function), and
  `time_value(ctx, expr)` / `function_times(ctx)` for where the walk is. A `FunctionTimes`
  answers, within one function (closures see their enclosing function's names):
    - `value(expr) -> TimeValue | None`: what the expression holds;
    - `names -> {name: TimeValue}`: names bound by simple local assignments (`x = ...`, all
      bindings agreeing; `None` placeholders are ignored) plus names only known because they are
      compared with an instant (`while time.time() < deadline`: `deadline` is a DEADLINE with
      `local=False`);
    - `deadline_uses -> (DeadlineUse, ...)`: where instants are compared with deadlines,
      remaining time is computed (`deadline - now`), a span is checked against a duration
      (`time.time() - start > timeout`), or a span is passed as a timeout or to a sleep;
    - `escapes(name)` / `expression_escapes(node)`: whether a value can leave the function
      (returned, stored on an attribute or in a container, passed to a call other than
      `min/max/abs/float/int/round`, a sleep or a `*timeout*` keyword, formatted, logged) or is
      only compared and used in arithmetic here.
- `is_absolute_instant(ctx, expr)`: the expression holds an absolute wall-clock instant or a
  deadline derived from one (`time.time() + 5`, `datetime.now()`, `x.isoformat()`,
  `x.timestamp()`): for checks on what goes on the wire.

A `TimeValue` has a `role` (INSTANT: a clock reading; DEADLINE: an instant shifted by a duration
or compared with one; SPAN: the difference of two instants, remaining or elapsed), a `clock`
(WALL / MONOTONIC), a `unit` (s, ns, datetime), the clock `reads` it derives from, and `local`:
True when every instant in it was read from this process's clock inside the function (False
when an instant from elsewhere took part: a parameter, an attribute, a parsed header, a token's
`exp`). Anything the analysis cannot show is None: rules built on it stay quiet.
"""
from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Sequence, Set, Tuple, cast

from deadline_lint.families.shared.time.clock_catalog import MONOTONIC, WALL
from deadline_lint.families.shared.time.clock_reads import ClockRead, ClockReads
from deadline_lint.families.shared.time.kept_deadlines import KeptDeadlines
from deadline_lint.families.shared.time.parameter_instants import ParameterInstants
from deadline_lint.semantics.local.declared import is_none
from deadline_lint.semantics.local.function_body import function_body
from deadline_lint.semantics.local.scopes import ASSIGN, FUNCTION, PARAM, Scope

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import AnalysisInputs, FileView

INSTANT, DEADLINE, SPAN = "instant", "deadline", "span"
# Kinds of DeadlineUse.
COMPARE, REMAINING, SPAN_CHECK, TIMEOUT = "compare", "remaining", "span-check", "timeout"

_PASS_THROUGH = frozenset({"min", "max", "abs", "float", "int", "round"})
__all__ = [
    "INSTANT", "DEADLINE", "SPAN", "WALL", "MONOTONIC", "COMPARE", "REMAINING", "SPAN_CHECK", "TIMEOUT",
    "ClockRead", "TimeValue", "DeadlineUse", "FunctionTimes", "TimeValues",
    "time_value", "function_times", "is_absolute_instant",
]


@dataclass(frozen=True)
class TimeValue:
    role: str  # INSTANT / DEADLINE / SPAN
    clock: str  # WALL / MONOTONIC
    unit: str  # s / ns / datetime
    reads: Tuple[ClockRead, ...]
    local: bool


@dataclass(frozen=True)
class DeadlineUse:
    """A place where time values are used as a deadline or remaining time."""

    kind: str  # COMPARE / REMAINING / SPAN_CHECK / TIMEOUT
    node: ast.AST
    clock: str
    reads: Tuple[ClockRead, ...]
    local: bool  # every instant involved was read here (else: compared with one from elsewhere)


def _merge_reads(*groups: Iterable[ClockRead]) -> Tuple[ClockRead, ...]:
    seen: Dict[int, ClockRead] = {}
    for group in groups:
        for read in group:
            seen.setdefault(id(read.node), read)
    return tuple(seen.values())




def _is_number(expr: ast.expr) -> bool:
    if isinstance(expr, ast.UnaryOp):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and type(expr.value) in (int, float)


class TimeValues(ClockReads):
    """Per file: clock reads by call (see ClockReads) and one FunctionTimes per function."""

    def __init__(self, ctx: "AnalysisInputs") -> None:
        super().__init__(ctx)
        self._source = getattr(ctx, "source", None)
        profile = getattr(ctx, "profile", None)
        self.deadline_names = frozenset(profile.budget.deadline_names) if profile is not None else frozenset()
        self._kept: Optional[KeptDeadlines] = None
        self._parameters: Optional[ParameterInstants] = None
        # Weakly: the context holds this analysis, and a strong reference back is a cycle.
        self._ctx = weakref.ref(ctx) if hasattr(ctx, "analysis") else None
        self._stand_ins: Dict[str, ClockRead] = {}

    def kept(self, scope: Scope) -> KeptDeadlines:
        """Instants kept across function boundaries in this module (kept_deadlines.py)."""
        if self._kept is None:
            self._kept = KeptDeadlines(self, scope.module, self._source)
        return self._kept

    def parameter_instant(self, name: str, scope: Scope) -> Optional[TimeValue]:
        """A parameter every caller gives a wall-clock instant (parameter_instants.py)."""
        if self._parameters is None:
            ctx = self._ctx() if self._ctx is not None else None
            self._parameters = ParameterInstants(self, scope.module, self.resolver, ctx)
        return cast(Optional[TimeValue], self._parameters.value(name, scope))

    def deadline_parameter(self, expr: ast.AST, scope: Scope) -> Optional[TimeValue]:
        """A parameter the profile names a deadline instant (`deadline`, `deadline_at`,
        `expires_at`): a wall-clock deadline for the comparisons of DL201, from the caller
        (a stand-in read with no monotonic equivalent: no fix crosses into the caller)."""
        if not isinstance(expr, ast.Name) or expr.id not in self.deadline_names:
            return None
        bindings = scope.lookup(expr.id) or []
        if len(bindings) != 1 or bindings[0].kind != "param":
            return None
        read = self._stand_ins.get(expr.id)
        if read is None:
            stand_in = ast.Call(func=ast.Name(id=expr.id, ctx=ast.Load()), args=[], keywords=[])
            read = self._stand_ins[expr.id] = ClockRead(stand_in, WALL, "s", "parameter", None)
        return TimeValue(DEADLINE, WALL, "s", (read,), True)

    # -- per function -------------------------------------------------------------
    def function(self, scope: Scope) -> Optional["FunctionTimes"]:
        if scope.kind != FUNCTION:
            return None  # module and class bodies: not a function's local time
        found = scope.facts.get("time_values")
        if not isinstance(found, FunctionTimes):  # only this analysis stores under the key
            found = scope.facts["time_values"] = FunctionTimes(self, scope)
        return found


class FunctionTimes:
    """The time values of one function; see the module docstring."""

    def __init__(self, analysis: TimeValues, scope: Scope) -> None:
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
        self._uses: Optional[Tuple[DeadlineUse, ...]] = None
        self._escaping: Dict[str, bool] = {}
        self._links: Optional[Dict[int, Set[int]]] = None
        self._read_by_id: Optional[Dict[int, ClockRead]] = None

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
            return _agree(values)
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
        if isinstance(func, ast.Name) and func.id in _PASS_THROUGH and not call.keywords:
            values = [self.value(a) for a in call.args]
            known = [v for v in values if v is not None]
            if not known:
                return None
            merged = _agree(known)
            unknown = any(v is None and not _is_number(a) for v, a in zip(values, call.args))
            if merged is not None and merged.role != SPAN and unknown and func.id in ("min", "max"):
                # `min(deadline, other)`: the other is an instant from who knows where.
                # (`min(remaining, cap)` is a span capped by a duration: still local.)
                return _with_local(merged, False)
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
                    return _combine(SPAN, left, right)
                if SPAN in (left.role, right.role) and left.clock == right.clock:
                    point = left if left.role != SPAN else right
                    return _combine(DEADLINE, point, left if point is right else right)
                return None
            known = left or right
            if known is None:
                return None
            role = DEADLINE if known.role != SPAN else SPAN
            return TimeValue(role, known.clock, known.unit, known.reads, known.local)
        if isinstance(op, ast.Sub):
            if left is not None and right is not None:
                if left.clock != right.clock:
                    return None
                if left.role != SPAN and right.role != SPAN:
                    return _combine(SPAN, left, right)
                if left.role != SPAN:
                    return _combine(DEADLINE, left, right)
                return _combine(SPAN, left, right) if right.role == SPAN else None
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

    def _is_duration_like(self, expr: ast.expr) -> bool:
        """A number, or a name or attribute holding no time value we know of (`period`,
        `self.interval`): not an instant."""
        return self._is_duration(expr) or isinstance(expr, (ast.Name, ast.Attribute)) and self.value(expr) is None

    def _is_duration(self, expr: ast.expr) -> bool:
        """A number, a timedelta, or arithmetic of those: never an instant."""
        if _is_number(expr):
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
            return cast(Optional[TimeValue], self.scope.facts[key])  # stored below, by this method
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
            result = _agree(values) if values and all(v is not None for v in values) else None
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

    # -- where time values are used as deadlines ------------------------------------------
    @property
    def deadline_uses(self) -> Tuple[DeadlineUse, ...]:
        if self._uses is None:
            self._walk()
            uses: List[DeadlineUse] = []
            for compare in self._compares:
                uses.extend(self._compare_uses(compare))
            for binop in self._arithmetic:
                if not isinstance(binop.op, ast.Sub):
                    continue
                left, right = self.value(binop.left), self.value(binop.right)
                if right is not None and (left is None or not left.local):
                    left = self.analysis.deadline_parameter(binop.left, self.scope) or left
                if left is not None and right is not None and left.role == DEADLINE and right.role == INSTANT:
                    if left.clock == right.clock:
                        reads = _merge_reads(left.reads, right.reads)
                        uses.append(DeadlineUse(REMAINING, binop, left.clock, reads, left.local and right.local))
            for call in self._calls:
                uses.extend(self._timeout_uses(call))
            self._uses = tuple(uses)
        return self._uses

    def _compare_uses(self, compare: ast.Compare) -> Iterable[DeadlineUse]:
        operands = [compare.left, *compare.comparators]
        for a, b in zip(operands, operands[1:]):
            first, second = self.value(a), self.value(b)
            if first is None and second is None:
                continue
            # `time.time() > deadline`: a parameter the profile names a deadline instant.
            # (A parameter every caller gives an instant already has its callers' reads.)
            given_a = self.analysis.deadline_parameter(a, self.scope) if second is not None else None
            given_b = self.analysis.deadline_parameter(b, self.scope) if first is not None else None
            given_a = given_a if first is None or not first.local else None
            given_b = given_b if second is None or not second.local else None
            if given_a is not None:
                first = given_a
            elif given_b is not None:
                second = given_b
            if first is not None and second is not None:
                if first.clock != second.clock:
                    continue
                roles = {first.role, second.role}
                if roles <= {INSTANT, DEADLINE} and DEADLINE in roles or roles == {SPAN}:
                    reads = _merge_reads(first.reads, second.reads)
                    kind = SPAN_CHECK if roles == {SPAN} else COMPARE
                    yield DeadlineUse(kind, compare, first.clock, reads, first.local and second.local)
                continue
            value, other = (first, b) if first is not None else (second, a)
            assert value is not None
            if value.role == SPAN:
                # `time.time() - start > timeout`: elapsed or remaining time checked against a duration.
                yield DeadlineUse(SPAN_CHECK, compare, value.clock, value.reads, value.local)
            elif not is_none(other):
                # An instant compared with something from elsewhere (a token's `exp`).
                yield DeadlineUse(COMPARE, compare, value.clock, value.reads, False)

    def _timeout_uses(self, call: ast.Call) -> Iterable[DeadlineUse]:
        passed = [kw.value for kw in call.keywords if kw.arg and "timeout" in kw.arg.lower()]
        if call.args and self.analysis.is_sleep(call, self.scope):
            passed.append(call.args[0])
        for expr in passed:
            value = self.value(expr)
            if value is not None and value.role == SPAN:
                yield DeadlineUse(TIMEOUT, call, value.clock, value.reads, value.local)

    def kept_instant(self, expr: ast.expr) -> Optional[TimeValue]:
        """The expression as an instant worth keeping for another function (kept_deadlines):
        read here, on the wall clock, an instant or a deadline (not a span: an elapsed time
        means nothing later), in seconds, nanoseconds or a datetime."""
        found = self.value(expr)
        if found is None or found.clock != WALL or not found.local or found.role not in (INSTANT, DEADLINE):
            return None
        return found if found.reads and found.unit in ("s", "ns", "datetime", "scaled") else None

    def parent_of(self, node: ast.AST) -> Optional[ast.AST]:
        """The node's parent inside this function (None at its top or outside it)."""
        self._walk()
        assert self._parents is not None
        return self._parents.get(id(node))

    def linked_reads(self, read: ClockRead) -> Tuple[ClockRead, ...]:
        """Every clock read combined with `read` (through arithmetic, names and comparisons)
        anywhere in the function: swapping the clock of one means swapping all of them."""
        self._walk()
        if self._links is None:
            links: Dict[int, Set[int]] = {}
            by_id: Dict[int, ClockRead] = {}
            groups = [self.value(b) for b in self._arithmetic] + list(self.deadline_uses)
            for group in groups:
                reads = group.reads if group is not None else ()
                for r in reads:
                    by_id[id(r.node)] = r
                    links.setdefault(id(r.node), set()).update(id(o.node) for o in reads)
            self._links, self._read_by_id = links, by_id
        reads_by_id = self._read_by_id
        assert reads_by_id is not None
        found, todo = {id(read.node)}, [id(read.node)]
        while todo:
            for other in self._links.get(todo.pop(), ()):
                if other not in found:
                    found.add(other)
                    todo.append(other)
        ordered = sorted(found, key=lambda i: _position(reads_by_id.get(i, read).node))
        return tuple(reads_by_id.get(i, read) for i in ordered)

    # -- does a value leave the function? -----------------------------------------------------
    def escapes(self, name: str) -> bool:
        """Some use of `name` can carry its value out of the function."""
        known = self._escaping.get(name)
        if known is not None:
            return known
        self._walk()
        self._escaping[name] = False  # a cycle (`x = x + d`) adds nothing
        result = any(self.expression_escapes(load) for load in self._loads.get(name, ()))
        self._escaping[name] = result
        return result

    def expression_escapes(self, node: ast.AST) -> bool:
        self._walk()
        assert self._parents is not None
        if id(node) in self._nested:
            return True  # used by a closure: it may run anywhere
        child = node
        while True:
            parent = self._parents.get(id(child))
            if parent is None:
                return True
            if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.BoolOp)):
                child = parent
            elif isinstance(parent, ast.IfExp):
                if child is parent.test:
                    return False
                child = parent
            elif isinstance(parent, (ast.Compare, ast.If, ast.While, ast.Assert, ast.Expr)):
                return False
            elif isinstance(parent, ast.keyword):
                return not (parent.arg and "timeout" in parent.arg.lower())
            elif isinstance(parent, ast.Call):
                if child is parent.func:
                    if isinstance(parent.func, ast.Attribute) and parent.func.attr in ("total_seconds", "timestamp"):
                        child = parent
                        continue
                    return True
                func = parent.func
                if isinstance(func, ast.Name) and func.id in _PASS_THROUGH:
                    child = parent
                elif self.analysis.is_sleep(parent, self.scope):
                    return False
                else:
                    return True
            elif isinstance(parent, ast.Attribute) and child is parent.value:
                child = parent  # `x.total_seconds`: judged by the call around it
            elif isinstance(parent, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                if len(names) != len(targets):
                    return True  # an attribute, an item, an unpacking
                return any(self.escapes(name) for name in names)
            else:
                return True


def _position(node: ast.AST) -> Tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _agree(values: Sequence[Optional[TimeValue]]) -> Optional[TimeValue]:
    """One value from several that must agree on role, clock and unit."""
    known = [v for v in values if v is not None]
    if not values or len(known) != len(values):
        return None
    first = known[0]
    for other in known[1:]:
        if (other.role, other.clock, other.unit) != (first.role, first.clock, first.unit):
            return None
    reads = _merge_reads(*(v.reads for v in known))
    return TimeValue(first.role, first.clock, first.unit, reads, all(v.local for v in known))


def _combine(role: str, a: TimeValue, b: TimeValue) -> Optional[TimeValue]:
    if a.unit != b.unit and "scaled" not in (a.unit, b.unit):
        return None
    return TimeValue(role, a.clock, a.unit, _merge_reads(a.reads, b.reads), a.local and b.local)


def _with_local(value: TimeValue, local: bool) -> TimeValue:
    return TimeValue(value.role, value.clock, value.unit, value.reads, value.local and local)


# -- what rules ask -------------------------------------------------------------------------------
def function_times(ctx: "FileView") -> Optional[FunctionTimes]:
    """The time values of the function the walk is in (None at module or class level)."""
    return ctx.analysis(TimeValues).function(ctx.scope)


def time_value(ctx: "FileView", expr: ast.expr) -> Optional[TimeValue]:
    times = function_times(ctx)
    return times.value(expr) if times is not None else None


def is_absolute_instant(ctx: "FileView", expr: ast.expr, any_clock: bool = False) -> bool:
    """A wall-clock instant or a deadline on the wall clock, in any spelling (`str(...)`,
    `int(...)`, an f-string, `x.isoformat()`, `x.timestamp()`). With `any_clock`, monotonic
    instants count too (an instant of this process's own clock means even less elsewhere)."""
    analysis = ctx.analysis(TimeValues)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and not expr.args:
        if expr.func.attr in analysis.clocks.instant_methods:
            return True
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and len(expr.args) == 1:
        if expr.func.id in ("str", "int", "float", "round", "repr"):
            return is_absolute_instant(ctx, expr.args[0], any_clock)
    if isinstance(expr, ast.JoinedStr):
        return any(
            isinstance(part, ast.FormattedValue) and is_absolute_instant(ctx, part.value, any_clock)
            for part in expr.values
        )
    value = time_value(ctx, expr)
    if value is None:
        read = analysis.clock_read(expr, ctx.scope)
        return read is not None and (any_clock or read.clock == WALL)
    return (any_clock or value.clock == WALL) and value.role in (INSTANT, DEADLINE)
