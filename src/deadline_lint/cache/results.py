"""The results cache (ruff's model): each file's findings on disk, reused while nothing they
were computed from has changed.

An entry is keyed by the file's path and content hash, under a settings key made of the
tool's own fingerprint (its version and the files of the installed package, so an edited
checkout never reuses old answers), the file's effective profile and the run's selection
options. When its file looked into its project, an entry also records the project modules its
file can reach through imports and the module paths that were looked for and absent (by their
folders' listings). Modules are recorded by *interface* (states.py): a module edited in its
comments only leaves the entries reaching it valid (early cutoff); any other change to one of
them makes the entry stale.

Validity is decided against the run's changed set (states.Survey): each file the entries name
is stat'ed once per run and read only when its stat moved; a module's closure, once found to
hold, is not walked again for the next entry that reaches it. Entries are trusted only when
they match in every part; an unreadable, corrupt or foreign cache file or entry is ignored and
rebuilt.
"""
from __future__ import annotations

import hashlib
import json
import marshal
import os
import time
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from deadline_lint import __version__
from deadline_lint.cache.document import (
    Encoded,
    PathTable,
    encoded,
    prepare_folder,
    reachable,
    read_tail,
    store_folder,
    write_atomically,
)
from deadline_lint.cache.states import RACY_SECONDS, UNRELIABLE, Stamp, Survey, hash_now, reliable_mtime
from deadline_lint.support import sealed
from deadline_lint.support.diagnostics import Diagnostic, report_parts
from deadline_lint.support.regular_files import open_regular

if TYPE_CHECKING:
    from deadline_lint.cache.dependencies import Dependencies

CACHE_DIR_NAME = ".deadline_lint_cache"
CACHE_DIR_ENV = "DEADLINE_LINT_CACHE_DIR"
# The results file's: 4 records dependencies by interface, apart from the findings; 5 keeps
# each finding's JSON report item, in two sealed parts (document.py).
_DOCUMENT = 5

_SEAL_LINE = 4096  # read first: the seal line says how much more is the head
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


