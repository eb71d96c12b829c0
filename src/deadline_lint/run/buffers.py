"""Buffers in a process that lives longer than one run (the editor server): what a front end
holding unsaved texts asks of the run, so that it reaches no lower layer itself.

`Buffers` (one per process) answers, for a buffer (its unsaved text and its path on disk):

- `check_buffer`: the findings `deadline-lint check PATH` would report if the text were saved
  (the file's own profile as `check` resolves it, none for a file its profile excludes,
  `# noqa` and `per_path_ignores` applied; a broken profile is its message instead), and,
  when the file looked into its project, the project files and folders they were computed
  from, so the front end knows which open files to check again when one of those changes.
- `fix_buffer`: the text `deadline-lint fix` would write (safe fixes, the same loop).
- `apply_fix`: the text with one finding's fix applied as one round of `fix` applies it,
  only when the result still parses.
- `MAX_FILE_BYTES`: the largest text a check reads (a larger one is DL004).
- `use_unsaved`: project modules open in the editor are read as they are there;
  `invalidate` drops every answer memoised about the project's files (the process's
  `semantics.session.Session`), for when one changed on disk or in a buffer; `reload`
  forgets the resolved profiles.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, FrozenSet, Iterable, Optional, Set, Tuple

from deadline_lint.engine.reading import MAX_FILE_BYTES, unusable_text
from deadline_lint.run import api
from deadline_lint.run.options import Options
from deadline_lint.semantics.modules import consulted, start_consulting
from deadline_lint.semantics.session import Session as Memos
from deadline_lint.settings.profile import ProfileError
from deadline_lint.support.diagnostics import Diagnostic, Fix

if TYPE_CHECKING:
    from deadline_lint.engine.checker import Checker

__all__ = ["MAX_FILE_BYTES", "UNSAVED_PATH", "BufferCheck", "Buffers", "apply_fix"]

# A buffer without a file (an untitled editor tab) is checked like stdin without
# --stdin-filename: under the working directory's profile, outside any project.
UNSAVED_PATH = "-"


@dataclass(frozen=True)
class BufferCheck:
    diagnostics: Tuple[Diagnostic, ...] = ()
    profile_error: Optional[str] = None  # the profile's problem, naming the file and key
    reach: FrozenSet[str] = frozenset()  # project files the findings were computed from
    folders: FrozenSet[str] = frozenset()  # folders where a module appearing counts
    project_index: bool = False  # the findings depend on other project files (reach, folders)


class Buffers:
    """One per long-lived process: its run (profiles resolved and checkers built once, until
    `reload`) and its memos about the project (a `semantics.session.Session` that lives as
    long as the process, dropped by `invalidate` when files change)."""

    def __init__(self, options: Options) -> None:
        self._options = options
        self.memos = Memos()
        self._run: Optional[api.Session] = None

    def _session(self) -> api.Session:
        if self._run is None:
            self._run = api.Session(self._options, self.memos)
        return self._run

    def _checker(self, path: str) -> Optional["Checker"]:
        """The file's checker; None when its profile excludes it. Raises ProfileError."""
        where = os.path.abspath(path)
        session = self._session()
        if path != UNSAVED_PATH and session.excluded(where):
            return None
        return session.checker(where)

    def check_buffer(self, text: str, path: str) -> BufferCheck:
        try:
            checker = self._checker(path)
        except ProfileError as exc:
            return BufferCheck(profile_error=str(exc))
        if checker is None:
            return BufferCheck()
        unusable = unusable_text(text, path)  # what `check` says of such a file (a NUL, too large)
        if unusable is not None:
            return BufferCheck((unusable,))
        from deadline_lint.semantics import callers

        with self.memos.active():
            start_consulting()
            callers.start()
            found = tuple(self._session().lint_text(text, path).diagnostics)
            # The findings depend on other files when the semantics layer looked into the
            # project (found a module there or found none), and on every module of the
            # project when a rule asked who calls a def (a caller may be gained or lost
            # anywhere).
            if path == UNSAVED_PATH or not consulted():
                return BufferCheck(found)
            reach, folders = _reach_of(checker, text, path)
            caller_files, caller_folders = callers.consulted()
        return BufferCheck(found, None, reach | frozenset(caller_files), folders | frozenset(caller_folders), True)

    def fix_buffer(self, text: str, path: str) -> Optional[str]:
        """What `deadline-lint fix` makes of the text (None: nothing, or it gave up)."""
        try:
            if self._checker(path) is None:
                return None
            result = self._session().fix_text(text, path)
        except ProfileError:
            return None
        return result.text if result.changed and not result.gave_up else None

    def reload(self) -> None:
        """A profile (pyproject.toml or its YAML) may have changed: resolve them again."""
        api.reset()
        self._run = None

    def use_unsaved(self, path: str, text: Optional[str]) -> None:
        """The semantics layer reads `path` as `text` (None: as on disk again)."""
        from deadline_lint.semantics.modules import use_unsaved_text

        with self.memos.active():
            use_unsaved_text(os.path.abspath(path), text)

    def invalidate(self, paths: Iterable[str] = ()) -> None:
        """Files changed (on disk or in a buffer; none named: a change the server cannot
        name, such as a profile): drop every answer memoised about the project. A run of the
        CLI never needs this: files do not change during it."""
        self.memos.invalidate(paths)


def apply_fix(text: str, fix: Fix) -> Optional[str]:
    """One finding's fix, applied the way a round of `fix` applies it, or None when its
    edits cannot go in or the result would not parse."""
    from deadline_lint.fixes.loop import apply_one_fix
    from deadline_lint.fixes.writes import match_newlines

    if not fix.edits:
        return None
    new_text = apply_one_fix(text, fix.edits, fix.imports)
    if new_text is None:
        return None
    new_text = match_newlines(text, new_text)
    try:
        ast.parse(new_text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return new_text if new_text != text else None


def _reach_of(checker: "Checker", text: str, path: str) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The project files (and folders) a file's findings can depend on: the same records
    the results cache keeps (cached.recorded), flattened over the closure."""
    from deadline_lint.cache.dependencies import project_reach
    from deadline_lint.support.collector import collector_paused

    with collector_paused():
        reach = project_reach(path, text, checker.catalog)
    if reach is None:
        return frozenset(), frozenset()
    files: Set[str] = set()
    folders: Set[str] = set()
    for part in (reach.own, *reach.modules.values()):
        files.update(part.follow)
        files.update(part.files)
        folders.update(part.folders)
    files.update(reach.modules)
    return frozenset(files), frozenset(folders)
