"""A checked file leaves no reference cycle behind that holds its tree.

The engine pauses the cyclic collector while it checks a file (collector.py). What a file's
check leaves in a cycle is freed only when the collector runs again, and that pass walks
every node of the tree the cycle holds: on the library corpus such cycles (a binding and its
scope, the file's context and its resolver, two analyses holding each other) made the
collector a seventh of a cold check's CPU. Freed by reference counting, the tree costs the
collector nothing."""
from __future__ import annotations

import ast
import gc
from pathlib import Path
from typing import Iterator, List

from deadline_lint.engine.context import FileContext
from deadline_lint.run import api
from deadline_lint.semantics.local.scopes import Scope

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture_files() -> List[str]:
    return sorted(str(path) for path in FIXTURES.rglob("*.py"))


def cyclic_garbage(paths: List[str]) -> Iterator[object]:
    """Everything the checks of `paths` (every rule, project facts on) left to the cyclic
    collector."""
    api.reset()
    session = api.Session(api.Options(select=("ALL",), jobs=1))
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for result in session.lint_paths(paths):
            assert result.diagnostics is not None
        del result
        gc.collect()
        garbage = list(gc.garbage)
    finally:
        gc.garbage.clear()
        gc.set_debug(0)
        if was_enabled:
            gc.enable()
        api.reset()
    yield from garbage


def test_checking_the_fixtures_leaves_no_tree_in_a_cycle() -> None:
    paths = fixture_files()
    assert len(paths) > 100  # every rule's fixtures and the fixture projects
    held = [type(item).__name__ for item in cyclic_garbage(paths) if isinstance(item, (ast.AST, Scope, FileContext))]
    assert held == []
