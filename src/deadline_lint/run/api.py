"""deadline-lint's API: every front end (the CLI and pre-commit, flake8, pylint, the LibCST
codemod, the editor server) says what it wants in `Options` and gets results back; none of
them reads files, builds checkers, runs processes or applies suppressions itself.

The contract:

- `lint_paths(paths, options)` yields one `FileResult` per path, in the order given (files,
  not folders: `discover` in files.py walks folders). `fix_paths(paths, options)` yields one
  `FixResult` per path, fixing (and with `options.write`, writing) each file.
- `lint_text(text, path, options)` and `fix_text(text, path, options)` take one buffer (stdin,
  an editor's unsaved text) and answer exactly what `check` / `fix` would answer for that
  text saved at `path`: the profile resolved for `path` as on disk (`options.profile`, else
  the nearest pyproject.toml with `[tool.deadline-lint]`), its per-path ignores, and
  suppression comments. `path` is never read; it need not exist. `lint_bytes` takes
  undecoded bytes (DL002 when they are not source text). A buffer is checked even where the
  profile's `exclude` would skip the file in a folder walk: `Session.excluded(path)` says so.
- `Session.files(paths)` is the folder walk (`options.exclude`, the profiles' `exclude`,
  .gitignore unless `options.respect_gitignore` is False).
- `FileResult.path` is the path as given; `FileResult.diagnostics` is a sorted list of
  `deadline_lint.support.diagnostics.Diagnostic` (1-based lines and columns), each with its `fix`
  (edits as character offsets into the text checked) or None. `FixResult` has the same two
  fields (what remains after fixing) and `text`, the fixed text (`fix_text` only; the
  original text when nothing was fixed or fixing gave up).
- Suppression happens in one place for every front end: `# deadline-lint: ignore[...]`
  always, `# noqa` unless `options.noqa` is False (flake8 reads its own), and the profile's
  `per_path_ignores` folded into each file's selection (the rules they silence are not run;
  the tool codes DL0xx they name are dropped).
- A broken profile or selector raises `ProfileError` (one line, no traceback); the code
  checked never raises: a file that cannot be read, decoded or parsed gets its DL0xx
  diagnostic instead.
- `lint_text`, `lint_bytes` and `fix_text` keep their checkers per `Options` in the process
  (rules and catalogs are built once); `reset()` forgets them, e.g. after a profile changed.
  `lint_paths` and `fix_paths` resolve profiles afresh on every call, as a run of the CLI.
- A `Session` owns the run's memos (`semantics.session.Session`, its `memos`): every answer
  analyses keep about the project lives there, active while the session checks or fixes, and
  goes with it. A caller that outlives its files (the editor server) passes its own and
  invalidates it when files change.
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple, TypeVar

from deadline_lint.engine.reading import read_file
from deadline_lint.run.cached import (
    keep_catalog,
    lint_cached,
    recorded,
    sent_by_worker,
    use_summary_store,
)
from deadline_lint.run.config import Checkers, ProfileResolver, silenced
from deadline_lint.run.files import discover, display_path
from deadline_lint.run.options import FileResult, FixResult, Options, Record
from deadline_lint.semantics.modules import forget_projects, start_consulting
from deadline_lint.semantics.session import Session as Memos
from deadline_lint.semantics.store import flush as flush_store
from deadline_lint.settings.profile import ProfileError
from deadline_lint.support.diagnostics import Diagnostic, tool_diagnostic

if TYPE_CHECKING:
    import ast

    from deadline_lint.cache.results import ResultCache
    from deadline_lint.engine.checker import Checker
    from deadline_lint.fixes import loop

# Below this many files one process is faster than starting workers.
PARALLEL_THRESHOLD = 64
T = TypeVar("T")



class Session:
    """One run's checkers (one per profile and per-path selection) and how to use them."""

    def __init__(self, options: Options = Options(), memos: Optional[Memos] = None) -> None:
        options.check()
        self.options = options
        self.memos = memos if memos is not None else Memos()
        with self.memos.active():
            forget_projects()  # a new run reads its projects' modules afresh (they may have changed)
            # With a results cache, what the run parses is kept parsed in its folder: the pyproject
            # tables profiles are read from (file discovery already asks) and the catalog.
            keep_catalog(options.cache_dir)
            self.checkers = Checkers(ProfileResolver(options.profile), options.checker_options())

    def _within(self, results: Iterator[T]) -> Iterator[T]:
        """`results`, each computed with this session's memos active (and none between)."""
        while True:
            with self.memos.active():
                try:
                    item = next(results)
                except StopIteration:
                    return
            yield item

    def checker(self, path: str) -> "Checker":
        return self.checkers.for_path(path)

    def suppressed(self, path: str, found: List[Diagnostic]) -> List[Diagnostic]:
        """The tool codes the file's per-path ignores name (its rules never ran)."""
        dropped = self.checkers.dropped(path)
        return [d for d in found if not silenced(d.code, dropped)] if dropped else found

    # -- checking -----------------------------------------------------------------------
    def lint_path(self, path: str) -> FileResult:
        return self.lint_read(path, read_file(path))[0]

    def lint_read(self, path: str, read, sent: Optional[Dict[str, Set[str]]] = None,
                  record: bool = False, stored: Optional["ResultCache"] = None) -> Tuple[FileResult, Optional[Record]]:
        """`read` (a reading.Read, or the diagnostic on why there is none) checked as `path`;
        with `record`, what the answer was computed from, for the results cache (`stored`:
        the cache file the answer goes to, whose module reaches may still hold)."""
        if isinstance(read, Diagnostic):
            return FileResult(path, self.suppressed(path, [read])), None
        # Imported here, as the checker is: a run answered from the cache asks no callers.
        from deadline_lint.semantics.callers import start as start_callers

        with self.memos.active():
            checker = self.checker(path)
            start_consulting()
            start_callers()
            found = self.suppressed(path, checker.check_bytes(read.data, path))
            if record:
                flush_store()  # what this file taught about its project's modules, for later runs
            return FileResult(path, found), (recorded(checker, path, read, sent, stored) if record else None)

    def lint_bytes(self, data: bytes, path: str) -> FileResult:
        located = os.path.abspath(path)
        with self.memos.active():
            return FileResult(path, self.suppressed(located, self.checker(located).check_bytes(data, path)))

    def lint_text(self, text: str, path: str, tree: Optional["ast.Module"] = None) -> FileResult:
        located = os.path.abspath(path)
        with self.memos.active():
            return FileResult(path, self.suppressed(located, self.checker(located).check_text(text, path, tree)))

    # -- fixing -------------------------------------------------------------------------
    def fix_path(self, path: str, start: Optional[str] = None) -> FixResult:
        """Fix the file (from `start`, an earlier pass's text, when given: thread_project.py)."""
        # Fixing is imported where it is used: a check answered from the cache loads no rule.
        from deadline_lint.fixes import loop

        with self.memos.active():
            outcome = loop.fix_file(self.checker(path), path, self.options.fix_mode(), self.options.write, start)
        return self._fixed(path, outcome)

    def fix_text(self, text: str, path: str) -> FixResult:
        from deadline_lint.fixes import loop

        located = os.path.abspath(path)
        with self.memos.active():
            result = loop.fix_text(self.checker(located), text, path, self.options.fix_mode())
        return FixResult(
            path, self.suppressed(located, list(result.remaining)), result.fixed, result.changed, result.text,
            threaded=result.threaded, gave_up=result.gave_up,
            before=tuple(self.suppressed(located, list(result.before))), new=result.new,
        )

    def _fixed(self, path: str, outcome: "loop.FileOutcome") -> FixResult:
        return FixResult(
            path, self.suppressed(path, list(outcome.remaining)), outcome.fixed, outcome.changed, outcome.text,
            outcome.diff, outcome.written, outcome.refused, outcome.threaded, outcome.gave_up, new=outcome.new,
        )

    # -- many files ---------------------------------------------------------------------
    def lint_paths(self, paths: Sequence[str]) -> Iterator[FileResult]:
        if self.options.cache_dir is not None:
            batches = self._within(lint_cached(self.checkers, paths, self.options.cache_dir, self._check_and_record))
            return (result for batch in batches for result in batch)
        return self.each(paths, self.lint_path, _lint_chunk)

    def _check_and_record(
        self, paths: List[str], owner: Dict[str, "ResultCache"]
    ) -> Iterator[Tuple[FileResult, Optional[Record]]]:
        def one(path: str) -> Tuple[FileResult, Optional[Record]]:
            cache = owner[path]
            return self.lint_read(path, read_file(path), cache.sent, record=True, stored=cache)

        return self.each(paths, one, _lint_chunk_recorded)

    def fix_paths(self, paths: Sequence[str]) -> Iterator[FixResult]:
        if self.options.thread_budget:
            # Every file of the run: a caller in one of them gets the budget in a later pass.
            run = frozenset(os.path.abspath(p) for p in paths if p != "-")
            self.options = replace(self.options, thread_run=run)
            from deadline_lint.families.outbound.fixes.thread_project import fix_across_modules

            def passes() -> Iterator[FixResult]:  # started on the first result, memos active
                yield from fix_across_modules(self, paths, self.each(paths, self.fix_path, _fix_chunk))

            return self._within(passes())
        return self.each(paths, self.fix_path, _fix_chunk)

    def each(
        self, paths: Sequence[str], one: Callable[[str], T], task: Callable[[Options, Sequence[str]], List[T]]
    ) -> Iterator[T]:
        """`one(path)` for each path in this process, or, for many files, `task` over chunks
        of them in worker processes (workers.py); in order either way."""
        workers = resolve_jobs(self.options.jobs, len(paths))
        if workers == 1:
            return (one(path) for path in paths)
        # Imported here: a run in one process loads no multiprocessing.
        from deadline_lint.run import workers as pool

        return (result for chunk in pool.run(self.options, task, paths, workers) for result in chunk)

    def files(self, paths: Sequence[str]) -> Tuple[List[str], List[Diagnostic]]:
        """The Python files under `paths` that a run checks (`options.exclude`, the profiles'
        `exclude`, .gitignore unless `options.respect_gitignore` is off), as the user wrote
        them, and a DL006 for each folder that could not be listed. A path that does not
        exist is a usage error (ProfileError)."""
        missing = [p for p in paths if not os.path.lexists(p) and not _unreachable(p)]
        if missing:
            raise ProfileError(f"{missing[0]}: no such file or directory")
        unlistable: List[OSError] = []
        with self.memos.active():  # the walk's listings answer the run's root lookups (roots.listed)
            files = self._walked(paths, unlistable)
        return files, [_unlistable(display_path(str(error.filename)), error) for error in unlistable]

    def _walked(self, paths: Sequence[str], unlistable: List[OSError]) -> List[str]:
        found = discover(
            paths, self.options.exclude, self.checkers.excluded, self.options.respect_gitignore, unlistable,
            self.checkers.excludes_files_in,
        )
        return [display_path(p) for p in found]

    def excluded(self, path: str) -> bool:
        """The profile's `exclude` names this file (a folder walk would skip it)."""
        return self.checkers.excluded(path)


