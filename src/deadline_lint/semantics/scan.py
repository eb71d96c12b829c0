"""Import lines read from a module's text, without parsing it."""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n;#]*)", re.M)
_PLAIN_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n;#]+)", re.M)


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
    for match in _FROM_IMPORT.finditer(text):
        source = match.group(1)
        for item in re.sub(r"#[^\n]*", "", match.group(2)).strip("() \t\r\n\\").split(","):
            parts = [p.strip() for p in item.split(" as ")]
            if parts[0].isidentifier():
                separator = "" if source.endswith(".") else "."
                table[parts[-1]] = f"{source}{separator}{parts[0]}"
    for match in _PLAIN_IMPORT.finditer(text):
        for item in match.group(1).split(","):
            parts = [p.strip() for p in item.split(" as ")]
            if len(parts) > 1:
                table[parts[-1]] = parts[0]
            elif parts[0]:
                table[parts[0].split(".")[0]] = parts[0]
    return table
