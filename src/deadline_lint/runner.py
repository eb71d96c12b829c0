"""Run a Checker over many files, in one process or several."""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Dict, List, Optional, Sequence

from deadline_lint.diagnostics import Diagnostic
from deadline_lint.engine import Checker
from deadline_lint.profile import Profile, path_ignores

# Spawning workers costs ~0.2 s each: below this many files one process is faster.
PARALLEL_THRESHOLD = 64

_worker_checker: Optional[Checker] = None


def _init_worker(profile: Profile, options: Dict[str, Any]) -> None:
    global _worker_checker
    _worker_checker = Checker(profile, **options)


def _check_chunk(paths: Sequence[str]) -> List[Diagnostic]:
    assert _worker_checker is not None
    found: List[Diagnostic] = []
    for path in paths:
        found.extend(_worker_checker.check_path(path))
    return found


def apply_path_ignores(checker: Checker, found: List[Diagnostic]) -> List[Diagnostic]:
    """Drop what the profile's `per_path_ignores` silences; patterns are relative to the
    folder of the profile (or pyproject.toml) that declared them, as in ruff and flake8."""
    if not checker.profile["per_path_ignores"]:
        return found
    root = checker.profile.root or os.getcwd()
    kept = []
    for diagnostic in found:
        relative = os.path.relpath(os.path.abspath(diagnostic.path), root).replace(os.sep, "/")
        ignored = path_ignores(checker.profile, relative)
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


def check_files(checker: Checker, paths: Sequence[str], jobs: Optional[int] = None,
                options: Optional[Dict[str, Any]] = None) -> List[Diagnostic]:
    """Diagnostics for every path, sorted; `options` re-creates the checker in workers."""
    workers = resolve_jobs(jobs, len(paths))
    if workers == 1 or options is None:
        found: List[Diagnostic] = []
        for path in paths:
            found.extend(checker.check_path(path))
    else:
        size = max(1, len(paths) // (workers * 4))
        chunks = [paths[i:i + size] for i in range(0, len(paths), size)]
        with ProcessPoolExecutor(
            max_workers=workers,
            initializer=_init_worker,
            initargs=(checker.profile, options),
        ) as pool:
            found = [d for chunk in pool.map(_check_chunk, chunks) for d in chunk]
    return sorted(apply_path_ignores(checker, found), key=Diagnostic.sort_key)
