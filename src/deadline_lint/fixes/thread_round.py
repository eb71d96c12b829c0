"""The thread plan of one round of the fix loop (loop.py) under `--thread-budget`: whether it
is built at all, and from which tree (thread_budget.py builds it)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, FrozenSet, List, Optional, Protocol

from deadline_lint.engine.reading import unusable_text
from deadline_lint.families.outbound.fixes.thread_budget import (
    PARAMETER,
    THREADED_CODES,
    ThreadPlan,
    plan_thread_budget,
)
from deadline_lint.families.outbound.fixes.thread_empty import plans_nothing
from deadline_lint.semantics.imported import imports_module_mentioning, may_import_mentioning
from deadline_lint.support.diagnostics import Applicability, Diagnostic, Fix
from deadline_lint.support.source import SourceFile

if TYPE_CHECKING:
    from deadline_lint.engine.checker import Checker


class FixMode(Protocol):
    """What the plan reads of the loop's `FixMode` (loop.py imports this module)."""

    @property
    def thread_budget(self) -> bool: ...
    @property
    def mint_at_edges(self) -> bool: ...
    @property
    def run(self) -> FrozenSet[str]: ...
    def applies(self, fix: Optional[Fix]) -> bool: ...


def looks_for_capped(mode: FixMode, first: bool) -> bool:
    # Hops with no finding that a budget would cap are looked for in a text's first round only:
    # the functions given the budget then take it then, and a later round's text differs only by fixes.
    return first and mode.applies(Fix((), Applicability.UNSAFE, ""))


def tree_for_the_plan(text: str, path: str, mode: FixMode, first: bool) -> Optional[ast.Module]:
    """The text parsed once for both the check and the thread plan, where the plan will parse
    it whatever the check finds (`thread_plan`'s gate passes); None: each parses as before.
    The same `ast.parse` either would call, so the trees are the ones they would have had
    (neither changes a tree it is given)."""
    if not mode.thread_budget or not (PARAMETER in text or looks_for_capped(mode, first)):
        return None
    if unusable_text(text, path) is not None:
        return None  # the check reports it without parsing (DL002, DL004 keeps its memory bounded)
    try:
        return ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the check's own parse says why; the plan's parse fails as before


def thread_plan(
    checker: "Checker", text: str, path: str, found: List[Diagnostic], mode: FixMode, first: bool = False,
    tree: Optional[ast.Module] = None,
) -> Optional[ThreadPlan]:
    """The round's plan, None when there is nothing to thread; `tree`: the text parsed."""
    capped = looks_for_capped(mode, first)
    if (
        PARAMETER not in text and not any(d.code in THREADED_CODES for d in found)
        and not capped
        and not imports_module_mentioning(text, path, PARAMETER)
    ):
        return None  # nothing to thread and nothing to forward (here or to another module): skip the parse
    if tree is None:
        try:
            tree = ast.parse(text, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    # Most later rounds plan nothing (the first round threaded what there was): proven so from
    # the tree, they skip building the planner's index of the module.
    if plans_nothing(
        tree, found, mode.applies, lambda sources: may_import_mentioning(text, path, sources, PARAMETER),
        look_for_capped=capped, mint=mode.mint_at_edges,
    ):
        return None
    return plan_thread_budget(
        checker, SourceFile(text, path), tree, found, mode.applies, mode.run,
        mint_at_edges=mode.mint_at_edges, look_for_capped=capped,
    )
