"""The ambient budget for `--thread-budget` (thread_budget.py): where a function cannot take a
`budget_s` parameter (a caller the run cannot update, a public name, a decorator, a retried
function) or the profile says `fix.propagation = "context"`, its hops read the request's
budget from the context the edge set, through the profile's `fix.context_accessor` (a function
returning the remaining seconds, `adopt --scaffold` writes one). Each hop calls it when it
starts, so it gets what is left then; nothing is minted below the edge. Without an accessor
those functions keep their findings' own fixes (the edge total)."""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Set, Tuple

from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.families.outbound.fixes.thread_fixes import Key, edge_default_fixes
from deadline_lint.families.outbound.fixes.thread_index import PARAMETER, ModuleIndex, suppressed
from deadline_lint.semantics.local.scopes import IMPORT
from deadline_lint.support.diagnostics import Diagnostic, Edit, Fix

_PARAMETER = re.compile(rf"(?<![\w.]){PARAMETER}\b")


def ambient_fixes(
    module: ModuleIndex, function: Function, inside: List[Diagnostic], placeholder_fixes: Dict[Key, Fix],
    capped: Sequence[Fix] = (),
) -> Optional[Tuple[List[Edit], List[str], Set[Key]]]:
    """The function's edge-default fixes reading the ambient budget instead, and the fixes
    that cap its hops by a budget (`capped`, thread_capped.py: a literal timeout, a library
    default) reading it too; None when the profile names no accessor, its module's name means
    something else here, or a fix cannot be shown (the function keeps its own fixes)."""
    accessor = module.profile.fix.context_accessor
    owner, _, _ = accessor.rpartition(".")
    if not owner or module.is_test(function) or suppressed(module.source, function.lineno):
        return None
    top = owner.split(".")[0]
    bindings = module.scope_of[id(function)].lookup(top)
    if bindings and not all(b.kind == IMPORT and b.value == top and b.scope.parent is None for b in bindings):
        return None  # `top` is bound to something other than the module
    expression = module.profile.render("seconds_expression", f"{accessor}()")
    planned = edge_default_fixes(inside, placeholder_fixes, expression)
    if planned is None:
        return None
    edits, imports, covered = planned
    read = f"{accessor}()"
    for fix in capped:  # `budget_s` where the budget goes: the accessor's read instead
        edits.extend(Edit(e.start, e.end, _PARAMETER.sub(read, e.text)) for e in fix.edits)
        imports.extend(fix.imports)
    if not covered and not capped:
        return None
    return edits, [*imports, owner], covered


def uses_context(module: ModuleIndex) -> bool:
    """`fix.propagation = "context"`: no signature changes, every hop reads the ambient budget."""
    return module.profile.fix.propagation == "context" and bool(module.profile.fix.context_accessor)
