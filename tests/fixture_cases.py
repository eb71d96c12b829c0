"""The fixture oracle: `fixtures/<CODE>/*.py` files whose lines carry `# expect: CODE[, CODE]`.

Every front end's test reuses these helpers, so one set of markers checks them all.
A fixture may have a sibling `<name>.yaml` adoption profile.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>DL\d{3}(?:\s*,\s*DL\d{3})*)")

Expected = Set[Tuple[int, str]]


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

    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")

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


def expected_markers(text: str) -> Expected:
    found: Expected = set()
    for lineno, line in enumerate(text.splitlines(), start=1):
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
