"""Tool-level diagnostics (family DL0xx): problems with a file rather than with its code."""
from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, NamedTuple


class ToolCode(NamedTuple):
    code: str
    name: str
    doc: str


TOOL_CODES: Mapping[str, ToolCode] = MappingProxyType({
    tc.code: tc
    for tc in (
        ToolCode("DL001", "syntax-error", "The file does not parse as Python under the running "
                 "interpreter, so nothing in it was checked: a syntax error, syntax newer than this "
                 "interpreter (the message names the Python it needs), or nesting too deep for its parser."),
        ToolCode("DL002", "undecodable-file", "The file's bytes are not text in its declared encoding "
                 "(UTF-8 unless a coding cookie says otherwise), or it contains a NUL byte."),
        ToolCode("DL003", "internal-error", "A rule failed on this file. The other rules still ran; "
                 "please report the message with the file that caused it."),
        ToolCode("DL004", "file-too-large", "The file is larger than the checker reads (2 MiB): "
                 "what Python's parser holds for a file is some 200 times its size, so the limit "
                 "bounds the memory a check takes. Generated files of that size are best excluded."),
        ToolCode("DL005", "fix-did-not-converge", "`deadline-lint fix` re-checked the file ten times "
                 "and fixes were still changing it; the file was left as it was. Also reported when a "
                 "fix the run would apply could not go in (its edits change nothing or conflict): that "
                 "finding remains, no longer marked fixable, and the rest of the file is fixed."),
        ToolCode("DL006", "unreadable-file", "The file could not be read (permissions, a broken link, "
                 "it vanished during the run, or it is not a regular file: a FIFO or a device is never "
                 "read, so it cannot hang the run)."),
        ToolCode("DL007", "too-deeply-nested", "The file nests expressions or blocks deeper than the "
                 "checker can analyse (the depth of CPython's own parser limit). It is valid Python, but "
                 "the rules named in the message did not check it."),
    )
})
