"""Where one function uses time values as a deadline (comparisons, remaining time, spans
passed as timeouts), which clock reads are combined, and whether a value can leave the
function: the part of `FunctionTimes` (see time_values.py) built on its values."""
from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Optional, Set, Tuple

from deadline_lint.families.shared.time.clock_catalog import WALL
from deadline_lint.families.shared.time.clock_reads import ClockRead
from deadline_lint.families.shared.time.function_values import FunctionValues, TimeAnalysis
from deadline_lint.families.shared.time.time_value import (
    COMPARE,
    DEADLINE,
    INSTANT,
    PASS_THROUGH,
    REMAINING,
    SPAN,
    SPAN_CHECK,
    TIMEOUT,
    DeadlineUse,
    TimeValue,
    merge_reads,
    position,
)
from deadline_lint.semantics.local.declared import is_none
from deadline_lint.semantics.local.scopes import Scope


_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})


class FunctionTimes(FunctionValues):
    """The time values of one function and where they are used; see time_values.py."""

    def __init__(self, analysis: TimeAnalysis, scope: Scope) -> None:
        super().__init__(analysis, scope)
        self._uses: Optional[Tuple[DeadlineUse, ...]] = None
        self._escaping: Dict[str, bool] = {}
        self._links: Optional[Dict[int, Set[int]]] = None
        self._read_by_id: Optional[Dict[int, ClockRead]] = None

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
                        reads = merge_reads(left.reads, right.reads)
                        uses.append(DeadlineUse(REMAINING, binop, left.clock, reads, left.local and right.local))
            for call in self._calls:
                uses.extend(self._timeout_uses(call))
            self._uses = tuple(uses)
        return self._uses

    def _compare_uses(self, compare: ast.Compare) -> Iterable[DeadlineUse]:
        if self._only_gates_logging(compare):
            return
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
                    reads = merge_reads(first.reads, second.reads)
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

    def _only_gates_logging(self, compare: ast.Compare) -> bool:
        """`if now - self._last_log >= interval:` whose branch only writes a log line and
        stamps instants again: nothing waits or stops on the comparison, so it is no
        deadline (the interval throttles logging)."""
        parent = self.parent_of(compare)
        if not isinstance(parent, ast.If) or parent.test is not compare or parent.orelse:
            return False
        for stmt in parent.body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                func = stmt.value.func
                if not (isinstance(func, ast.Attribute) and func.attr in _LOG_METHODS):
                    return False
            elif isinstance(stmt, ast.Assign):
                if self.value(stmt.value) is None:
                    return False  # only the stamp may be taken again
            else:
                return False
        return True

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
        ordered = sorted(found, key=lambda i: position(reads_by_id.get(i, read).node))
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
                if isinstance(func, ast.Name) and func.id in PASS_THROUGH:
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

