"""What the editor server asks of the run, and nothing else: the one module of the server
that calls into deadline-lint's checking and fixing, all through the run layer's public
surface (`run.api`, `run.buffers`), so that the server reports what `check` reports and
applies what `fix` applies.

For a buffer (its unsaved text and its path on disk): `check` (the findings, and the
project files they reach), `fix_all` (the text `fix` would write), `apply_fix` (one
finding's fix, as one round of `fix` applies it), `suppress` (`# noqa: CODE` added as
`check --add-noqa` writes it). Project modules open in the editor are read as they are in
the editor (`use_unsaved`); `invalidate` drops every answer memoised about them, for when a
module changed on disk or in a buffer. run/buffers.py says what each answers.
"""
from __future__ import annotations

from typing import Iterable, Optional, Sequence

from deadline_lint.run import buffers
from deadline_lint.run.api import Options
from deadline_lint.run.buffers import UNSAVED_PATH, BufferCheck
from deadline_lint.support.diagnostics import Diagnostic, Fix

__all__ = ["UNSAVED_PATH", "BufferCheck", "Engine"]


class Engine:
    """One per server: profiles are resolved and checkers built once, until `reload`."""

    def __init__(self, explicit_profile: Optional[str] = None) -> None:
        self._buffers = buffers.Buffers(Options(profile=explicit_profile))

    def reload(self) -> None:
        """A profile (pyproject.toml or its YAML) may have changed: resolve them again."""
        self._buffers.reload()

    def check(self, text: str, path: str) -> BufferCheck:
        return self._buffers.check_buffer(text, path)

    def fix_all(self, text: str, path: str) -> Optional[str]:
        """What `deadline-lint fix` makes of the text (None: nothing, or it gave up)."""
        return self._buffers.fix_buffer(text, path)

    def apply_fix(self, text: str, fix: Fix) -> Optional[str]:
        """One finding's fix, or None when its edits cannot go in or the result would not parse."""
        return buffers.apply_fix(text, fix)

    def suppress(self, text: str, found: Sequence[Diagnostic]) -> Optional[str]:
        """`check --add-noqa` for these findings (None: no comment can go there, or the
        line's noqa already covers them)."""
        from deadline_lint.frontends.noqa import add_noqa

        result = add_noqa(text, found)
        return result.text if result.text != text else None

    # -- the project's modules, for a server that lives longer than one check -----------
    def use_unsaved(self, path: str, text: Optional[str]) -> None:
        """The semantics layer reads `path` as `text` (None: as on disk again)."""
        self._buffers.use_unsaved(path, text)

    def invalidate(self, paths: Iterable[str]) -> None:
        """Files changed (on disk or in a buffer): drop every answer memoised about the project."""
        self._buffers.invalidate(paths)

    def forget_project_facts(self) -> None:
        """`invalidate` for a change the server cannot name (a profile changed)."""
        self._buffers.invalidate(())