class ResultCache:
    """One settings key's entries for the files of one project (roots.py), in one file under
    the store's folder: a run over a few files reads and writes only their projects'. The file
    is marshalled (plain dicts, lists, strings and numbers, as JSON would hold them): for a
    project of some 2,000 files, JSON's decoder and encoder were 0.15-0.3 CPU s of every
    pre-commit run over one changed file, marshal's about a fifth of that."""

    def __init__(self, folder: str, key: str, project: str = "", settle: bool = False) -> None:
        self.folder = folder
        self.key = key
        self.project = project
        # A run over many of the project's files first finds whether anything the file records
        # changed (one stat each); when nothing did, an entry known consistent with those
        # records (`clean`) needs only its own content checked, not its reach walked.
        self.settle = settle
        self._settled: Optional[bool] = None
        self.clean: set = set()  # entries consistent with `stamps` when the file was written
        self._confirmed: set = set()  # entries this run verified or stored
        self._moved = False  # a record this run changed an interface others may depend on
        self._incomplete = False  # this run stored a reach naming a file it could not read
        self._restamped: set = set()
        self._reaches: Dict[str, Any] = Encoded()  # by path: the entry's own reach (apart: a hit may not need it)
        shard = hashlib.blake2b(project.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
        self.path = os.path.join(store_folder(folder), key, f"{shard}.marshal")
        # Values marshalled (as read, or as stored by this run) until used: a cold run over a
        # large project held 20 MB of entries and module reaches as objects until it saved.
        self.entries: Dict[str, Any] = Encoded()
        self.stamps: Dict[str, List[Any]] = {}  # every recorded file's state (states.py)
        # Module reaches, by project (root and search paths) and then "path|interface".
        self._modules: Dict[str, Dict[str, Any]] = {}
        self._paths = PathTable([])
        # The file's second part (reaches, module reaches, path table), unsealed and decoded
        # when first used: a run where nothing changed answers from the first part alone.
        self._tail: Optional[Tuple[int, bytes]] = None  # where it starts in the file, its digest
        self._stored: set = set()  # paths whose entries this run wrote
        self._asked: set = set()  # paths this run looked up (they exist)
        self._written: set = set()  # (index, module reach) this run wrote
        self.sent: Dict[str, set] = {}  # by index: modules whose reach this run has returned
        # By index: module reaches ("path|interface") whose closure holds (a module's reach
        # depends on its index's search paths, so each index has its own).
        self.verified: Dict[str, set] = {}
        self.changed = False
        self._pruned = 0  # module reaches the file held when it was last pruned
        self._load()
        self.survey = Survey(self.stamps)

    def _load(self) -> None:
        from deadline_lint.support.collector import collector_paused

        try:
            with open_regular(self.path) as handle:
                data = handle.read(_SEAL_LINE)
                size = sealed.parts_size(data)
                if size is not None and size > len(data):
                    data += handle.read(size - len(data))  # the head only: the tail is read if used
                parts = sealed.unseal_head(data, self._inputs())
            if parts is None or size is None:
                return  # another key's or project's file, damaged, or not ours: rewrite it
            with collector_paused():  # tens of thousands of containers, none in a cycle
                document = marshal.loads(parts[0])
        except (OSError, EOFError, ValueError, TypeError):
            return  # none yet, unreadable or corrupt: start empty and rewrite it
        if not isinstance(document, dict) or document.get("format") != _DOCUMENT:
            return
        if document.get("key") != self.key or document.get("project") != self.project:
            return  # another key's or project's file (a hash collision, or copied here)
        entries, stamps, clean = document.get("files"), document.get("stamps"), document.get("clean")
        if isinstance(entries, dict) and isinstance(stamps, dict) and isinstance(clean, list):
            self.entries, self.stamps = Encoded(entries), stamps
            self.clean = {path for path in clean if isinstance(path, str)}
            self._tail = size, parts[2]

    def _read_tail(self) -> None:
        """The file's second part, once (document.read_tail: damaged, it is as if none was kept)."""
        if self._tail is not None:
            kept, self._tail = read_tail(self.path, *self._tail), None
            if kept is not None:
                self._reaches, self._modules, self._paths, self._pruned = kept

    @property
    def reaches(self) -> Dict[str, Any]:
        self._read_tail()
        return self._reaches

    @property
    def modules(self) -> Dict[str, Dict[str, Any]]:
        self._read_tail()
        return self._modules

    @property
    def paths(self) -> PathTable:
        self._read_tail()
        return self._paths

    def _inputs(self) -> str:
        """What the file is built for, in its seal: the format, settings key and project."""
        return sealed.inputs_digest(b"%d" % _DOCUMENT, self.key.encode(), self.project.encode("utf-8", "surrogatepass"))

    # -- reading -------------------------------------------------------------------
    def lookup(self, path: str, display: str) -> Optional[List[Diagnostic]]:
        """The file's cached findings, shown under `display`, or None when there is no
        entry or any part of it no longer matches."""
        self._asked.add(path)
        found = self._found(path, display)
        if found is None:
            self.clean.discard(path)
        else:
            self._confirmed.add(path)
        return found

    def _found(self, path: str, display: str) -> Optional[List[Diagnostic]]:
        entry = self.entries.get(path)
        if not isinstance(entry, dict):
            return None
        survey = self.survey
        if self.settle and self._settled is None:
            self._settled = bool(self.clean) and survey.settled()
        try:
            recorded = self.stamps.get(path)
            if path in survey.same:  # stat'ed by settled(), its recorded interface known
                digest, read_at = recorded[2], None  # type: ignore[index]
                if digest != entry["hash"]:
                    return None
            else:
                digest, read_at, _ = hash_now(path, recorded)
                if digest != entry["hash"]:
                    return None
                survey.own(path, digest, recorded)
            if entry["project"] and not (self._settled and path in self.clean):
                reach = self.reaches.get(path)
                if not isinstance(reach, dict):
                    return None
                index = reach["index"]
                verified = self.verified.setdefault(index, set())
                if not survey.holds(reach, self.modules.get(index, {}), self.paths.paths, verified):
                    return None
            documents, report = _listed(entry["found"]), _listed(entry["report"])
            if len(report) != len(documents):
                return None
            found = [Diagnostic.from_json(item, display, parts) for item, parts in zip(documents, report)]
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return None  # a malformed entry is never trusted
        if (
            read_at is not None and reliable_mtime(read_at) != UNRELIABLE
            and isinstance(recorded, list) and len(recorded) == 4 and recorded[2] == digest
        ):
            # Verified by its content: a stamp now spares the next run the read.
            self.stamps[path] = [read_at.st_size, read_at.st_mtime_ns, digest, recorded[3]]
            self.changed = True
        return found

    def reach_of(self, index: str, path: str) -> Optional[Tuple[Tuple[str, ...], ...]]:
        """The stored reach of the module at `path` under `index` (dependencies'
        StoredReaches), when the module's interface is as it was and so is every file and
        folder that reach names; the modules it follows are looked at in turn by the caller."""
        number, recorded = self.paths.known_id(path), self.stamps.get(path)
        if number is None or not isinstance(recorded, list) or len(recorded) != 4:
            return None
        survey, paths = self.survey, self.paths.paths
        try:
            if survey.interface(path) != recorded[3]:
                return None
            document = self.modules.get(index, {}).get(f"{number}|{recorded[3]}")
            if not isinstance(document, dict) or document.get("complete") is not True:
                return None
            follow, names = document["follow"], document["names"]
            if len(follow) != len(names) or not all(isinstance(name, str) for name in names):
                return None
            if not all(survey.interface(paths[n]) == digest for n, digest in document["files"]):
                return None
            if not all(survey.folder_unchanged(paths[n], mtime) for n, mtime in document["folders"]):
                return None
            return (
                tuple(paths[n] for n, _ in follow),
                tuple(paths[n] for n, _ in document["files"]),
                tuple(paths[n] for n, _ in document["folders"]),
                tuple(names),
            )
        except (KeyError, TypeError, ValueError, IndexError):
            return None  # a malformed reach is never trusted

    # -- writing -------------------------------------------------------------------
    def store(self, path: str, stamp: Stamp, digest: str, found: Sequence[Diagnostic],
              dependencies: Optional["Dependencies"] = None, interface: str = "") -> None:
        # Each finding without its path: shown under the path of the run that reads it back.
        documents = [{key: value for key, value in d.to_json().items() if key != "path"} for d in found]
        entry: Dict[str, Any] = {"hash": digest, "found": documents, "report": [list(report_parts(d)) for d in found],
                                 "project": dependencies is not None}
        fresh = time.time() - stamp[1] / 1e9 < RACY_SECONDS
        self._restamp(path, [stamp[0], UNRELIABLE if fresh else stamp[1], digest, interface])
        if dependencies is not None:
            own = {"index": dependencies.index, **dependencies.reach_document(dependencies.own, self.paths)}
            self._incomplete = self._incomplete or own["complete"] is not True
            table = self.modules.setdefault(dependencies.index, Encoded())
            if dependencies.shared is not None:
                # Content-addressed, like a module's reach: thousands of entries name one.
                document = dependencies.reach_document(dependencies.shared, self.paths)
                self._incomplete = self._incomplete or document["complete"] is not True
                data = marshal.dumps(document)
                node = "shared|" + hashlib.blake2b(data, digest_size=16).hexdigest()
                table[node] = data  # a loaded one may be damaged: written anew
                own["shared"] = [node]
            self.reaches[path] = marshal.dumps(own)
            verified = self.verified.get(dependencies.index, ())
            for module_path, reach in dependencies.modules.items():
                state = dependencies.states.get(module_path)
                if state is not None:
                    node = f"{self.paths.id_of(module_path)}|{state[3]}"
                    # Content-addressed: one written or verified in this run is the same; a
                    # loaded one that was never verified may be damaged, so it is replaced.
                    done = (dependencies.index, node)
                    if done not in self._written and node not in verified:
                        document = dependencies.reach_document(reach, self.paths)
                        self._incomplete = self._incomplete or document["complete"] is not True
                        table[node] = marshal.dumps(document)
                        self._written.add(done)
            for dependency, state in dependencies.states.items():
                self._restamp(dependency, state)
        else:
            self.reaches.pop(path, None)
        self.entries[path] = marshal.dumps(entry)
        self._stored.add(path)
        self._confirmed.add(path)
        self.changed = True

    def _restamp(self, path: str, state: List[Any]) -> None:
        earlier = self.stamps.get(path)
        if earlier != state:
            if path in self._restamped:
                self._incomplete = True  # changed during the run: what it recorded first is gone
            if earlier is not None and not (
                isinstance(earlier, list) and len(earlier) == 4
                and (earlier[3] == state[3] if state[2] else earlier[1] == state[1])
            ):
                self._moved = True  # another interface, or a folder's listing (entries may name it)
            self._restamped.add(path)
            self.stamps[path] = state

    def save(self) -> Optional[str]:
        """Write the cache file atomically; a warning line when it cannot be written (the
        run's results stand either way)."""
        if self.survey.fresh:
            for path, state in self.survey.fresh.items():
                if self.stamps.get(path) != state:
                    self.stamps[path] = state  # touched, or edited in comments only: stat it next time
                    self.changed = True
            self.survey.fresh.clear()
        clean = self.clean | self._confirmed if not (self._moved or self.survey.changed) else self._confirmed
        if self._incomplete:
            clean = set()
        self.changed = self.changed or clean != self.clean
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
                modules, needed = reachable(live, self.reaches, self.modules, self.paths.paths)
            except (KeyError, TypeError, ValueError, AttributeError, IndexError):
                # Something loaded was malformed: keep only what this run wrote.
                live = {path: entry for path, entry in dict.items(live) if path in self._stored}
                clean &= self._stored
                modules, needed = reachable(live, self.reaches, self.modules, self.paths.paths)
            stamps = {path: stamp for path, stamp in self.stamps.items() if path in needed}
            pruned = sum(len(table) for table in modules.values())
        else:
            # A small run (pre-commit's few files) keeps what it loaded: walking every entry's
            # reach to drop the module reaches no entry uses any more was a third of such a
            # run's cost in a large project. They are dropped by the next large run, or once
            # they are more than half of the file.
            modules, stamps, pruned = self.modules, self.stamps, self._pruned
        head = {
            "format": _DOCUMENT,
            "key": self.key,
            "project": self.project,
            "files": encoded(live),
            "clean": sorted(path for path in clean if path in live),
            "stamps": stamps,
        }
        tail = {
            "reaches": encoded({path: reach for path, reach in dict.items(self.reaches) if path in live}),
            "modules": {
                index: encoded(table) if isinstance(table, dict) else table for index, table in modules.items()
            },
            "paths": self.paths.paths,
            "pruned": pruned,
        }
        try:
            prepare_folder(self.folder)
            write_atomically(self.path, sealed.seal_parts(self._inputs(), marshal.dumps(head), marshal.dumps(tail)))
        except OSError as exc:
            return f"cannot write the cache in {self.folder}: {exc.strerror or exc}"
        self.changed = False
        self.clean = clean
        return None


def _listed(value: Any) -> list:
    if not isinstance(value, list):
        raise TypeError("expected a list")
    return value

