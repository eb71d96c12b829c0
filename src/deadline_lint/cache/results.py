"""The results cache (ruff's model): each file's findings on disk, reused while nothing they
were computed from has changed.

An entry is keyed by the file's path and content hash, under a settings key made of the
tool's own fingerprint (its version and the files of the installed package, so an edited
checkout never reuses old answers), the file's effective profile and the run's selection
options. When its file looked into its project, an entry also records the project modules its file can
reach through imports (their content hashes) and the module paths that were looked for and
absent (by their folders' listings): a change to any of them makes the entry stale.

Entries are trusted only when they match in every part; an unreadable, corrupt or foreign
cache file or entry is ignored and rebuilt. A stat match (size and nanosecond mtime) stands
in for re-hashing, except for stats recorded within seconds of the file's last change, where
a same-size edit in the same clock tick could hide (git's "racily clean" case): those are
recorded as unreliable and the file is hashed again.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import threading
import time
from stat import S_ISDIR
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from deadline_lint import __version__
from deadline_lint.semantics.session import current
from deadline_lint.support import sealed
from deadline_lint.support.diagnostics import Diagnostic
from deadline_lint.support.regular_files import open_regular

CACHE_DIR_NAME = ".deadline_lint_cache"
CACHE_DIR_ENV = "DEADLINE_LINT_CACHE_DIR"
_FORMAT = 1  # the folder's version (`v1/`: the summaries store lives there too)
_DOCUMENT = 3  # the cache file's: 3 is sealed marshal (2 was unsealed, 1 JSON; neither read now)
_RACY_SECONDS = 2.0  # a stat taken this soon after a change does not stand for the content

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
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        parts = [__version__]
        for folder, dirs, files in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            # The path below the package, as os.path.relpath gives it (which costs more per file
            # than the stat: a one-file run pays this walk)
            inside = folder[len(package) + 1:]
            for name in sorted(files):
                if name.endswith((".py", ".yaml", ".json")):
                    path = os.path.join(folder, name)
                    stat = os.stat(path)
                    relative = os.path.join(inside, name) if inside else name
                    parts.append(f"{relative}:{stat.st_size}:{stat.st_mtime_ns}")
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
    """What a file's findings were computed from besides its own text and settings, when the
    file looked into its project: `analysis.dependencies.ProjectReach` (the file's direct reach and a
    summary per module in its closure) and the state of every file named there
    (path -> [size, mtime_ns, content hash], the stat taken before the read)."""

    __slots__ = ("index", "own", "modules", "states")

    def __init__(self, index: str, own: Any, modules: Mapping[str, Any], states: Mapping[str, List[Any]]) -> None:
        self.index = index
        self.own = own
        self.modules = dict(modules)
        self.states = dict(states)

    def reach_document(self, reach: Any, paths: "PathTable") -> Dict[str, Any]:
        """A Reach as stored: every file it names (as an index into the cache file's path
        table: thousands of modules share the same absent paths) with the hash its answer
        was computed from. A module's summary is found by path and hash: content-addressed,
        so it never goes stale."""
        states = self.states
        follow = [(path, name) for path, name in zip(reach.follow, reach.names) if path in states]
        return {
            "follow": [[paths.id_of(path), states[path][2]] for path, _ in follow],
            "names": [name for _, name in follow],  # what to look up if a module there changes
            "files": [[paths.id_of(path), states[path][2]] for path in reach.files if path in states],
            "folders": [[paths.id_of(path), states[path][1]] for path in reach.folders if path in states],
            "complete": len(reach.names) == len(reach.follow)
            and all(path in states for path in (*reach.follow, *reach.files, *reach.folders)),
        }


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


class Hashed:
    """The run's memo of `recorded_state`, by path."""


