"""Every number the tool prints adds up (issue 35, item 5): what `check` calls fixable is what
`fix` fixes, a fix that cannot go in is said (DL005) instead of leaving a finding marked
fixable, and one expression that can grow is one DL105."""
from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Tuple

import pytest

from deadline_lint.engine.checker import Checker
from deadline_lint.fixes.loop import FixMode, fix_text
from deadline_lint.frontends.cli import main
from deadline_lint.support.diagnostics import Edit

ROOT = Path(__file__).resolve().parent.parent

# One timer, two wall-clock reads: two DL201 findings whose fixes are the same two edits.
ONE_TIMER = (
    "import time\n\n\n"
    "def wait(probe, timeout):\n"
    "    deadline = time.time() + timeout\n"
    "    while time.time() < deadline:\n"
    "        probe()\n"
)


def run(capsys, *args: str) -> Tuple[int, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out + captured.err


def found_and_fixable(summary: str) -> Tuple[int, int]:
    found = re.search(r"Found (\d+) problems?", summary)
    fixable = re.search(r"(\d+) fixable with `deadline-lint fix`", summary)
    assert found is not None
    return int(found.group(1)), int(fixable.group(1)) if fixable else 0


def test_what_check_calls_fixable_is_what_fix_says_it_fixed(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "timer.py").write_text(ONE_TIMER)
    status, out = run(capsys, "check", "--no-cache", "timer.py")
    assert status == 1 and found_and_fixable(out) == (2, 2)
    status, out = run(capsys, "fix", "timer.py")
    assert status == 0
    assert out.splitlines()[-1] == "Fixed 2 problems in 1 file, 0 remaining."  # was "Fixed 1 problem"


@pytest.mark.parametrize("fixture", ["DL201/aliases.py", "DL201/deadlines.py", "DL102/local_deadline.py",
                                     "DL301/outside_requests.py"])
def test_fixed_and_remaining_add_up_to_what_was_found(tmp_path, monkeypatch, capsys, fixture) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(ROOT / "fixtures" / fixture, tmp_path / "case.py")
    _, out = run(capsys, "check", "--no-cache", "case.py")
    found, fixable = found_and_fixable(out)
    _, out = run(capsys, "fix", "--diff", "case.py")
    fixed, remaining = map(int, re.search(r"Would fix (\d+) problems? in \d+ files?, (\d+) would remain", out).groups())
    assert fixed + remaining == found
    assert fixed >= fixable  # every finding marked fixable went, and what went with them


def test_a_finding_the_fixed_code_shows_is_counted_as_such(tmp_path, monkeypatch, capsys) -> None:
    """Fixing `inner` here makes DL102 see a fixed timeout in `rebound` that it did not report
    before: the summary says so, so fixed + remaining is what was found plus that one."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(ROOT / "fixtures" / "DL102" / "budget_scopes.py", tmp_path / "case.py")
    _, out = run(capsys, "check", "--no-cache", "case.py")
    found, _ = found_and_fixable(out)
    _, out = run(capsys, "fix", "--diff", "--unsafe-fixes", "case.py")
    summary = out.splitlines()[-1]
    assert summary == "Would fix 5 problems in 1 file, 2 would remain (1 not reported before fixing)."
    assert 5 + 2 == found + 1


def test_a_fix_that_cannot_go_in_is_dl005_not_a_finding_left_fixable(monkeypatch) -> None:
    """A fix whose edit changes nothing never applies: the loop stops with the finding still
    marked fixable. It is reported (DL005, naming it) and no longer offered."""
    import deadline_lint.fixes.loop as fixes_module

    real = fixes_module.check_for_fixing

    def with_a_fix_that_changes_nothing(checker, text, path, tree=None):
        found = real(checker, text, path, tree)
        out = []
        for d in found:
            if d.code == "DL101" and d.fix is not None and "no_op" in text.splitlines()[d.line - 1]:
                start = d.fix.edits[0].start
                d = replace(d, fix=replace(d.fix, edits=(Edit(start, start + 1, text[start]),)))
            out.append(d)
        return out

    monkeypatch.setattr(fixes_module, "check_for_fixing", with_a_fix_that_changes_nothing)
    text = "import requests\n\n\ndef f(u, budget):\n    requests.get(u)  # no_op\n    requests.get(u)\n"
    result = fix_text(Checker(), text, "m.py", FixMode())
    assert result.text.splitlines()[5] == "    requests.get(u, timeout=budget.timeout())"  # the other one went in
    codes = [(d.line, d.code) for d in result.remaining]
    assert codes == [(1, "DL005"), (5, "DL101")]
    dl005, dl101 = result.remaining
    assert dl005.message == "the fix of DL101 (line 5) could not be applied; the finding remains"
    assert dl101.fix is None
    assert (result.fixed, result.new) == (1, 1)


def test_one_expression_that_can_grow_is_one_dl105() -> None:
    text = (
        "import httpx\n\n\n"
        "async def f(budget):\n"
        "    return await httpx.AsyncClient().get('u', timeout=max(budget.timeout() + 0.5, 1.0))\n"
    )
    found = [d for d in Checker().check_text(text, "m.py") if d.code == "DL105"]
    assert len(found) == 1
    assert found[0].message.startswith(
        "`max(budget.timeout() + 0.5, 1.0)` can exceed the remaining budget (`max()` puts a floor under it that "
        "is not derived from the budget; and in `budget.timeout() + 0.5`, something not derived from the budget "
        "is added to it)"
    )