def _unreachable(path: str) -> bool:
    """Named, but inside a folder we may not search: checking it reports DL006."""
    try:
        os.stat(path)
    except PermissionError:
        return True
    except OSError:
        return False
    return False


def _unlistable(folder: str, error: OSError) -> Diagnostic:
    return tool_diagnostic(
        folder, "DL006", f"cannot list folder: {error.strerror or error}; its files were not checked"
    )


# -- one buffer --------------------------------------------------------------------------
_SESSIONS: Dict[Options, Session] = {}


def session(options: Options = Options()) -> Session:
    """The process's session for these options (see `reset`)."""
    found = _SESSIONS.get(options)
    if found is None:
        found = _SESSIONS[options] = Session(options)
    return found


def reset() -> None:
    _SESSIONS.clear()


def lint_text(text: str, path: str, options: Options = Options()) -> FileResult:
    return session(options).lint_text(text, path)


def lint_bytes(data: bytes, path: str, options: Options = Options()) -> FileResult:
    return session(options).lint_bytes(data, path)


def fix_text(text: str, path: str, options: Options = Options()) -> FixResult:
    return session(options).fix_text(text, path)


# -- many files --------------------------------------------------------------------------
def lint_paths(paths: Sequence[str], options: Options = Options()) -> Iterator[FileResult]:
    """One FileResult per path, in order; with `options.cache_dir`, files whose cached
    answer still holds are answered without building a checker."""
    return Session(options).lint_paths(paths)


