"""What DL107's and DL301's fixes leave behind: no dead local (pyflakes F841), and no retry
filter that still admits expiry through a subclass."""
from __future__ import annotations

import ast

import pyflakes.api
import pyflakes.reporter
import pytest

from deadline_lint.engine import Checker
from deadline_lint.fixes import FixMode, fix_text


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
