"""Every fixture through every front end: engine, CLI (JSON), flake8 and pylint agree, and each
reports exactly the fixture's snapshot for its rule (an ordered list: multiplicity counts).

The fixtures are copied into one folder per adoption profile (most share the built-in one) and
each front end runs once per folder with every fixture code of that folder selected, through
its entry point in this process (tests/front_ends.py: the same argv and working folder; the
commands themselves are run as commands in test_cli, test_projects (the CLI), test_monorepo
and test_config, flake8 there with its worker processes). flake8 runs without the checks it
ships (pyflakes, pycodestyle): they run whatever is selected and report nothing selected here.
Each copy is checked twice: as is,
where all four front ends must report the same ordered list of (line, column, code, message),
the folder's code must be exactly the snapshot and exactly on the `# expect:` lines; and with
every marker turned into that front end's own suppression (CLI `# noqa: CODE`, flake8 `# noqa: CODE`, pylint
`# pylint: disable=<symbol>`), where the folder's code must be silent.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import pytest
from fixture_cases import FixtureCase, fixture_cases, missing_snapshot_message
from fixture_fixing import catalog_of, profile_of
from front_ends import run_in_process

from deadline_lint.engine.checker import Checker
from deadline_lint.frontends.pylint_plugin import symbol

CASES = fixture_cases()
FRONT_ENDS = ("cli", "flake8", "pylint")
MARKER = re.compile(r"#\s*expect:\s*(?P<codes>DL\d{3}(?:\s*,\s*DL\d{3})*)")
# flake8's report, one field per tab, so messages may hold any punctuation.
FLAKE8_FORMAT = "%(path)s\t%(row)d\t%(col)d\t%(code)s\t%(text)s"

Finding = Tuple[int, int, str, str]  # line, 1-based column, code, message


def pylint_suppressed(text: str) -> str:
    def swap(match: re.Match) -> str:
        codes = re.split(r"\s*,\s*", match.group("codes"))
        return "# pylint: disable=" + ",".join(symbol(code) for code in codes)

    return MARKER.sub(swap, text)


@dataclass
class Group:
    """Fixtures that share an adoption profile, so one run per front end checks them all."""

    folder: Path
    profile: Optional[Path]
    cases: List[FixtureCase] = field(default_factory=list)

    @property
    def codes(self) -> List[str]:
        return sorted({case.code for case in self.cases})

    def copy_of(self, case: FixtureCase, variant: str = "") -> Path:
        return self.folder / f"{case.code}__{case.path.stem}{variant}.py"


@dataclass
class ParityRun:
    groups: List[Group]
    # front end -> resolved path -> findings
    found: Dict[str, Dict[Path, List[Finding]]]
    group_of: Dict[str, Group]


def _run(module: str, argv: List[str], group: Group, report: Path) -> Tuple[int, str, str]:
    """(exit code, report, stderr) of `python -m <module> <argv>` run in the group's folder,
    through the same entry point in this process (the report goes to a file)."""
    code, stderr = run_in_process(module, argv, group.folder)
    return code, report.read_text(encoding="utf-8") if report.exists() else "", stderr


def _cli(group: Group, paths: List[Path]) -> Dict[Path, List[Finding]]:
    report = group.folder / "cli.json"
    argv = ["check", "--format", "json", "--jobs", "1", "--select", ",".join(group.codes),
            "--output-file", str(report)]
    if group.profile:
        argv += ["--profile", str(group.profile)]
    code, output, stderr = _run("deadline_lint", [*argv, *map(str, paths)], group, report)
    assert code in (0, 1), stderr
    found: Dict[Path, List[Finding]] = {}
    for item in json.loads(output):
        finding = (item["line"], item["column"], item["code"], item["message"])
        found.setdefault(Path(item["path"]).resolve(), []).append(finding)
    return found


def _flake8(group: Group, paths: List[Path]) -> Dict[Path, List[Finding]]:
    report = group.folder / "flake8.txt"
    argv = ["--isolated", "--select", ",".join(group.codes), f"--format={FLAKE8_FORMAT}",
            f"--output-file={report}"]
    if group.profile:
        argv.append(f"--deadline-profile={group.profile}")
    code, output, stderr = _run("flake8-deadline-lint-only", [*argv, *map(str, paths)], group, report)
    assert code in (0, 1) and not stderr.strip(), stderr + output
    found: Dict[Path, List[Finding]] = {}
    for line in output.splitlines():
        path, row, col, found_code, text = line.split("\t", 4)
        found.setdefault(Path(path).resolve(), []).append((int(row), int(col), found_code, text))
    return found


def _pylint(group: Group, paths: List[Path]) -> Dict[Path, List[Finding]]:
    rcfile = group.folder / "pylintrc"
    rcfile.write_text("[MAIN]\n")  # keep any surrounding configuration out
    report = group.folder / "pylint.json"
    argv = [f"--rcfile={rcfile}", "--persistent=n", "--score=n",
            "--load-plugins=deadline_lint.pylint_plugin", "--disable=all",
            "--enable=" + ",".join(symbol(code) for code in group.codes), "--output-format=json2",
            f"--output={report}"]
    if group.profile:
        argv.append(f"--deadline-profile={group.profile}")
    code, output, stderr = _run("pylint", [*argv, *map(str, paths)], group, report)
    assert code & 32 == 0 and not stderr.strip(), stderr
    found: Dict[Path, List[Finding]] = {}
    for message in json.loads(output)["messages"]:
        found_code, text = message["message"].split(" ", 1)
        assert message["symbol"] == symbol(found_code), message
        finding = (message["line"], message["column"] + 1, found_code, text)
        found.setdefault(Path(message["absolutePath"]).resolve(), []).append(finding)
    return found


@pytest.fixture(scope="module")
def parity(tmp_path_factory) -> ParityRun:
    root = tmp_path_factory.mktemp("parity")
    by_profile: Dict[Optional[Path], Group] = {}
    for case in CASES:
        if case.profile not in by_profile:
            by_profile[case.profile] = Group(root / f"group{len(by_profile)}", case.profile)
            by_profile[case.profile].folder.mkdir()
        by_profile[case.profile].cases.append(case)
    found: Dict[str, Dict[Path, List[Finding]]] = {name: {} for name in FRONT_ENDS}
    group_of: Dict[str, Group] = {}
    for group in by_profile.values():
        originals, noqa, pylint_pragmas = [], [], []
        for case in group.cases:
            group_of[case.id] = group
            for paths, variant, text in (
                (originals, "", case.text()),
                (noqa, "__noqa", case.suppressed_text("noqa")),
                (pylint_pragmas, "__pylint", pylint_suppressed(case.text())),
            ):
                copy = group.copy_of(case, variant)
                copy.write_text(text, encoding="utf-8")
                paths.append(copy)
        found["cli"].update(_cli(group, originals + noqa))
        found["flake8"].update(_flake8(group, originals + noqa))
        found["pylint"].update(_pylint(group, originals + pylint_pragmas))
    return ParityRun(list(by_profile.values()), found, group_of)


def _engine(group: Group, path: Path) -> List[Finding]:
    profile = profile_of(group.profile)
    checker = Checker(profile, select=group.codes, catalog=catalog_of(group.profile, profile))
    text = path.read_bytes().decode("utf-8")
    return [(d.line, d.column, d.code, d.message) for d in checker.check_text(text, str(path))]


def _lines_and_codes(findings: List[Finding], code: str) -> Set[Tuple[int, str]]:
    return {(line, found_code) for line, _, found_code, _ in findings if found_code == code}


def _ordered(findings: List[Finding]) -> List[Finding]:
    """The tool's order (line, column, code); a front end's own order may differ, its
    multiset may not."""
    return sorted(findings, key=lambda f: (f[0], f[1], f[2]))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_front_end_reports_the_same_findings(parity: ParityRun, case: FixtureCase) -> None:
    group = parity.group_of[case.id]
    copy = group.copy_of(case).resolve()
    engine = _engine(group, copy)
    snapshot = case.snapshot()
    if snapshot is None:
        pytest.fail(missing_snapshot_message(case))
    for front_end in FRONT_ENDS:
        found = _ordered(parity.found[front_end].get(copy, []))
        assert found == engine, front_end
        assert [f for f in found if f[2] == case.code] == snapshot, front_end
    assert _lines_and_codes(engine, case.code) == case.expected()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
@pytest.mark.parametrize("front_end, variant", [("cli", "__noqa"), ("flake8", "__noqa"), ("pylint", "__pylint")])
def test_each_front_end_is_silent_under_its_own_pragma(
    parity: ParityRun, case: FixtureCase, front_end: str, variant: str
) -> None:
    group = parity.group_of[case.id]
    copy = group.copy_of(case, variant).resolve()
    assert _lines_and_codes(parity.found[front_end].get(copy, []), case.code) == set()


def test_parity_covers_every_fixture_code(parity: ParityRun) -> None:
    checked = {code for group in parity.groups for code in group.codes}
    assert checked == {case.code for case in CASES}
