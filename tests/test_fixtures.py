"""Every fixture through the engine: exactly its snapshot (the ordered list of line, column,
code and message), findings exactly on the `# expect:` lines, and silence under suppression."""
from __future__ import annotations

from typing import Dict, List, Tuple

import pytest
from fixture_cases import Finding, FixtureCase, fixture_cases, missing_snapshot_message
from fixture_fixing import checker_for

from deadline_lint.families.registry import all_rules

CASES = fixture_cases()
# The snapshot and the marker test ask about the same check of the same text: it runs once.
_CHECKED: Dict[Tuple[FixtureCase, str], List[Finding]] = {}


def findings_list(case: FixtureCase, text: str) -> List[Finding]:
    if (case, text) not in _CHECKED:
        found = checker_for(case).check_text(text, str(case.path))
        _CHECKED[case, text] = [(d.line, d.column, d.code, d.message) for d in found]
    return _CHECKED[case, text]


def found(case: FixtureCase, text: str):
    return {(line, code) for line, _, code, _ in findings_list(case, text)}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fixture_reports_exactly_its_snapshot(case: FixtureCase) -> None:
    """Compared as lists: a finding reported twice, or with another message, fails."""
    snapshot = case.snapshot()
    if snapshot is None:
        pytest.fail(missing_snapshot_message(case))
    assert findings_list(case, case.text()) == snapshot


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fixture_reports_exactly_the_markers(case: FixtureCase) -> None:
    expected = case.expected()
    assert all(code == case.code for _, code in expected), "markers must name the folder's rule"
    assert found(case, case.text()) == expected


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
@pytest.mark.parametrize("pragma", ["noqa", "deadline-lint"])
def test_fixture_is_silent_when_suppressed(case: FixtureCase, pragma: str) -> None:
    assert found(case, case.suppressed_text(pragma)) == set()


def test_every_rule_has_fixtures_with_positives_and_negatives() -> None:
    by_code = {}
    for case in CASES:
        by_code.setdefault(case.code, []).append(case)
    for code in all_rules():
        cases = by_code.get(code)
        assert cases, f"{code} has no fixtures"
        positives = sum(len(c.expected()) for c in cases)
        assert positives >= 1, f"{code} fixtures have no positive case"
        # Near misses: each rule's fixtures hold lines with the rule's subject that must stay quiet.
        assert any("quiet" in c.text().lower() or "near miss" in c.text().lower() for c in cases), (
            f"{code} fixtures have no near-miss section"
        )


def test_a_fixture_without_a_snapshot_fails_naming_the_command(tmp_path) -> None:
    folder = tmp_path / "DL101"
    folder.mkdir()
    (folder / "new.py").write_text("import requests\nrequests.get('u')  # expect: DL101\n")
    case = FixtureCase("DL101", folder / "new.py")
    with pytest.raises(pytest.fail.Exception, match=r"run `python tests/update_snapshots\.py` to create it"):
        test_fixture_reports_exactly_its_snapshot(case)
