"""One run's memory: every memo an analysis keeps about the project, and the run's state
(whether the file being checked looked into its project, where summaries are stored, the
editor's unsaved buffers), owned by one `Session` and dropped with it.

A run (`run.api.Session`: `lint_paths`, `fix_paths`, `lint_text`, a worker process, the
editor server) creates a session and makes it the active one while it checks
(`with session.active():`); an analysis asks the active one for its table by the type that
owns it, `current().memo(ModuleSummary)`, or for its state object, `current().state(Held)`.
Keyed by type, not by a string, so two analyses cannot share a table by accident and a table
can be found from its owner. Nothing is kept in a module's globals: two runs in one process
(the test suite, an editor server) never see each other's answers, and what a run learned is
freed when it ends.

`invalidate(paths)` is for a session that outlives its files (the editor server): files
changed, so every memo that may hold their old content or layout is dropped. Memos keyed by
content (a module's summary by the hash of its text) and the run's settings are `lasting`:
they cannot go stale and are kept.

Code that runs outside any run (a test calling an analysis directly) gets the context's own
session, made on first use."""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Dict, Iterable, Iterator, Optional, Set, Type, TypeVar

T = TypeVar("T")


class Session:
    """The memos and state of one run, each found by the type that owns it."""

    def __init__(self) -> None:
        self._memos: Dict[type, Dict[Any, Any]] = {}
        self._states: Dict[type, Any] = {}
        self._lasting: Set[type] = set()

    def memo(self, owner: type, lasting: bool = False) -> Dict[Any, Any]:
        """The table `owner` keeps its answers in (made empty on first use). `lasting`: its
        keys name content, so `invalidate` keeps it."""
        found = self._memos.get(owner)
        if found is None:
            found = self._memos[owner] = {}
            if lasting:
                self._lasting.add(owner)
        return found

    def state(self, kind: Type[T], lasting: bool = False) -> T:
        """The run's one `kind()` (made on first use); `lasting` as for `memo`."""
        found = self._states.get(kind)
        if found is None:
            found = self._states[kind] = kind()
            if lasting:
                self._lasting.add(kind)
        return found  # type: ignore[no-any-return]

    def forget(self, *owners: type) -> None:
        """Drop these owners' memos and states (made empty again on next use)."""
        for owner in owners:
            self._memos.pop(owner, None)
            self._states.pop(owner, None)

    def invalidate(self, paths: Iterable[str] = ()) -> None:
        """`paths` changed (on disk or in an editor's buffer): drop every memo and state that
        is not lasting. A project's index and the answers composed over it read every module
        it reached, so a change to any file drops them all, whichever files they were."""
        for owner in [o for o in self._memos if o not in self._lasting]:
            del self._memos[owner]
        for kind in [k for k in self._states if k not in self._lasting]:
            del self._states[kind]

    @contextmanager
    def active(self) -> Iterator["Session"]:
        """Make this the session `current()` answers while the block runs."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)


# Not a memo: which session is active in this context (a thread, a task), as `decimal` keeps
# its context. The session it names owns every table.
_ACTIVE: "ContextVar[Optional[Session]]" = ContextVar("deadline_lint_session", default=None)


def current() -> Session:
    """The active session (see `Session.active`); outside any run, the context's own."""
    found = _ACTIVE.get()
    if found is None:
        found = Session()
        _ACTIVE.set(found)
    return found


__all__ = ["Session", "current"]
