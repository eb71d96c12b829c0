"""The results cache's side of a run: files whose cached answer still holds are answered
without building a checker; the others are checked and recorded with what their answer was
computed from (their content and the project files it read)."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from deadline_lint.cache.dependencies import Dependencies, Reach, project_reach
from deadline_lint.cache.document import store_folder
from deadline_lint.cache.results import ResultCache, tool_fingerprint
from deadline_lint.cache import states
from deadline_lint.cache.states import content_hash, interface_digest, recorded_state, stamp_of
from deadline_lint.engine.reading import Read, decode
from deadline_lint.run.config import Checkers
from deadline_lint.run.options import FileResult, Record
from deadline_lint.semantics.modules import consulted
from deadline_lint.semantics.roots import root_above
from deadline_lint.semantics.session import current
from deadline_lint.semantics.store import use_store
from deadline_lint.support import compiled
from deadline_lint.support.collector import collector_paused
from deadline_lint.support.diagnostics import Diagnostic

if TYPE_CHECKING:
    from deadline_lint.engine.checker import Checker

# Checks the files the cache could not answer, given the cache file each belongs to.
CheckMisses = Callable[[List[str], Dict[str, ResultCache]], Iterable[Tuple[FileResult, Optional[Record]]]]

# From this many files a run first looks for the changed set as a whole (states.Survey.settled):
# a pre-commit run over a few files of a large project stats only what those files name.
SETTLE_FROM = 64


class WorkerSent(Dict[str, Dict[str, Set[str]]]):
    """Per project root, see sent_by_worker."""


def recorded(
    checker: "Checker", path: str, read: Read, sent: Optional[Dict[str, Set[str]]] = None,
    stored: Optional[ResultCache] = None,
) -> Record:
    """What `checker`'s answer for `read` was computed from. `sent`: module reaches its cache
    file already has this run; `stored`: that cache file, whose earlier reaches and file
    states still count where they hold."""
    dependencies = None
    if consulted():  # the answer depends on other project files
        text = decode(read.data, path)
        reach = None
        if not isinstance(text, Diagnostic):
            with collector_paused():  # the index holds every module's facts: a full pass is slow
                reach = project_reach(path, text, checker.catalog, sent, stored)
        if reach is not None:
            from deadline_lint.semantics.callers import consulted as callers_consulted  # a check loaded it

            files, folders = callers_consulted()  # who calls a def: every module of the project
            # The same for every file of the project that asked: kept once, apart (results.py)
            shared = Reach((), tuple(sorted(files)), tuple(sorted(folders))) if files or folders else None
            named = {*reach.own.follow, *reach.own.files, *reach.own.folders, *reach.modules, *files, *folders}
            for module in reach.modules.values():
                named.update(module.follow)  # some may have gone to the cache file already
                named.update(module.files)
                named.update(module.folders)
            earlier = None if stored is None else stored.stamps
            states = {dep: state for dep in named for state in [recorded_state(dep, earlier)] if state is not None}
            dependencies = Dependencies(reach.index, reach.own, reach.modules, states, shared)
    return stamp_of(read.stat), content_hash(read.data), dependencies, interface_digest(read.data)


# Cached answers go out in batches of this many: a warm run's thousands of hits each paid
# for a generator step and the session's context around it (api.Session._within).
HIT_BATCH = 512


def lint_cached(
    checkers: Checkers, paths: Sequence[str], cache_dir: str, check_misses: CheckMisses
) -> Iterator[List[FileResult]]:
    """The cached answers, then the misses checked (`check_misses`) and stored; in lists
    (hits batched, each miss alone, as it is checked)."""
    use_summary_store(cache_dir)
    states.forget_states()  # a process that runs again (a test, a server) takes them afresh
    caches: Dict[Tuple[str, str], ResultCache] = {}
    owner: Dict[str, ResultCache] = {}
    misses: List[str] = []
    # By folder as given (a file's profile, project and so cache file are its folder's): a
    # warm run over thousands of files spent more on abspath and the lookups than on its hits.
    folders: Dict[str, Tuple[str, ResultCache]] = {}
    hits: List[FileResult] = []
    for path in paths:
        head, name = os.path.split(path)
        known = folders.get(head)
        if known is None:
            folder = os.path.abspath(head)
            shard = (checkers.settings_key(checkers.resolver.for_path(path, False)), root_above(folder) or folder)
            cache = caches.get(shard)
            if cache is None:
                cache = caches[shard] = ResultCache(cache_dir, *shard, settle=len(paths) >= SETTLE_FROM)
            known = folders[head] = (folder, cache)
        folder, cache = known
        absolute = os.path.join(folder, name)
        owner[path] = cache
        cached = cache.lookup(absolute, path)
        if cached is None:
            misses.append(path)
        else:
            hits.append(FileResult(path, cached))
            if len(hits) == HIT_BATCH:
                yield hits
                hits = []
    if hits:
        yield hits
    for result, record in check_misses(misses, owner):
        if record is not None:
            stamp, digest, dependencies, interface = record
            owner[result.path].store(
                os.path.abspath(result.path), stamp, digest, result.diagnostics, dependencies, interface
            )
        yield [result]
    for cache in caches.values():
        problem = cache.save()
        if problem is not None:
            print(f"deadline-lint: warning: {problem}", file=sys.stderr)
            break


def keep_catalog(cache_dir: Optional[str]) -> None:
    compiled.keep_in(None if cache_dir is None else store_folder(cache_dir))


def use_summary_store(cache_dir: str) -> None:
    """Module summaries and facts go to the results cache folder, under this build's name."""
    use_store(os.path.join(store_folder(cache_dir), "summaries", tool_fingerprint()))


def sent_by_worker(path: str) -> Dict[str, Set[str]]:
    """The module reaches this worker has already returned, per project root (a root has one
    profile, so one cache file), so each goes to the main process once per run."""
    folder = os.path.dirname(os.path.abspath(path))
    return current().state(WorkerSent, lasting=True).setdefault(root_above(folder) or folder, {})
