"""Reading a source file for fixing, and writing the fixed text back safely.

A write is all or nothing: the new bytes go to a temporary file in the same folder (same
filesystem, so the rename is atomic), are flushed to disk, get the original's mode, and only
then replace the original with `os.replace`. A crash or a kill at any point leaves the original
untouched; a Python-level interruption (an exception, Ctrl-C, SIGTERM through the CLI) also
removes the temporary file. The text goes back in the file's own encoding (its PEP 263 cookie),
with its BOM, and inserted newlines follow the file's newline style. Right before the rename
the file on disk is compared with what was read (mtime, size and bytes): if anyone else wrote
to it meanwhile, nothing is overwritten.
"""
from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import re
import secrets
import stat
import tokenize
from dataclasses import dataclass
from typing import Any, BinaryIO, Optional

from deadline_lint.support.regular_files import open_regular
from deadline_lint.support.source import DecodeError, decode_source

UTF8_BOM = b"\xef\xbb\xbf"
TEMP_SUFFIX = ".deadline-lint.tmp"  # recognisable, should a SIGKILL ever leave one behind

_LONE_LF = re.compile(r"(?<!\r)\n")
_LONE_CR = re.compile(r"\r(?!\n)")


# Files written so far in this run, shared with worker processes forked after
# `count_writes()`, so an interrupted `fix` can say how many it had finished.
_written: Optional[Any] = None


def count_writes() -> None:
    """Start counting writes (in this process and in workers forked from now on)."""
    global _written
    try:
        _written = multiprocessing.Value("q", 0)
    except (OSError, ImportError):  # no shared memory here: say nothing rather than guess
        _written = None


def stop_counting() -> None:
    global _written
    _written = None


def writes_counted() -> Optional[int]:
    return None if _written is None else int(_written.value)


def _count_one() -> None:
    if _written is not None:
        with _written.get_lock():
            _written.value += 1


class WriteRefused(Exception):
    """The fixed text was not written; the message says why (the original is untouched)."""


@dataclass(frozen=True)
class SourceSnapshot:
    """A file as read for fixing: what a write must reproduce and what it must not clobber."""

    path: str
    data: bytes
    text: str  # decoded like the interpreter does, without the BOM
    encoding: str  # codec for writing back ("utf-8" when there is a BOM; see `bom`)
    bom: bool
    mtime_ns: int
    size: int


def read_snapshot(path: str) -> SourceSnapshot:
    """Raises OSError when unreadable and DecodeError when the bytes are not source text."""
    with open_regular(path) as handle:
        data = handle.read()
        status = os.fstat(handle.fileno())
    return snapshot_of(path, data, status.st_mtime_ns, status.st_size)


def snapshot_of(path: str, data: bytes, mtime_ns: int = 0, size: int = 0) -> SourceSnapshot:
    """Bytes read from anywhere (stdin too); raises DecodeError when they are not source text."""
    text = decode_source(data)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # decode_source already succeeded, so this is not expected
        raise DecodeError(str(exc)) from None
    bom = data.startswith(UTF8_BOM)
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    return SourceSnapshot(path, data, text, encoding, bom, mtime_ns, size)


def encode_like(snapshot: SourceSnapshot, text: str) -> bytes:
    """`text` in the snapshot's encoding and BOM, proven to decode back to exactly `text`."""
    try:
        data = text.encode(snapshot.encoding)
    except (UnicodeEncodeError, LookupError) as exc:
        raise WriteRefused(f"the fixed text cannot be encoded as {snapshot.encoding}: {exc}") from None
    if snapshot.bom:
        data = UTF8_BOM + data
    try:
        round_trip = decode_source(data)
    except DecodeError as exc:
        raise WriteRefused(f"the fixed text would not decode again: {exc}") from None
    if round_trip != text:  # e.g. a fix changed the coding cookie
        raise WriteRefused("the fixed text would not decode back to itself; encoding changed?")
    return data


def newline_style(text: str) -> Optional[str]:
    """The one line ending a text uses throughout, or None when it mixes them (or has none)."""
    crlf = text.count("\r\n")
    lone_cr = len(_LONE_CR.findall(text))
    lone_lf = len(_LONE_LF.findall(text))
    used = [style for style, count in (("\r\n", crlf), ("\r", lone_cr), ("\n", lone_lf)) if count]
    return used[0] if len(used) == 1 else None


def match_newlines(original: str, fixed: str) -> str:
    """Give newlines a fix introduced (as `\\n`) the original's style, when it has a single one,
    and keep the original's final line ending (LibCST drops a lone CR at the end when it adds an
    import). Python reads every style the same, so this changes no string's value."""
    style = newline_style(original)
    if style is not None and style != "\n" and "\n" in fixed:
        if style == "\r\n":
            fixed = _LONE_LF.sub("\r\n", fixed)
        else:
            fixed = fixed.replace("\r\n", "\r").replace("\n", "\r")
    if original.endswith(("\n", "\r")) and fixed and not fixed.endswith(("\n", "\r")):
        fixed += "\r\n" if original.endswith("\r\n") else original[-1]
    return fixed


