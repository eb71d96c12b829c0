"""A documented example is a test: for the spawn (DL5xx) and trace (DL6xx) families, each
rule's "Example" must fire and its "Use instead" must not."""
from __future__ import annotations

import re

import pytest

from deadline_lint.engine import Checker
from deadline_lint.rules.base import all_rules

RULES = {code: cls for code, cls in all_rules().items() if code[2] in "56"}
_SECTION = re.compile(r"## (?P<title>[^\n]+)\n(?P<body>.*?)(?=\n## |\Z)", re.S)
_CODE = re.compile(r"```python\n(?P<code>.*?)```", re.S)


def example(cls, title: str) -> str:
    for section in _SECTION.finditer(cls.documentation()):
        if section.group("title").strip() == title:
            found = _CODE.search(section.group("body"))
            assert found, f"{cls.code}: no code block under {title}"
            return found.group("code")
    raise AssertionError(f"{cls.code}: no {title} section")


@pytest.mark.parametrize("code", sorted(RULES))
def test_example_fires_and_use_instead_does_not(code: str) -> None:
    checker = Checker(select=[code])
    fired = [d.code for d in checker.check_text(example(RULES[code], "Example"), "example.py")]
    assert fired == [code]
    quiet = [d.code for d in checker.check_text(example(RULES[code], "Use instead"), "example.py")]
    assert quiet == []
