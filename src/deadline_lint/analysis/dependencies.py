"""Which project files a file's findings can depend on, for the results cache.

The project index only follows imports: a name imported from a project module, what that
module imports in turn, and so on. So the modules a file reaches through import lines (any
depth, read from the text the way the index reads them) bound everything the index can have
told the checker about it, however its answers were memoised across files. Module paths that
were looked for and are absent count too: a module appearing there changes what a name
means. So do the `__init__.py` files and root markers that decide the file's own module name
and project root.
"""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Set, Tuple

from deadline_lint.analysis.project import _ROOT_MARKERS, ProjectIndex, _Named, import_table, index_for, place_of
from deadline_lint.catalog import Catalog

# A module's direct reach: (modules to follow, files that exist, files that do not).
_Edges = Tuple[Tuple[str, ...], Tuple[str, ...], Tuple[str, ...]]
_EDGES: Dict[Tuple[int, str], _Edges] = {}


def project_dependencies(path: str, text: str, catalog: Catalog) -> Optional[Tuple[Set[str], Set[str]]]:
    """(existing files, absent paths) the file's findings can depend on through its project,
    or None when the file belongs to no project (stdin, a file outside any)."""
    found = index_for(path, catalog)
    place = place_of(path)
    if found is None or place is None:
        return None
    index, name, is_package = found
    present: Set[str] = set()
    absent: Set[str] = set()
    _own_place(os.path.abspath(path), place[1], present, absent)
    follow, files, missing = _reach(index, _Named(name, is_package), text)
    present.update(files)
    absent.update(missing)
    seen: Set[str] = set()
    queue: List[str] = list(follow)
    while queue:
        module_name = queue.pop()
        if module_name in seen:
            continue
        seen.add(module_name)
        edges = _edges_of(index, module_name)
        queue.extend(edges[0])
        present.update(edges[1])
        absent.update(edges[2])
    return present, absent


def _edges_of(index: ProjectIndex, module_name: str) -> _Edges:
    key = (id(index), module_name)
    edges = _EDGES.get(key)
    if edges is None:
        module = index.module(module_name)
        edges = _EDGES[key] = ((), (), ()) if module is None else _reach(
            index, _Named(module.name, module.is_package), module.text
        )
    return edges


def _reach(index: ProjectIndex, holder: _Named, text: str) -> _Edges:
    """Every import line's target, as `ProjectIndex.split` would look it up: each prefix,
    longest first, to the first project module (followed); the paths tried on the way."""
    follow: Set[str] = set()
    files: Set[str] = set()
    missing: Set[str] = set()
    for target in set(import_table(text).values()):
        parts = index.absolute(holder, target).split(".")  # type: ignore[arg-type]
        followed = False
        for cut in range(len(parts), 0, -1):
            prefix = ".".join(parts[:cut])
            module = index.module(prefix)
            for candidate, _ in index.candidates(prefix):
                if module is not None and candidate == module.path:
                    break
                (files if os.path.isfile(candidate) else missing).add(candidate)
            if module is not None:
                files.add(module.path)
                if not followed:
                    follow.add(module.name)
                    followed = True
    return tuple(sorted(follow)), tuple(sorted(files)), tuple(sorted(missing))


def _own_place(path: str, root: str, present: Set[str], absent: Set[str]) -> None:
    """The package `__init__.py` files and project markers above the file decide its module
    name and its project's root."""
    folder = os.path.dirname(path)
    while True:
        for name in ("__init__.py", *_ROOT_MARKERS):
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
