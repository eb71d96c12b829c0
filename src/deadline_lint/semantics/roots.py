"""Where a file's project starts: the nearest folder above it holding a `pyproject.toml`,
`setup.cfg`, `setup.py` or `.git`. The semantics layer searches modules from there, and the
results cache keeps one file per project (a pre-commit run over a few files reads and writes
only their projects' entries)."""
from __future__ import annotations

import os
from typing import Collection, Dict, Optional

from deadline_lint.semantics.session import current

ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")


class Roots:
    """The run's memo of where projects start, by folder (a folder may gain a marker)."""


class Listed:
    """The run's memo of the root markers a folder walk saw in a folder's listing, by
    absolute folder: only those can be there, so only they are looked for (a warm run over
    thousands of files spent more on four `stat`s a folder than on its cache hits)."""


def listed(folder: str, markers: Collection[str]) -> None:
    """The walk listed `folder` (absolute) and saw these of ROOT_MARKERS in it."""
    current().memo(Listed)[folder] = markers


def root_above(folder: str) -> Optional[str]:
    """The nearest folder at or above `folder` with a root marker (memoised per folder)."""
    roots: Dict[str, Optional[str]] = current().memo(Roots)
    found = roots.get(folder, ...)
    if found is not ...:
        return found
    result = None
    markers = current().memo(Listed).get(folder, ROOT_MARKERS)
    if any(os.path.exists(os.path.join(folder, marker)) for marker in markers):
        result = folder
    else:
        parent = os.path.dirname(folder)
        if parent != folder:
            result = root_above(parent)
    roots[folder] = result
    return result
