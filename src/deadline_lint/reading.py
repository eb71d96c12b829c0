"""The one reader: a file's bytes with the limit and the one-line diagnostics every front end
reports for a file it cannot use (DL004 too large, DL006 unreadable, DL002 not text)."""
from __future__ import annotations

import os
import stat as stat_module
from typing import BinaryIO, Union

from deadline_lint.diagnostics import Diagnostic, tool_diagnostic
from deadline_lint.records import dataclass
from deadline_lint.source import DecodeError, decode_source

MAX_FILE_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True)
class Read:
    data: bytes
    # Taken before the read: a change after it shows as a different stat next time (the
    # results cache and the fix writer's changed-on-disk check both rely on that order).
    stat: os.stat_result


class NotRegularFile(OSError):
    """A FIFO, a device, a socket or a folder where a file's text was expected."""


_KINDS = (
    (stat_module.S_ISFIFO, "a FIFO"), (stat_module.S_ISCHR, "a character device"),
    (stat_module.S_ISBLK, "a block device"), (stat_module.S_ISSOCK, "a socket"), (stat_module.S_ISDIR, "a folder"),
)
# Opening a FIFO for reading waits for a writer, forever if none comes: open without waiting,
# then look at what was opened (the descriptor, so nothing can swap the file in between).
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def open_regular(path: Union[str, "os.PathLike[str]"]) -> BinaryIO:
    """`path` opened for reading in binary, if it is a regular file; NotRegularFile (an
    OSError, so every caller's handling of unreadable files applies) for anything else:
    only regular files are read, so a FIFO cannot hang a run and /dev/zero cannot fill it."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat_module.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a file")
            raise NotRegularFile(f"not a regular file ({kind})")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


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


def too_large(path: str, size: int) -> Diagnostic:
    return tool_diagnostic(path, "DL004", f"file too large to check ({size // (1024 * 1024)} MiB, limit 10 MiB)")


def unreadable(path: str, exc: OSError) -> Diagnostic:
    return tool_diagnostic(path, "DL006", f"cannot read file: {exc.strerror or exc}")


def undecodable(path: str, exc: Exception) -> Diagnostic:
    return tool_diagnostic(path, "DL002", f"cannot decode file: {exc}")
