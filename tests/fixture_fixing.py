"""Helpers for the fix tests: fixing a fixture the way the harness does, and applying a
unified diff (so `--diff` can be checked against what `fix` writes)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from fixture_cases import FixtureCase

from deadline_lint.catalog import Catalog, load_catalog
from deadline_lint.engine.checker import Checker
from deadline_lint.support.source import split_lines
from deadline_lint.fixes.loop import FixedText, FixMode, fix_text
from deadline_lint.settings.profile import Profile, build_profile, default_profile, load_profile_file

# A small service used by the fix and codemod tests: one safe fix (DL101 from the budget in
# scope), one unsafe (DL103 replaces an explicit value).
SERVICE = (
    "import requests\n"
    "\n"
    "def refund(order):\n"
    "    requests.post('http://pay/refund', json=order, timeout=None)\n"
    "\n"
    "def health(budget):\n"
    "    return requests.get('http://inventory/health').ok\n"
)
SAFE_FIXED = SERVICE.replace(
    ".get('http://inventory/health')", ".get('http://inventory/health', timeout=budget.timeout())"
)
ALL_FIXED = SAFE_FIXED.replace("timeout=None", "timeout=10.0")

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def golden_path(case: FixtureCase) -> Path:
    return case.path.with_name(case.path.name + ".fixed")


def read_exact(path: Path) -> str:
    """Text with its newlines as they are on disk (no universal-newline translation)."""
    return path.read_bytes().decode("utf-8")


def profile_of(path: Optional[Path]) -> Profile:
    """A fixture's adoption profile (its sibling YAML), else the built-in one."""
    return build_profile(load_profile_file(path), str(path)) if path else default_profile()


# One catalog per adoption profile for the checkers the tests build, as one run of the CLI
# (or the codemod's one session per process) shares one between all the files it checks:
# building a catalog's derived tables again for every test was most of a fixture check's time.
_CATALOGS: Dict[Optional[Path], Catalog] = {}


def catalog_of(path: Optional[Path], profile: Profile) -> Catalog:
    catalog = _CATALOGS.get(path)
    if catalog is None:
        catalog = _CATALOGS[path] = load_catalog(profile.outbound)
    return catalog


def checker_for(case: FixtureCase, select: Optional[List[str]] = None) -> Checker:
    """A fresh checker of the fixture's rule (or `select`) under the fixture's profile."""
    profile = profile_of(case.profile)
    return Checker(profile, select=select or [case.code], catalog=catalog_of(case.profile, profile))


# Several tests fix the same text the same way (the harness's properties of one fixed
# fixture, its golden file, `--diff`, the codemod): fixing is deterministic, so each distinct
# (fixture, text, mode) is fixed once per process and every test asserts on that result.
_FIXED: Dict[Tuple[FixtureCase, str, bool], FixedText] = {}


def fix_case(case: FixtureCase, text: Optional[str] = None, unsafe: bool = True) -> FixedText:
    source = read_exact(case.path) if text is None else text
    key = (case, source, unsafe)
    if key not in _FIXED:
        _FIXED[key] = fix_text(checker_for(case), source, str(case.path), FixMode(unsafe=unsafe))
    return _FIXED[key]


def apply_unified_diff(original: str, diff: str) -> str:
    """Apply a unified diff (as `fix --diff` prints for one file) to `original`."""
    source = split_lines(original)
    out: List[str] = []
    position = 0
    lines = split_lines(diff)
    index = 0
    while index < len(lines):
        match = _HUNK.match(lines[index])
        index += 1
        if not match:
            continue  # the ---/+++ header
        old_start, old_count = int(match.group(1)), int(match.group(2) or 1)
        first = old_start - 1 if old_count else old_start
        out.extend(source[position:first])
        position = first
        last_tag = ""
        while index < len(lines) and lines[index][:1] in (" ", "-", "+", "\\"):
            tag, body = lines[index][0], lines[index][1:]
            index += 1
            if tag == "\\":  # the previous line really has no newline
                if last_tag in (" ", "+"):
                    out[-1] = out[-1][:-1]
                continue
            if tag in (" ", "-"):
                expected = source[position]
                assert body.rstrip("\r\n") == expected.rstrip("\r\n"), (body, expected)
                position += 1
            if tag in (" ", "+"):
                out.append(body)
            last_tag = tag
    out.extend(source[position:])
    return "".join(out)
