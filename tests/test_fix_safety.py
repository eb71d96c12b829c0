"""Fix safety in ruff's sense, decided per finding and carried on the Fix: safe keeps the
program's meaning; a fix that can make a call fail that used to succeed, or changes a value
sent, is unsafe. `extend_safe_fixes` / `extend_unsafe_fixes` move codes between the classes."""
from __future__ import annotations

from typing import Dict, Optional

import pytest

from deadline_lint.engine.checker import Checker
from deadline_lint.support.diagnostics import Applicability
from deadline_lint.families.registry import all_rules
from deadline_lint.frontends.cli import main
from deadline_lint.settings.profile import build_profile


def fixes(text: str, checker: Optional[Checker] = None) -> Dict[int, Applicability]:
    found = (checker or Checker()).check_text(text, "m.py")
    return {d.line: d.fix.applicability for d in found if d.fix is not None}


def test_dl101_is_safe_only_from_a_budget_in_scope_over_an_unbounded_default() -> None:
    text = (
        "import aiohttp\nimport requests\n"
        "def a(budget):\n    requests.get('u')\n"  # line 4: from the budget, requests waits forever: safe
        "def b():\n    requests.get('u')\n"  # line 6: the edge default: unsafe
        "async def c(budget):\n    async with aiohttp.ClientSession() as s:\n"
        "        await s.get('u')\n"  # line 9: replaces aiohttp's 300 s with a shorter total: unsafe
    )
    assert fixes(text) == {4: Applicability.SAFE, 6: Applicability.UNSAFE, 9: Applicability.UNSAFE}


def test_replacing_an_explicit_value_or_subtracting_a_margin_is_unsafe() -> None:
    text = (
        "import grpc\nimport requests\n"
        "def a(budget):\n    requests.get('u', timeout=None)\n"  # DL103
        "def b(context: grpc.ServicerContext):\n"
        "    requests.get('u', timeout=context.time_remaining())\n"  # DL104
        "def c(budget):\n    requests.get('u', timeout=5)\n"  # DL102
    )
    found = {d.code: d.fix.applicability for d in Checker().check_text(text, "m.py") if d.fix is not None}
    assert found == {"DL102": Applicability.UNSAFE, "DL103": Applicability.UNSAFE, "DL104": Applicability.UNSAFE}


EDGE = "import requests\nrequests.get('u')\nrequests.get('u', timeout=None)\n"


@pytest.mark.parametrize(
    "safe, unsafe, expected",
    [
        ([], [], {2: Applicability.UNSAFE, 3: Applicability.UNSAFE}),
        (["DL101"], [], {2: Applicability.SAFE, 3: Applicability.UNSAFE}),
        (["DL1"], ["DL103"], {2: Applicability.SAFE, 3: Applicability.UNSAFE}),  # the longer selector wins
        (["DL101"], ["DL1"], {2: Applicability.SAFE, 3: Applicability.UNSAFE}),
        (["ALL"], ["DL101"], {2: Applicability.UNSAFE, 3: Applicability.SAFE}),
    ],
)
def test_extend_safe_and_unsafe_fixes_in_the_profile(safe, unsafe, expected) -> None:
    profile = build_profile({"extend_safe_fixes": safe, "extend_unsafe_fixes": unsafe}, "p.yaml")
    assert fixes(EDGE, Checker(profile)) == expected


def test_extend_unsafe_fixes_demotes_a_safe_fix() -> None:
    text = "import requests\ndef a(budget):\n    requests.get('u')\n"
    assert fixes(text, Checker(extend_unsafe_fixes=["DL101"])) == {3: Applicability.UNSAFE}


def test_a_fix_that_touches_a_comment_is_never_promoted() -> None:
    text = "import requests\nrequests.get('u', timeout=float(  # no limit\n 'inf'))\n"
    assert fixes(text, Checker(extend_safe_fixes=["DL103"])) == {2: Applicability.UNSAFE}
    text = "import requests\nrequests.get('u', timeout=(3, None))\n"
    assert fixes(text, Checker(extend_safe_fixes=["DL103"])) == {2: Applicability.SAFE}


def test_fix_applies_only_safe_fixes_unless_told(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "svc.py").write_text(EDGE)
    assert main(["fix", "svc.py"]) == 1
    assert (tmp_path / "svc.py").read_text() == EDGE
    (tmp_path / "pyproject.toml").write_text('[tool.deadline-lint]\nextend_safe_fixes = ["DL101"]\n')
    assert main(["fix", "svc.py"]) == 1  # DL103 remains: still unsafe
    assert (tmp_path / "svc.py").read_text() == EDGE.replace("get('u')", "get('u', timeout=10.0)")


@pytest.mark.parametrize("code", sorted(all_rules()))
def test_every_rule_says_why_its_fix_is_safe_or_unsafe(code: str) -> None:
    rule = all_rules()[code]
    docs = rule.documentation()
    section = docs.split("## Fix safety", 1)[1].split("\n## ", 1)[0].strip()
    if rule.fix_applicability is None:
        assert section.startswith("No fix"), code
    else:
        assert ("Safe" in section or "Unsafe" in section) and len(section.split()) >= 20, code
