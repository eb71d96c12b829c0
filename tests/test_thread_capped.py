"""`fix --thread-budget --unsafe-fixes` gives the budget to a function whose hops have a fixed
timeout or a library default, no finding of their own (no budget is in scope there, so no
rule speaks), when its callers hold a budget: DL102's own fix then caps those hops. Found by
bench/simulate.py (bench/results/issue34-simulator.md, group G1)."""
from __future__ import annotations

from deadline_lint.engine.checker import Checker
from deadline_lint.fixes.loop import FixMode, fix_text

UNSAFE = FixMode(unsafe=True, thread_budget=True)

CALLED_WITH_A_BUDGET = """\
import httpx
import requests


def fetch(url):
    requests.get(url, timeout=30.0)
    httpx.get(url)


def handler(url, budget):
    fetch(url)
"""


def _fix(text: str, mode: FixMode = UNSAFE) -> str:
    result = fix_text(Checker(), text, "m.py", mode)
    assert result.text is not None
    return result.text


def test_a_function_with_fixed_hops_under_a_budget_takes_it_and_caps_them() -> None:
    fixed = _fix(CALLED_WITH_A_BUDGET)
    assert "def fetch(url, *, budget_s: float):" in fixed
    assert "fetch(url, budget_s=" in fixed
    assert "timeout=min(30.0, " in fixed  # DL102's own fix, once the parameter is in scope
    assert "httpx.get(url, timeout=" in fixed  # the library default is capped too
    assert _fix(fixed) == fixed  # fixing twice is fixing once


def test_with_no_caller_holding_a_budget_nothing_changes() -> None:
    text = CALLED_WITH_A_BUDGET.replace("def handler(url, budget):", "def handler(url):")
    assert _fix(text) == text


def test_safe_fixes_alone_thread_nothing_for_fixed_hops() -> None:
    assert _fix(CALLED_WITH_A_BUDGET, FixMode(thread_budget=True)) == CALLED_WITH_A_BUDGET


def test_a_function_that_has_a_budget_keeps_its_signature() -> None:
    text = CALLED_WITH_A_BUDGET.replace("def fetch(url):", "def fetch(url, budget):").replace(
        "    fetch(url)", "    fetch(url, budget)"
    )
    fixed = _fix(text)
    assert "def fetch(url, budget):" in fixed and "budget_s" not in fixed


def test_a_hop_on_the_signature_line_is_left_alone() -> None:
    text = "import requests\n\n\ndef fetch(url): requests.get(url, timeout=30.0)\n\n\n" \
           "def handler(url, budget):\n    fetch(url)\n"
    assert _fix(text) == text
