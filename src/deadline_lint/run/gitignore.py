"""What git ignores, the way ruff's `respect-gitignore` reads it: every `.gitignore` from the
repository root down to the file, `.git/info/exclude` and the global excludes file
(`core.excludesFile`, else `$XDG_CONFIG_HOME/git/ignore`). Only inside a git repository;
matched with pathspec's gitignore rules (globs.py)."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

if TYPE_CHECKING:
    import pathspec

_Spec = Tuple[str, "pathspec.PathSpec"]  # (folder the patterns are relative to, patterns)


def _read_spec(path: str) -> Optional["pathspec.PathSpec"]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    if not lines:
        return None
    import pathspec  # only once a .gitignore has patterns to match

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _global_excludes_file(repo: str) -> Optional[str]:
    import subprocess  # only when a folder is walked: a check of named files never asks git

    try:
        result = subprocess.run(
            ["git", "config", "--path", "--get", "core.excludesFile"],
            cwd=repo, capture_output=True, text=True, timeout=10,
        )
        configured = result.stdout.strip()
        if result.returncode == 0 and configured:
            return os.path.expanduser(configured)
    except (OSError, subprocess.SubprocessError):
        pass  # no git on PATH: fall back to git's default location
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "git", "ignore")


class GitIgnored:
    """`ignored(path, is_dir)` for paths below some git repository's root."""

    def __init__(self) -> None:
        self._repo_of: Dict[str, Optional[str]] = {}
        self._folder_spec: Dict[str, Optional["pathspec.PathSpec"]] = {}
        self._repo_specs: Dict[str, List[_Spec]] = {}

    def ignored(self, path: str, is_dir: bool = False) -> bool:
        absolute = os.path.abspath(path)
        parent = os.path.dirname(absolute)
        repo = self._repo(parent)
        if repo is None:
            return False
        verdict = False
        for base, spec in self._specs(repo, parent):
            relative = os.path.relpath(absolute, base).replace(os.sep, "/")
            if is_dir:
                relative += "/"
            result = spec.check_file(relative)
            if result.include is not None:
                verdict = result.include
        return verdict

    def _repo(self, folder: str) -> Optional[str]:
        if folder not in self._repo_of:
            if os.path.exists(os.path.join(folder, ".git")):
                self._repo_of[folder] = folder
            else:
                parent = os.path.dirname(folder)
                self._repo_of[folder] = None if parent == folder else self._repo(parent)
        return self._repo_of[folder]

    def _specs(self, repo: str, folder: str) -> List[_Spec]:
        """Lowest precedence first: global excludes, info/exclude, then .gitignore files from
        the root down to `folder` (a deeper file overrides a shallower one)."""
        specs = list(self._repo_wide(repo))
        chain: List[str] = []
        current = folder
        while True:
            chain.append(current)
            if current == repo:
                break
            current = os.path.dirname(current)
        for each in reversed(chain):
            spec = self._gitignore(each)
            if spec is not None:
                specs.append((each, spec))
        return specs

    def _repo_wide(self, repo: str) -> List[_Spec]:
        if repo not in self._repo_specs:
            specs: List[_Spec] = []
            for path in (_global_excludes_file(repo), os.path.join(repo, ".git", "info", "exclude")):
                spec = _read_spec(path) if path else None
                if spec is not None:
                    specs.append((repo, spec))
            self._repo_specs[repo] = specs
        return self._repo_specs[repo]

    def _gitignore(self, folder: str) -> Optional["pathspec.PathSpec"]:
        if folder not in self._folder_spec:
            self._folder_spec[folder] = _read_spec(os.path.join(folder, ".gitignore"))
        return self._folder_spec[folder]
