"""`fix --thread-budget` with an ambient budget (`fix.context_accessor`): a function that cannot
take a `budget_s` parameter, or every function under `fix.propagation = "context"`, reads the
request's remaining time where each hop starts; nothing below the edge mints a new total."""
from __future__ import annotations

import sys
from types import ModuleType, SimpleNamespace
from typing import List

import pytest

from deadline_lint.engine.checker import Checker
from deadline_lint.fixes.loop import FixMode, fix_text
from deadline_lint.settings.profile import build_profile

ACCESSOR = "appdeadlines.remaining_seconds"
TEXT = """\
import requests


def fetch(url):
    return requests.get(url)


def handler(url, budget):
    return fetch(url)


def job(url):
    fetch(url)
    return requests.post(url)
"""
AMBIENT = f"max(0.001, {ACCESSOR}() - 0.05)"


def _fix(text: str, propagation: str = "parameter", accessor: str = ACCESSOR, left: tuple = ()) -> str:
    profile = build_profile(
        {"fix": {"context_accessor": accessor, "propagation": propagation}, "budget": {"accessors": [accessor]}},
        "p.yaml",
    )
    result = fix_text(Checker(profile), text, "m.py", FixMode(unsafe=True, thread_budget=True))
    assert tuple(d.code for d in result.remaining) == left  # the re-check is clean for the threaded rules
    again = fix_text(Checker(profile), result.text, "m.py", FixMode(unsafe=True, thread_budget=True))
    assert again.text == result.text  # fixing twice == once
    return result.text


def test_a_function_with_an_unbudgeted_caller_reads_the_ambient_budget() -> None:
    fixed = _fix(TEXT)
    assert "def fetch(url):" in fixed  # `job` could not pass a parameter: no signature change
    assert f"requests.get(url, timeout={AMBIENT})" in fixed
    assert f"requests.post(url, timeout={AMBIENT})" in fixed
    assert "import appdeadlines\n" in fixed and "budget_s" not in fixed


def test_where_every_caller_forwards_the_parameter_is_still_preferred() -> None:
    fixed = _fix(TEXT.split("\n\ndef job")[0] + "\n")
    assert "def fetch(url, *, budget_s: float):" in fixed and ACCESSOR not in fixed


def test_context_propagation_changes_no_signature() -> None:
    fixed = _fix(TEXT.split("\n\ndef job")[0] + "\n", propagation="context")
    assert "def fetch(url):" in fixed and "budget_s" not in fixed
    assert f"requests.get(url, timeout={AMBIENT})" in fixed


def test_a_decorated_function_reads_the_ambient_budget_at_each_attempt() -> None:
    text = "import requests\nimport tenacity\n\n@tenacity.retry\ndef fetch(url):\n    return requests.get(url)\n"
    # DL302 (the bare retry also retries expiry) has no fix: it stays reported; and once its
    # hop reads the accessor the budget is in scope, so DL303 says the retry ignores it
    assert f"requests.get(url, timeout={AMBIENT})" in _fix(text, left=("DL302", "DL303"))


CAPPED = """\
import httpx
import requests
import tenacity


@tenacity.retry
def fetch(url):
    httpx.get(url)
    return requests.get(url, timeout=30.0)
"""


def test_a_function_that_cannot_take_the_parameter_caps_its_fixed_hops_by_the_ambient_budget() -> None:
    """No rule speaks where no budget is (thread_capped.py), and a decorated function cannot
    take `budget_s`: its literal timeout and its library default read the accessor instead."""
    fixed = _fix(CAPPED, left=("DL302", "DL303"))
    assert f"httpx.get(url, timeout={AMBIENT})" in fixed
    assert f"requests.get(url, timeout=min(30.0, {AMBIENT}))" in fixed


def test_fixed_hops_stay_as_they_are_without_an_accessor_or_unsafe_fixes() -> None:
    assert fix_text(Checker(), CAPPED, "m.py", FixMode(unsafe=True, thread_budget=True)).text == CAPPED
    profile = build_profile({"fix": {"context_accessor": ACCESSOR}, "budget": {"accessors": [ACCESSOR]}}, "p.yaml")
    assert fix_text(Checker(profile), CAPPED, "m.py", FixMode(unsafe=False, thread_budget=True)).text == CAPPED


def test_a_module_name_bound_to_something_else_keeps_the_edge_total() -> None:
    text = "import requests\n\nappdeadlines = None\n\ndef fetch(url):\n    return requests.get(url)\n"
    fixed = _fix(text)
    assert ACCESSOR not in fixed and "timeout=10.0" in fixed


def test_without_an_accessor_nothing_reads_an_ambient_budget() -> None:
    fixed = fix_text(Checker(), TEXT, "m.py", FixMode(unsafe=True, thread_budget=True)).text
    assert "remaining_seconds" not in fixed and fixed.count("timeout=10.0") == 2


@pytest.mark.parametrize("left", [0.3, 2.0])
def test_the_fixed_code_gives_each_hop_what_is_left_when_it_starts(monkeypatch, left: float) -> None:
    clock = {"now": 0.0}
    timeouts: List[float] = []
    deadlines = ModuleType("appdeadlines")
    deadlines.remaining_seconds = lambda: left - clock["now"]  # type: ignore[attr-defined]
    requests = ModuleType("requests")

    def call(url, timeout):
        timeouts.append(timeout)
        clock["now"] += 0.1  # each hop takes a tenth of a second
        return SimpleNamespace(url=url)

    requests.get = requests.post = call  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "appdeadlines", deadlines)
    monkeypatch.setitem(sys.modules, "requests", requests)
    namespace: dict = {}
    exec(compile(_fix(TEXT), "m.py", "exec"), namespace)
    namespace["job"]("u")
    assert timeouts == pytest.approx([max(0.001, left - 0.05), max(0.001, left - 0.1 - 0.05)])
