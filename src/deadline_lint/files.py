"""Which files a run checks."""
from __future__ import annotations

import os
from typing import Callable, Iterable, Iterator, List, Optional, Sequence

from deadline_lint.gitignore import GitIgnored
from deadline_lint.globs import matches, relative_path

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
    for path in paths:
        found = _walk(path, walked, errors) if os.path.isdir(path) else iter(() if named(path, False) else (path,))
        for file in found:
            key = os.path.realpath(file)
            if key not in seen:
                seen.add(key)
                yield file


def _walk(root: str, excluded: Excluded, unlistable: List[OSError]) -> Iterator[str]:
    for folder, dirs, files in os.walk(root, onerror=unlistable.append):
        kept: List[str] = []
        for name in sorted(dirs):
            full = os.path.join(folder, name)
            if name in SKIPPED_DIRS or name.endswith(".egg-info") or _is_virtualenv(full):
                continue
            if excluded(full, True):
                continue
            kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            if name.endswith((".py", ".pyi")):
                full = os.path.join(folder, name)
                if not excluded(full, False):
                    yield full


def display_path(path: str) -> str:
    """Paths as the user wrote them, without a leading ./"""
    return path[2:] if path.startswith("./") else path
