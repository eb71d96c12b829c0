"""What DL107's and DL301's fixes leave behind: no dead local (pyflakes F841), and no retry
filter that still admits expiry through a subclass."""
from __future__ import annotations

import ast

import pyflakes.api
import pyflakes.reporter
import pytest

from deadline_lint.engine.checker import Checker
from deadline_lint.fixes.loop import FixMode, fix_text


class _Collect:
    def __init__(self) -> None:
        self.messages = []

    def flake(self, message) -> None:
        self.messages.append(str(message))

    def unexpectedError(self, *args) -> None:
        self.messages.append(repr(args))

    syntaxError = unexpectedError


def pyflakes_messages(text: str):
    collected = _Collect()
    pyflakes.api.check(text, "m.py", reporter=collected)  # type: ignore[arg-type]
    return collected.messages


def fixed(text: str, code: str) -> str:
    return fix_text(Checker(select=[code]), text, "m.py", FixMode(unsafe=True)).text


LOOP = (
    "import requests\n\n\n"
    "def pull(urls, budget):\n"
    "    t = budget.timeout()\n"
    "    for url in urls:\n"
    "        requests.get(url, timeout=t)\n"
)


def test_dl107_fix_removes_a_read_it_left_unused() -> None:
    after = fixed(LOOP, "DL107")
    assert "t = budget.timeout()" not in after
    assert "requests.get(url, timeout=budget.timeout())" in after
    assert pyflakes_messages(after) == []
    assert fixed(after, "DL107") == after


@pytest.mark.parametrize("tail", ["    return t\n", "    log(t)\n"])
def test_dl107_fix_keeps_a_read_still_used(tail: str) -> None:
    after = fixed(LOOP.replace("import requests\n", "import requests\nlog = print\n") + tail, "DL107")
    assert "t = budget.timeout()" in after
    ast.parse(after)


def test_dl107_fix_keeps_a_statement_sharing_its_line() -> None:
    text = LOOP.replace("    t = budget.timeout()\n", "    t = budget.timeout(); n = 1\n") + "    return n\n"
    after = fixed(text, "DL107")
    assert "t = budget.timeout(); n = 1" in after
    ast.parse(after)


RETRY_LOOP = (
    "import requests\nimport time\n\n\n"
    "def fetch(url):\n"
    "    for attempt in range(3):\n"
    "        try:\n"
    "            return requests.get(url, timeout=2.0)\n"
    "        except (requests.ConnectionError, requests.Timeout):\n"
    "            time.sleep(0.1)\n"
)


def test_dl301_says_what_its_fix_leaves_admitting_expiry() -> None:
    """Dropping `requests.Timeout` leaves `requests.ConnectionError`, whose subclass
    `ConnectTimeout` is an expiry too (bench/simulate.py retried those after the deadline)."""
    [finding] = Checker(select=["DL301"]).check_text(RETRY_LOOP, "m.py")
    assert finding.message.endswith(
        "; `requests.ConnectionError`, which stays, still lets its subclass `requests.ConnectTimeout` through:"
        " re-raise it in a clause before this one (`except requests.ConnectTimeout: raise`)"
    )
    assert "except (requests.ConnectionError,):" in fixed(RETRY_LOOP, "DL301")


def test_dl301_says_nothing_more_when_nothing_else_admits_expiry() -> None:
    text = RETRY_LOOP.replace("requests.ConnectionError", "ValueError")
    [finding] = Checker(select=["DL301"]).check_text(text, "m.py")
    assert finding.message.endswith("let it propagate (or stop the loop) instead")
