"""The one reader: a file's bytes with the limit and the one-line diagnostics every front end
reports for a file it cannot use (DL004 too large, DL006 unreadable, DL002 not text)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional, Union

from deadline_lint.support.diagnostics import Diagnostic, tool_diagnostic
from deadline_lint.support.regular_files import open_regular
from deadline_lint.support.source import NUL_BYTE, DecodeError, decode_source

# What `ast` holds for a file is some 200 times its size (a generated 5 MB module took 1.6 GB
# and 30 s): at 2 MiB a check peaks near 500 MB, whatever the file holds. The same bound as
# for a project module followed (semantics/modules.py). No file of the corpora comes near it.
MAX_FILE_BYTES = 2 * 1024 * 1024
_MIB = 1024 * 1024


@dataclass(frozen=True)
class Read:
    data: bytes
    # Taken before the read: a change after it shows as a different stat next time (the
    # results cache and the fix writer's changed-on-disk check both rely on that order).
    stat: os.stat_result


def read_file(path: str, shown: str = "") -> Union[Read, Diagnostic]:
    """The bytes of `path`, or the DL004 / DL006 diagnostic (reported as `shown`) on why not."""
    shown = shown or path
    try:
        with open_regular(path) as handle:
            stat = os.fstat(handle.fileno())
            if stat.st_size > MAX_FILE_BYTES:
                return too_large(shown, stat.st_size)
            return Read(handle.read(), stat)
    except OSError as exc:
        return unreadable(shown, exc)


def decode(data: bytes, path: str) -> Union[str, Diagnostic]:
    try:
        return decode_source(data)
    except DecodeError as exc:
        return undecodable(path, exc)


def unusable_text(text: str, path: str) -> Optional[Diagnostic]:
    """What `read_file` and `decode` would say of the bytes behind text that arrives already
    decoded (an editor's buffer, `lint_text`, flake8's lines): a NUL byte is DL002 and a text
    over the limit DL004, whichever way the file came in."""
    if "\0" in text:
        return undecodable(path, DecodeError(NUL_BYTE))
    if len(text) * 4 > MAX_FILE_BYTES:  # a character is at most four bytes: else surely within
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_FILE_BYTES:
            return too_large(path, size)
    return None


def too_large(path: str, size: int) -> Diagnostic:
    return tool_diagnostic(
        path, "DL004", f"file too large to check ({size / _MIB:.1f} MiB, limit {MAX_FILE_BYTES / _MIB:g} MiB)"
    )


def unreadable(path: str, exc: OSError) -> Diagnostic:
    return tool_diagnostic(path, "DL006", f"cannot read file: {exc.strerror or exc}")


def undecodable(path: str, exc: Exception) -> Diagnostic:
    return tool_diagnostic(path, "DL002", f"cannot decode file: {exc}")
