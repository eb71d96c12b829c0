"""Which files a run checks."""
from __future__ import annotations

import os
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from deadline_lint.run.gitignore import GitIgnored
from deadline_lint.semantics.roots import ROOT_MARKERS, listed
from deadline_lint.settings.globs import matches, relative_path

# ruff's default `exclude`, name for name (a user moving between the two tools sees the
# same files checked), ...
RUFF_DEFAULT_EXCLUDE = frozenset({
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache",
    ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv",
    ".vscode", "__pypackages__", "_build", "buck-out", "dist", "node_modules", "site-packages", "venv",
})
# ... and folders that never hold the project's own sources: bytecode, and `build`, where
# `setup.py build` copies the package (every finding twice; ruff's own list once held it).
# Any folder holding a `pyvenv.cfg` (a virtualenv) and `*.egg-info` are skipped as well.
SKIPPED_DIRS = RUFF_DEFAULT_EXCLUDE | frozenset({"__pycache__", "build"})

# (path, is_dir) -> excluded? For the profile's `exclude`, resolved for that path's profile.
Excluded = Callable[[str, bool], bool]


def cli_excluded(patterns: Sequence[str]) -> Excluded:
    """`--exclude` globs, relative to the working directory (globs.py has the rule). A path
    outside it can still match a pattern without a slash (`generated`, `*_pb2.py`). A leading
    `./` is how a shell user names the working directory, not part of a gitignore pattern:
    `./examples/x` and `examples/x` are one pattern."""
    patterns = [_without_dot_slash(p) for p in patterns]

    def excluded(path: str, is_dir: bool) -> bool:
        if not patterns:
            return False
        relative = relative_path(path, os.getcwd())
        if relative is None:
            relative = os.path.abspath(path).replace(os.sep, "/").lstrip("/")
        return bool(relative) and matches(patterns, relative, is_dir)

    return excluded


def _without_dot_slash(pattern: str) -> str:
    while pattern.startswith("./"):
        pattern = pattern[2:].lstrip("/")
    return pattern or "."


def discover(
    paths: Iterable[str],
    exclude: Sequence[str] = (),
    profile_excluded: Optional[Excluded] = None,
    respect_gitignore: bool = True,
    unlistable: Optional[List[OSError]] = None,
    profile_screens: Optional[Callable[[str], bool]] = None,
) -> Iterator[str]:
    """Python files under `paths`, sorted per folder, each real file once (`a.py ./a.py
    link-to-a.py` is one file: checked twice, its fixes would race). A file named explicitly
    is always checked whatever its extension (as flake8 and ruff do) and whatever git
    ignores, but `--exclude` and its profile's `exclude` still apply (so pre-commit, which
    names files, checks what a folder walk checks). Folders that cannot be listed are
    appended to `unlistable`, to be reported rather than silently skipped.
    `profile_screens(folder)`: whether the profile of the files in `folder` excludes any; a
    folder whose files nothing can exclude (no `--exclude`, no .gitignore read, no profile
    `exclude`) takes them without a test each."""
    checks: List[Excluded] = [cli_excluded(exclude)]
    if profile_excluded is not None:
        checks.append(profile_excluded)
    named = lambda path, is_dir: any(check(path, is_dir) for check in checks)  # noqa: E731
    walked = named
    if respect_gitignore:
        ignored = GitIgnored().ignored
        walked = lambda path, is_dir: ignored(path, is_dir) or named(path, is_dir)  # noqa: E731
    screens = None if exclude or respect_gitignore else profile_screens
    errors = unlistable if unlistable is not None else []
    seen = set()
    real = _RealPaths()
    for path in paths:
        if os.path.isdir(path):
            found: Iterator[Tuple[str, Tuple[str, str]]] = _walk(path, walked, errors, screens)
        else:
            found = iter(() if named(path, False) else ((path, real.of(path)),))
        for file, key in found:
            if key not in seen:
                seen.add(key)
                yield file


class _RealPaths:
    """os.path.realpath of named files, with each folder resolved once; a file is known by
    (real folder, name)."""

    def __init__(self) -> None:
        self._folders: Dict[str, str] = {}

    def of(self, path: str) -> Tuple[str, str]:
        if os.path.islink(path):
            return _split_real(path)
        folder, name = os.path.split(path)
        real = self._folders.get(folder)
        if real is None:
            real = self._folders[folder] = os.path.realpath(folder or ".")
        return real, name


def _split_real(path: str) -> Tuple[str, str]:
    folder, name = os.path.split(os.path.realpath(path))
    return folder, name


def _walk(
    root: str, excluded: Excluded, unlistable: List[OSError], screens: Optional[Callable[[str], bool]] = None
) -> Iterator[Tuple[str, Tuple[str, str]]]:
    """(path, (real folder, name)) of the Python files under `root`, in os.walk's top-down
    order with sorted names; symlinked folders are not followed (os.walk's default), so a
    folder's real path is its parent's and its name (realpath, which stats every component,
    only for the root and symlinked files). Written on os.scandir so the symlink answer comes
    with the listing instead of a stat per file, and a folder holding a `pyvenv.cfg` is
    known by its listing. `screens(folder)` False: no file of that folder is excluded (see
    discover). Each folder's root markers go to roots.listed, for the run's root lookups."""
    stack = [(root, os.path.abspath(root), os.path.realpath(root), True)]
    while stack:
        folder, absolute, real, top = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            unlistable.append(exc)
            continue
        if not top and any(entry.name == "pyvenv.cfg" and _is_file(entry) for entry in entries):
            continue  # a virtualenv
        subfolders: List[Tuple[str, str, str, bool]] = []
        screened = screens is None or screens(folder)
        markers: List[str] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            name = entry.name
            if name in ROOT_MARKERS:
                markers.append(name)
            if is_dir:
                if entry.is_symlink() or name in SKIPPED_DIRS or name.endswith(".egg-info"):
                    continue
                if excluded(entry.path, True):
                    continue
                subfolders.append((entry.path, os.path.join(absolute, name), os.path.join(real, name), False))
            elif name.endswith((".py", ".pyi")) and not (screened and excluded(entry.path, False)):
                yield entry.path, (_split_real(entry.path) if entry.is_symlink() else (real, name))
        listed(absolute, markers)
        stack.extend(reversed(subfolders))


def _is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def display_path(path: str) -> str:
    """Paths as the user wrote them, without a leading ./"""
    return path[2:] if path.startswith("./") else path
