"""Budget sources the fixtures do not spell out: seconds parameters and optional budgets."""
from __future__ import annotations

from deadline_lint.engine import Checker


def messages(text: str, select=("DL101", "DL102")):
    return [(d.code, d.message) for d in Checker(select=list(select)).check_text(text, "svc.py")]


def test_a_threaded_seconds_parameter_is_a_budget() -> None:
    text = (
        "import requests\n"
        "def fetch(url, *, budget_s: float = 10.0):\n"
        "    requests.get(url)\n"
        "    requests.get(url, timeout=5)\n"
    )
    (first, second) = messages(text)
    assert first[0] == "DL101" and "timeout=max(0.001, budget_s - 0.05)" in first[1]
    assert second[0] == "DL102"


def test_optional_budget_falls_back_to_the_edge_default() -> None:
    text = (
        "from typing import Optional\n"
        "import requests\n"
        "def fetch(url, budget: Optional['Budget'] = None):\n"
        "    requests.get(url)\n"
    )
    ((code, message),) = messages(text)
    assert "timeout=(budget.timeout() if budget is not None else 10.0)" in message


def test_required_budget_uses_the_plain_template() -> None:
    text = "import requests\ndef fetch(url, budget):\n    requests.get(url)\n"
    ((code, message),) = messages(text)
    assert "timeout=budget.timeout()" in message and "is not None" not in message
