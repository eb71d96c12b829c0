"""Run checkers over many files, in one process or several; each file with its own profile."""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, List, Optional, Sequence, Union

from deadline_lint.diagnostics import Diagnostic
from deadline_lint.engine import Checker
from deadline_lint.globs import relative_path
from deadline_lint.profile import path_ignores

if TYPE_CHECKING:
    from deadline_lint.config import Checkers, OneChecker

# Spawning workers costs ~0.2 s each: below this many files one process is faster.
PARALLEL_THRESHOLD = 64

_worker_checkers: Optional["Checkers"] = None


def _init_worker(checkers: "Checkers") -> None:
    global _worker_checkers
    _worker_checkers = checkers


def _check_chunk(paths: Sequence[str]) -> List[Diagnostic]:
    assert _worker_checkers is not None
    return [d for path in paths for d in check_one(_worker_checkers.for_path(path), path)]


def check_one(checker: Checker, path: str) -> List[Diagnostic]:
    return apply_path_ignores(checker, checker.check_path(path))


def apply_path_ignores(checker: Checker, found: List[Diagnostic]) -> List[Diagnostic]:
    """Drop what the profile's `per_path_ignores` silences; patterns are relative to the
    folder of the profile (or pyproject.toml) that declared them, as in ruff and flake8."""
    if not checker.profile["per_path_ignores"]:
        return found
    root = checker.profile.root or os.getcwd()
    kept = []
    for diagnostic in found:
        relative = relative_path(diagnostic.path, root)
        ignored = path_ignores(checker.profile, relative) if relative else []
        if not any(diagnostic.code.startswith(code) or code == "ALL" for code in ignored):
            kept.append(diagnostic)
    return kept


def resolve_jobs(jobs: Optional[int], file_count: int) -> int:
    """Worker processes: as asked (never more than files or CPUs), else by file count."""
    cpus = os.cpu_count() or 1
    if jobs is not None:
        return max(1, min(jobs, file_count, cpus))
    if file_count < PARALLEL_THRESHOLD:
        return 1
    return max(1, min(cpus, 8))


def check_files(checkers: Union[Checker, "Checkers", "OneChecker"], paths: Sequence[str],
                jobs: Optional[int] = None) -> List[Diagnostic]:
    """Diagnostics for every path (each checked under its own profile), sorted."""
    from deadline_lint.config import Checkers, as_checkers

    checkers = as_checkers(checkers)
    workers = resolve_jobs(jobs, len(paths))
    if workers == 1 or not isinstance(checkers, Checkers):
        found = [d for path in paths for d in check_one(checkers.for_path(path), path)]
    else:
        size = max(1, len(paths) // (workers * 4))
        chunks = [paths[i:i + size] for i in range(0, len(paths), size)]
        with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker, initargs=(checkers,)) as pool:
            found = [d for chunk in pool.map(_check_chunk, chunks) for d in chunk]
    return sorted(found, key=Diagnostic.sort_key)