def recorded_state(path: str, stamps: Optional[Mapping[str, List[Any]]] = None) -> Optional[List[Any]]:
    """[size, mtime_ns, content hash] of a file, or [0, mtime_ns, ""] of a folder, taken once
    per run: a file that changes during the run keeps the state of its first read, whose
    hash no longer matches next time, so it is checked again then. A stat taken within
    seconds of the last change is recorded as UNRELIABLE: a second change in the same clock
    tick would not show in it. `stamps`: states recorded earlier, whose hash stands for a
    file whose reliable size and mtime still match (not read again)."""
    hashed: Dict[str, List[Any]] = current().memo(Hashed, lasting=True)
    known = hashed.get(path)
    if known is not None:
        return known
    try:
        stat = os.stat(path)
        earlier = None if stamps is None else stamps.get(path)
        if S_ISDIR(stat.st_mode):
            state = [0, reliable_mtime(stat), ""]
        elif (
            isinstance(earlier, list) and len(earlier) == 3 and isinstance(earlier[2], str) and earlier[2]
            and earlier[:2] == [stat.st_size, reliable_mtime(stat)] and earlier[1] != UNRELIABLE
        ):
            state = list(earlier)
        else:
            with open_regular(path) as handle:
                state = [stat.st_size, reliable_mtime(stat), content_hash(handle.read())]
    except OSError:
        return None
    hashed[path] = state
    return state


UNRELIABLE = -1
_MISSING = object()


def reliable_mtime(stat: os.stat_result) -> int:
    return UNRELIABLE if time.time() - stat.st_mtime < _RACY_SECONDS else stat.st_mtime_ns


class _Verifier:
    """Answers "is this dependency as recorded?" once per path per run."""

    def __init__(self, stamps: Dict[str, List[Any]]) -> None:
        self.stamps = stamps  # path -> [size, mtime_ns, hash], from the cache file
        self._hashes: Dict[str, Optional[str]] = {}  # path -> its content hash now (None: unreadable)
        self._folders: Dict[str, int] = {}  # path -> its mtime now (-2: gone)
        # By index: module summaries ("path|hash") whose closure holds (a module's reach
        # depends on its index's search paths, so each index has its own).
        self.verified: Dict[str, set] = {}

    def present(self, path: str, expected: str) -> bool:
        known = self._hashes.get(path, _MISSING)
        if known is _MISSING:
            known = self._hash_now(path)
        return known == expected

    def _hash_now(self, path: str) -> Optional[str]:
        known = self._hashes[path] = current_hash(path, self.stamps.get(path))
        return known

    def known(self, path: str, digest: Optional[str]) -> None:
        """`path` was just hashed (or stat-matched) to `digest`: its reach need not stat it again."""
        self._hashes[path] = digest

    def folder_unchanged(self, path: str, mtime_ns: int) -> bool:
        """No entry added, removed or renamed in the folder since it was recorded."""
        known = self._folders.get(path)
        if known is None:
            known = self._folder_now(path)
        return known == mtime_ns and mtime_ns != UNRELIABLE

    def _folder_now(self, path: str) -> int:
        try:
            known = self._folders[path] = os.stat(path).st_mtime_ns
        except OSError:
            known = self._folders[path] = -2
        return known

    def reach_holds(self, reach: Mapping[str, Any], summaries: Mapping[str, Any], paths: List[str]) -> bool:
        """A stored reach and, through its index's module summaries, its whole closure: every
        file with its recorded content, every absent path still absent. Summaries whose
        closure was verified in this run are not walked again."""
        # present() and folder_unchanged() inlined: a warm run asks this of every file, some
        # 40,000 times over a large project.
        hashes, folders = self._hashes, self._folders
        pending = [reach]
        visited: List[str] = []
        verified = self.verified.setdefault(reach["index"], set())
        while pending:
            current = pending.pop()
            if current["complete"] is not True:
                return False  # a file it named could not be read: never trusted
            for number, digest in current["files"]:
                path = paths[number]
                now = hashes.get(path, _MISSING)
                if (self._hash_now(path) if now is _MISSING else now) != digest:
                    return False
            for number, mtime in current["folders"]:
                path = paths[number]
                now = folders.get(path)
                if mtime == UNRELIABLE or (self._folder_now(path) if now is None else now) != mtime:
                    return False
            for number, digest in current["follow"]:
                node = f"{number}|{digest}"
                if node in verified or node in visited:
                    continue
                summary = summaries.get(node)
                if not isinstance(summary, dict) or not self.present(paths[number], digest):
                    return False
                visited.append(node)
                pending.append(summary)
        verified.update(visited)  # each one's closure lies within what was just verified
        return True


