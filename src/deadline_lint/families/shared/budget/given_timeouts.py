"""The time a function's caller gave it, when no budget is in scope (opt-in, for DL102): a
numeric parameter named in `budget.timeout_parameters`, with the names derived from it."""
from __future__ import annotations

from typing import FrozenSet, Optional

from deadline_lint.families.shared.budget.budget_parameters import numeric_parameters
from deadline_lint.families.shared.budget.scope_budget import SECONDS, Budget, assignments
from deadline_lint.semantics.local.expressions import mentions_any
from deadline_lint.semantics.local.scopes import FUNCTION, Scope

_FACT = "given_timeout"


def given_timeout(scope: Scope, timeout_parameters: FrozenSet[str]) -> Optional[Budget]:
    """A numeric parameter named in `timeout_parameters` (a number default, or annotated
    `float` / `int`), of this function or an enclosing one that this one does not rebind,
    with the names derived from it. A function given `timeout=10` that calls downstream
    with a fixed 30 s ignores what it was given."""
    if not timeout_parameters or scope.kind != FUNCTION:
        return None
    if _FACT in scope.facts:
        known = scope.facts[_FACT]  # stored below: a Budget or None
        return known if isinstance(known, Budget) else None
    found: Optional[Budget] = None
    own = scope.bindings()
    numeric = [p.arg for p in numeric_parameters(scope.node) if p.arg in timeout_parameters]
    if numeric:
        names = set(numeric)
    else:
        outer = _enclosing_function(scope)
        given = given_timeout(outer, timeout_parameters) if outer is not None else None
        names = {n for n in given.names if n not in own} if given is not None else set()
        numeric = [n for n, _ in given.kinds if n in names] if given is not None else []
    if numeric:
        assigned = assignments(scope)
        changed = True
        while changed:  # derived names, as for a budget
            changed = False
            for target, value in assigned:
                if target not in names and mentions_any(value, names):
                    names.add(target)
                    changed = True
        found = Budget(names=frozenset(names), kinds=tuple((n, SECONDS) for n in numeric))
    scope.facts[_FACT] = found
    return found


def _enclosing_function(scope: Scope) -> Optional[Scope]:
    parent = scope.parent
    while parent is not None and parent.kind != FUNCTION:
        parent = parent.parent
    return parent
