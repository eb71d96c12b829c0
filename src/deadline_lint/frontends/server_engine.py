"""What the editor server asks of the engine, and nothing else: the one module of the server
that calls into deadline-lint's checking and fixing, so that the server reports what `check`
reports and applies what `fix` applies.

For a buffer (its unsaved text and its path on disk):
- `check`: the findings `deadline-lint check PATH` would report if the text were saved: the
  file's own profile resolved as `check` resolves it (config.Checkers), a file its profile
  excludes gets none, `# noqa` and `per_path_ignores` applied; a broken profile is its
  message instead (what `check` prints before exiting 2). When the file looked into its
  project, also the project files and folders the findings were computed from, so the server knows which open
  files to check again when one of those changes.
- `fix_all`: the text `deadline-lint fix` would write (safe fixes, the same loop).
- `apply_fix`: the text with one finding's fix applied as one round of `fix` applies it
  (its edits and the imports it needs), only when the result still parses.
- `suppress`: the text with `# noqa: CODE` added or extended on the findings' lines, as
  `check --add-noqa` writes it.

Project modules open in the editor are read by the semantics layer as they are in the editor
(`use_unsaved`); `forget_project_facts` drops every answer memoised about them, for when a
module changed on disk or in a buffer.
"""
from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, FrozenSet, Optional, Sequence, Set, Tuple

from deadline_lint.support.diagnostics import Diagnostic, Fix, tool_diagnostic
from deadline_lint.run import api
from deadline_lint.semantics.modules import consulted, start_consulting
from deadline_lint.settings.profile import ProfileError
from deadline_lint.support.records import dataclass

if TYPE_CHECKING:
    from deadline_lint.engine.checker import Checker

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


class Engine:
    """One per server: profiles are resolved and checkers built once, until `reload`."""

    def __init__(self, explicit_profile: Optional[str] = None) -> None:
        self._options = api.Options(profile=explicit_profile)

    def reload(self) -> None:
        """A profile (pyproject.toml or its YAML) may have changed: resolve them again."""
        api.reset()

    def _checker(self, path: str) -> Optional["Checker"]:
        """The file's checker; None when its profile excludes it. Raises ProfileError."""
        where = os.path.abspath(path)
        session = api.session(self._options)
        if path != UNSAVED_PATH and session.excluded(where):
            return None
        return session.checker(where)

    def check(self, text: str, path: str) -> BufferCheck:
        from deadline_lint.engine.reading import MAX_FILE_BYTES

        try:
            checker = self._checker(path)
        except ProfileError as exc:
            return BufferCheck(profile_error=str(exc))
        if checker is None:
            return BufferCheck()
        if len(text) * 4 > MAX_FILE_BYTES and len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
            size = len(text.encode("utf-8", "surrogatepass")) // (1024 * 1024)
            return BufferCheck((tool_diagnostic(path, "DL004", f"file too large to check ({size} MiB, limit 10 MiB)"),))
        from deadline_lint.semantics import callers

        start_consulting()
        callers.start()
        found = tuple(api.lint_text(text, path, self._options).diagnostics)
        # The findings depend on other files when the semantics layer looked into the project
        # (found a module there or found none), and on every module of the project when a
        # rule asked who calls a def (a caller may be gained or lost anywhere).
        if path == UNSAVED_PATH or not consulted():
            return BufferCheck(found)
        reach, folders = _reach_of(checker, text, path)
        caller_files, caller_folders = callers.consulted()
        return BufferCheck(found, None, reach | frozenset(caller_files), folders | frozenset(caller_folders), True)

    def fix_all(self, text: str, path: str) -> Optional[str]:
        """What `deadline-lint fix` makes of the text (None: nothing, or it gave up)."""
        try:
            if self._checker(path) is None:
                return None
            result = api.fix_text(text, path, self._options)
        except ProfileError:
            return None
        return result.text if result.changed and not result.gave_up else None

    def apply_fix(self, text: str, fix: Fix) -> Optional[str]:
        """One finding's fix, applied the way a round of `fix` applies it (fixes.py), or
        None when its edits cannot go in or the result would not parse."""
        from deadline_lint.fixes.loop import _apply_round, _Group
        from deadline_lint.fixes.writes import match_newlines

        if not fix.edits:
            return None
        new_text, applied = _apply_round(text, [_Group(fix.edits, fix.imports)])
        if not applied:
            return None
        new_text = match_newlines(text, new_text)
        try:
            ast.parse(new_text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return new_text if new_text != text else None

    def suppress(self, text: str, found: Sequence[Diagnostic]) -> Optional[str]:
        """`check --add-noqa` for these findings (None: no comment can go there, or the
        line's noqa already covers them)."""
        from deadline_lint.frontends.noqa import add_noqa

        result = add_noqa(text, found)
        return result.text if result.text != text else None

    # -- the project's modules, for a server that lives longer than one check -----------
    @staticmethod
    def use_unsaved(path: str, text: Optional[str]) -> None:
        """The semantics layer reads `path` as `text` (None: as on disk again)."""
        from deadline_lint.semantics.modules import use_unsaved_text

        use_unsaved_text(os.path.abspath(path), text)

    @staticmethod
    def forget_project_facts() -> None:
        forget_project_facts()


def _reach_of(checker: "Checker", text: str, path: str) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The project files (and folders) a file's findings can depend on: the same records
    the results cache keeps (api.recorded), flattened over the closure."""
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
    from deadline_lint.families.outbound.analysis import outbound_facts, outbound_project
    from deadline_lint.semantics import roots
    from deadline_lint.semantics import callers, facts, modules, scan

    modules.forget_projects()
    facts.forget_facts()
    callers.forget_callers()
    for memo in (
        roots._ROOTS, outbound_project._ANSWERS, outbound_facts._SALTS,
        dependencies._MODULE_REACH, dependencies._PREFIXES,
        dependencies._FOLDERS,
    ):
        memo.clear()
    scan._LAST_TABLE[0] = None
