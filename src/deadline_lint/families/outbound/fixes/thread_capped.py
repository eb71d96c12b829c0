"""Functions whose hops a budget would cap (DL102) though no rule speaks there: `adopt` and
`fix --thread-budget --unsafe-fixes` give them the parameter too, so that DL102's fix caps
their hops by it in the next round."""
from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Dict, List, Mapping, Tuple

from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.semantics.session import current
from deadline_lint.support.diagnostics import Edit, Fix

if TYPE_CHECKING:
    from deadline_lint.engine.checker import Checker
    from deadline_lint.families.outbound.fixes.thread_index import ModuleIndex

CAPPED_CODE = "DL102"  # fixed-timeout-ignores-budget: a hop a budget in scope would cap


class CappedCheckers:
    """The run's memo: a checker -> its twin that runs DL102 alone."""


def hops_a_budget_would_cap(
    checker: "Checker", module: "ModuleIndex", candidates: Mapping[int, Function],
) -> Dict[int, List[Fix]]:
    """Functions (by id) with no budget and no finding making them a candidate whose hops a
    budget in scope would cap (a literal timeout, a library default: DL102): no rule speaks
    where no budget is, yet their callers may hold one. Only with unsafe fixes, as DL102's fix,
    which caps those hops once the parameter is in scope, is unsafe. The text is checked once
    more for DL102 alone with the parameter added to each such signature (an insertion within
    its line, so every body line keeps its number); a finding in a function's body names it.
    Each function comes with DL102's fixes of its hops as they read on the text as it is
    (`budget_s` spelled where the budget goes): the ambient fallback caps them with the
    accessor where the function cannot take the parameter (thread_ambient.py)."""
    from deadline_lint.engine.edits import add_keyword_only_parameter
    from deadline_lint.families.outbound.fixes.thread_callers import may_change, may_read_ambient
    from deadline_lint.families.outbound.fixes.thread_index import has_threaded_parameter

    if not module.unsafe or CAPPED_CODE not in checker.codes:
        return {}
    source = module.source
    added: List[Tuple[Function, Edit]] = []
    ambient = bool(module.profile.fix.context_accessor)  # read where no parameter can be added
    for function in module.functions:
        if id(function) in candidates or has_threaded_parameter(function):
            continue
        if not may_change(function, module) and not (ambient and may_read_ambient(function, module)):
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
        return {}
    text = source.text
    for _, edit in sorted(added, key=lambda pair: pair[1].start, reverse=True):
        text = text[:edit.start] + edit.text + text[edit.end:]
    twins: Dict["Checker", "Checker"] = current().memo(CappedCheckers, lasting=True)
    twin = twins.get(checker)
    if twin is None:
        twin = twins[checker] = type(checker)(
            checker.profile, select=(CAPPED_CODE,), catalog=checker.catalog,
        )
    inserted = sorted((edit.start, len(edit.text)) for _, edit in added)
    found: Dict[int, List[Fix]] = {}
    for diagnostic in twin.check_text(text, source.path):
        if diagnostic.code != CAPPED_CODE:
            continue
        line = diagnostic.line
        holding = [
            f for f, _ in added
            if f.body[0].lineno <= line <= (f.end_lineno or f.lineno)
        ]
        if holding:  # the innermost: a nested def's hop is its own
            fixes = found.setdefault(id(max(holding, key=lambda f: f.body[0].lineno)), [])
            if diagnostic.fix is not None:
                fixes.append(_on_the_text(diagnostic.fix, inserted))
    return found


def _on_the_text(fix: Fix, inserted: List[Tuple[int, int]]) -> Fix:
    """A fix of the text with the parameters added, placed on the text as it is: a body lies
    after its own signature's insertion, so each offset moves back by every insertion before it."""
    def back(offset: int) -> int:
        shift = 0
        for start, length in inserted:
            if start + shift < offset:
                shift += length
        return offset - shift

    edits = tuple(Edit(back(e.start), back(e.end), e.text) for e in fix.edits)
    return Fix(edits, fix.applicability, fix.description, fix.imports, fix.tags)
