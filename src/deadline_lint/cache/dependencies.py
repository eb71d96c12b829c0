"""Which project files a file's findings can depend on, for the results cache.

The semantics layer only follows imports: a name imported from a project module, what that
module imports in turn, and so on. So the modules a file reaches through import lines (any
depth, read from the text the way the layer reads them) bound everything its facts can have
told the checker about it, however its answers were memoised across files. Module paths that
were looked for and are absent count too: a module appearing there changes what a name
means: such a path is recorded by the deepest folder on it that exists, whose listing must
not change (a module or package appearing there changes the folder's mtime). So do the
`__init__.py` files and root markers that decide the file's own module name and project root.

Each file and each module gets a `Reach`: the modules it follows directly, other files it
looked at, and paths it found absent. The cache stores one Reach per module (a per-module
summary shared by every file that reaches it), so a file's entry names only its own direct
reach and the closure is walked when the entry is read. When one file of a cached project
changed (pre-commit's case), the modules behind it are as the cache holds them: their stored
reaches are taken as they are once the files and folders they name are checked unchanged,
instead of looking up every import line of every module again.
"""
from __future__ import annotations

import os
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, NamedTuple, Optional, Protocol, Set, Tuple

from deadline_lint.cache.document import PathTable
from deadline_lint.semantics.modules import ProjectModules, absolute_name, place_of, project_of
from deadline_lint.semantics.roots import ROOT_MARKERS
from deadline_lint.semantics.scan import import_table
from deadline_lint.semantics.session import current

if TYPE_CHECKING:
    from deadline_lint.catalog import Catalog


class Reach(NamedTuple):
    follow: Tuple[str, ...]  # paths of the project modules imported (their reach counts too)
    files: Tuple[str, ...]  # other files whose content counts (package `__init__`s, markers)
    folders: Tuple[str, ...]  # where paths looked for were absent: their listings count
    names: Tuple[str, ...] = ()  # the dotted name of each module in `follow`, in order


class ProjectReach(NamedTuple):
    index: str  # type: ignore[assignment]  # which index answered: its root and search paths (module reach depends on them)
    own: Reach
    modules: Dict[str, Reach]  # every module in the closure, by path


class StoredReaches(Protocol):
    """What the results cache holds from earlier runs (cache.ResultCache)."""

    def reach_of(self, index: str, path: str) -> Optional[Tuple[Tuple[str, ...], ...]]:
        """The module's stored Reach fields, when its content and everything the reach names
        are as they were (the modules it follows may have changed: they are looked at in
        turn)."""


# Memos are kept for the indexes (projects) most recently asked about: a folder walk takes a
# project's files together, and keeping every project's (154 indexes, 39,000 dotted names and
# 48,000 folders on the library corpus) was some 20 MB of a cold run's peak with the cache on.
# An index lives as long as the run (see semantics.modules), so its id stays its own.
KEEP_INDEXES = 8


class _Recent:
    """One memo table per index, for the KEEP_INDEXES indexes asked about last."""

    def __init__(self) -> None:
        self._tables: "OrderedDict[int, Dict[str, Any]]" = OrderedDict()
        self._last: Tuple[int, Dict[str, Any]] = (0, {})

    def of(self, index: ProjectModules) -> Dict[str, Any]:
        key = id(index)
        if self._last[0] == key:
            return self._last[1]  # most questions in a row are about one index
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = {}
            while len(self._tables) > KEEP_INDEXES:
                self._tables.popitem(last=False)
        else:
            self._tables.move_to_end(key)
        self._last = (key, table)
        return table

    def clear(self) -> None:
        self._tables.clear()
        self._last = (0, {})


class ModuleReaches(_Recent):
    """The run's dotted name -> (its path or None, its Reach)."""


class Prefixes(_Recent):
    """The run's dotted name -> see _prefix."""


class Folders(_Recent):
    """The run's path's folder -> the deepest folder on it that exists."""


def project_reach(
    path: str, text: str, catalog: Catalog, sent: Optional[Dict[str, Set[str]]] = None,
    stored: Optional[StoredReaches] = None,
) -> Optional[ProjectReach]:
    """The file's own reach and that of every module it reaches, or None when the file
    belongs to no project (stdin, a file outside any). `sent`, by index: modules whose reach
    (and so that of their whole closure) the caller already has; new ones are added to it.
    `stored`: reaches kept from earlier runs, taken where they still hold."""
    found = project_of(path)
    place = place_of(path)
    if found is None or place is None:
        return None
    index, name, is_package = found
    present: Set[str] = set()
    absent: Set[str] = set()
    _own_place(os.path.abspath(path), place[1], present, absent)
    module = index.module(name) if name else None
    if module is not None and module.path == os.path.abspath(path) and module.text == text:
        _, own = _module_reach(index, name)  # shared with the files importing it
    else:
        own = _reach(index, name, is_package, import_table(text))
    existing = current().state(Folders).of(index)
    folders = {_existing_folder(path, existing) for path in absent}
    own = own._replace(files=tuple(sorted(present.union(own.files))), folders=tuple(sorted(folders.union(own.folders))))
    signature = "\n".join((index.root, *index.search_paths))
    known = None if sent is None else sent.setdefault(signature, set())
    modules: Dict[str, Reach] = {}
    queue = list(zip(own.follow, own.names))
    while queue:
        module_path, module_name = queue.pop()
        if module_path in modules or (known is not None and module_path in known):
            continue
        kept = None if stored is None else stored.reach_of(signature, module_path)
        if kept is not None:
            reach = Reach(*kept)
        else:
            found_at, reach = _module_reach(index, module_name)
            if found_at != module_path:
                continue  # no longer readable as a module: it is not followed
        modules[module_path] = reach
        queue.extend(zip(reach.follow, reach.names))
    if known is not None:
        known.update(modules)
    return ProjectReach(signature, own, modules)


