"""Just enough control flow for "does this call always run after that one?" and "is this
call repeated by a loop?", from a node's chain of ancestors (the walk's `ctx.parents`).
Anything this cannot show is answered "no", so rules built on it stay quiet."""
from __future__ import annotations

import ast
from typing import Optional, Sequence

from deadline_lint.support.source import located

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_BRANCHING = (ast.If, ast.IfExp, ast.Try, ast.TryStar, ast.Match)
_ALTERNATIVES = (ast.ExceptHandler, ast.match_case)


def _in_field(parent: ast.AST, child: ast.AST, field: str) -> bool:
    value = getattr(parent, field, None)
    if isinstance(value, list):
        return any(item is child for item in value)
    return value is child


def _field_of(parent: ast.AST, child: ast.AST) -> Optional[str]:
    for field in parent._fields:
        if _in_field(parent, child, field):
            return field
    return None


def _conditional(parent: ast.AST, child: ast.AST) -> bool:
    """Does `child` run only sometimes (or repeatedly) when `parent` runs?"""
    if isinstance(parent, ast.While) and _always(parent.test) and _in_field(parent, child, "body"):
        return False  # `while True:` runs its body at least once
    if isinstance(parent, (ast.If, ast.While)):
        return not _in_field(parent, child, "test")
    if isinstance(parent, ast.For) and _runs_body(parent) and _in_field(parent, child, "body"):
        return False  # a retry loop, `for attempt in range(3):`, runs its body at least once
    if isinstance(parent, (ast.For, ast.AsyncFor)):
        return not _in_field(parent, child, "iter")
    if isinstance(parent, ast.IfExp):
        return not _in_field(parent, child, "test")
    if isinstance(parent, _BRANCHING):  # try / match
        return _field_of(parent, child) not in ("body", "finalbody", "subject")
    if isinstance(parent, ast.BoolOp):
        return child is not parent.values[0]
    return isinstance(parent, _COMPREHENSIONS + (ast.comprehension,) + _ALTERNATIVES)


def runs_before(
    first: ast.AST, first_chain: Sequence[ast.AST], second: ast.AST, second_chain: Sequence[ast.AST]
) -> bool:
    """True when every run of `second` comes after `first` has run (it dominates it)."""
    path1, path2 = (*first_chain, first), (*second_chain, second)
    depth = 0
    while depth < min(len(path1), len(path2)) and path1[depth] is path2[depth]:
        depth += 1
    if depth == 0 or depth >= len(path1) or depth >= len(path2):
        return False
    common, a, b = path1[depth - 1], path1[depth], path2[depth]
    if isinstance(common, _BRANCHING):
        field_a, field_b = _field_of(common, a), _field_of(common, b)
        if field_a != field_b and {field_a, field_b} - {"test", "subject", "body", "finalbody"}:
            return False  # if/else, try/except: one or the other
        if field_a == field_b and isinstance(a, _ALTERNATIVES):
            return False  # two cases, two handlers
        if {field_a, field_b} == {"body", "orelse"}:
            return False
    # Below the common ancestor, the first call must run whenever its branch there runs.
    for parent, child in zip(path1[depth:], path1[depth + 1:]):
        if _conditional(parent, child):
            return False
    return True


def _always(test: ast.expr) -> bool:
    """`True` (or `1`): a loop test that cannot be false on entry."""
    if not isinstance(test, ast.Constant):
        return False
    return test.value is True or (type(test.value) is int and test.value > 0)


def _runs_body(loop: ast.For) -> bool:
    """`for ... in range(N)` with integer literals giving at least one turn (`range(3)`,
    `range(1, 4)`); any other iterable may be empty."""
    it = loop.iter
    if not isinstance(it, ast.Call) or not isinstance(it.func, ast.Name) or it.func.id != "range" or it.keywords:
        return False
    if not 1 <= len(it.args) <= 2:
        return False
    bounds = [a.value for a in it.args if isinstance(a, ast.Constant) and type(a.value) is int]
    if len(bounds) != len(it.args):
        return False
    start, stop = (0, *bounds) if len(bounds) == 1 else bounds
    return stop > start


def enclosing_loop(chain: Sequence[ast.AST], node: ast.AST, function: ast.AST, value: ast.AST) -> Optional[ast.AST]:
    """The innermost loop of this function that repeats `node` but not the read of `value`."""
    path = (*chain, node)
    inside = False
    loop = None
    for parent, child in zip(path, path[1:]):
        if parent is function:
            inside = True
            continue
        if not inside:
            continue
        repeats = (isinstance(parent, _LOOPS) and _field_of(parent, child) == "body") or (
            isinstance(parent, _COMPREHENSIONS) and _field_of(parent, child) in ("elt", "key", "value")
        )
        if repeats and not _within(value, parent):
            loop = parent
    return loop


def _within(inner: ast.AST, outer: ast.AST) -> bool:
    inside, around = located(inner), located(outer)
    start = (around.lineno, around.col_offset)
    end = (around.end_lineno or around.lineno, around.end_col_offset or 0)
    return start <= (inside.lineno, inside.col_offset) <= end
