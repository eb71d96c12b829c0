"""Spending a threaded budget once (thread_budget.py). `budget_s` is the time left when the
function was called: a function that spends it more than once takes a deadline on entry and
gives each hop what is left of it then; a retried function, which cannot take `budget_s`,
spends the edge default once per attempt the same way (spend_deadline.py does the edits)."""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.families.outbound.fixes.spend_deadline import (
    THREADED_DEADLINE,
    can_take_deadline,
    has_deadline,
    imports_time,
    prepend_statement,
)
from deadline_lint.families.outbound.fixes.thread_fixes import PLACEHOLDER, Key, edge_default_fixes
from deadline_lint.families.outbound.fixes.thread_index import PARAMETER, ModuleIndex, suppressed
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.support.diagnostics import Diagnostic, Edit, Fix
from deadline_lint.support.source import SourceFile

DEADLINE = THREADED_DEADLINE  # a function that spends `budget_s` twice turns it into this
EDGE_DEADLINE = "edge_deadline_s"  # and one that cannot take `budget_s` spends the edge default from this


def spend_from_a_deadline(
    module: ModuleIndex, threaded: Dict[int, Function], edits: List[Edit],
) -> Tuple[List[Edit], List[str]]:
    """`budget_s` is the time left when the function was called. A function that spends it more
    than once (two hops, a hop and a forward, a hop in a loop) would give every later hop the
    time the first one already used: it turns the parameter into a deadline on entry
    (`budget_deadline_s = time.monotonic() + budget_s`) and derives each timeout and each
    forwarded budget from what is left of it at that moment. Where `time` or the name means
    something else there, the plain parameter stays (and the function says so in its docs)."""
    profile = module.profile
    seconds = profile.render("seconds_expression", PARAMETER)
    fresh = profile.render("seconds_expression", f"({DEADLINE} - time.monotonic())")
    forward = f"{PARAMETER}={PARAMETER}"
    imports: List[str] = []
    result = list(edits)
    for function in threaded.values():
        start, end = module.source.node_span(function)
        body_start = module.source.node_span(function.body[0])[0]
        inside = [i for i, e in enumerate(result) if body_start <= e.start and e.end <= end]
        uses = [i for i in inside if seconds in result[i].text or result[i].text.endswith(forward)]
        if not uses:
            continue
        if has_deadline(function, DEADLINE):
            # Taken by an earlier round or pass (a forward to another module added later):
            # `budget_s` is the time at entry, so a new use spends what is left now.
            _spend_fresh(result, uses, seconds, fresh, forward)
            continue
        # Uses already in the code count too: a function threaded by an earlier pass (or by
        # hand) with one hop, given a forward to another module now, spends `budget_s` twice.
        spent = _spent_already(function, module.source)
        in_loop = any(_in_loop(function, result[i].start, module.source) for i in uses)
        first = min(result[i].start for i in uses)
        if len(uses) + len(spent) < 2 and not in_loop and not _waits_before(function, first, module):
            continue
        if not can_take_deadline(module.tree, function, DEADLINE):
            continue
        opening = prepend_statement(module.source, function, f"{DEADLINE} = time.monotonic() + {PARAMETER}")
        if opening is None:
            continue
        rewritten = [Edit(start, end, f"({DEADLINE} - time.monotonic())") for start, end in spent]
        if overlapping([*(result[i] for i in uses), *rewritten, opening]):
            continue
        _spend_fresh(result, uses, seconds, fresh, forward)
        result.extend(rewritten)
        result.append(opening)
        if not imports_time(module.tree):
            imports.append("time")  # only when missing: adding one is a LibCST pass over the file
    return result, imports


def _spent_already(function: Function, source: SourceFile) -> List[Tuple[int, int]]:
    """Where the body already reads `budget_s` (a nested scope has bailed before this)."""
    spans = []
    for statement in function.body:
        for node in walk_nodes(statement):
            if isinstance(node, ast.Name) and node.id == PARAMETER and isinstance(node.ctx, ast.Load):
                spans.append(source.node_span(node))
    return spans


