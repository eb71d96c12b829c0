"""tests/goldens/: `fix --unsafe-fixes --thread-budget` and the codemod thread a budget along a
whole chain in one module, and the threaded code, run under bench/sim_runtime.py's virtual
clock and recording transports, keeps the contract on every hop."""
from __future__ import annotations

import random
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from deadline_lint.engine.checker import Checker
from deadline_lint.fixes.loop import FixMode, fix_text

ROOT = Path(__file__).resolve().parent.parent
GOLDENS = ROOT / "tests" / "goldens"
sys.path.insert(0, str(ROOT / "bench"))

import sim_runtime as rt  # noqa: E402

NAMES = ["thread_chain.py", "thread_spending.py", "thread_methods.py"]

# LibCST's codemod machinery and the codemod, imported by `_libcst` in the process that runs
# these tests (as in test_codemod): a second of every xdist worker's collection otherwise.
CodemodContext: Any = None
TransformSuccess: Any = None
transform_module: Any = None
InsertBudget: Any = None


@pytest.fixture(autouse=True, scope="module")
def _libcst() -> None:
    global CodemodContext, TransformSuccess, transform_module, InsertBudget
    from libcst.codemod import CodemodContext, TransformSuccess, transform_module

    from deadline_lint.frontends.codemod import InsertBudget


@pytest.mark.parametrize("name", NAMES)
def test_fix_and_the_codemod_write_the_golden(name: str) -> None:
    before = (GOLDENS / name).read_text(encoding="utf-8")
    golden = (GOLDENS / f"{name}.fixed").read_text(encoding="utf-8")
    result = fix_text(Checker(), before, name, FixMode(unsafe=True, thread_budget=True))
    assert result.text == golden and result.remaining == ()
    command = InsertBudget(CodemodContext(), unsafe_fixes=True, thread_budget=True)
    transformed = transform_module(command, before)
    assert isinstance(transformed, TransformSuccess) and transformed.code == golden
    assert fix_text(Checker(), golden, name, FixMode(unsafe=True, thread_budget=True)).text == golden


def _run_golden(name: str, total: float, seed: int, request_fields: dict):
    """Run `handler` of a fixed golden as one request; return the module and its calls, each
    checked against the contract."""
    fakes = rt.fakes()
    text = (GOLDENS / f"{name}.fixed").read_text(encoding="utf-8")
    module = rt.Tree("golden", {"m": text}, fakes).module("m")
    request = rt.Request(deadline=total, rng=random.Random(seed), package="golden")
    rt.STATE.request = request
    try:
        rt._now.set(0.0)
        try:
            module.handler(SimpleNamespace(**request_fields), fakes["simbudget"].Budget(total))
        except rt.Simulated:
            pass
    finally:
        rt.STATE.request = None
    assert request.calls
    for call in request.calls:
        assert call.timeout is not None
        assert call.timeout <= max(rt.TIMEOUT_FLOOR_S, call.remaining - rt.HOP_MARGIN_S) + 1e-9, call
    return module


@pytest.mark.parametrize("total", [0.2, 1.0, 10.0])
@pytest.mark.parametrize("seed", range(15))
def test_the_threaded_chain_never_gives_a_hop_more_than_is_left(total: float, seed: int) -> None:
    _run_golden("thread_spending.py", total, seed, {"user_ids": ["a", "b", "c"]})


@pytest.mark.parametrize("total", [0.2, 1.0, 10.0])
@pytest.mark.parametrize("seed", range(10))
def test_the_threaded_methods_keep_the_contract_and_every_override_takes_the_budget(total: float, seed: int) -> None:
    module = _run_golden("thread_methods.py", total, seed, {"keys": ["a", "b", "c"]})
    assert module.CachedRepository().load_many(["a"], budget_s=1.0) == [{"cached": "a"}]
