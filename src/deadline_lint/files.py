"""Which files a run checks."""
from __future__ import annotations

import os
from fnmatch import fnmatch
from typing import Iterable, Iterator, List, Optional, Sequence

SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".bzr", ".tox", ".nox", ".venv", "venv", ".direnv", "__pycache__",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", "build", "dist", "node_modules",
    "site-packages", "__pypackages__", ".ipynb_checkpoints",
})


def _normalized(path: str) -> str:
    """`./examples/x/`, `examples//x` and `examples/x` are one path: compare them as one."""
    path = path.replace(os.sep, "/")
    trailing = path.endswith("/")
    path = os.path.normpath(path).replace(os.sep, "/") if path.strip("/") else path
    return path + "/" if trailing and not path.endswith("/") else path


def _excluded(path: str, patterns: Sequence[str]) -> bool:
    name = os.path.basename(path.rstrip(os.sep)) or path
    normalized = _normalized(path).rstrip("/")
    for pattern in patterns:
        pattern = _normalized(pattern).rstrip("/") or pattern
        if fnmatch(name, pattern) or fnmatch(normalized, pattern) or fnmatch(normalized, f"*/{pattern}"):
            return True
    return False


def _is_virtualenv(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "pyvenv.cfg"))


def discover(
    paths: Iterable[str], exclude: Sequence[str] = (), unlistable: Optional[List[OSError]] = None
) -> Iterator[str]:
    """Python files under `paths`, sorted per folder, each real file once (`a.py ./a.py
    link-to-a.py` is one file: checked twice, its fixes would race). A file named explicitly
    is always checked, whatever its extension (as flake8 and ruff do). Folders that cannot
    be listed are appended to `unlistable`, to be reported rather than silently skipped."""
    seen = set()
    for path in _discover(paths, exclude, unlistable if unlistable is not None else []):
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            yield path


def _discover(paths: Iterable[str], exclude: Sequence[str], unlistable: List[OSError]) -> Iterator[str]:
    for path in paths:
        if os.path.isdir(path):
            yield from _walk(path, exclude, unlistable)
        elif not _excluded(path, exclude):
            yield path


def _walk(root: str, exclude: Sequence[str], unlistable: List[OSError]) -> Iterator[str]:
    for folder, dirs, files in os.walk(root, onerror=unlistable.append):
        kept: List[str] = []
        for name in sorted(dirs):
            full = os.path.join(folder, name)
            if name in SKIPPED_DIRS or name.endswith(".egg-info") or _is_virtualenv(full):
                continue
            if _excluded(full, exclude):
                continue
            kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            if name.endswith((".py", ".pyi")):
                full = os.path.join(folder, name)
                if not _excluded(full, exclude):
                    yield full


def display_path(path: str) -> str:
    """Paths as the user wrote them, without a leading ./"""
    return path[2:] if path.startswith("./") else path
