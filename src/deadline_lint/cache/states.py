"""What the store knows of each file it names, and what a run finds of them now.

A file's state is [size, mtime_ns, content hash, interface digest]; a folder's is
[0, mtime_ns, "", ""]. The *interface* is the text with its comment lines blanked (so every
line keeps its number): what the files reaching a module read of it (its summary, facts,
call sites and import lines, `semantics/`) is the same for two texts with the same interface,
so an entry records its dependencies by interface and a comment edited in a module leaves
its importers' entries valid (early cutoff). That holds only where the lines blanked really
are comments outside brackets, which `_blanked_lines_are_comments` checks (with the
tokenizer, on the new text only, and only when the cutoff is taken).

A stat match (size and nanosecond mtime) stands in for re-hashing, except for stats taken
within seconds of the file's last change, where a same-size edit in the same clock tick could
hide (git's "racily clean" case): those are recorded as UNRELIABLE and the file is hashed
again. `Survey` answers "is this file as recorded?" once per path per run: the changed set,
found by one stat of each file the run's entries name, and a read of those whose stat moved.
"""
from __future__ import annotations

import hashlib
import io
import os
import time
import tokenize
from stat import S_ISDIR
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from deadline_lint.semantics.session import current
from deadline_lint.support.regular_files import open_regular

Stamp = Tuple[int, int]  # (size, mtime_ns)
UNRELIABLE = -1
GONE = -2
RACY_SECONDS = 2.0  # a stat taken this soon after a change does not stand for the content
_KEPT_LINES = 2  # an encoding declaration lives on the first two lines: never blanked


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def stamp_of(stat: os.stat_result) -> Stamp:
    return (stat.st_size, stat.st_mtime_ns)


def reliable_mtime(stat: os.stat_result) -> int:
    return UNRELIABLE if time.time() - stat.st_mtime < RACY_SECONDS else stat.st_mtime_ns


def _is_comment_line(line: bytes) -> bool:
    # A `;` could start a statement the import scanner reads (semantics/scan.py): kept.
    return line.lstrip(b" \t\f").startswith(b"#") and b";" not in line


def interface_digest(data: bytes) -> str:
    lines = data.split(b"\n")
    blanked = lines[:_KEPT_LINES] + [b"" if _is_comment_line(line) else line for line in lines[_KEPT_LINES:]]
    return hashlib.blake2b(b"\n".join(blanked), digest_size=16).hexdigest()


def _blanked_lines_are_comments(data: bytes) -> bool:
    """Every line `interface_digest` blanks is a comment, outside any string or bracket, in
    this text. Then it was so in any text with the same interface too (the lines before each
    are the same, so the tokenizer enters it in the same state), and the two texts differ
    only in comments that nothing in `semantics/` reads."""
    lines = data.split(b"\n")
    wanted = {number for number, line in enumerate(lines[_KEPT_LINES:], _KEPT_LINES + 1) if _is_comment_line(line)}
    if not wanted:
        return True
    depth = 0
    try:
        for token in tokenize.tokenize(io.BytesIO(data).readline):
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth -= 1
            elif token.type == tokenize.COMMENT and depth == 0 and token.start[1] == len(token.line) - len(
                token.line.lstrip(" \t\f")
            ):
                wanted.discard(token.start[0])
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, ValueError):
        return False
    return not wanted


def state_of_data(stat: os.stat_result, data: bytes) -> List[Any]:
    return [stat.st_size, reliable_mtime(stat), content_hash(data), interface_digest(data)]


class Hashed:
    """The run's memo of `recorded_state`, by path."""


def recorded_state(path: str, stamps: Optional[Mapping[str, List[Any]]] = None) -> Optional[List[Any]]:
    """The state of a file or folder, taken once per run: a file that changes during the
    run keeps the state of its first read, whose hash no longer matches next time, so it is
    checked again then. `stamps`: states recorded earlier, whose hashes stand for a file whose
    reliable size and mtime still match (not read again)."""
    hashed: Dict[str, List[Any]] = current().memo(Hashed, lasting=True)
    known = hashed.get(path)
    if known is not None:
        return known
    try:
        stat = os.stat(path)
        earlier = None if stamps is None else stamps.get(path)
        if S_ISDIR(stat.st_mode):
            state = [0, reliable_mtime(stat), "", ""]
        elif _still(earlier, stat):
            state = list(earlier)  # type: ignore[arg-type]
        else:
            with open_regular(path) as handle:
                state = state_of_data(stat, handle.read())
    except OSError:
        return None
    hashed[path] = state
    return state


def forget_states() -> None:
    current().forget(Hashed)


def _still(recorded: Any, stat: os.stat_result) -> bool:
    """A recorded file state that the stat stands for."""
    return (
        isinstance(recorded, list) and len(recorded) == 4 and isinstance(recorded[2], str) and bool(recorded[2])
        and isinstance(recorded[3], str) and recorded[1] != UNRELIABLE
        and recorded[0] == stat.st_size and recorded[1] == stat.st_mtime_ns
    )


