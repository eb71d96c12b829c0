"""`fix --thread-budget` across the modules of one run.

Each file is fixed on its own (thread_budget.py threads `budget_s` through one module). A
function threaded in one module changes what its callers in other modules can do: a caller
with a budget forwards it (`budget_s=budget.timeout()`), and, with DL503 selected, a caller
without one is threaded too. Those callers learn of the new parameter from the project facts
(forwarding_facts.AcceptsBudget), which read the callee's module. So after the first pass over
the run's files, the files that may import a module the pass threaded are fixed again from
their new text, with every changed file's new text standing for the file on disk
(`semantics.modules.use_unsaved_text`), until a pass threads nothing new or MAX_PASSES.

The parameter has no default, so a function is threaded in one pass only when each caller in
another module is in this run and a later pass forwards to it (thread_elsewhere.py decides,
with the rules the later pass applies); a caller outside the run (pre-commit hands `fix` the
changed files only) keeps the callee unthreaded. Writes happen as each pass ends, one whole
file at a time, so an interrupted run leaves each file either as it was or as one pass left
it, never half-written; but a callee written by one pass needs the next pass's forwarding to
run, so an interrupted run is finished by running `fix` again.
"""
from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Dict, Iterable, List, Optional, Protocol, Sequence, Tuple, TypeVar

from deadline_lint.semantics.facts import forget_facts
from deadline_lint.semantics.modules import forget_projects, use_unsaved_text
from deadline_lint.support.diagnostics import Diagnostic


class Result(Protocol):
    """What a pass reads of a file's result (api.FixResult)."""

    @property
    def path(self) -> str: ...
    @property
    def fixed(self) -> int: ...
    @property
    def threaded(self) -> int: ...
    @property
    def new(self) -> int: ...
    @property
    def text(self) -> Optional[str]: ...
    @property
    def gave_up(self) -> bool: ...
    @property
    def refused(self) -> Optional[str]: ...
    @property
    def before(self) -> Tuple[Diagnostic, ...]: ...


R = TypeVar("R", bound=Result)
R_co = TypeVar("R_co", bound=Result, covariant=True)


class Fixer(Protocol[R_co]):
    def fix_path(self, path: str, start: Optional[str] = None) -> R_co: ...

MAX_PASSES = 5  # the first, then one per module a budget crosses (the facts follow at most 4 hops)


def fix_across_modules(run: Fixer[R], paths: Sequence[str], first: Iterable[R]) -> List[R]:
    results: Dict[str, R] = {}
    for result in first:
        results[result.path] = result
    newly = [path for path, result in results.items() if result.threaded and result.text is not None]
    unsaved: List[str] = []
    try:
        for _ in range(MAX_PASSES - 1):
            if not newly:
                break
            for path, result in results.items():
                if result.text is not None:
                    located = os.path.abspath(path)
                    use_unsaved_text(located, result.text)
                    unsaved.append(located)
            forget_projects()  # the modules and facts read so far hold the texts before this pass
            forget_facts()
            pattern = _importers_of(newly)
            newly = []
            for path in paths:
                result = results[path]
                if result.gave_up or result.refused is not None:
                    continue
                text = result.text if result.text is not None else _read(path)
                if text is None or not pattern.search(text):
                    continue
                again = run.fix_path(path, start=text)
                if again.text is None or again.text == text:
                    continue  # nothing new for this file
                results[path] = _merged(result, again)
                if again.threaded:
                    newly.append(path)
    finally:
        for located in unsaved:
            use_unsaved_text(located, None)
        forget_projects()
        forget_facts()
    return [results[path] for path in paths]


def _importers_of(paths: Sequence[str]) -> "re.Pattern[str]":
    """A text naming one of the modules (its last dotted part): a cheap look at which files
    may import them; the facts decide what a call reaches."""
    stems = set()
    for path in paths:
        stem = os.path.splitext(os.path.basename(path))[0]
        stems.add(os.path.basename(os.path.dirname(os.path.abspath(path))) if stem == "__init__" else stem)
    return re.compile(r"\b(?:" + "|".join(re.escape(s) for s in sorted(stems)) + r")\b")


def _read(path: str) -> Optional[str]:
    from deadline_lint.engine.reading import Read, decode, read_file

    read = read_file(path)
    text = decode(read.data, path) if isinstance(read, Read) else None
    return text if isinstance(text, str) else None


def _merged(earlier: R, later: R) -> R:
    """One result for the file: what both passes fixed and threaded, what the last one left."""
    return replace(  # type: ignore[type-var]  # a dataclass (api.FixResult)
        later, fixed=earlier.fixed + later.fixed, threaded=earlier.threaded + later.threaded,
        new=earlier.new + later.new,
        changed=True, before=earlier.before or later.before,
    )
