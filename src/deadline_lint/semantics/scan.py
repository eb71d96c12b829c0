"""Import lines read from a module's text, without parsing it: the one place the package
scans text for imports. `import_table` reads every import line; the prefilters ask narrower
questions through the patterns below (does the text import one of these modules, which
aliases does `import time as t` bind), each as loose as its caller's soundness needs."""
from __future__ import annotations

import re
from typing import Dict, Iterable, Iterator, Optional, Tuple

from deadline_lint.semantics.session import current

# Each statement starts with its keyword, which is what the regex engine searches for fast; that
# only blanks stand before it on its line is checked for each candidate (`_statements`): a
# pattern led by `^[ \t]*` is tried at every character, several times slower.
_FROM_IMPORT = re.compile(r"from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n;#]*)")
_PLAIN_IMPORT = re.compile(r"import[ \t]+([^\n;#]+)")


# Modules listed before the one looked for in the same `import` statement: `import os, requests`.
_EARLIER_IN_LIST = r"(?:[\w.]+(?:[ \t]+as[ \t]+\w+)?[ \t]*,[ \t]*)*"
# Where a statement starts: a line's start (any line ending, CR-only files too) or after a `;`;
# Python's tokenizer takes form feeds as indentation.
STATEMENT_START = r"(?:^|(?<=[\r;]))[ \t\f]*"


def plain_import_pattern(module: str) -> "re.Pattern[str]":
    """`import module` (also in a list, or `module.sub`) anywhere in the text."""
    return re.compile(rf"import[ \t]+{_EARLIER_IN_LIST}{re.escape(module)}\b")


def from_import_pattern(module: str) -> "re.Pattern[str]":
    """`from module[.sub] import names` anywhere in the text: group 1 the module, group 2 the
    names (parenthesised, or the rest of the line)."""
    return re.compile(rf"from[ \t]+({re.escape(module)}(?:\.\w+)*)[ \t]+import[ \t]*(\([^)]*\)|[^\n;#]*)")


def line_import_pattern(modules: Iterable[str]) -> "re.Pattern[str]":
    """A line that starts by importing one of `modules` (`from m...`, `import os, m`)."""
    alternatives = "|".join(re.escape(m) for m in modules)
    return re.compile(
        rf"(?m)^[ \t]*(?:from[ \t]+(?:{alternatives})\b"
        rf"|import[ \t]+{_EARLIER_IN_LIST}(?:{alternatives})\b)"
    )


def statement_pattern(statement: str) -> "re.Pattern[str]":
    """`statement` (a regular expression) where a statement starts."""
    return re.compile(STATEMENT_START + statement, re.MULTILINE)


def import_table(text: str) -> Dict[str, str]:
    """Name -> what an import line binds it to (`from .a import b as c` -> c: ".a.b"), from
    every import line, at any depth: for the prefilter, more names only mean more checking.
    The file being checked is asked about more than once: its last answer is kept."""
    last = current().state(LastTable)
    cached = last.held
    if cached is not None and cached[0] is text:
        return cached[1]
    table = _scan_imports(text)
    last.held = (text, table)
    return table


class LastTable:
    """The import table of the last text asked about."""

    def __init__(self) -> None:
        self.held: Optional[Tuple[str, Dict[str, str]]] = None


def _scan_imports(text: str) -> Dict[str, str]:
    table: Dict[str, str] = {}
    for match in _statements(_FROM_IMPORT, text):
        source = match.group(1)
        for item in re.sub(r"#[^\n]*", "", match.group(2)).strip("() \t\r\n\\").split(","):
            parts = [p.strip() for p in item.split(" as ")]
            if parts[0].isidentifier():
                separator = "" if source.endswith(".") else "."
                table[parts[-1]] = f"{source}{separator}{parts[0]}"
    for match in _statements(_PLAIN_IMPORT, text):
        for item in match.group(1).split(","):
            parts = [p.strip() for p in item.split(" as ")]
            if len(parts) > 1:
                table[parts[-1]] = parts[0]
            elif parts[0]:
                table[parts[0].split(".")[0]] = parts[0]
    return table


def _statements(pattern: "re.Pattern[str]", text: str) -> Iterator["re.Match[str]"]:
    """The matches of `pattern` that start a line (after blanks), in order and not
    overlapping: what `^[ \t]*` + `pattern` under re.M finds, keyword first."""
    position = 0
    while True:
        match = pattern.search(text, position)
        if match is None:
            return
        start = match.start()
        if text[text.rfind("\n", 0, start) + 1:start].strip(" \t"):
            position = start + 1  # not a statement's start: the keyword inside other text
        else:
            yield match
            position = match.end()