def hash_now(path: str, recorded: Optional[Sequence[Any]]) -> Tuple[Optional[str], Optional[os.stat_result], bytes]:
    """The file's content hash now: the recorded one when size and mtime still match (an
    unreliable stamp never does), else read and hashed; with the stat and the bytes when it
    was read."""
    try:
        stat = os.stat(path)
    except OSError:
        return None, None, b""
    if _still(recorded, stat):
        return recorded[2], None, b""  # type: ignore[index]
    try:
        with open_regular(path) as handle:
            data = handle.read()
    except OSError:
        return None, None, b""
    return content_hash(data), stat, data


class Survey:
    """The run's view of the files a cache file names: each stat once, each read at most once,
    and the interface each has now. `fresh`: states found this run worth keeping (a file
    touched but not changed, or changed in comments only), so the next run stats it only."""

    def __init__(self, stamps: Dict[str, List[Any]]) -> None:
        self.stamps = stamps  # path -> state, from the cache file
        self._interfaces: Dict[str, Optional[str]] = {}  # path -> its interface now (None: unreadable)
        self._folders: Dict[str, int] = {}  # path -> its mtime now (GONE: gone)
        self.fresh: Dict[str, List[Any]] = {}
        self.same: set = set()  # paths whose stat matched their recorded state
        self.changed = False  # some file's interface or some folder's listing is not as recorded

    def interface(self, path: str) -> Optional[str]:
        known = self._interfaces.get(path, _UNSEEN)
        if known is _UNSEEN:
            known = self._interfaces[path] = self._interface_now(path)
        return known  # type: ignore[return-value]

    def _interface_now(self, path: str) -> Optional[str]:
        recorded = self.stamps.get(path)
        digest, stat, data = hash_now(path, recorded)
        if digest is None:
            self.changed = True
            return None
        if stat is None:
            self.same.add(path)
            return recorded[3]  # type: ignore[index]  # the stat matched
        if not (isinstance(recorded, list) and len(recorded) == 4):
            self.changed = True
            return interface_digest(data)
        if digest == recorded[2]:
            state = [stat.st_size, reliable_mtime(stat), digest, recorded[3]]  # touched, not changed
        else:
            state = state_of_data(stat, data)
            if state[3] != recorded[3]:
                self.changed = True
            elif not _blanked_lines_are_comments(data):
                self.changed = True
                return "!" + digest  # the same interface, but a blanked line may not be a comment
        if state[1] != UNRELIABLE:
            self.fresh[path] = state
        return state[3]

    def own(self, path: str, digest: Optional[str], recorded: Any) -> None:
        """`path` was just found to hold `digest`: its recorded interface stands when the
        content is the recorded one."""
        if isinstance(recorded, list) and len(recorded) == 4 and recorded[2] == digest:
            self._interfaces[path] = recorded[3]

    def folder_unchanged(self, path: str, mtime_ns: int) -> bool:
        """No entry added, removed or renamed in the folder since it was recorded."""
        known = self._folders.get(path)
        if known is None:
            try:
                known = self._folders[path] = os.stat(path).st_mtime_ns
            except OSError:
                known = self._folders[path] = GONE
        if known == mtime_ns and mtime_ns != UNRELIABLE:
            return True
        self.changed = True
        return False

    def settled(self) -> bool:
        """Every file and folder the store records is as recorded (by interface, by listing):
        the changed set is empty. One stat each, stopping at the first change."""
        interface, folder_unchanged = self.interface, self.folder_unchanged
        try:
            for path, state in self.stamps.items():
                if state[2] == "":
                    if not folder_unchanged(path, state[1]):
                        return False
                elif interface(path) != state[3]:
                    return False
        except (TypeError, IndexError, KeyError, AttributeError):
            return False  # a malformed state: never trusted
        return True

    def holds(self, reach: Mapping[str, Any], summaries: Mapping[str, Any], paths: List[str], verified: set) -> bool:
        """A stored reach and, through its index's module reaches, its whole closure: every
        file with its recorded interface, every absent path still absent. Module reaches
        whose closure was verified in this run (`verified`) are not walked again."""
        pending = [reach]
        visited: set = set()
        interface, folder_unchanged = self.interface, self.folder_unchanged
        while pending:
            current = pending.pop()
            if current["complete"] is not True:
                return False  # a file it named could not be read: never trusted
            for number, digest in current["files"]:
                if interface(paths[number]) != digest:
                    return False
            for number, mtime in current["folders"]:
                if not folder_unchanged(paths[number], mtime):
                    return False
            for number, digest in current["follow"]:
                node = f"{number}|{digest}"
                if node in verified or node in visited:
                    continue
                summary = summaries.get(node)
                if not isinstance(summary, dict) or interface(paths[number]) != digest:
                    return False
                visited.add(node)
                pending.append(summary)
            for node in current.get("shared", ()):
                if node not in verified and node not in visited:
                    shared = summaries.get(node)
                    if not isinstance(shared, dict):
                        return False
                    visited.add(node)
                    pending.append(shared)
        verified.update(visited)  # each one's closure lies within what was just verified
        return True


_UNSEEN = object()
