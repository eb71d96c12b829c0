"""Syntax newer than the running interpreter: a file that uses it does not parse here, but is
not broken. DL001 then says which Python it needs instead of "syntax error".

Each entry recognises one construct on the line the parser stopped at; only constructs newer
than the running interpreter are considered, so under a new enough Python none of this runs.
The list starts after 3.11, the oldest Python the package installs on.
"""
from __future__ import annotations

import re
import sys
from typing import Optional, Sequence, Tuple

Version = Tuple[int, int]

_TYPE_PARAMS = r"\s*(?:(?:async\s+)?def|class)\s+\w+\s*\["
NEWER_SYNTAX: Sequence[Tuple[Version, str, "re.Pattern[str]"]] = (
    ((3, 12), "type parameters", re.compile(r"^" + _TYPE_PARAMS)),
    ((3, 12), "type aliases", re.compile(r"^\s*type\s+\w+\s*(?:\[[^\]]*\])?\s*=")),
    # PEP 701: inside an f-string's braces, the string's own quote, a backslash or a comment.
    ((3, 12), "f-strings with quotes, backslashes or comments in their braces", re.compile(
        r"""(?<![\w.'"])(?:[fF][rR]?|[rR][fF])(?P<q>'|")(?:(?!(?P=q)).)*?(?<!\{)\{(?!\{)[^}]*?(?:(?P=q)|\\|#)""")),
    ((3, 13), "type parameter defaults", re.compile(r"^" + _TYPE_PARAMS + r"[^\]]*=")),
    ((3, 14), "template strings", re.compile(r"""(?<![\w.'"])(?:[tT][rR]?|[rR][tT])(?:'|")""")),
    ((3, 14), "except without parentheses", re.compile(r"^\s*except\*?\s+[^\s(:][^:]*,[^:]*:")),
)


def needed_version(line: str, running: Version = sys.version_info[:2]) -> Optional[Version]:
    """The newest Python version whose syntax `line` uses, if newer than `running`."""
    found = [version for version, _, pattern in NEWER_SYNTAX if version > running and pattern.search(line)]
    return max(found) if found else None


def newer_syntax_message(line: str, running: Version = sys.version_info[:2]) -> Optional[str]:
    version = needed_version(line, running)
    if version is None:
        return None
    dotted = f"{version[0]}.{version[1]}"
    here = f"{running[0]}.{running[1]}"
    return f"needs Python {dotted} to parse (this is Python {here}); run deadline-lint under Python {dotted} or newer"
