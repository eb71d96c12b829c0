"""The results cache (ruff's model): each file's findings on disk, reused while nothing they
were computed from has changed.

An entry is keyed by the file's path and content hash, under a settings key made of the
tool's own fingerprint (its version and the files of the installed package, so an edited
checkout never reuses old answers), the file's effective profile and the run's selection
options. With the project index on, an entry also records the project modules its file can
reach through imports (their content hashes) and the module paths that were looked for and
absent: a change to any of them, or one of them appearing, makes the entry stale.

Entries are trusted only when they match in every part; an unreadable, corrupt or foreign
cache file or entry is ignored and rebuilt. A stat match (size and nanosecond mtime) stands
in for re-hashing, except for files changed within the last seconds, where a same-size edit
in the same clock tick could hide: those are hashed again.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from deadline_lint import __version__
from deadline_lint.diagnostics import Diagnostic

CACHE_DIR_NAME = ".deadline_lint_cache"
CACHE_DIR_ENV = "DEADLINE_LINT_CACHE_DIR"
_FORMAT = 1
_RACY_SECONDS = 2.0  # a file younger than this is re-hashed even when its stat matches

Stamp = Tuple[int, int]  # (size, mtime_ns)


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def stamp_of(stat: os.stat_result) -> Stamp:
    return (stat.st_size, stat.st_mtime_ns)


_TOOL: Optional[str] = None


def tool_fingerprint() -> str:
    """The version and every file of the installed package (name, size, mtime): an edited
    rule or catalog in a development checkout is a different tool."""
    global _TOOL
    if _TOOL is None:
        package = os.path.dirname(os.path.abspath(__file__))
        parts = [__version__]
        for folder, dirs, files in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".py", ".yaml", ".json")):
                    stat = os.stat(os.path.join(folder, name))
                    parts.append(f"{os.path.relpath(os.path.join(folder, name), package)}:{stat.st_size}:{stat.st_mtime_ns}")
        _TOOL = hashlib.blake2b("\n".join(parts).encode(), digest_size=16).hexdigest()
    return _TOOL


def settings_key(raw_profile: Mapping[str, Any], profile_root: Optional[str], options: Mapping[str, Any]) -> str:
    """One key for everything besides the file that decides its findings."""
    document = {"tool": tool_fingerprint(), "profile": raw_profile, "root": profile_root, "options": options}
    text = json.dumps(document, sort_keys=True, default=repr)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def default_cache_dir() -> str:
    return os.environ.get(CACHE_DIR_ENV) or os.path.join(os.getcwd(), CACHE_DIR_NAME)


class Dependencies:
    """What a file's findings were computed from besides its own text and settings: project
    files (path -> [size, mtime_ns, content hash], the stat taken before the read) and module
    paths that did not exist."""

    __slots__ = ("present", "absent")

    def __init__(self, present: Optional[Dict[str, List[Any]]] = None, absent: Iterable[str] = ()) -> None:
        self.present: Dict[str, List[Any]] = dict(present or {})
        self.absent: List[str] = sorted(set(absent))


_HASHED: Dict[str, List[Any]] = {}


def recorded_state(path: str) -> Optional[List[Any]]:
    """[size, mtime_ns, content hash] of a file now (memoised per process by its stat)."""
    try:
        stat = os.stat(path)
        known = _HASHED.get(path)
        if known is not None and known[:2] == list(stamp_of(stat)):
            return known
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    state = _HASHED[path] = [*stamp_of(stat), content_hash(data)]
    return state


class _Verifier:
    """Answers "is this dependency as recorded?" once per path per run."""

    def __init__(self, stamps: Dict[str, List[Any]]) -> None:
        self.stamps = stamps  # path -> [size, mtime_ns, hash], from the cache file
        self._present: Dict[Tuple[str, str], bool] = {}
        self._absent: Dict[str, bool] = {}

    def present(self, path: str, expected: str) -> bool:
        key = (path, expected)
        known = self._present.get(key)
        if known is None:
            known = self._present[key] = current_hash(path, self.stamps.get(path)) == expected
        return known

    def absent(self, path: str) -> bool:
        known = self._absent.get(path)
        if known is None:
            known = self._absent[path] = not os.path.exists(path)
        return known


def current_hash(path: str, recorded: Optional[Sequence[Any]]) -> Optional[str]:
    """The file's content hash now: the recorded one when size and mtime still match (and
    the file is not fresh enough for a same-tick edit to hide), else read and hashed."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    if recorded is not None and len(recorded) == 3 and list(stamp_of(stat)) == list(recorded[:2]):
        if time.time() - stat.st_mtime > _RACY_SECONDS:
            return recorded[2]
    try:
        with open(path, "rb") as handle:
            return content_hash(handle.read())
    except OSError:
        return None


