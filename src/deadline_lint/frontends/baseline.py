"""`--write-baseline FILE` records today's findings; `--baseline FILE` reports only new ones.

A finding is keyed by its code, its file (relative to the baseline file's folder), the text of
its line with whitespace collapsed, and its occurrence among findings with that same code,
file and text. Moving code up or down, re-indenting it or editing other lines does not bring a
recorded finding back; changing the line itself, or adding a second identical one, does.
Entries that no longer match a finding in a checked file are stale (fixed, or the code moved
away): `--statistics` lists them, so the baseline can be rewritten smaller.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from deadline_lint.support.diagnostics import Diagnostic
from deadline_lint.support.source import DecodeError, SourceFile, decode_source
from deadline_lint.settings.globs import relative_path
from deadline_lint.settings.profile import ProfileError
from deadline_lint.support.records import dataclass

FORMAT_VERSION = 1


@dataclass(frozen=True)
class Entry:
    code: str
    path: str
    text: str
    occurrence: int

    def to_json(self) -> Dict[str, object]:
        return {"code": self.code, "path": self.path, "text": self.text, "occurrence": self.occurrence}


def _normalised(line: str) -> str:
    return " ".join(line.split())


class _Lines:
    """Line texts of the files findings are in, each file read once."""

    def __init__(self) -> None:
        self._files: Dict[str, Optional[SourceFile]] = {}

    def text(self, path: str, line: int) -> str:
        if path not in self._files:
            try:
                with open(path, "rb") as handle:
                    self._files[path] = SourceFile(decode_source(handle.read()), path)
            except (OSError, DecodeError):
                self._files[path] = None
        source = self._files[path]
        return _normalised(source.line_text(line)) if source is not None else ""


def _base_path(path: str, folder: str) -> str:
    relative = relative_path(path, folder)
    return relative if relative is not None else os.path.abspath(path).replace(os.sep, "/")


def keyed(found: Sequence[Diagnostic], baseline_file: str) -> List[Tuple[Entry, Diagnostic]]:
    folder = os.path.dirname(os.path.abspath(baseline_file))
    lines = _Lines()
    seen: Counter = Counter()
    result = []
    for diagnostic in sorted(found, key=Diagnostic.sort_key):
        base = (diagnostic.code, _base_path(diagnostic.path, folder), lines.text(diagnostic.path, diagnostic.line))
        result.append((Entry(*base, seen[base]), diagnostic))
        seen[base] += 1
    return result


def write_baseline(path: str, found: Sequence[Diagnostic]) -> int:
    entries = [entry.to_json() for entry, _ in keyed(found, path)]
    document = {"version": FORMAT_VERSION, "tool": "deadline-lint", "findings": entries}
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(document, indent=1))
            handle.write("\n")
    except OSError as exc:
        raise ProfileError(f"{path}: cannot write the baseline: {exc.strerror or exc}") from None
    return len(entries)


def load_baseline(path: str) -> List[Entry]:
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except FileNotFoundError:
        raise ProfileError(f"{path}: baseline file not found (create it with --write-baseline)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{path}: cannot read the baseline: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ProfileError(f"{path}: line {exc.lineno}: not a baseline (invalid JSON: {exc.msg})") from None
    try:
        if document.get("version") != FORMAT_VERSION:
            raise ValueError(f"version {document.get('version')!r}, expected {FORMAT_VERSION}")
        return [
            Entry(str(e["code"]), str(e["path"]), str(e["text"]), int(e["occurrence"]))
            for e in document["findings"]
        ]
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ProfileError(f"{path}: not a deadline-lint baseline ({exc})") from None


@dataclass(frozen=True)
class Filtered:
    new: List[Diagnostic]
    known: int  # findings the baseline already had
    stale: List[Entry]  # baseline entries for checked files that matched nothing


def apply_baseline(found: Sequence[Diagnostic], entries: Iterable[Entry], baseline_file: str,
                   checked: Iterable[str]) -> Filtered:
    recorded = set(entries)
    matched = set()
    new: List[Diagnostic] = []
    for entry, diagnostic in keyed(found, baseline_file):
        if entry in recorded:
            matched.add(entry)
        else:
            new.append(diagnostic)
    folder = os.path.dirname(os.path.abspath(baseline_file))
    checked_paths = {_base_path(path, folder) for path in checked}
    stale = sorted((e for e in recorded - matched if e.path in checked_paths),
                   key=lambda e: (e.path, e.code, e.text, e.occurrence))
    return Filtered(sorted(new, key=Diagnostic.sort_key), len(matched), stale)
