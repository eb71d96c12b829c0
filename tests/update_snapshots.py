"""Write the snapshot beside every fixture: `python tests/update_snapshots.py` (from the
repository root, in the project's virtualenv). `--check` writes nothing and exits 1 when a
snapshot is missing or differs. Review the diff before committing: a snapshot is what users
will see.

Each snapshot is what the engine reports for the fixture with only the fixture folder's rule
selected and the fixture's `<name>.yaml` profile (if any); the tests then hold the engine, the
CLI, flake8 and pylint to it, finding for finding.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixture_cases import Finding, FixtureCase, fixture_cases, render_snapshot  # noqa: E402

from deadline_lint.engine.checker import Checker  # noqa: E402
from deadline_lint.settings.profile import build_profile, default_profile, load_profile_file  # noqa: E402


def engine_findings(case: FixtureCase) -> List[Finding]:
    profile = (
        build_profile(load_profile_file(case.profile), str(case.profile)) if case.profile else default_profile()
    )
    found = Checker(profile, select=[case.code]).check_text(case.text(), str(case.path))
    return [(d.line, d.column, d.code, d.message) for d in found]


def main(argv: List[str]) -> int:
    check = "--check" in argv
    stale = []
    for case in fixture_cases():
        wanted = render_snapshot(engine_findings(case))
        current = case.snapshot_path.read_text(encoding="utf-8") if case.snapshot_path.exists() else None
        if current == wanted:
            continue
        stale.append(case)
        if not check:
            case.snapshot_path.write_text(wanted, encoding="utf-8")
        verb = "created" if current is None else "updated"
        print(f"{'would be ' if check else ''}{verb}: fixtures/{case.code}/{case.snapshot_path.name}")
    if not stale:
        print("every snapshot is up to date")
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
