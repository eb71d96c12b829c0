"""Every registered rule's documentation runs: its "Example" must produce the rule's code and
its "Use instead" must not. Over the registry, so rules added later are covered too."""
from __future__ import annotations

import re
from typing import List

import pytest

from deadline_lint.engine.checker import Checker
from deadline_lint.families.registry import all_rules

RULES = sorted(all_rules())


def code_blocks(documentation: str, section: str) -> List[str]:
    body = documentation.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, re.S)


def codes_reported(code: str, source: str) -> List[str]:
    # Selected by its exact code, so opt-in rules run too.
    return [d.code for d in Checker(select=[code]).check_text(source, f"example_{code}.py")]


@pytest.mark.parametrize("code", RULES)
def test_example_produces_the_rule_and_use_instead_does_not(code: str) -> None:
    documentation = all_rules()[code].documentation()
    examples, fixed = code_blocks(documentation, "Example"), code_blocks(documentation, "Use instead")
    assert examples and fixed, f"{code}: the Example and Use instead sections need a ```python block"
    for block in examples:
        assert code in codes_reported(code, block), f"{code}: its Example does not produce {code}:\n{block}"
    for block in fixed:
        found = codes_reported(code, block)
        assert code not in found and not any(c.startswith("DL0") for c in found), (
            f"{code}: its Use instead still produces {found}:\n{block}"
        )
