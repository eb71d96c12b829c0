"""Only regular files are read: a FIFO, a device, a socket or a folder where a file's text was
expected is an OSError, never a hang (a FIFO's open waits for a writer) or an endless read
(/dev/zero). Every reader of the package (checked files, project modules, profiles,
baselines, .gitignore files, cache files) opens through `open_regular`."""
from __future__ import annotations

import os
import stat as stat_module
from typing import BinaryIO, Union


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