def write_atomic(snapshot: SourceSnapshot, text: str) -> None:
    """Replace the file with `text`, or raise WriteRefused / OSError and leave it untouched.

    A file the user may not write (its mode or its owner says so) is refused, even where the
    folder would let a rename replace it. A file whose identity a rename would change is
    rewritten in place instead (not atomic, but the same inode): one with other hard links,
    or one owned by someone else that the user may write but could not give back (not root)."""
    data = encode_like(snapshot, text)
    target = os.path.realpath(snapshot.path)  # write through a symlink, not over it
    folder = os.path.dirname(target) or "."
    original = os.stat(target)
    _refuse_if_unwritable(target, original)
    if original.st_nlink > 1 or not _can_keep_owner(original):
        _write_in_place(snapshot, target, data)
        return
    # Named before it is created, and created inside the `try`: a stop (a worker's SIGTERM
    # raises wherever it lands) right after the creation must still find it to remove it.
    temporary = _temporary_name(target, folder)
    try:
        _create_synced(temporary, data, 0o600)
        os.chmod(temporary, stat.S_IMODE(original.st_mode))
        _keep_owner(temporary, original)
        _refuse_if_changed(snapshot, target)
        os.replace(temporary, target)
        _count_one()
    except BaseException:  # also KeyboardInterrupt/SystemExit: never leave the temp file behind
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_folder(folder)


def write_new(path: str, text: str) -> None:
    """Create `path` holding `text` (UTF-8), all or nothing, and never over an existing file:
    the bytes go to a temporary file that is then hard-linked to `path`, which fails if
    anything is there, even a file created a moment ago. Raises FileExistsError, WriteRefused
    (the folder cannot take a hard link) or OSError; in every case nothing is left behind."""
    target = os.path.abspath(path)
    folder = os.path.dirname(target)
    temporary = _temporary_name(target, folder)
    try:
        _create_synced(temporary, text.encode("utf-8"), 0o666)
        try:
            os.link(temporary, target)
        except FileExistsError:
            raise
        except OSError as exc:  # a filesystem without hard links: refuse rather than race
            raise WriteRefused(f"cannot create it atomically here ({exc.strerror or exc}); not written") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    _sync_folder(folder)


def _create_synced(path: str, data: bytes, mode: int) -> None:
    """A new file (never one that exists) holding `data`, on disk before this returns."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode)
    with os.fdopen(fd, "wb") as handle:
        _write_all(handle, data)
        handle.flush()
        os.fsync(handle.fileno())


def _temporary_name(target: str, folder: str) -> str:
    """A name no file has (64 random bits; O_EXCL makes sure) that says whose it is."""
    return os.path.join(folder, f".{os.path.basename(target)}.{secrets.token_hex(8)}{TEMP_SUFFIX}")


def _refuse_if_unwritable(target: str, original: os.stat_result) -> None:
    if not stat.S_IMODE(original.st_mode) & 0o222:
        raise WriteRefused(f"read-only file (mode {stat.S_IMODE(original.st_mode):04o}); not written")
    effective = os.access in os.supports_effective_ids
    if not os.access(target, os.W_OK, effective_ids=effective):
        raise WriteRefused("permission denied: you may not write this file; not written")


def _can_keep_owner(original: os.stat_result) -> bool:
    """A replaced file belongs to whoever wrote the new one unless root gives it back."""
    if not hasattr(os, "geteuid"):
        return True
    return (original.st_uid, original.st_gid) == (os.geteuid(), os.getegid()) or os.geteuid() == 0


def _write_in_place(snapshot: SourceSnapshot, target: str, data: bytes) -> None:
    """Overwrite the file's own bytes: owner, mode and hard links stay as they are."""
    _refuse_if_changed(snapshot, target)
    with open(target, "r+b") as handle:
        _write_all(handle, data)
        handle.truncate()
        handle.flush()
        os.fsync(handle.fileno())
    _count_one()


def _write_all(handle: BinaryIO, data: bytes) -> None:
    handle.write(data)


def _keep_owner(temporary: str, original: os.stat_result) -> None:
    if not hasattr(os, "chown"):
        return
    if (original.st_uid, original.st_gid) == (os.getuid(), os.getgid()):
        return
    with contextlib.suppress(OSError):  # only root may give a file away; others keep their own
        os.chown(temporary, original.st_uid, original.st_gid)


def _refuse_if_changed(snapshot: SourceSnapshot, target: str) -> None:
    try:
        now = os.stat(target)
        with open_regular(target) as handle:
            current = handle.read()
    except OSError as exc:
        reason = exc.strerror or exc
        raise WriteRefused(f"the file vanished or became unreadable while being fixed ({reason})") from None
    if (now.st_mtime_ns, now.st_size) != (snapshot.mtime_ns, snapshot.size) or current != snapshot.data:
        raise WriteRefused("the file changed on disk while being fixed; not overwritten (run again)")


def _sync_folder(folder: str) -> None:
    """Make the rename itself durable (POSIX); harmless where folders cannot be opened."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
