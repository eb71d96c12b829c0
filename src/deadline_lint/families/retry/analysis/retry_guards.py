"""Which caught errors a retry loop's handler sends round, when a test on the caught error
guards the way back:

    except Exception as err:
        if isinstance(err, requests.Timeout):      # only a timeout goes round
            continue
        raise

    except Exception as err:
        if attempt == last or not self._is_retryable(err):
            raise                                  # what the predicate accepts goes round

A handler's ways round are read from its own statements: each `continue` it reaches and its
end when it falls through. A way round is *narrowed* by a test it passes that names the
caught error: `isinstance(err, T)` holding, or a predicate of this file holding whose body
returns True for `isinstance(param, T)`. Tests that cannot be read narrow nothing, so the
handler is judged by its `except` clause as before; precision comes from reading less, not
from guessing what an unknown predicate accepts.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional, Tuple

from deadline_lint.families.retry.analysis.retry_loops import _leaves, continues
from deadline_lint.families.shared.errors.exceptions import Admission


@dataclass(frozen=True)
class Narrowing:
    """A test on the caught error that a way round passes."""

    node: ast.expr  # the test's call as written in the handler
    admission: Admission  # what gets past it
    via: Optional[str] = None  # the predicate's name, when the test calls one


@dataclass(frozen=True)
class RoundPath:
    """One way back to the loop's next attempt."""

    narrowing: Optional[Narrowing]  # None: every caught error goes round this way
    excluded: Tuple[Admission, ...] = ()  # errors that left before it (`if isinstance(e, T): raise`)


# Reads one call in a test on the caught error: `isinstance(err, T)` or `predicate(err)`.
Reader = Callable[[ast.Call, str], Optional[Narrowing]]


def round_paths(handler: ast.ExceptHandler, read: Reader) -> Tuple[RoundPath, ...]:
    name = handler.name
    paths: List[RoundPath] = []
    narrowing: Optional[Narrowing] = None
    excluded: List[Admission] = []
    for statement in handler.body:
        if isinstance(statement, ast.Continue):
            paths.append(RoundPath(narrowing, tuple(excluded)))
            return tuple(paths)
        if isinstance(statement, ast.If):
            if continues(statement.body):
                holds, _ = _implied(statement.test, name, read, True)
                paths.append(RoundPath(holds or narrowing, tuple(excluded)))
            if continues(statement.orelse):
                paths.append(RoundPath(narrowing, tuple(excluded)))
            if statement.body and _leaves_or_continues(statement.body[-1]):
                holds, left = _implied(statement.test, name, read, False)
                narrowing = narrowing or holds
                excluded.extend(left)
        elif continues([statement]):
            paths.append(RoundPath(narrowing, tuple(excluded)))
        if _leaves(statement):
            return tuple(paths)
    paths.append(RoundPath(narrowing, tuple(excluded)))  # falls off the end: round again
    return tuple(paths)


def _leaves_or_continues(last: ast.stmt) -> bool:
    return isinstance(last, ast.Continue) or _leaves(last)


def _implied(
    test: ast.expr, name: Optional[str], read: Reader, value: bool
) -> Tuple[Optional[Narrowing], List[Admission]]:
    """What `test` evaluating to `value` says of the caught error: a narrowing it passes, and
    the admissions it rules out."""
    if name is None:
        return None, []
    found = list(_parts(test, name, read, value))
    holds = next((n for n, passes in found if passes), None)
    return holds, [n.admission for n, passes in found if not passes and n.via is None]


def _parts(test: ast.expr, name: str, read: Reader, value: bool) -> Iterator[Tuple[Narrowing, bool]]:
    """(narrowing, passes) for each call on the caught error that `test == value` settles:
    a conjunction when true (`a and b`), a disjunction when false (`not (a or b)`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _parts(test.operand, name, read, not value)
    elif isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if value else ast.Or):
        for operand in test.values:
            yield from _parts(operand, name, read, value)
    elif isinstance(test, ast.Call) and test.args and isinstance(test.args[0], ast.Name) and test.args[0].id == name:
        narrowing = read(test, name)
        if narrowing is not None:
            yield narrowing, value
