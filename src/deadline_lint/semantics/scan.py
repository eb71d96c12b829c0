"""Import lines read from a module's text, without parsing it."""
from __future__ import annotations

import re
from typing import Dict, Iterator, List, Optional, Tuple

# Each statement starts with its keyword, which is what the regex engine searches for fast; that
# only blanks stand before it on its line is checked for each candidate (`_statements`): a
# pattern led by `^[ \t]*` is tried at every character, several times slower.
_FROM_IMPORT = re.compile(r"from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n;#]*)")
_PLAIN_IMPORT = re.compile(r"import[ \t]+([^\n;#]+)")


def import_table(text: str) -> Dict[str, str]:
    """Name -> what an import line binds it to (`from .a import b as c` -> c: ".a.b"), from
    every import line, at any depth: for the prefilter, more names only mean more checking.
    The file being checked is asked about more than once: its last answer is kept."""
    cached = _LAST_TABLE[0]
    if cached is not None and cached[0] is text:
        return cached[1]
    table = _scan_imports(text)
    _LAST_TABLE[0] = (text, table)
    return table


_LAST_TABLE: List[Optional[Tuple[str, Dict[str, str]]]] = [None]


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
