"""Source text at the edges of what the rules look at: a form feed before a first-line import,
CR-only line endings, `;`-joined statements, and PEP 701 f-strings under an older Python."""
from __future__ import annotations

import sys

import pytest

from deadline_lint.engine.checker import Checker
from deadline_lint.engine.syntax_versions import needed_version

WAIT = "def wait(probe, timeout):\n    deadline = time() + timeout\n    while time() < deadline:\n        probe()\n"


@pytest.mark.parametrize("head", [
    "from time import time\n",
    "\ffrom time import time\n",  # a form feed is indentation whitespace to the tokenizer
    "import os; from time import time\n",
], ids=["plain", "form-feed", "after-semicolon"])
def test_a_wall_clock_import_is_seen_however_its_line_starts(head: str) -> None:
    found = Checker(select=["DL201"]).check_text(head + WAIT, "m.py")
    assert [d.code for d in found] == ["DL201", "DL201"]


def test_a_cr_only_file_is_read_like_any_other() -> None:
    text = ("import os\n" + "from time import time\n" + WAIT).replace("\n", "\r")
    assert [d.code for d in Checker(select=["DL201"]).check_text(text, "m.py")] == ["DL201", "DL201"]


@pytest.mark.parametrize("line", [
    'x = f"{a["k"]}"',
    "x = f'{\"\\n\".join(a)}'".replace('"', "'", 2),
    'x = f"{a # a comment',
])
def test_pep_701_f_strings_need_python_3_12(line: str) -> None:
    assert needed_version(line, (3, 11)) == (3, 12)


@pytest.mark.parametrize("line", [
    'x = f"{a}" + "}"', 'x = f"{{" + "a"', "x = f'{x:{\"y\"}}'", 'x = "{" + f"{a}"',
])
def test_f_strings_older_pythons_read_are_not_blamed(line: str) -> None:
    assert needed_version(line, (3, 11)) is None


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="parses on 3.12 and newer")
def test_dl001_says_a_pep_701_f_string_needs_3_12() -> None:
    [found] = Checker().check_text('import requests\nname = f"{user["name"]}"\n', "m.py")
    assert found.code == "DL001"
    assert found.message.startswith("needs Python 3.12 to parse (this is Python 3.11)")