class ResultCache:
    """One settings key's entries, in one JSON file under the cache folder."""

    def __init__(self, folder: str, key: str) -> None:
        self.folder = folder
        self.key = key
        self.path = os.path.join(folder, f"v{_FORMAT}", f"{key}.json")
        self.entries: Dict[str, Dict[str, Any]] = {}
        self.stamps: Dict[str, List[Any]] = {}  # every recorded file: [size, mtime_ns, hash]
        self.changed = False
        self._load()
        self._verifier = _Verifier(self.stamps)

    def _load(self) -> None:
        try:
            with open(self.path, "r", encoding="utf-8") as handle:
                document = json.load(handle)
        except (OSError, ValueError, UnicodeDecodeError):
            return  # none yet, unreadable or corrupt: start empty and rewrite it
        if not isinstance(document, dict) or document.get("key") != self.key or document.get("format") != _FORMAT:
            return
        entries, stamps = document.get("files"), document.get("stamps")
        if isinstance(entries, dict) and isinstance(stamps, dict):
            self.entries, self.stamps = entries, stamps

    # -- reading -------------------------------------------------------------------
    def lookup(self, path: str, display: str) -> Optional[List[Diagnostic]]:
        """The file's cached findings, shown under `display`, or None when there is no
        entry or any part of it no longer matches."""
        entry = self.entries.get(path)
        if not isinstance(entry, dict):
            return None
        try:
            if current_hash(path, self.stamps.get(path)) != entry["hash"]:
                return None
            for dep, expected in entry.get("present", {}).items():
                if not self._verifier.present(dep, expected):
                    return None
            if not all(self._verifier.absent(dep) for dep in entry.get("absent", [])):
                return None
            return [Diagnostic.from_json(item, display) for item in entry["found"]]
        except (KeyError, TypeError, ValueError, AttributeError):
            return None  # a malformed entry is never trusted

    # -- writing -------------------------------------------------------------------
    def store(self, path: str, stamp: Stamp, digest: str, found: Sequence[Diagnostic],
              dependencies: Optional[Dependencies] = None) -> None:
        entry: Dict[str, Any] = {"hash": digest, "found": [_without_path(d) for d in found]}
        self.stamps[path] = [stamp[0], stamp[1], digest]
        if dependencies is not None:
            entry["present"] = {dep: state[2] for dep, state in dependencies.present.items()}
            entry["absent"] = dependencies.absent
            self.stamps.update(dependencies.present)
        self.entries[path] = entry
        self.changed = True

    def save(self) -> Optional[str]:
        """Write the cache file atomically; a warning line when it cannot be written (the
        run's results stand either way)."""
        if not self.changed:
            return None
        live = {path: entry for path, entry in self.entries.items() if os.path.exists(path)}
        needed = set(live)
        for entry in live.values():
            needed.update(entry.get("present", {}))
        document = {
            "format": _FORMAT,
            "key": self.key,
            "files": live,
            "stamps": {path: stamp for path, stamp in self.stamps.items() if path in needed},
        }
        try:
            prepare_folder(self.folder)
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            import tempfile

            handle, temporary = tempfile.mkstemp(dir=os.path.dirname(self.path), suffix=".tmp")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    out.write(json.dumps(document, separators=(",", ":")))  # the C encoder
                os.replace(temporary, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except OSError as exc:
            return f"cannot write the cache in {self.folder}: {exc.strerror or exc}"
        self.changed = False
        return None


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


def _without_path(diagnostic: Diagnostic) -> Dict[str, Any]:
    document = diagnostic.to_json()
    del document["path"]  # shown under the path of the run that reads it back
    return document
