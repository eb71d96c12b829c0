"""`--thread-budget`: give a function with outbound calls but no budget the budget its callers
have, make its timeouts use it, and forward it from those callers. Mint nothing below the edge.

The parameter is keyword-only with no default, `budget_s: float`: the caller's remaining time in
seconds. A default would be a new total at every caller that omits it, so the parameter is
written only where every call of the function passes it after the run (thread_callers.py
chooses; thread_elsewhere.py follows callers into other modules of one `fix` run). A plain
float, not the organisation's budget object, and not named like a profile budget parameter
(`budget`, read as an object). Its fixes are the rules' own (thread_fixes.py) with
`max(0.001, budget_s - <margin>)` in place of the edge default. A caller passes its own:
`budget_s=budget_s`, or the timeout it would give an outbound call (`budget.timeout()`,
already less the hop margin). With DL503 and unsafe fixes the parameter travels up the call
graph, caller by caller, until a caller has a budget of its own.

A function that cannot take the parameter (a caller the run cannot update, a public name, a
decorator) reads the ambient budget through `fix.context_accessor` where the profile names
one, as every function does under `fix.propagation = "context"` (thread_ambient.py); without
one it keeps its findings' own fixes (the edge total), and a retried one spends that once per
attempt from a deadline taken on entry (thread_spending.py).

`budget_s` is the time left at the call: a function that spends it more than once takes a
deadline on entry and gives each hop what is left of it then (thread_spending.py).

Methods (thread_methods.py): `INSTANCE.m(...)` on a module-level `INSTANCE = Klass()` runs
exactly `Klass.m`; `self.m(...)` may run any override, so it is forwarded only with unsafe
fixes and only when every method of that name in the module takes the parameter in the same
plan, none is a method of an abstract base or a `Protocol`, and the name appears in no other
file of the repository.

Prove or bail: lambdas, `*args`/`**kwargs` signatures, decorators other than staticmethod and
classmethod, dunder methods, functions defined more than once, functions that already use
the name, test functions in test files and lines with a DL suppression keep their signature.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Callable,
    Dict,
    FrozenSet,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
)

from deadline_lint.engine.edits import add_keyword_only_parameter
from deadline_lint.families.outbound.fixes.adoption.minting import mint_at_the_edges
from deadline_lint.families.outbound.fixes.thread_ambient import ambient_fixes, uses_context
from deadline_lint.families.outbound.fixes.thread_callers import (
    caller_would_thread,
    proposable_caller,
    required_parameter_set,
    same_named_methods,
)
from deadline_lint.families.outbound.fixes.thread_callers import may_change as _may_change
from deadline_lint.families.outbound.fixes.thread_elsewhere import Elsewhere, ProjectWords
from deadline_lint.families.outbound.fixes.thread_capped import hops_a_budget_would_cap
from deadline_lint.families.outbound.fixes.thread_forwarding import (
    caller_budget,
    forwarding_edits,
    threaded_target,
    will_forward,
)
from deadline_lint.families.outbound.fixes.thread_fixes import (
    FORWARDING_CODE,
    THREADED_CODES,
    Key,
    edge_default_fixes,
    finding_key,
    forwarding_findings,
)
from deadline_lint.families.outbound.fixes.thread_fixes import (
    placeholder_fixes as _placeholder_fixes,
)
from deadline_lint.families.outbound.fixes.thread_index import (
    DEFS as _DEFS,
)
from deadline_lint.families.outbound.fixes.thread_index import (
    PARAMETER,
    ModuleIndex,
    forwardable,
)
from deadline_lint.families.outbound.fixes.thread_index import (
    has_threaded_parameter as _has_threaded_parameter,
)
from deadline_lint.families.outbound.fixes.thread_index import (
    suppressed as _suppressed,
)
from deadline_lint.families.outbound.fixes.thread_index import (
    threadable as _threadable,
)
from deadline_lint.families.outbound.fixes.thread_spending import overlapping as _overlapping
from deadline_lint.families.outbound.fixes.thread_spending import spend_from_a_deadline, spend_the_edge_default_once
from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.semantics.local.scopes import FUNCTION
from deadline_lint.semantics.session import current
from deadline_lint.support.diagnostics import Applicability, Diagnostic, Edit, Fix
from deadline_lint.support.source import SourceFile

if TYPE_CHECKING:
    from deadline_lint.engine.checker import Checker

__all__ = ["PARAMETER", "THREADED_CODES", "ThreadPlan", "finding_key", "plan_thread_budget"]

@dataclass(frozen=True)
class ThreadPlan:
    edits: Tuple[Edit, ...]
    imports: Tuple[str, ...]
    covered: FrozenSet[Key]  # findings the plan fixes (instead of their own fix)
    functions: int  # functions given the parameter


def plan_thread_budget(
    checker: "Checker",
    source: SourceFile,
    tree: ast.Module,
    found: Sequence[Diagnostic],
    applies: Callable[[Optional[Fix]], bool],
    run: FrozenSet[str] = frozenset(),
    mint_at_edges: bool = False,
    look_for_capped: bool = False,
) -> Optional[ThreadPlan]:
    """Edits that thread `budget_s` through this module, or None when there is nothing to do.
    `run`: the absolute paths a `fix` run holds (a caller in one of them is updated by a later
    pass, thread_project.py); empty for one text alone (the codemod, stdin). `mint_at_edges`
    (`adopt`): the module's edges (adoption/edges.py) mint `budget_s` in their first statements
    and forward it; what no edge or budget reaches is not threaded. `look_for_capped`: functions
    with no finding whose hops a budget would cap are candidates too (thread_capped.py)."""
    profile = checker.profile
    if PARAMETER in profile.budget.parameters:
        return None  # it would read as a budget object, which a float is not
    module = ModuleIndex(checker, source, tree, applies(Fix((), Applicability.UNSAFE, "")), mint=mint_at_edges)
    applicable = [d for d in found if applies(d.fix)]
    threaded: Dict[int, Function] = {id(f): f for f in module.functions if _has_threaded_parameter(f)}
    candidates = {id(f): f for f in threaded.values()}
    for diagnostic in applicable:
        if diagnostic.code in THREADED_CODES:
            function = module.innermost_function(diagnostic)
            if function is not None and isinstance(function, _DEFS):
                candidates[id(function)] = function
    capped = hops_a_budget_would_cap(checker, module, candidates) if look_for_capped else {}
    candidates.update((key, module.function_of[key]) for key in capped)

    edits: List[Edit] = []
    imports: List[str] = []
    covered: Set[Key] = set()
    plans: Dict[int, Tuple[List[Edit], List[str], Set[Key]]] = {}
    unthreadable: Dict[int, List[Diagnostic]] = {}  # no budget, and no parameter possible
    placeholder_fixes: Dict[Key, Fix] = {}
    for key, edge in module.minted.items():
        candidates.setdefault(key, edge.node)  # type: ignore[arg-type]
    if any(module.budgets.budget_of(module.scope_of[key]) is None for key in candidates):
        placeholder_fixes = _placeholder_fixes(checker, source, {d.code for d in applicable})
        expression = profile.render("seconds_expression", PARAMETER)
        for function in candidates.values():
            if module.budgets.budget_of(module.scope_of[id(function)]) is not None:
                continue  # a budget is in scope: the rules' own fixes already use it
            inside = [d for d in applicable if module.innermost_function(d) is function]
            if id(function) in module.minted:
                minted = edge_default_fixes(inside, placeholder_fixes, expression)
                if minted is not None and minted[2]:
                    plans[id(function)] = minted
                continue
            planned = _thread_function(module, function, inside, placeholder_fixes, expression, id(function) in capped)
            if planned is None:
                unthreadable[id(function)] = inside
                continue
            plans[id(function)] = planned
    chosen = {} if uses_context(module) else _choose(checker, module, plans, threaded, applies, run)
    for key, (function, signature) in chosen.items():
        threaded[key] = function
        edits.append(signature)
    for key, edge in module.minted.items():
        threaded[key] = edge.node  # type: ignore[assignment]  # it mints `budget_s` instead of taking it
    for key, (function_edits, function_imports, function_covered) in plans.items():
        if key in threaded:  # the others keep their findings' own fixes
            edits.extend(function_edits)
            imports.extend(function_imports)
            covered.update(function_covered)
    new_functions = len(chosen)
    for key in [k for k in plans if k not in threaded]:
        unthreadable[key] = [d for d in applicable if module.innermost_function(d) is module.function_of[key]]
    for key, inside in unthreadable.items():
        function = module.function_of[key]
        fallback = ambient_fixes(module, function, inside, placeholder_fixes, capped.get(key, ()))
        if fallback is None and key not in plans:
            fallback = spend_the_edge_default_once(module, function, inside, placeholder_fixes)
        if fallback is not None:
            edits.extend(fallback[0])
            imports.extend(fallback[1])
            covered.update(fallback[2])
    forwarding = forwarding_edits(module, threaded)
    edits.extend(forwarding)
    covered.update(forwarding_findings(found, forwarding, source))
    edits, clock_imports = spend_from_a_deadline(module, threaded, edits)
    imports.extend(clock_imports)
    edits = mint_at_the_edges(module, edits)
    if not edits or _overlapping(edits):
        return None
    return ThreadPlan(tuple(edits), tuple(dict.fromkeys(imports)), frozenset(covered), new_functions)


def _choose(
    checker: "Checker",
    module: ModuleIndex,
    plans: Dict[int, Tuple[List[Edit], List[str], Set[Key]]],
    threaded: Dict[int, Function],
    applies: Callable[[Optional[Fix]], bool],
    run: FrozenSet[str],
) -> Dict[int, Tuple[Function, Edit]]:
    """The functions that get the parameter (no default) and each one's signature edit: the
    planned ones, their callers without a budget (with DL503's unsafe fixes), every method of a
    planned method's name, cut down to the set whose every call is forwarded in this run
    (thread_callers.py)."""
    proposed: Dict[int, Function] = {
        key: f for key, f in ((k, module.function_of[k]) for k in plans)
        if not _has_threaded_parameter(f) and key not in module.minted
    }
    if _threads_callers(checker, applies):
        for function in _callers_to_thread(module, {**threaded, **proposed}):
            proposed[id(function)] = function
    for function in list(proposed.values()):
        for method in same_named_methods(function, module):
            if not _has_threaded_parameter(method) and _may_change(method, module):
                proposed[id(method)] = method
    signatures: Dict[int, Edit] = {}
    for key, function in proposed.items():
        signature = add_keyword_only_parameter(module.source, function, module.parameter)
        if signature is not None:
            signatures[key] = signature
    proposed = {key: f for key, f in proposed.items() if key in signatures}
    by_checker: Dict["Checker", ProjectWords] = current().memo(ProjectWords, lasting=True)
    words = by_checker.get(checker)
    if words is None:
        words = by_checker[checker] = ProjectWords()
    words.start()
    elsewhere = Elsewhere(
        checker, run, _threads_callers(checker, applies), words, module.profile.fix.public_api, caller_would_thread,
        will_forward, caller_budget,
    )
    elsewhere.mint = module.mint
    chosen = required_parameter_set(module, proposed, elsewhere)
    return {key: (function, signatures[key]) for key, function in chosen.items()}


def _threads_callers(checker: "Checker", applies: Callable[[Optional[Fix]], bool]) -> bool:
    """With DL503 (budget-not-forwarded) selected and its unsafe fixes applied, the plan
    also threads the parameter up the call graph: a caller without a budget gets one too."""
    return FORWARDING_CODE in checker.codes and applies(Fix((), Applicability.UNSAFE, ""))


def _callers_to_thread(module: ModuleIndex, threaded: Dict[int, Function]) -> List[Function]:
    """Functions with no budget that call a threaded function by name, and (a fixpoint)
    the callers of those, each provably threadable."""
    added: List[Function] = []
    reached = dict(threaded)
    changed = True
    while changed:
        changed = False
        for call, scope in module.calls:
            caller = scope.node
            if scope.kind != FUNCTION or not isinstance(caller, _DEFS) or id(caller) in reached:
                continue
            if not proposable_caller(module, caller):
                continue
            if threaded_target(call, scope, reached, module) is None or not forwardable(call, module):
                continue
            reached[id(caller)] = caller
            added.append(caller)
            changed = True
    return added


def _thread_function(
    module: ModuleIndex,
    function: Function,
    inside: List[Diagnostic],
    placeholder_fixes: Dict[Key, Fix],
    expression: str, capped: bool = False,
) -> Optional[Tuple[List[Edit], List[str], Set[Key]]]:
    """For each finding in the body whose fix uses the edge default, that fix with `budget_s`
    instead (the signature is `_choose`'s); None to bail. A `capped` one needs none: DL102 fixes its hops next round."""
    if not _has_threaded_parameter(function) and not _may_change(function, module):
        return None
    if _has_threaded_parameter(function) and (
        not _threadable(function, module.scope_of[id(function)])
        or _suppressed(module.source, function.lineno)
        or module.is_test(function)
    ):
        return None
    planned = edge_default_fixes(inside, placeholder_fixes, expression)
    if planned is None or not (planned[2] or capped):
        return None  # a timeout it cannot place, or nothing in the body would use the parameter
    return planned
