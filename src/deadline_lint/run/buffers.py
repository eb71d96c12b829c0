"""Buffers in a process that lives longer than one run (the editor server): what a front end
holding unsaved texts asks of the run, so that it reaches no lower layer itself.

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
  `forget_project_facts` drops every answer memoised about the project's files, for when
  one changed on disk or in a buffer; `reload` forgets the resolved profiles.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, FrozenSet, Optional, Set, Tuple

from deadline_lint.engine.reading import MAX_FILE_BYTES, unusable_text
from deadline_lint.run import api
from deadline_lint.run.options import Options
from deadline_lint.semantics.modules import consulted, start_consulting
from deadline_lint.settings.profile import ProfileError
from deadline_lint.support.diagnostics import Diagnostic, Fix

if TYPE_CHECKING:
    from deadline_lint.engine.checker import Checker

__all__ = [
    "MAX_FILE_BYTES", "UNSAVED_PATH", "BufferCheck", "apply_fix", "check_buffer", "fix_buffer",
    "forget_project_facts", "reload", "use_unsaved",
]

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


def _checker(path: str, options: Options) -> Optional["Checker"]:
    """The file's checker; None when its profile excludes it. Raises ProfileError."""
    where = os.path.abspath(path)
    session = api.session(options)
    if path != UNSAVED_PATH and session.excluded(where):
        return None
    return session.checker(where)


def check_buffer(text: str, path: str, options: Options) -> BufferCheck:
    try:
        checker = _checker(path, options)
    except ProfileError as exc:
        return BufferCheck(profile_error=str(exc))
    if checker is None:
        return BufferCheck()
    unusable = unusable_text(text, path)  # what `check` says of such a file (a NUL, too large)
    if unusable is not None:
        return BufferCheck((unusable,))
    from deadline_lint.semantics import callers

    start_consulting()
    callers.start()
    found = tuple(api.lint_text(text, path, options).diagnostics)
    # The findings depend on other files when the semantics layer looked into the project
    # (found a module there or found none), and on every module of the project when a
    # rule asked who calls a def (a caller may be gained or lost anywhere).
    if path == UNSAVED_PATH or not consulted():
        return BufferCheck(found)
    reach, folders = _reach_of(checker, text, path)
    caller_files, caller_folders = callers.consulted()
    return BufferCheck(found, None, reach | frozenset(caller_files), folders | frozenset(caller_folders), True)


def fix_buffer(text: str, path: str, options: Options) -> Optional[str]:
    """What `deadline-lint fix` makes of the text (None: nothing, or it gave up)."""
    try:
        if _checker(path, options) is None:
            return None
        result = api.fix_text(text, path, options)
    except ProfileError:
        return None
    return result.text if result.changed and not result.gave_up else None


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


def reload() -> None:
    """A profile (pyproject.toml or its YAML) may have changed: resolve them again."""
    api.reset()


def use_unsaved(path: str, text: Optional[str]) -> None:
    """The semantics layer reads `path` as `text` (None: as on disk again)."""
    from deadline_lint.semantics.modules import use_unsaved_text

    use_unsaved_text(os.path.abspath(path), text)


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


def forget_project_facts() -> None:
    """Drop everything memoised about project files: the indexes (their modules' texts and
    answers), the dependency records, the answers of the project prefilter, and where files'
    projects start. A run of the CLI never needs this: files do not change during it."""
    from deadline_lint.cache import dependencies
    from deadline_lint.families.outbound.analysis import outbound_facts, project_prefilter
    from deadline_lint.semantics import callers, facts, modules, roots, scan

    modules.forget_projects()
    facts.forget_facts()
    callers.forget_callers()
    for memo in (
        roots._ROOTS, project_prefilter._ANSWERS, outbound_facts._SALTS,
        dependencies._MODULE_REACH, dependencies._PREFIXES,
        dependencies._FOLDERS,
    ):
        memo.clear()
    scan._LAST_TABLE[0] = None
