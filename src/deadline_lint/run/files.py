"""Which files a run checks."""
from __future__ import annotations

import os
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from deadline_lint.run.gitignore import GitIgnored
from deadline_lint.settings.globs import matches, relative_path

SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".bzr", ".tox", ".nox", ".venv", "venv", ".direnv", "__pycache__",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", "build", "dist", "node_modules",
    "site-packages", "__pypackages__", ".ipynb_checkpoints",
})

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


def _is_virtualenv(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "pyvenv.cfg"))


def discover(
    paths: Iterable[str],
    exclude: Sequence[str] = (),
    profile_excluded: Optional[Excluded] = None,
    respect_gitignore: bool = True,
    unlistable: Optional[List[OSError]] = None,
) -> Iterator[str]:
    """Python files under `paths`, sorted per folder, each real file once (`a.py ./a.py
    link-to-a.py` is one file: checked twice, its fixes would race). A file named explicitly
    is always checked whatever its extension (as flake8 and ruff do) and whatever git
    ignores, but `--exclude` and its profile's `exclude` still apply (so pre-commit, which
    names files, checks what a folder walk checks). Folders that cannot be listed are
    appended to `unlistable`, to be reported rather than silently skipped."""
    checks: List[Excluded] = [cli_excluded(exclude)]
    if profile_excluded is not None:
        checks.append(profile_excluded)
    named = lambda path, is_dir: any(check(path, is_dir) for check in checks)  # noqa: E731
    walked = named
    if respect_gitignore:
        ignored = GitIgnored().ignored
        walked = lambda path, is_dir: ignored(path, is_dir) or named(path, is_dir)  # noqa: E731
    errors = unlistable if unlistable is not None else []
    seen = set()
    real = _RealPaths()
    for path in paths:
        if os.path.isdir(path):
            found: Iterator[Tuple[str, bool]] = _walk(path, walked, errors)
        else:
            found = iter(() if named(path, False) else ((path, os.path.islink(path)),))
        for file, is_link in found:
            key = real.of(file, is_link)
            if key not in seen:
                seen.add(key)
                yield file


class _RealPaths:
    """os.path.realpath, with each folder resolved once: a walk yields thousands of files
    from a few hundred folders, and realpath stats every component of every path."""

    def __init__(self) -> None:
        self._folders: Dict[str, str] = {}

    def of(self, path: str, is_link: bool) -> str:
        if is_link:
            return os.path.realpath(path)
        folder, name = os.path.split(path)
        real = self._folders.get(folder)
        if real is None:
            real = self._folders[folder] = os.path.realpath(folder or ".")
        return os.path.join(real, name)


def _walk(root: str, excluded: Excluded, unlistable: List[OSError]) -> Iterator[Tuple[str, bool]]:
    """(path, is a symlink) of the Python files under `root`, in os.walk's top-down order
    with sorted names; symlinked folders are not followed (os.walk's default). Written on
    os.scandir so the symlink answer comes with the listing instead of a stat per file."""
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            unlistable.append(exc)
            continue
        subfolders: List[str] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            name = entry.name
            if is_dir:
                if entry.is_symlink() or name in SKIPPED_DIRS or name.endswith(".egg-info"):
                    continue
                if _is_virtualenv(entry.path) or excluded(entry.path, True):
                    continue
                subfolders.append(entry.path)
            elif name.endswith((".py", ".pyi")) and not excluded(entry.path, False):
                yield entry.path, entry.is_symlink()
        stack.extend(reversed(subfolders))


def display_path(path: str) -> str:
    """Paths as the user wrote them, without a leading ./"""
    return path[2:] if path.startswith("./") else path
