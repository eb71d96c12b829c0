"""The store's one place on disk and the shape of a results file in it.

Everything a run keeps lives under `<cache>/v<FORMAT>/`: the results files
(`<settings key>/<project shard>.marshal`), the module summaries (`summaries/<tool>/`), the
compiled catalog and the kept `[tool.deadline-lint]` tables. One version for all of it: a
change of any layout bumps FORMAT, and every older folder is then simply never read.
Every file there is sealed (support/sealed.py) and written atomically. A results file is
sealed in two parts: its entries' findings and the stamps of the files they name, which a run
where nothing changed needs alone, then what the entries depend on (`read_tail`).
"""
from __future__ import annotations

import contextlib
import marshal
import os
import threading
from typing import Any, Dict, List, Mapping, Optional, Tuple

from deadline_lint.support import sealed

FORMAT = 2  # 2: one folder for every kept artefact; dependencies by interface (states.py)


def store_folder(cache_dir: str) -> str:
    return os.path.join(cache_dir, f"v{FORMAT}")


def prepare_folder(folder: str) -> None:
    """The cache folder, with a `.gitignore` so it is never committed and a CACHEDIR.TAG so
    backup tools skip it."""
    os.makedirs(folder, exist_ok=True)
    ignore = os.path.join(folder, ".gitignore")
    if not os.path.exists(ignore):
        with open(ignore, "w", encoding="utf-8") as out:
            out.write("# Created by deadline-lint automatically.\n*\n")
    tag = os.path.join(folder, "CACHEDIR.TAG")
    if not os.path.exists(tag):
        with open(tag, "w", encoding="utf-8") as out:
            out.write("Signature: 8a477f597d28d172789f06886806bc55\n"
                      "# This file is a cache directory tag created by deadline-lint.\n")


def write_atomically(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # One writer per name (not tempfile: importing it loads shutil, random, bz2, lzma).
    temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with os.fdopen(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


class PathTable:
    """The cache file's paths, each stored once and named by its position (stable: paths are
    only ever appended)."""

    def __init__(self, paths: List[str]) -> None:
        self.paths = paths
        self._ids: Optional[Dict[str, int]] = None

    def known_id(self, path: str) -> Optional[int]:
        return self._numbers().get(path)

    def id_of(self, path: str) -> int:
        numbers = self._numbers()
        number = numbers.get(path)
        if number is None:
            number = numbers[path] = len(self.paths)
            self.paths.append(path)
        return number

    def _numbers(self) -> Dict[str, int]:
        if self._ids is None:
            self._ids = {known: number for number, known in enumerate(self.paths)}
        return self._ids


_MISSING = object()


class Encoded(dict):
    """A table of the cache file whose values (a file's entry, a module's reach) stay
    marshalled as read until one is used: a run over one changed file uses a few hundred of
    the thousands a large project's file holds, and decoding them all (hundreds of thousands
    of containers, which every later pass of the cyclic collector walked) was most of what
    reading the file cost. A value that does not decode reads as None (never trusted)."""

    def get(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key, _MISSING)
        if value is _MISSING:
            return default
        if isinstance(value, bytes):
            value = peek(value)
            dict.__setitem__(self, key, value)
        return value

    def __getitem__(self, key: Any) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def values(self) -> Any:  # type: ignore[override]
        return [self.get(key) for key in self]

    def items(self) -> Any:  # type: ignore[override]
        return [(key, self.get(key)) for key in self]


def peek(value: Any) -> Any:
    """A value of an Encoded table, decoded without being kept decoded (None: undecodable)."""
    if not isinstance(value, bytes):
        return value
    try:
        return marshal.loads(value)
    except (EOFError, ValueError, TypeError):
        return None


def encoded(table: Dict[str, Any]) -> Dict[str, Any]:
    """A table as the file holds it: each value marshalled (those never decoded as read)."""
    return {
        key: value if isinstance(value, bytes) else marshal.dumps(value)
        for key, value in dict.items(table)  # as they are: an Encoded's unread values stay bytes
    }


def reachable(
    entries: Dict[str, Any], reaches: Dict[str, Any], modules: Mapping[str, Any], paths: List[str],
) -> Tuple[Dict[str, Any], set]:
    """The module reaches some live entry still reaches (older versions are dropped), and
    every path whose state is worth keeping (every file and folder a live entry names: a
    run finds the changed set among them)."""
    kept: Dict[str, Dict[str, Any]] = {}
    needed = set(entries)
    for path in entries:
        reach = peek(dict.get(reaches, path))
        if not isinstance(reach, dict):
            continue
        index: Any = reach.get("index")  # a str in every file this version writes; unchecked JSON
        table = modules.get(index, {})
        out = kept.setdefault(index, {})
        pending = [reach]
        while pending:
            current = pending.pop()
            needed.update(paths[number] for number, _ in current.get("files", ()))
            needed.update(paths[number] for number, _ in current.get("folders", ()))
            for number, digest in current.get("follow", ()):
                node = f"{number}|{digest}"
                needed.add(paths[number])
                if node not in out and node in table:
                    out[node] = raw = dict.__getitem__(table, node)  # kept as it is: bytes stay bytes
                    pending.append(peek(raw))
            for node in current.get("shared", ()):
                if node not in out and node in table:
                    out[node] = raw = dict.__getitem__(table, node)
                    pending.append(peek(raw))
    return kept, needed


def read_tail(path: str, offset: int, digest: bytes) -> Optional[Tuple[Dict[str, Any], Dict[str, Any], PathTable, int]]:
    """A results file's second part, from `offset` to its end, when it holds (the file may
    have been replaced since its head was read: then it does not) and has its shape: the
    entries' own reaches, the module reaches by index, the path table and how many reaches
    it held when last pruned."""
    from deadline_lint.support.collector import collector_paused
    from deadline_lint.support.regular_files import open_regular

    try:
        with open_regular(path) as handle:
            handle.seek(offset)
            tail = handle.read()
    except OSError:
        return None
    if not sealed.tail_holds(tail, digest):
        return None
    try:
        with collector_paused():  # hundreds of thousands of containers, none in a cycle
            document = marshal.loads(tail)
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(document, dict):
        return None
    reaches, modules, paths, pruned = (document.get(key) for key in ("reaches", "modules", "paths", "pruned"))
    if not (
        isinstance(reaches, dict) and isinstance(modules, dict)
        and isinstance(paths, list) and all(isinstance(path, str) for path in paths)
    ):
        return None
    tables = {index: Encoded(table) if isinstance(table, dict) else table for index, table in modules.items()}
    return Encoded(reaches), tables, PathTable(paths), pruned if isinstance(pruned, int) else 0