def fix_paths(paths: Sequence[str], options: Options = Options()) -> Iterator[FixResult]:
    """One FixResult per path, in order; each file fixed under its own profile."""
    return Session(options).fix_paths(paths)


def resolve_jobs(jobs: Optional[int], file_count: int) -> int:
    """Worker processes: as asked (never more than files or CPUs), else by file count."""
    cpus = os.cpu_count() or 1
    if jobs is not None:
        return max(1, min(jobs, file_count, cpus))
    if file_count < PARALLEL_THRESHOLD:
        return 1
    return max(1, min(cpus, 8))


# -- in a worker process (workers.py starts them with the run's options) --------------------


def _worker_session(options: Options) -> Session:
    """The worker process's session: the worker is one run, and its memos last as long."""
    run = session(options)
    if options.cache_dir is not None:
        with run.memos.active():
            use_summary_store(options.cache_dir)
    return run


def _lint_chunk(options: Options, paths: Sequence[str]) -> List[FileResult]:
    run = _worker_session(options)
    return [run.lint_path(path) for path in paths]


def _lint_chunk_recorded(options: Options, paths: Sequence[str]) -> List[Tuple[FileResult, Optional[Record]]]:
    if options.cache_dir is not None:
        keep_catalog(options.cache_dir)
    run = _worker_session(options)
    with run.memos.active():
        return [run.lint_read(path, read_file(path), sent_by_worker(path), record=True) for path in paths]


def _fix_chunk(options: Options, paths: Sequence[str]) -> List[FixResult]:
    run = _worker_session(options)
    return [run.fix_path(path) for path in paths]


__all__ = [
    "FileResult", "FixResult", "Options", "Session", "fix_paths", "fix_text", "lint_bytes", "lint_paths",
    "lint_text", "reset", "session",
]
