"""Rendering diagnostics for people and machines."""
from __future__ import annotations

import json
from collections import Counter
from typing import Callable, Dict, List, TextIO

from deadline_lint.diagnostics import Diagnostic


def write_text(found: List[Diagnostic], out: TextIO, files_checked: int) -> None:
    for d in found:
        marker = " [*]" if d.fix is not None and d.fix.applicability.value == "safe" else ""
        out.write(f"{d.path}:{d.line}:{d.column}: {d.code}{marker} {d.message}\n")
    out.write(summary_line(found, files_checked) + "\n")


def summary_line(found: List[Diagnostic], files_checked: int) -> str:
    files = f"{files_checked} file{'s' if files_checked != 1 else ''}"
    if not found:
        return f"All checks passed ({files} checked)."
    fixable = sum(1 for d in found if d.fix is not None and d.fix.applicability.value == "safe")
    unsafe = sum(1 for d in found if d.fix is not None and d.fix.applicability.value == "unsafe")
    text = f"Found {len(found)} problem{'s' if len(found) != 1 else ''} in {files}"
    if fixable:
        text += f"; {fixable} fixable with `deadline-lint fix`"
    if unsafe:
        text += f"; {unsafe} more with `--unsafe-fixes`"
    return text + "."


def write_json(found: List[Diagnostic], out: TextIO, files_checked: int) -> None:
    json.dump([d.to_json() for d in found], out, indent=2)
    out.write("\n")


def write_statistics(found: List[Diagnostic], out: TextIO) -> None:
    counts = Counter((d.code, d.name) for d in found)
    for (code, name), count in sorted(counts.items()):
        out.write(f"{count:6d}  {code}  {name}\n")


WRITERS: Dict[str, Callable[[List[Diagnostic], TextIO, int], None]] = {
    "text": write_text,
    "json": write_json,
}
