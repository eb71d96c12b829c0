"""The fix loop skips building a thread plan it has proven empty (thread_empty.py). The proof
must never skip a plan that had edits: over simulated call trees and the thread goldens, every
skipped plan is built anyway here and must be None; and the skip must happen (most later
rounds plan nothing)."""
from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Counter, Iterator, List, Set

import pytest

from deadline_lint.engine.checker import Checker
from deadline_lint.families.outbound.fixes.thread_empty import plans_nothing
from deadline_lint.fixes import thread_round
from deadline_lint.fixes.loop import FixMode, fix_text
from deadline_lint.run import api

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import simulate  # noqa: E402


@pytest.fixture
def skips(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Every plan is built; where the proof said it would be empty, it must be."""
    proof = thread_round.plans_nothing
    said: List[bool] = []
    counts: Counter[str] = Counter()

    def recording(*args, **kwargs) -> bool:  # type: ignore[no-untyped-def]
        said.append(proof(*args, **kwargs))
        return False  # build the plan anyway

    original = thread_round.thread_plan

    def thread_plan(checker, text, path, found, mode, first=False, tree=None):  # type: ignore[no-untyped-def]
        said.clear()
        plan = original(checker, text, path, found, mode, first, tree)
        counts["plans"] += 1
        if said and said[0]:
            counts["skipped"] += 1
            assert plan is None, f"a skipped plan had edits: {path}\n{text}"
        return plan

    monkeypatch.setattr(thread_round, "plans_nothing", recording)
    monkeypatch.setattr(thread_round, "thread_plan", thread_plan)
    yield counts


def test_no_skipped_plan_of_simulated_trees_had_edits(skips: Counter[str]) -> None:
    simulate.simulate(25, 34, codemod=False)
    simulate.simulate(25, 35, codemod=True, start=25)  # the codemod's loop too
    simulate.simulate(15, 36, codemod=False, flat=True)
    assert skips["skipped"] > 20, skips


def test_no_skipped_plan_of_the_module_goldens_had_edits(skips: Counter[str], tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "project"
    shutil.copytree(ROOT / "tests" / "goldens" / "thread_modules" / "before", root)
    paths = sorted(str(p) for p in (root / "shop").glob("*.py"))
    list(api.fix_paths(paths, api.Options(unsafe_fixes=True, thread_budget=True, jobs=1)))
    list(api.fix_paths(paths, api.Options(thread_budget=True, jobs=1)))  # safe fixes: no capped hops
    assert skips["plans"] > 0


# -- what the proof looks for, one at a time ----------------------------------------------

THREADED = """\
import requests


def fetch(url, *, budget_s: float):
    return requests.get(url, timeout=max(0.001, budget_s - 0.1))


def handler(url, budget_s: float = 1.0):
    return fetch(url, budget_s=budget_s)
"""


def _proves(text: str, mode: FixMode = FixMode(unsafe=True, thread_budget=True), elsewhere: bool = True,
            capped: bool = False) -> bool:
    found = Checker().check_text(text, "m.py")
    # A relative import stands for the project here, and its module for one spelling `budget_s`.
    def reaches(sources: Set[str]) -> bool:
        return elsewhere and any(source.startswith(".") for source in sources)

    return plans_nothing(ast.parse(text), found, mode.applies, reaches, look_for_capped=capped)


def test_every_call_passing_the_parameter_plans_nothing() -> None:
    assert _proves(THREADED)
    assert fix_text(Checker(), THREADED, "m.py", FixMode(unsafe=True, thread_budget=True)).text == THREADED


def test_a_call_of_a_threaded_function_without_it_may_be_forwarded() -> None:
    assert not _proves(THREADED.replace("fetch(url, budget_s=budget_s)", "fetch(url)"))
    method = THREADED.replace("return fetch(url, budget_s=budget_s)", "return CLIENT.fetch(url)")
    assert not _proves(method)  # a method of that name may be one of the family


def test_a_call_through_a_project_import_may_reach_another_modules_parameter() -> None:
    text = "from . import clients\n\n\ndef handler(url):\n    return clients.fetch(url)\n"
    assert not _proves(text, elsewhere=True)
    assert _proves(text, elsewhere=False)


def test_a_finding_the_plan_acts_on_is_no_proof() -> None:
    text = "import requests\n\n\ndef get(url):\n    return requests.get(url)\n"
    assert not _proves(text)  # DL101: a candidate
    assert not _proves(THREADED.replace("timeout=max(0.001, budget_s - 0.1)", "timeout=None"))  # DL103 inside


def test_capped_hops_and_minting_are_never_proven_empty() -> None:
    assert not _proves(THREADED, capped=True)
    found = Checker().check_text(THREADED, "m.py")
    assert not plans_nothing(ast.parse(THREADED), found, FixMode().applies, lambda sources: False, mint=True)
