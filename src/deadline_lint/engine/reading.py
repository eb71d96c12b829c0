"""The one reader: a file's bytes with the limit and the one-line diagnostics every front end
reports for a file it cannot use (DL004 too large, DL006 unreadable, DL002 not text)."""
from __future__ import annotations

import os
from typing import Union

from deadline_lint.support.diagnostics import Diagnostic, tool_diagnostic
from deadline_lint.support.source import DecodeError, decode_source
from deadline_lint.support.records import dataclass

MAX_FILE_BYTES = 10 * 1024 * 1024


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
        stat = os.stat(path)
        if stat.st_size > MAX_FILE_BYTES:
            return too_large(shown, stat.st_size)
        with open(path, "rb") as handle:
            return Read(handle.read(), stat)
    except OSError as exc:
        return unreadable(shown, exc)


def decode(data: bytes, path: str) -> Union[str, Diagnostic]:
    try:
        return decode_source(data)
    except DecodeError as exc:
        return undecodable(path, exc)


def too_large(path: str, size: int) -> Diagnostic:
    return tool_diagnostic(path, "DL004", f"file too large to check ({size // (1024 * 1024)} MiB, limit 10 MiB)")


def unreadable(path: str, exc: OSError) -> Diagnostic:
    return tool_diagnostic(path, "DL006", f"cannot read file: {exc.strerror or exc}")


def undecodable(path: str, exc: Exception) -> Diagnostic:
    return tool_diagnostic(path, "DL002", f"cannot decode file: {exc}")
