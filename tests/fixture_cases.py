"""The fixture oracle: `fixtures/<CODE>/*.py` files whose lines carry `# expect: CODE[, CODE]`,
each with a snapshot `<name>.py.snap` beside it: the full ordered list of what the tool reports
(line, column, code, message), one finding a line. The markers say where findings belong; the
snapshot pins exactly what users see, so a finding reported twice or with another message
fails. Snapshots are written by `python tests/update_snapshots.py` and reviewed in the diff.

Every front end's test reuses these helpers, so one set of markers and snapshots checks them
all. A fixture may have a sibling `<name>.yaml` adoption profile.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Set, Tuple

from deadline_lint.support.source import split_lines

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>DL\d{3}(?:\s*,\s*DL\d{3})*)")

Expected = Set[Tuple[int, str]]
Finding = Tuple[int, int, str, str]  # line, 1-based column, code, message
UPDATE_COMMAND = "python tests/update_snapshots.py"
SNAPSHOT_HEADER = f"# deadline-lint snapshot: line:column code message. Regenerate with `{UPDATE_COMMAND}`.\n"


@dataclass(frozen=True)
class FixtureCase:
    code: str  # the rule this folder is about: the run selects exactly it
    path: Path

    @property
    def id(self) -> str:
        return f"{self.code}/{self.path.name}"

    @property
    def profile(self) -> Optional[Path]:
        candidate = self.path.with_suffix(".yaml")
        return candidate if candidate.exists() else None

    @property
    def snapshot_path(self) -> Path:
        return self.path.with_name(self.path.name + ".snap")

    def text(self) -> str:
        """The file's text with its own newlines, as the tool reads it."""
        return self.path.read_bytes().decode("utf-8")

    def snapshot(self) -> Optional[List[Finding]]:
        """The pinned findings, in order; None when the fixture has no snapshot yet."""
        if not self.snapshot_path.exists():
            return None
        return parse_snapshot(self.snapshot_path.read_text(encoding="utf-8"))

    def expected(self) -> Expected:
        return expected_markers(self.text())

    def suppressed_text(self, pragma: str = "noqa") -> str:
        """Every `# expect: X` becomes the front end's own suppression of X."""
        def swap(match: re.Match) -> str:
            codes = match.group("codes")
            if pragma == "noqa":
                return f"# noqa: {codes}"
            if pragma == "deadline-lint":
                return f"# deadline-lint: ignore[{codes}]"
            raise ValueError(pragma)

        return _EXPECT.sub(swap, self.text())


def render_snapshot(findings: List[Finding]) -> str:
    return SNAPSHOT_HEADER + "".join(f"{line}:{column} {code} {message}\n" for line, column, code, message in findings)


def parse_snapshot(text: str) -> List[Finding]:
    found: List[Finding] = []
    for row in text.splitlines():
        if not row or row.startswith("#"):
            continue
        position, code, message = row.split(" ", 2)
        line, column = position.split(":")
        found.append((int(line), int(column), code, message))
    return found


def missing_snapshot_message(case: "FixtureCase") -> str:
    return (
        f"{case.id} has no snapshot yet ({case.snapshot_path.name}): run `{UPDATE_COMMAND}` to create it, "
        "then review the new file before committing it"
    )


def expected_markers(text: str) -> Expected:
    """Marker lines numbered as the tool numbers them: only \n, \r\n and \r end a line
    (str.splitlines would also split at form feeds and U+2028)."""
    found: Expected = set()
    for lineno, line in enumerate(split_lines(text), start=1):
        match = _EXPECT.search(line)
        if match:
            for code in re.split(r"\s*,\s*", match.group("codes")):
                found.add((lineno, code))
    return found


def fixture_cases() -> List[FixtureCase]:
    cases = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir() and re.fullmatch(r"DL\d{3}", p.name)):
        for path in sorted(folder.glob("*.py")):
            cases.append(FixtureCase(folder.name, path))
    return cases


def fixture_codes() -> Set[str]:
    return {case.code for case in fixture_cases()}
