"""`check --add-noqa`: append `# noqa: DLxxx` to each line with a finding, so a codebase can
adopt the checker today and fix its findings over time.

An existing `# noqa: X` on the line gets the new codes added to it; a bare `# noqa` already
silences everything. A line where no comment can go (its end lies inside a multi-line string,
or it ends in a backslash continuation) is left alone and counted as skipped. Tool codes
(DL0xx: files that could not be checked) are never silenced this way.
"""
from __future__ import annotations

import io
import re
import tokenize
from typing import Dict, FrozenSet, List, Sequence

from deadline_lint.support.diagnostics import Diagnostic
from deadline_lint.support.source import split_lines
from deadline_lint.support.tool_codes import TOOL_CODES
from deadline_lint.support.selector import Selector
from deadline_lint.support.records import dataclass

_NOQA_CODES = re.compile(r"#\s*noqa:\s?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*)", re.I)
_BARE_NOQA = re.compile(r"#\s*noqa(?!:)", re.I)


@dataclass(frozen=True)
class NoqaResult:
    text: str
    added: int  # directives written or extended
    skipped: int  # lines with findings where no comment can go


def _commentable_lines(text: str) -> FrozenSet[int]:
    """Lines whose end is code, not the inside of a string or a backslash continuation:
    the tokenizer ends them with NEWLINE or NL (or a comment sits there already)."""
    lines = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT):
                lines.add(token.start[0])
    except (tokenize.TokenError, SyntaxError):
        pass
    return frozenset(lines)


def add_noqa(text: str, found: Sequence[Diagnostic]) -> NoqaResult:
    wanted: Dict[int, List[str]] = {}
    for diagnostic in found:
        if diagnostic.code in TOOL_CODES:
            continue
        codes = wanted.setdefault(diagnostic.line, [])
        if diagnostic.code not in codes:
            codes.append(diagnostic.code)
    if not wanted:
        return NoqaResult(text, 0, 0)
    lines = split_lines(text)
    commentable = _commentable_lines(text)
    added = skipped = 0
    for lineno, codes in sorted(wanted.items()):
        if lineno > len(lines) or lineno not in commentable:
            skipped += 1
            continue
        line = lines[lineno - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        new_body = _with_codes(body, codes)
        if new_body != body:
            lines[lineno - 1] = new_body + ending
            added += 1
    return NoqaResult("".join(lines), added, skipped)


def _with_codes(body: str, codes: List[str]) -> str:
    existing = _NOQA_CODES.search(body)
    if existing:
        listed = re.findall(r"[A-Z]+[0-9]+", existing.group("codes"), re.I)
        already = Selector(c.upper() for c in listed)
        missing = [code for code in codes if not already.matches(code)]
        if not missing:
            return body
        merged = ", ".join([*listed, *missing])
        return body[:existing.start("codes")] + merged + body[existing.end("codes"):]
    if _BARE_NOQA.search(body):
        return body
    return f"{body.rstrip()}  # noqa: {', '.join(codes)}"