def _module_reach(index: ProjectModules, module_name: str) -> Tuple[Optional[str], Reach]:
    memo = current().state(ModuleReaches).of(index)
    known = memo.get(module_name)
    if known is None:
        module = index.module(module_name)
        if module is None:
            known = (None, Reach((), (), ()))
        else:
            known = (module.path, _reach(index, module.name, module.is_package, import_table(module.text)))
        memo[module_name] = known
    return known


def _reach(index: ProjectModules, module_name: str, is_package: bool, imports: Dict[str, str]) -> Reach:
    """Every import line's target, as `ProjectModules.split` would look it up: each prefix,
    longest first, to the first project module (followed); the paths tried on the way."""
    follow: Dict[str, str] = {}
    files: Set[str] = set()
    folders: Set[str] = set()
    for target in set(imports.values()):
        parts = absolute_name(module_name, is_package, target).split(".")
        followed = False
        for cut in range(len(parts), 0, -1):
            module_path, found_name, tried, absent_in = _prefix(index, ".".join(parts[:cut]))
            files.update(tried)
            folders.update(absent_in)
            if module_path is not None:
                if followed:
                    files.add(module_path)  # a package on the way: only its existence counts
                else:
                    follow[module_path] = found_name
                    followed = True
    files.difference_update(follow)
    ordered = sorted(follow)
    return Reach(tuple(ordered), tuple(sorted(files)), tuple(sorted(folders)), tuple(follow[p] for p in ordered))


def _prefix(index: ProjectModules, name: str) -> Tuple[Optional[str], str, Tuple[str, ...], Tuple[str, ...]]:
    """(module path or None, its name, files tried before it that exist, folders where the
    files tried were absent), once per dotted name per index: thousands of modules import
    the same few names."""
    memo = current().state(Prefixes).of(index)
    known = memo.get(name)
    if known is None:
        module = index.module(name)
        tried: Set[str] = set()
        absent_in: Set[str] = set()
        existing = current().state(Folders).of(index)
        first, namespaced = index.probes(name)
        # The first paths are tried in order (the module found ends them); every path of the
        # namespace bases counts, as a second one found there would leave the name unanswered.
        for candidate in (*first, *namespaced):
            if module is not None and candidate == module.path:
                if candidate in first:
                    break
                continue
            # Not memoised per path: such a table (90,000 paths on the corpus, 12 MB of the peak)
            # spared 58,000 stats, 0.1 s of a 50 s cold run.
            if os.path.isfile(candidate):
                tried.add(candidate)
            else:
                absent_in.add(_existing_folder(candidate, existing))
        known = memo[name] = (
            None if module is None else module.path, name, tuple(tried), tuple(absent_in)
        )
    return known


def _existing_folder(path: str, memo: Dict[str, str]) -> str:
    """The deepest folder on `path` that exists (memoised: thousands of probes share few)."""
    folder = os.path.dirname(path)
    known = memo.get(folder)
    if known is None:
        known = folder if os.path.isdir(folder) else _existing_folder(folder, memo)
        memo[folder] = known
    return known


def _own_place(path: str, root: str, present: Set[str], absent: Set[str]) -> None:
    """The package `__init__.py` files and project markers above the file decide its module
    name and its project's root."""
    folder = os.path.dirname(path)
    while True:
        for name in ("__init__.py", *ROOT_MARKERS):
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate):
                present.add(candidate)
            elif not os.path.exists(candidate):
                absent.add(candidate)  # a folder (`.git`) counts by existing, and stays
        if folder == root or not folder.startswith(root):
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent


class Dependencies:
    """What a file's findings were computed from besides its own text and settings, when the
    file looked into its project: `dependencies.ProjectReach` (the file's direct reach and a
    reach per module in its closure), `shared`: what every file of the project that asked who
    calls a def depends on (every module of the project, `semantics/callers`), and the state of
    every file named there (states.py, the stat taken before the read)."""

    __slots__ = ("index", "own", "modules", "states", "shared")

    def __init__(self, index: str, own: Any, modules: Mapping[str, Any], states: Mapping[str, List[Any]],
                 shared: Any = None) -> None:
        self.index = index
        self.own = own
        self.modules = dict(modules)
        self.states = dict(states)
        self.shared = shared

    def reach_document(self, reach: Any, paths: PathTable) -> Dict[str, Any]:
        """A Reach as stored: every file it names (as an index into the cache file's path
        table: thousands of modules share the same absent paths) with the interface its answer
        was computed from. A module's reach is found by path and interface: content-addressed
        (its import lines are part of its interface), so it never goes stale."""
        states = self.states
        follow = [(path, name) for path, name in zip(reach.follow, reach.names) if path in states]
        return {
            "follow": [[paths.id_of(path), states[path][3]] for path, _ in follow],
            "names": [name for _, name in follow],  # what to look up if a module there changes
            "files": [[paths.id_of(path), states[path][3]] for path in reach.files if path in states],
            "folders": [[paths.id_of(path), states[path][1]] for path in reach.folders if path in states],
            "complete": len(reach.names) == len(reach.follow)
            and all(path in states for path in (*reach.follow, *reach.files, *reach.folders)),
        }
