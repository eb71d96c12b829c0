"""Run checkers over many files, in one process or several; each file with its own profile."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Set, Tuple, Union

from deadline_lint.diagnostics import Diagnostic
from deadline_lint.globs import relative_path
from deadline_lint.profile import path_ignores
from deadline_lint.selector import Selector

if TYPE_CHECKING:
    from deadline_lint.cache import Dependencies, ResultCache, Stamp
    from deadline_lint.config import Checkers, OneChecker
    from deadline_lint.engine import Checker

# What a checked file's findings were computed from, for the results cache:
# (stat before the read, content hash, project dependencies or None).
Record = Tuple["Stamp", str, Optional["Dependencies"]]

# Spawning workers costs ~0.2 s each: below this many files one process is faster.
PARALLEL_THRESHOLD = 64

_worker_checkers: Optional["Checkers"] = None


def _init_worker(checkers: "Checkers") -> None:
    global _worker_checkers
    _worker_checkers = checkers


def _check_chunk(paths: Sequence[str]) -> List[Diagnostic]:
    assert _worker_checkers is not None
    return [d for path in paths for d in check_one(_worker_checkers.for_path(path), path)]


def _check_chunk_recorded(paths: Sequence[str]) -> List[Tuple[str, List[Diagnostic], Optional[Record]]]:
    assert _worker_checkers is not None
    return [(path, *check_recorded(_worker_checkers.for_path(path), path, _sent_by_worker(path))) for path in paths]


def check_one(checker: "Checker", path: str) -> List[Diagnostic]:
    return apply_path_ignores(checker, checker.check_path(path))


def check_recorded(
    checker: "Checker", path: str, sent: Optional[Dict[str, Set[str]]] = None
) -> Tuple[List[Diagnostic], Optional[Record]]:
    """check_one, and what its answer was computed from (None: not to be cached, e.g. a file
    that could not be read). `sent`: module reaches its cache file already has this run."""
    from deadline_lint.cache import Dependencies, content_hash, recorded_state, stamp_of
    from deadline_lint.engine import MAX_FILE_BYTES

    try:
        stat = os.stat(path)
        if stat.st_size > MAX_FILE_BYTES:
            return check_one(checker, path), None
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return check_one(checker, path), None
    found = apply_path_ignores(checker, checker.check_bytes(data, path))
    dependencies = None
    if checker.profile.project_index:
        from deadline_lint.analysis.dependencies import project_reach
        from deadline_lint.collector import collector_paused
        from deadline_lint.source import DecodeError, decode_source

        try:
            with collector_paused():  # the index holds every module's facts: a full pass is slow
                reach = project_reach(path, decode_source(data), checker.catalog, sent)
        except DecodeError:
            reach = None
        if reach is not None:
            named = {*reach.own.follow, *reach.own.files, *reach.own.folders, *reach.modules}
            for module in reach.modules.values():
                named.update(module.follow)  # some may have gone to the cache file already
                named.update(module.files)
                named.update(module.folders)
            states = {dep: state for dep in named for state in [recorded_state(dep)] if state is not None}
            dependencies = Dependencies(reach.index, reach.own, reach.modules, states)
    return found, (stamp_of(stat), content_hash(data), dependencies)


# In a worker: the module reaches it has already returned, per project root (a root has one
# profile, so one cache file) and index, so each goes to the main process once per run.
_worker_sent: Dict[str, Dict[str, Set[str]]] = {}


def _sent_by_worker(path: str) -> Dict[str, Set[str]]:
    from deadline_lint.roots import root_above

    folder = os.path.dirname(os.path.abspath(path))
    return _worker_sent.setdefault(root_above(folder) or folder, {})


def apply_path_ignores(checker: "Checker", found: List[Diagnostic]) -> List[Diagnostic]:
    """Drop what the profile's `per_path_ignores` silences; patterns are relative to the
    folder of the profile (or pyproject.toml) that declared them, as in ruff and flake8."""
    if not checker.profile.per_path_ignores:
        return found
    root = checker.profile.root or os.getcwd()
    kept = []
    for diagnostic in found:
        relative = relative_path(diagnostic.path, root)
        ignored = path_ignores(checker.profile, relative) if relative else Selector()
        if not ignored.matches(diagnostic.code):
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


def check_files(checkers: Union["Checker", "Checkers", "OneChecker"], paths: Sequence[str],
                jobs: Optional[int] = None, cache_dir: Optional[str] = None) -> List[Diagnostic]:
    """Diagnostics for every path (each checked under its own profile), sorted. With a
    `cache_dir`, files whose cached results still hold are not checked again."""
    from deadline_lint.config import Checkers, as_checkers

    checkers = as_checkers(checkers)
    if cache_dir is not None and isinstance(checkers, Checkers):
        return _check_cached(checkers, paths, jobs, cache_dir)
    workers = resolve_jobs(jobs, len(paths))
    if workers == 1 or not isinstance(checkers, Checkers):
        found = [d for path in paths for d in check_one(checkers.for_path(path), path)]
    else:
        found = [d for chunk in _in_workers(checkers, paths, workers, _check_chunk) for d in chunk]
    return sorted(found, key=Diagnostic.sort_key)


def _in_workers(checkers: "Checkers", paths: Sequence[str], workers: int, task):
    from concurrent.futures import ProcessPoolExecutor

    size = max(1, len(paths) // (workers * 4))
    chunks = [paths[i:i + size] for i in range(0, len(paths), size)]
    with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker, initargs=(checkers,)) as pool:
        return list(pool.map(task, chunks))


def _check_cached(checkers: "Checkers", paths: Sequence[str], jobs: Optional[int], cache_dir: str) -> List[Diagnostic]:
    from deadline_lint.cache import ResultCache
    from deadline_lint.roots import root_above

    caches: Dict[Tuple[str, str], ResultCache] = {}
    owner: Dict[str, ResultCache] = {}
    found: List[Diagnostic] = []
    misses: List[str] = []
    for path in paths:
        absolute = os.path.abspath(path)
        folder = os.path.dirname(absolute)
        shard = (checkers.settings_key(checkers.resolver.for_path(path, False)), root_above(folder) or folder)
        cache = caches.get(shard)
        if cache is None:
            cache = caches[shard] = ResultCache(cache_dir, *shard)
        owner[path] = cache
        cached = cache.lookup(absolute, path)
        if cached is None:
            misses.append(path)
        else:
            found.extend(cached)
    workers = resolve_jobs(jobs, len(misses))
    if workers == 1:
        results = [(path, *check_recorded(checkers.for_path(path), path, owner[path].sent)) for path in misses]
    else:
        results = [r for chunk in _in_workers(checkers, misses, workers, _check_chunk_recorded) for r in chunk]
    for path, diagnostics, record in results:
        found.extend(diagnostics)
        if record is not None:
            owner[path].store(os.path.abspath(path), *record[:2], diagnostics, record[2])
    for cache in caches.values():
        problem = cache.save()
        if problem is not None:
            import sys

            print(f"deadline-lint: warning: {problem}", file=sys.stderr)
            break
    return sorted(found, key=Diagnostic.sort_key)