def current_hash(path: str, recorded: Optional[Sequence[Any]]) -> Optional[str]:
    return hash_now(path, recorded)[0]


def hash_now(path: str, recorded: Optional[Sequence[Any]]) -> Tuple[Optional[str], Optional[os.stat_result]]:
    """The file's content hash now: the recorded one when size and mtime still match (an
    unreliable stamp never does), else read and hashed; with the stat when it was read."""
    try:
        stat = os.stat(path)
    except OSError:
        return None, None
    if recorded is not None and len(recorded) == 3 and list(stamp_of(stat)) == list(recorded[:2]):
        return recorded[2], None  # recorded long enough after its last change to stand for it
    try:
        with open_regular(path) as handle:
            return content_hash(handle.read()), stat
    except OSError:
        return None, None


class ResultCache:
    """One settings key's entries for the files of one project (roots.py), in one file under
    the cache folder: a run over a few files reads and writes only their projects'. The file
    is marshalled (plain dicts, lists, strings and numbers, as JSON would hold them): for a
    project of some 2,000 files, JSON's decoder and encoder were 0.15-0.3 CPU s of every
    pre-commit run over one changed file, marshal's about a fifth of that."""

    def __init__(self, folder: str, key: str, project: str = "") -> None:
        self.folder = folder
        self.key = key
        self.project = project
        shard = hashlib.blake2b(project.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
        self.path = os.path.join(folder, f"v{_FORMAT}", key, f"{shard}.marshal")
        # Values marshalled (as read, or as stored by this run) until used: a cold run over a
        # large project held 20 MB of entries and module reaches as objects until it saved.
        self.entries: Dict[str, Any] = _Encoded()
        self.stamps: Dict[str, List[Any]] = {}  # every recorded file: [size, mtime_ns, hash]
        # Module reaches, by project (root and search paths) and then "path|hash".
        self.modules: Dict[str, Dict[str, Any]] = {}
        self.paths = PathTable([])
        self._stored: set = set()  # paths whose entries this run wrote
        self._asked: set = set()  # paths this run looked up (they exist)
        self._written: set = set()  # (index, module summary) this run wrote
        self.sent: Dict[str, set] = {}  # by index: modules whose reach this run has returned
        self.changed = False
        self._pruned = 0  # module reaches the file held when it was last pruned
        self._load()
        self._verifier = _Verifier(self.stamps)

    def _load(self) -> None:
        from deadline_lint.support.collector import collector_paused

        try:
            with open_regular(self.path) as handle:
                payload = sealed.unseal(handle.read(), self._inputs())
            if payload is None:
                return  # another key's or project's file, damaged, or not ours: rewrite it
            with collector_paused():  # hundreds of thousands of containers, none in a cycle
                document = marshal.loads(payload)
        except (OSError, EOFError, ValueError, TypeError):
            return  # none yet, unreadable or corrupt: start empty and rewrite it
        if not isinstance(document, dict) or document.get("format") != _DOCUMENT:
            return
        if document.get("key") != self.key or document.get("project") != self.project:
            return  # another key's or project's file (a hash collision, or copied here)
        entries, stamps, modules = document.get("files"), document.get("stamps"), document.get("modules")
        paths = document.get("paths")
        if (
            isinstance(entries, dict) and isinstance(stamps, dict) and isinstance(modules, dict)
            and isinstance(paths, list)
        ):
            if all(isinstance(path, str) for path in paths):
                self.entries, self.stamps, self.paths = _Encoded(entries), stamps, PathTable(paths)
                self.modules = {
                    index: _Encoded(table) if isinstance(table, dict) else table for index, table in modules.items()
                }
                pruned = document.get("pruned")
                self._pruned = pruned if isinstance(pruned, int) else 0

    def _inputs(self) -> str:
        """What the file is built for, in its seal: the format, settings key and project."""
        return sealed.inputs_digest(b"%d" % _DOCUMENT, self.key.encode(), self.project.encode("utf-8", "surrogatepass"))

    # -- reading -------------------------------------------------------------------
    def lookup(self, path: str, display: str) -> Optional[List[Diagnostic]]:
        """The file's cached findings, shown under `display`, or None when there is no
        entry or any part of it no longer matches."""
        self._asked.add(path)
        entry = self.entries.get(path)
        if not isinstance(entry, dict):
            return None
        try:
            digest, read_at = hash_now(path, self.stamps.get(path))
            if digest != entry["hash"]:
                return None
            self._verifier.known(path, digest)
            reach = entry.get("reach")
            summaries = self.modules.get(reach["index"], {}) if reach is not None else {}
            if reach is not None and not self._verifier.reach_holds(reach, summaries, self.paths.paths):
                return None
            found = [Diagnostic.from_json(item, display) for item in _listed(entry["found"])]
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return None  # a malformed entry is never trusted
        if read_at is not None and reliable_mtime(read_at) != UNRELIABLE:
            # Verified by its content: a stamp now spares the next run the read.
            self.stamps[path] = [read_at.st_size, read_at.st_mtime_ns, digest]
            self.changed = True
        return found

    def reach_of(self, index: str, path: str) -> Optional[Tuple[Tuple[str, ...], ...]]:
        """The stored reach of the module at `path` under `index` (analysis.dependencies'
        StoredReaches), when the module is as it was and so is every file and folder that
        reach names; the modules it follows are looked at in turn by the caller."""
        number, recorded = self.paths.known_id(path), self.stamps.get(path)
        if number is None or not isinstance(recorded, list) or len(recorded) != 3:
            return None
        verifier, paths = self._verifier, self.paths.paths
        try:
            if not verifier.present(path, recorded[2]):
                return None
            document = self.modules.get(index, {}).get(f"{number}|{recorded[2]}")
            if not isinstance(document, dict) or document.get("complete") is not True:
                return None
            follow, names = document["follow"], document["names"]
            if len(follow) != len(names) or not all(isinstance(name, str) for name in names):
                return None
            if not all(verifier.present(paths[n], digest) for n, digest in document["files"]):
                return None
            if not all(verifier.folder_unchanged(paths[n], mtime) for n, mtime in document["folders"]):
                return None
            return (
                tuple(paths[n] for n, _ in follow),
                tuple(paths[n] for n, _ in document["files"]),
                tuple(paths[n] for n, _ in document["folders"]),
                tuple(names),
            )
        except (KeyError, TypeError, ValueError, IndexError):
            return None  # a malformed summary is never trusted

    # -- writing -------------------------------------------------------------------
    def store(self, path: str, stamp: Stamp, digest: str, found: Sequence[Diagnostic],
              dependencies: Optional[Dependencies] = None) -> None:
        entry: Dict[str, Any] = {"hash": digest, "found": [_without_path(d) for d in found]}
        fresh = time.time() - stamp[1] / 1e9 < _RACY_SECONDS
        self.stamps[path] = [stamp[0], UNRELIABLE if fresh else stamp[1], digest]
        if dependencies is not None:
            entry["reach"] = {"index": dependencies.index, **dependencies.reach_document(dependencies.own, self.paths)}
            table = self.modules.setdefault(dependencies.index, _Encoded())
            for module_path, reach in dependencies.modules.items():
                state = dependencies.states.get(module_path)
                if state is not None:
                    node = f"{self.paths.id_of(module_path)}|{state[2]}"
                    # Content-addressed: one written or verified in this run is the same; a
                    # loaded one that was never verified may be damaged, so it is replaced.
                    done = (dependencies.index, node)
                    if done not in self._written and node not in self._verifier.verified.get(dependencies.index, ()):
                        table[node] = marshal.dumps(dependencies.reach_document(reach, self.paths))
                        self._written.add(done)
            self.stamps.update(dependencies.states)
        self.entries[path] = marshal.dumps(entry)
        self._stored.add(path)
        self.changed = True

    def save(self) -> Optional[str]:
        """Write the cache file atomically; a warning line when it cannot be written (the
        run's results stand either way)."""
        if not self.changed:
            return None
        live = self.entries
        large = 2 * len(self._asked) >= len(self.entries)
        nodes = sum(len(table) for table in self.modules.values() if isinstance(table, dict))
        if large or nodes > 2 * self._pruned + 256:
            if large:
                # A run over most of what is cached (a folder walk, not pre-commit's few files)
                # drops the entries of files that are gone; a small run spares the stats.
                live = {
                    path: entry for path, entry in dict.items(live) if path in self._asked or os.path.exists(path)
                }
            try:
                modules, needed = _reachable(live, self.modules, self.paths.paths)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError):
                # Something loaded was malformed: keep only what this run wrote.
                live = {path: entry for path, entry in dict.items(live) if path in self._stored}
                modules, needed = _reachable(live, self.modules, self.paths.paths)
            stamps = {path: stamp for path, stamp in self.stamps.items() if path in needed}
            pruned = sum(len(table) for table in modules.values())
        else:
            # A small run (pre-commit's few files) keeps what it loaded: walking every entry's
            # reach to drop the module reaches no entry uses any more was a third of such a
            # run's cost in a large project. They are dropped by the next large run, or once
            # they are more than half of the file.
            modules, stamps, pruned = self.modules, self.stamps, self._pruned
        document = {
            "format": _DOCUMENT,
            "key": self.key,
            "project": self.project,
            "files": _encoded(live),
            "modules": {
                index: _encoded(table) if isinstance(table, dict) else table for index, table in modules.items()
            },
            "paths": self.paths.paths,
            "stamps": stamps,
            "pruned": pruned,
        }
        try:
            prepare_folder(self.folder)
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            data = sealed.seal(self._inputs(), marshal.dumps(document))
            # One writer per name (not tempfile: importing it loads shutil, random, bz2, lzma).
            temporary = f"{self.path}.{os.getpid()}.{threading.get_ident()}.tmp"
            try:
                with os.fdopen(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
                    out.write(data)
                os.replace(temporary, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except OSError as exc:
            return f"cannot write the cache in {self.folder}: {exc.strerror or exc}"
        self.changed = False
        return None


class _Encoded(dict):
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
            value = _peek(value)
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


def _listed(value: Any) -> list:
    if not isinstance(value, list):
        raise TypeError("expected a list")
    return value


def _peek(value: Any) -> Any:
    """A value of an _Encoded table, decoded without being kept decoded (None: undecodable)."""
    if not isinstance(value, bytes):
        return value
    try:
        return marshal.loads(value)
    except (EOFError, ValueError, TypeError):
        return None


def _encoded(table: Dict[str, Any]) -> Dict[str, Any]:
    """A table as the file holds it: each value marshalled (those never decoded as read)."""
    return {
        key: value if isinstance(value, bytes) else marshal.dumps(value)
        for key, value in dict.items(table)  # as they are: an _Encoded's unread values stay bytes
    }


def _reachable(entries: Dict[str, Any], modules: Mapping[str, Any], paths: List[str]) -> Tuple[Dict[str, Any], set]:
    """The module summaries some live entry still reaches (older versions are dropped), and
    every path whose stamp is worth keeping."""
    kept: Dict[str, Dict[str, Any]] = {}
    needed = set(entries)
    for entry in map(_peek, dict.values(entries)):
        reach = entry.get("reach") if isinstance(entry, dict) else None
        if not isinstance(reach, dict):
            continue
        index: Any = reach.get("index")  # a str in every file this version writes; unchecked JSON
        table = modules.get(index, {})
        out = kept.setdefault(index, {})
        pending = [reach]
        while pending:
            current = pending.pop()
            needed.update(paths[number] for number, _ in current.get("files", ()))
            for number, digest in current.get("follow", ()):
                node = f"{number}|{digest}"
                needed.add(paths[number])
                if node not in out and node in table:
                    out[node] = raw = dict.__getitem__(table, node)  # kept as it is: bytes stay bytes
                    pending.append(_peek(raw))
    return kept, needed


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
