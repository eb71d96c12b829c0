"""The clock family's documented examples are tests (the Example fires, the Use instead does
not), and what its fix does with the names a module already binds."""
from __future__ import annotations

import re

import pytest

from deadline_lint.engine.checker import Checker
from deadline_lint.families.registry import all_rules
from deadline_lint.fixes.loop import FixMode, fix_text

CLOCK_CODES = [code for code in all_rules() if code.startswith("DL2")]
_BLOCK = re.compile(r"## (?P<heading>Example|Use instead)\s*```python\n(?P<code>.*?)```", re.DOTALL)


def _examples(code: str):
    return {m.group("heading"): m.group("code") for m in _BLOCK.finditer(all_rules()[code].documentation())}


@pytest.mark.parametrize("code", CLOCK_CODES)
def test_the_example_fires_and_the_use_instead_does_not(code: str) -> None:
    examples = _examples(code)
    checker = Checker(select=[code])
    assert [d.code for d in checker.check_text(examples["Example"], "example.py")] != []
    assert [d.code for d in checker.check_text(examples["Use instead"], "good.py")] == []


def _fixed(text: str, unsafe: bool = False) -> str:
    return fix_text(Checker(select=["DL201"]), text, "m.py", FixMode(unsafe=unsafe)).text


LOOP = "def f(t):\n    d = {clock} + t\n    while {clock} < d:\n        pass\n"


def test_the_fix_keeps_the_alias_the_module_already_uses() -> None:
    text = "import time as clock_mod\n" + LOOP.format(clock="clock_mod.time()")
    assert _fixed(text) == "import time as clock_mod\n" + LOOP.format(clock="clock_mod.monotonic()")


def test_the_fix_imports_monotonic_when_time_names_the_function() -> None:
    text = "from time import time\n" + LOOP.format(clock="time()")
    assert _fixed(text) == "from time import monotonic, time\n" + LOOP.format(clock="monotonic()")


def test_no_fix_when_no_name_for_the_monotonic_clock_is_free() -> None:
    text = "from time import time\nmonotonic = 1\n" + LOOP.format(clock="time()")
    found = Checker(select=["DL201"]).check_text(text, "m.py")
    assert [d.line for d in found] == [4, 5] and all(d.fix is None for d in found)


def test_the_fix_is_unsafe_when_the_deadline_is_returned() -> None:
    text = "import time\n" + LOOP.format(clock="time.time()") + "    return d\n"
    assert _fixed(text) == text
    assert _fixed(text, unsafe=True) == text.replace("time.time()", "time.monotonic()")


def test_each_read_is_reported_once_where_it_is() -> None:
    text = "import time\n" + LOOP.format(clock="time.time()")
    found = Checker(select=["DL201"]).check_text(text, "m.py")
    assert [(d.line, d.column) for d in found] == [(3, 9), (4, 11)]
    assert "use `time.monotonic()`" in found[0].message
