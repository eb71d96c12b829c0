"""Wall-clock instants that callers in other modules pass a parameter (issue 32).

`parameter_instants` reads the callers in the function's own module from their trees; a caller
in another module is read from the project's call-site index, which keeps what each call
passes as a small text (`semantics/arguments`): `time.time()`, `(time.time() + _)`,
`int((time.time() * 1000))`. The text is judged here with the clock catalog, in the same roles
and units a local read would get, and strictly: a caller that cannot be told (a receiver not
resolved to this def, `*args`, `**kwargs`, the def handed on as a value, a call from module
level, an unbound `C.m(obj, ...)`) makes the answer unknown, and the rules stay quiet.
"""
from __future__ import annotations

import ast
import os
from typing import Any, List, Optional, Tuple

from deadline_lint.families.shared.time.clock_catalog import WALL, ClockCatalog
from deadline_lint.families.shared.time.clock_reads import ClockRead
from deadline_lint.families.shared.time.time_value import DEADLINE, INSTANT, SPAN, TimeValue
from deadline_lint.semantics.arguments import passed_at, read_back
from deadline_lint.semantics.local.resolve import dotted_parts

_PASS_THROUGH = frozenset({"int", "float", "round"})


def passed_elsewhere(
    callers: List[Any], own: object, place: Tuple[Optional[int], str], method: bool, root: str, clocks: ClockCatalog,
) -> Optional[List[TimeValue]]:
    """What callers outside module `own` pass the parameter at `place`, each a wall-clock
    instant; None when one passes anything else or cannot be told."""
    found: List[TimeValue] = []
    for caller in callers:
        if caller.module is own:
            continue
        site = caller.site
        if not caller.certain or not site.called or not site.within or (method and site.receiver.startswith("q:")):
            return None
        text = passed_at(site.arguments, place)
        if text is None:
            return None
        value = _wall_instant(text, clocks)
        if value is None:
            return None
        role, unit, qualname = value
        where = os.path.relpath(caller.module.path, root).replace(os.sep, "/") if caller.module.path else "?"
        node = ast.Call(func=ast.Name(id=qualname, ctx=ast.Load()), args=[], keywords=[])
        node.lineno = node.end_lineno = site.line
        node.col_offset = node.end_col_offset = 0
        read = ClockRead(node, WALL, unit, qualname, None, elsewhere=f"{where}:{site.line}")
        found.append(TimeValue(role, WALL, unit, (read,), True))
    return found


def _wall_instant(text: str, clocks: ClockCatalog) -> Optional[Tuple[str, str, str]]:
    """(role, unit, clock function) of a wall-clock instant or deadline the text spells."""
    expr = read_back(text)
    return _judge(expr, clocks) if expr is not None else None


def _judge(expr: ast.expr, clocks: ClockCatalog) -> Optional[Tuple[str, str, str]]:
    if isinstance(expr, ast.Call):
        name = _dotted(expr.func)
        if name in _PASS_THROUGH and len(expr.args) == 1 and not expr.keywords:
            return _judge(expr.args[0], clocks)
        function = clocks.functions.get(name or "")
        if function is None or function.clock != WALL or function.unit == "text":
            return None
        return INSTANT, function.unit, function.qualname
    if not isinstance(expr, ast.BinOp):
        return None
    left, right = _judge(expr.left, clocks), _judge(expr.right, clocks)
    if left is not None and right is not None:
        return None  # two readings: a span, or nonsense
    if isinstance(expr.op, (ast.Mult, ast.Div, ast.FloorDiv)):
        side, other = (left, expr.right) if left is not None else (right, expr.left)
        return (side[0], "scaled", side[2]) if side is not None and _number(other) else None
    if isinstance(expr.op, ast.Add):
        known = left or right
        return (DEADLINE, known[1], known[2]) if known is not None and known[0] != SPAN else None
    if isinstance(expr.op, ast.Sub) and left is not None and _number(expr.right):
        return DEADLINE, left[1], left[2]
    return None


def _number(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)


def _dotted(expr: ast.expr) -> Optional[str]:
    parts = dotted_parts(expr)
    return ".".join(parts) if parts else None
