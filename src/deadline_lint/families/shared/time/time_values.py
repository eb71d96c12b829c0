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

Where each part lives: `time_value.py` (the value types), `function_values.py` (what each
expression and name holds), `function_times.py` (deadline uses, linked reads, escapes), this
module (the per-file analysis and what rules ask).
"""
from __future__ import annotations

import ast
import weakref
from typing import TYPE_CHECKING, Dict, Optional, cast

from deadline_lint.families.shared.time.clock_catalog import MONOTONIC, WALL
from deadline_lint.families.shared.time.clock_reads import ClockRead, ClockReads
from deadline_lint.families.shared.time.function_times import FunctionTimes
from deadline_lint.families.shared.time.kept_deadlines import KeptDeadlines
from deadline_lint.families.shared.time.parameter_instants import ParameterInstants
from deadline_lint.families.shared.time.time_value import (
    COMPARE,
    DEADLINE,
    INSTANT,
    REMAINING,
    SPAN,
    SPAN_CHECK,
    TIMEOUT,
    DeadlineUse,
    TimeValue,
)
from deadline_lint.semantics.local.scopes import FUNCTION, Scope

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import AnalysisInputs, FileView

__all__ = [
    "INSTANT", "DEADLINE", "SPAN", "WALL", "MONOTONIC", "COMPARE", "REMAINING", "SPAN_CHECK", "TIMEOUT",
    "ClockRead", "TimeValue", "DeadlineUse", "FunctionTimes", "TimeValues",
    "time_value", "function_times", "is_absolute_instant",
]


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
