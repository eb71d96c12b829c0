"""A time value and a deadline use: what an expression inside a function holds (an instant, a
deadline or a span, on which clock, in which unit, from which clock reads), and where such
values are used as a deadline. `function_values.py` computes them; `time_values.py` documents
the analysis as a whole. Combining values (`agree`, `combine`) lives here with the type."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Dict, Iterable, Optional, Sequence, Tuple

from deadline_lint.families.shared.time.clock_reads import ClockRead

INSTANT, DEADLINE, SPAN = "instant", "deadline", "span"
# Kinds of DeadlineUse.
COMPARE, REMAINING, SPAN_CHECK, TIMEOUT = "compare", "remaining", "span-check", "timeout"

# Calls a time value passes through unchanged (`min(deadline, other)`, `float(elapsed)`).
PASS_THROUGH = frozenset({"min", "max", "abs", "float", "int", "round"})


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



def merge_reads(*groups: Iterable[ClockRead]) -> Tuple[ClockRead, ...]:
    seen: Dict[int, ClockRead] = {}
    for group in groups:
        for read in group:
            seen.setdefault(id(read.node), read)
    return tuple(seen.values())


def is_number(expr: ast.expr) -> bool:
    if isinstance(expr, ast.UnaryOp):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and type(expr.value) in (int, float)


def position(node: ast.AST) -> Tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def agree(values: Sequence[Optional[TimeValue]]) -> Optional[TimeValue]:
    """One value from several that must agree on role, clock and unit."""
    known = [v for v in values if v is not None]
    if not values or len(known) != len(values):
        return None
    first = known[0]
    for other in known[1:]:
        if (other.role, other.clock, other.unit) != (first.role, first.clock, first.unit):
            return None
    reads = merge_reads(*(v.reads for v in known))
    return TimeValue(first.role, first.clock, first.unit, reads, all(v.local for v in known))


def combine(role: str, a: TimeValue, b: TimeValue) -> Optional[TimeValue]:
    if a.unit != b.unit and "scaled" not in (a.unit, b.unit):
        return None
    return TimeValue(role, a.clock, a.unit, merge_reads(a.reads, b.reads), a.local and b.local)


def with_local(value: TimeValue, local: bool) -> TimeValue:
    return TimeValue(value.role, value.clock, value.unit, value.reads, value.local and local)


def is_placeholder(node: Optional[ast.AST]) -> bool:
    """`None`, or the zero instant (`0`, `0.0`: "never", so the first check passes)."""
    if not isinstance(node, ast.Constant):
        return False
    return node.value is None or type(node.value) in (int, float) and node.value == 0
