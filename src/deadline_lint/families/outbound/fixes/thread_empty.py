"""A proof, from the text's tree and the round's findings alone, that `plan_thread_budget`
would plan nothing (thread_budget.py), so the fix loop need not build its `ModuleIndex`.

A plan's edits come from three places, and each needs something this looks for:
- a candidate function's own fixes re-aimed at `budget_s` (or at the ambient budget, or at an
  entry deadline): they are fixes of applicable findings inside a candidate, and a candidate is
  a function holding an applicable DL101/DL103 finding or one that already takes `budget_s`;
- forwarding `budget_s=` to a call, and giving the parameter to a caller without a budget
  (DL503's unsafe fixes): both need a call that does not pass it yet and may run a function
  taking it: one of this module's, by its name or a method's, or one of another project module,
  reached through a name the file imports from the project (`OtherModules.takes_parameter`);
- the callee hops a budget would cap (`look_for_capped`) and the edges `adopt` mints at: any
  function may be one, so no proof is tried.
The deadline taken on entry and the mint rewrite edits already planned, so they add none to
an empty plan. Every test here over-approximates what the planner resolves (a name, not its
binding), so a skip is never a guess; what it cannot rule out is planned as before."""
from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from deadline_lint.families.outbound.fixes.thread_fixes import THREADED_CODES
from deadline_lint.families.outbound.fixes.thread_index import DEFS, PARAMETER, has_threaded_parameter
from deadline_lint.support.diagnostics import Diagnostic, Fix


def plans_nothing(
    tree: ast.Module,
    found: Sequence[Diagnostic],
    applies: Callable[[Optional[Fix]], bool],
    reaches_elsewhere: Callable[[Set[str]], bool],
    look_for_capped: bool = False,
    mint: bool = False,
) -> bool:
    """True only when the plan is provably None. `reaches_elsewhere(sources)`: whether a name
    imported from one of these modules (as the import lines spell them) may run a function of
    another project module that takes `budget_s` (asked only when some call could)."""
    if look_for_capped or mint:
        return False
    threaded: Set[str] = set()
    spans: List[Tuple[int, int]] = []
    calls: List[ast.Call] = []
    imported: Dict[str, Set[str]] = {}  # a name bound by an import (at any depth) -> its modules
    star: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            calls.append(node)
        elif isinstance(node, DEFS) and has_threaded_parameter(node):
            threaded.add(node.name)
            spans.append((node.lineno, node.end_lineno or node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                imported.setdefault(alias.asname or alias.name.split(".")[0], set()).add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            source = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    star.add(source)  # binds names no line spells
                imported.setdefault(alias.asname or alias.name, set()).add(source)
    for diagnostic in found:
        if not applies(diagnostic.fix):
            continue
        if diagnostic.code in THREADED_CODES:
            return False  # a new candidate
        if any(start <= diagnostic.line <= end for start, end in spans):
            return False  # a fix a threaded function may re-aim
    sources: Set[str] = set()
    for call in calls:
        if any(keyword.arg is None or keyword.arg == PARAMETER for keyword in call.keywords):
            continue  # passed already, or maybe in `**kwargs`: never forwarded
        if any(isinstance(argument, ast.Starred) for argument in call.args):
            continue
        func = call.func
        if isinstance(func, ast.Name) and func.id in threaded:
            return False
        if isinstance(func, ast.Attribute) and func.attr in threaded:
            return False  # a method family's members are the methods of that name
        head = func
        while isinstance(head, ast.Attribute):
            head = head.value
        if isinstance(head, ast.Name):
            sources.update(imported.get(head.id, star))
    return not (sources and reaches_elsewhere(sources))