def _spend_fresh(edits: List[Edit], uses: List[int], seconds: str, fresh: str, forward: str) -> None:
    for i in uses:
        edit = edits[i]
        text = edit.text.replace(seconds, fresh)
        if text.endswith(forward):
            text = text[: -len(forward)] + f"{PARAMETER}={fresh}"
        edits[i] = Edit(edit.start, edit.end, text)


def spend_the_edge_default_once(
    module: ModuleIndex, function: Function, inside: List[Diagnostic], placeholder_fixes: Dict[Key, Fix],
) -> Optional[Tuple[List[Edit], List[str], Set[Key]]]:
    """A retried function cannot take `budget_s` (`_threadable`: every attempt would spend it
    again): it keeps the edge default, and would spend the whole of it at every hop. With two
    or more such hops, or one in a loop, it takes the edge default as a deadline on entry
    (`edge_deadline_s = time.monotonic() + <edge default>`) and gives each hop what is left of
    it: one attempt then spends the edge total once. The next attempt starts a new one (DL303
    says why no budget is threaded there). None when any of its edge-default fixes cannot be
    shown, or the deadline cannot be taken (spend_deadline.py)."""
    if not _retried(module, function) or suppressed(module.source, function.lineno):
        return None
    profile = module.profile
    expression = profile.render("seconds_expression", f"({EDGE_DEADLINE} - time.monotonic())")
    planned = edge_default_fixes(inside, placeholder_fixes, expression)
    if planned is None:
        return None
    edits, imports, covered = planned
    uses = [e.start for key in covered for e in placeholder_fixes[key].edits if PLACEHOLDER in e.text]
    if len(uses) < 2 and not any(_in_loop(function, use, module.source) for use in uses):
        return None
    if has_deadline(function, EDGE_DEADLINE) or not can_take_deadline(module.tree, function, EDGE_DEADLINE):
        return None
    opening = prepend_statement(
        module.source, function, f"{EDGE_DEADLINE} = time.monotonic() + {profile.render('edge_expression')}"
    )
    if opening is None:
        return None
    if not imports_time(module.tree):
        imports.append("time")
    return [opening, *edits], imports, covered


def _retried(module: ModuleIndex, function: Function) -> bool:
    """A decorator of `function` is a retry policy the catalog or the profile knows. Only these
    spend the edge default from an entry deadline: on the corpora, the other unthreadable
    functions it reached were lifespans building long-lived clients (a client's timeout is for
    its whole life, not a hop spent now), cleanup waits in `finally` and background loops."""
    scope = module.scope_of[id(function)].parent
    if scope is None:
        return False
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        qualname = module.resolver.qualified_name(target, scope)
        if qualname is not None and (
            module.catalog.retry.policy(qualname) is not None or qualname in module.profile.retry_decorators
        ):
            return True
    return False


def _waits_before(function: Function, offset: int, module: ModuleIndex) -> bool:
    """Something before `offset` in the body takes time that `budget_s`, read at entry, does
    not know of: an `await`, or a call of a project function (this module's or another's, a
    method of a project class). An edge that mints `budget_s` and then looks something up
    would otherwise give its one hop the whole budget after the lookup spent part of it."""
    from deadline_lint.semantics.file import FileSemantics

    for node in walk_nodes(function):
        if isinstance(node, ast.Await) and module.source.node_span(node)[1] <= offset:
            return True
    before = [(call, scope) for call, scope in module.calls
              if scope.node is function and module.source.node_span(call)[1] <= offset]
    if not before:
        return False
    semantics = FileSemantics(module)
    return any(semantics.callee(call.func, scope) is not None for call, scope in before)


# Code that runs a call more than once, one after the other (a comprehension too).
_REPEATS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _in_loop(function: Function, offset: int, source: SourceFile) -> bool:
    for node in walk_nodes(function):
        if isinstance(node, _REPEATS) and node is not function:
            start, end = source.node_span(node)
            if start <= offset < end:
                return True
    return False


def overlapping(edits: List[Edit]) -> bool:
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    return any(b.start < a.end or (b.start == a.start) for a, b in zip(ordered, ordered[1:]))
