"""Functions whose hops a budget would cap (DL102) though no rule speaks there: `adopt` and
`fix --thread-budget --unsafe-fixes` give them the parameter too, so that DL102's fix caps
their hops by it in the next round."""
from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Dict, List, Mapping, Set, Tuple

from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.semantics.session import current
from deadline_lint.support.diagnostics import Edit

if TYPE_CHECKING:
    from deadline_lint.engine.checker import Checker
    from deadline_lint.families.outbound.fixes.thread_index import ModuleIndex

CAPPED_CODE = "DL102"  # fixed-timeout-ignores-budget: a hop a budget in scope would cap


class CappedCheckers:
    """The run's memo: a checker -> its twin that runs DL102 alone."""


def hops_a_budget_would_cap(checker: "Checker", module: "ModuleIndex", candidates: Mapping[int, Function]) -> Set[int]:
    """Functions (by id) with no budget and no finding making them a candidate whose hops a
    budget in scope would cap (a literal timeout, a library default: DL102): no rule speaks
    where no budget is, yet their callers may hold one. Only with unsafe fixes, as DL102's fix,
    which caps those hops once the parameter is in scope, is unsafe. The text is checked once
    more for DL102 alone with the parameter added to each such signature (an insertion within
    its line, so every body line keeps its number); a finding in a function's body names it."""
    from deadline_lint.engine.edits import add_keyword_only_parameter
    from deadline_lint.families.outbound.fixes.thread_callers import may_change
    from deadline_lint.families.outbound.fixes.thread_index import has_threaded_parameter

    if not module.unsafe or CAPPED_CODE not in checker.codes:
        return set()
    source = module.source
    added: List[Tuple[Function, Edit]] = []
    for function in module.functions:
        if id(function) in candidates or has_threaded_parameter(function) or not may_change(function, module):
            continue
        if module.budgets.budget_of(module.scope_of[id(function)]) is not None:
            continue
        edit = add_keyword_only_parameter(source, function, module.parameter)
        body = function.body[0]
        if edit is None or "\n" in edit.text or edit.start != edit.end:
            continue
        if bisect.bisect_right(source.line_starts, edit.start) >= body.lineno:
            continue  # a body on the signature's line would move
        added.append((function, edit))
    if not added:
        return set()
    text = source.text
    for _, edit in sorted(added, key=lambda pair: pair[1].start, reverse=True):
        text = text[:edit.start] + edit.text + text[edit.end:]
    twins: Dict["Checker", "Checker"] = current().memo(CappedCheckers, lasting=True)
    twin = twins.get(checker)
    if twin is None:
        twin = twins[checker] = type(checker)(
            checker.profile, select=(CAPPED_CODE,), catalog=checker.catalog,
        )
    lines = [d.line for d in twin.check_text(text, source.path) if d.code == CAPPED_CODE]
    found: Set[int] = set()
    for line in lines:
        holding = [
            f for f, _ in added
            if f.body[0].lineno <= line <= (f.end_lineno or f.lineno)
        ]
        if holding:  # the innermost: a nested def's hop is its own
            found.add(id(max(holding, key=lambda f: f.body[0].lineno)))
    return found
