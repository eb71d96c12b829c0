"""Forwarding `budget_s` from callers (thread_budget.py): `f(x)` -> `f(x, budget_s=...)` where
`f` provably runs a threaded function (one of this module's, a method whose whole family
takes the parameter, or a function of another project module that already takes it) and the
caller has a budget to give."""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from deadline_lint.engine.edits import insert_keyword
from deadline_lint.families.outbound.fixes.thread_index import DEFS as _DEFS
from deadline_lint.families.outbound.fixes.thread_index import (
    PARAMETER,
    ModuleIndex,
    forwardable,
)
from deadline_lint.families.outbound.fixes.thread_index import has_threaded_parameter as _has_threaded_parameter
from deadline_lint.families.outbound.fixes.thread_index import mentions_parameter as _mentions_parameter
from deadline_lint.families.outbound.fixes.thread_index import suppressed as _suppressed
from deadline_lint.families.outbound.fixes.thread_index import threadable as _threadable
from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.semantics.local.scopes import FUNCTION, OTHER, Scope
from deadline_lint.support.diagnostics import Edit

ELSEWHERE = ast.Pass()  # `threaded_target`'s answer for a function of another module


def will_forward(module: ModuleIndex, call: ast.Call, scope: Scope, members: Dict[int, Function]) -> bool:
    """`forwarding_edits` would give `call` the keyword with `members` threaded (besides the
    functions that already take it)."""
    threaded = {**members, **{id(f): f for f in module.functions if _has_threaded_parameter(f)}}
    target = threaded_target(call, scope, threaded, module)
    if target is None or not forwardable(call, module):
        return False
    value = caller_budget(scope, threaded, module)
    if value is None:
        return False
    members_run = () if target is ELSEWHERE else _family_members(call, scope, module)
    if any(id(m) not in threaded and not _has_threaded_parameter(m) for m in members_run):
        return False
    return insert_keyword(module.source, call, PARAMETER, value) is not None


def forwarding_edits(module: ModuleIndex, threaded: Dict[int, Function]) -> List[Edit]:
    """`f(x)` -> `f(x, budget_s=...)` where `f` is threaded and the caller has a budget; a
    method call only when every method it can run takes the parameter (no signature is added
    here: `_choose` decided which functions change)."""
    edits: List[Edit] = []
    # Even with nothing threaded here: a callee in another module may have been (an earlier
    # pass of this run relies on this pass forwarding to it, thread_elsewhere.py).
    for call, scope in module.calls:
        target = threaded_target(call, scope, threaded, module)
        if target is None or not forwardable(call, module):
            continue  # a suppressed line is left exactly as it is
        value = caller_budget(scope, threaded, module)
        if value is None:
            continue
        members = () if target is ELSEWHERE else _family_members(call, scope, module)
        if any(id(m) not in threaded and not _has_threaded_parameter(m) for m in members):
            continue
        edit = insert_keyword(module.source, call, PARAMETER, value)
        if edit is not None:
            edits.append(edit)
    return edits


def _family_members(call: ast.Call, scope: Scope, module: ModuleIndex) -> Tuple[Function, ...]:
    family = module.methods.family(call, scope) if isinstance(call.func, ast.Attribute) else None
    return family.members if family is not None else ()


def threaded_target(call: ast.Call, scope: Scope, threaded: Dict[int, Function], module: ModuleIndex):
    """The threaded function `call` calls, if provably so: one of this module's (below), or
    an undecorated module-level function of another project module that already takes
    `budget_s` (ELSEWHERE: threaded by an earlier pass of this run, or written so)."""
    found = _threaded_here(call, scope, threaded, module)
    if found is None and module.elsewhere.takes_parameter(call, scope):
        return ELSEWHERE
    return found


def _threaded_here(
    call: ast.Call, scope: Scope, threaded: Dict[int, Function], module: ModuleIndex
) -> Optional[Function]:
    """A function of this module: a module-level or nested function by plain name, or a
    method whose whole family (thread_methods.py) has or can take the parameter (on `self`
    only with unsafe fixes: an override elsewhere cannot be seen)."""
    if isinstance(call.func, ast.Attribute):
        family = module.methods.family(call, scope)
        if family is None or (family.on_self and not module.unsafe):
            return None
        method = family.members[0]
        if id(method) not in threaded:
            return None
        for member in family.members:
            if id(member) in threaded or _has_threaded_parameter(member):
                continue
            member_scope = module.scope_of[id(member)]
            if (
                not _threadable(member, member_scope)
                or _suppressed(module.source, member.lineno)
                or _mentions_parameter(member)
            ):
                return None
        return method
    if not isinstance(call.func, ast.Name):
        return None
    bindings = scope.lookup(call.func.id)
    if not bindings or len(bindings) != 1 or bindings[0].kind != OTHER:
        return None
    target = bindings[0].value
    if id(target) not in threaded or not isinstance(target, _DEFS):
        return None
    target_scope = module.scope_of[id(target)]
    if target_scope.enclosing_class is not None or not _threadable(target, target_scope):
        return None
    return target


def caller_budget(scope: Scope, threaded: Dict[int, Function], module: ModuleIndex) -> Optional[str]:
    if scope.kind != FUNCTION:
        return None
    if id(scope.node) in threaded or id(scope.node) in module.minted:
        return PARAMETER
    budget = module.budgets.budget_of(scope)
    return budget.timeout_expression(module.profile) if budget is not None else None


