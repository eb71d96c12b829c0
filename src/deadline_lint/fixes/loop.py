"""The fix loop every front end goes through: `deadline-lint fix`, `check --fix` and the
LibCST codemod.

One round: check the text, take each applicable fix (safe ones; unsafe ones too with
`--unsafe-fixes`; never a suppressed finding, which the engine has already dropped), apply
those whose edits do not overlap or touch an edit already taken, add the imports they need
(where LibCST's AddImportsVisitor would put them: import_block.py writes them itself when the
module's import block is plain, else LibCST, which knows about docstrings, `from __future__`,
shebangs and coding lines), then parse and check again. Fixes that had to wait get their turn in a later
round. The loop stops when a round changes nothing. If the text is still changing after
MAX_ROUNDS rounds, or a round produced code that does not parse, the file is left exactly as
it was and a DL005 / DL003 diagnostic says so.
"""
from __future__ import annotations

import ast
import bisect
import difflib
import os
from dataclasses import dataclass
from typing import FrozenSet, List, Optional, Protocol, Sequence, Tuple

from deadline_lint.engine.checker import Checker, tool_diagnostic
from deadline_lint.engine.reading import read_file, undecodable
from deadline_lint.families.outbound.fixes.thread_budget import finding_key
from deadline_lint.families.shared.budget.fix_tags import INSERTS_BUDGET
from deadline_lint.fixes.adding_imports import add_imports, insert_import_lines
from deadline_lint.fixes import thread_round
from deadline_lint.fixes.counts import tally, without_unapplied_fixes
from deadline_lint.fixes.import_block import add_imports_plainly
from deadline_lint.fixes.writes import (
    SourceSnapshot,
    WriteRefused,
    encode_like,
    match_newlines,
    snapshot_of,
    write_atomic,
)
from deadline_lint.semantics.local.imports import parse_import  # noqa: F401  (re-exported)
from deadline_lint.support.diagnostics import Applicability, Diagnostic, Edit, Fix
from deadline_lint.support.source import DecodeError, split_lines

MAX_ROUNDS = 10
_PARSE_FAILURES = ("DL001", "DL002")


@dataclass(frozen=True)
class FixMode:
    unsafe: bool = False  # also apply fixes marked unsafe
    thread_budget: bool = False  # see thread_budget.py
    # Also apply fixes that insert a missing timeout, whatever their class: the codemod's job
    # (and `--thread-budget`'s, which exists to insert budgets).
    insert_budgets: bool = False
    # `--thread-budget` in a run over many files: their absolute paths (thread_elsewhere.py).
    run: FrozenSet[str] = frozenset()
    mint_at_edges: bool = False  # `adopt` (adoption/minting.py)

    def applies(self, fix: Optional[Fix]) -> bool:
        if fix is None:
            return False
        if fix.applicability is Applicability.SAFE or self.unsafe:
            return True
        return INSERTS_BUDGET in fix.tags and (self.insert_budgets or self.thread_budget)


@dataclass(frozen=True)
class FixedText:
    original: str
    text: str  # the fixed text; the original when fixing gave up
    fixed: int  # findings of the original that are gone from `text` (see `tally`)
    remaining: Tuple[Diagnostic, ...]  # what checking `text` reports (plus DL003/DL005 on give-up)
    before: Tuple[Diagnostic, ...]  # what checking the original reported
    threaded: int = 0  # functions given a budget parameter (--thread-budget)
    gave_up: bool = False  # DL005 (no convergence) or DL003 (a fix broke the code)
    new: int = 0  # remaining findings the original did not have: before + new == fixed + remaining

    @property
    def changed(self) -> bool:
        return self.text != self.original


@dataclass(frozen=True)
class _Group:
    """Edits that go in together or not at all: one finding's fix, or a whole thread plan."""

    edits: Tuple[Edit, ...]
    imports: Tuple[str, ...] = ()
    threaded: int = 0


# -- one text ------------------------------------------------------------------------
def fix_text(checker: Checker, text: str, path: str, mode: FixMode = FixMode()) -> FixedText:
    """Apply fixes to `text` until nothing changes; never raises for what a fix does."""
    original = text
    before: Optional[List[Diagnostic]] = None
    threaded = 0
    found: List[Diagnostic] = []
    for round_number in range(MAX_ROUNDS + 1):
        tree = thread_round.tree_for_the_plan(text, path, mode, round_number == 0)
        found = check_for_fixing(checker, text, path, tree)
        if before is None:
            before = found
        elif any(d.code in _PARSE_FAILURES for d in found):
            rules = ", ".join(sorted({d.code for d in before if mode.applies(d.fix)}))
            return _give_up(original, before, path, "DL003", (
                f"internal error: fixes ({rules}) produced code that does not parse; the file was left unchanged"
            ))
        groups = _round_groups(checker, text, path, found, mode, round_number == 0, tree)
        if not groups:
            break
        new_text, applied = _apply_round(text, groups)
        new_text = match_newlines(original, new_text)
        if new_text == text:
            break
        if round_number == MAX_ROUNDS:
            return _give_up(original, before, path, "DL005", (
                f"fixes were still changing the file after {MAX_ROUNDS} rounds; the file was left unchanged"
            ))
        text = new_text
        threaded += sum(group.threaded for group in applied)
    found = without_unapplied_fixes(found, path, mode.applies)
    fixed, new = tally(before or [], found)
    return FixedText(original, text, fixed, tuple(found), tuple(before or ()), threaded, new=new)


def check_for_fixing(checker: Checker, text: str, path: str, tree: Optional[ast.Module] = None) -> List[Diagnostic]:
    """What `check` reports for this text: suppressions applied (the per-path ignores are in
    the checker's selection, see config.Checkers). `tree`: the text already parsed."""
    return checker.check_text(text, path, tree)


def _give_up(original: str, before: Sequence[Diagnostic], path: str, code: str, message: str) -> FixedText:
    reason = tool_diagnostic(path, code, message)
    remaining = tuple(sorted([*before, reason], key=Diagnostic.sort_key))
    return FixedText(original, original, 0, remaining, tuple(before), gave_up=True, new=1)


def _round_groups(
    checker: Checker, text: str, path: str, found: List[Diagnostic], mode: FixMode, first: bool = False,
    tree: Optional[ast.Module] = None,
) -> List[_Group]:
    groups: List[_Group] = []
    covered: frozenset = frozenset()
    if mode.thread_budget:
        plan = thread_round.thread_plan(checker, text, path, found, mode, first, tree)
        if plan is not None:
            covered = plan.covered
            groups.append(_Group(plan.edits, plan.imports, threaded=plan.functions))
    fixes = [d.fix for d in found if d.fix is not None and mode.applies(d.fix) and finding_key(d) not in covered]
    fixes.sort(key=lambda fix: min((e.start, e.end) for e in fix.edits) if fix.edits else (0, 0))
    groups.extend(_Group(fix.edits, fix.imports) for fix in fixes if fix.edits)
    return groups


# -- applying one round ----------------------------------------------------------------
def _apply_round(text: str, groups: List[_Group]) -> Tuple[str, List[_Group]]:
    chosen = _non_overlapping(groups, len(text))
    new_text = apply_edits(text, [e for g in chosen for e in g.edits])
    imports = tuple(dict.fromkeys(i for g in chosen for i in g.imports))
    if imports:
        with_imports = add_imports_plainly(new_text, imports)  # LibCST's placement, without it
        if with_imports is None:
            with_imports = add_imports(new_text, imports)
        if with_imports is None:  # LibCST cannot take it (too deep for it, say): plain lines
            with_imports = insert_import_lines(new_text, imports)
        if with_imports is None:  # prove or bail: drop the fixes that need an import
            chosen = [g for g in chosen if not g.imports]
            return apply_edits(text, [e for g in chosen for e in g.edits]), chosen
        new_text = with_imports
    return new_text, chosen


def apply_one_fix(text: str, edits: Tuple[Edit, ...], imports: Tuple[str, ...] = ()) -> Optional[str]:
    """One finding's fix applied as a round of the loop applies it, with the imports it
    needs (None: its edits or its imports cannot go in)."""
    new_text, applied = _apply_round(text, [_Group(edits, imports)])
    return new_text if applied else None


def _non_overlapping(groups: List[_Group], length: int) -> List[_Group]:
    """Greedy, in order: a group whose edits overlap or touch a taken edit waits a round.

    Taken edits never touch each other, so kept sorted by start their ends are sorted too and
    only the last one starting at or before an edit's end can touch it: a binary search per
    edit, not a scan of all taken ones (which is quadratic in a file with many fixes)."""
    starts: List[int] = []
    ends: List[int] = []
    chosen: List[_Group] = []
    for group in groups:
        edits = list(dict.fromkeys(group.edits))
        if any(not 0 <= e.start <= e.end <= length for e in edits):
            continue  # a rule bug; never let it garble the file
        ordered = sorted(edits, key=lambda e: (e.start, e.end))
        if any(_touch(a, b) for a, b in zip(ordered, ordered[1:])):
            continue
        if any(_touches_taken(e, starts, ends) for e in ordered):
            continue
        chosen.append(group)
        for edit in ordered:
            index = bisect.bisect_right(starts, edit.start)
            starts.insert(index, edit.start)
            ends.insert(index, edit.end)
    return chosen


def _touches_taken(edit: Edit, starts: List[int], ends: List[int]) -> bool:
    index = bisect.bisect_right(starts, edit.end) - 1
    return index >= 0 and ends[index] >= edit.start


def _touch(a: Edit, b: Edit) -> bool:
    """Overlapping, adjacent, or two insertions at one point: the order would be a guess."""
    return a.start <= b.end and b.start <= a.end


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping edits (character offsets into `text`)."""
    pieces: List[str] = []
    position = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        pieces.append(text[position:edit.start])
        pieces.append(edit.text)
        position = edit.end
    pieces.append(text[position:])
    return "".join(pieces)


# -- files -------------------------------------------------------------------------------
@dataclass(frozen=True)
class FileOutcome:
    path: str
    fixed: int
    remaining: Tuple[Diagnostic, ...]
    changed: bool  # the fixed text differs (written, or shown as a diff)
    diff: bytes = b""  # in the file's own encoding, so `patch -p0` applies it
    written: bool = False
    refused: Optional[str] = None  # why a changed file was not (or would not be) written
    threaded: int = 0
    gave_up: bool = False
    text: Optional[str] = None  # the fixed text, when it changed (thread_project.py reads it)
    new: int = 0  # FixedText.new


def fix_file(
    checker: Checker, path: str, mode: FixMode = FixMode(), write: bool = True, start: Optional[str] = None,
) -> FileOutcome:
    """Fix one file; `write=False` only computes the diff (`--diff`). `start`: fix this text
    (an earlier pass's result) instead of the file's, and diff or write against the file."""
    read = read_file(path)
    if isinstance(read, Diagnostic):
        return _unfixable(path, read)
    try:
        snapshot = snapshot_of(path, read.data, read.stat.st_mtime_ns, read.stat.st_size)
    except DecodeError as exc:
        return _unfixable(path, undecodable(path, exc))
    result = fix_text(checker, snapshot.text if start is None else start, path, mode)
    if not result.changed and result.text == snapshot.text:
        return FileOutcome(path, 0, result.remaining, False, gave_up=result.gave_up, new=result.new)
    try:
        if write:
            write_atomic(snapshot, result.text)
        else:
            encode_like(snapshot, result.text)  # --diff shows only what `fix` would write
    except WriteRefused as exc:
        return FileOutcome(path, 0, result.before, False, refused=str(exc))
    except OSError as exc:
        return FileOutcome(path, 0, result.before, False, refused=f"cannot write: {exc.strerror or exc}")
    diff = b"" if write else diff_like(snapshot, result.text)
    return FileOutcome(path, result.fixed, result.remaining, True, diff, write, None, result.threaded,
                       text=result.text, new=result.new)


def _unfixable(path: str, reason: Diagnostic) -> FileOutcome:
    return FileOutcome(path, 0, (reason,), False)


def diff_like(snapshot: SourceSnapshot, after: str) -> bytes:
    """The diff of the file's text to `after`, as bytes `patch -p0` applies to the file: the
    lines in the file's own encoding (with its BOM on the first), headers relative to the
    current folder when the file is below it (patch refuses absolute paths)."""
    bom = "\ufeff" if snapshot.bom else ""
    path = snapshot.path
    if os.path.isabs(path):
        relative = os.path.relpath(path)
        if not relative.startswith(os.pardir):
            path = relative
    diff = unified_diff(path, bom + snapshot.text, bom + after)
    lines = split_lines(diff)
    headers = b"".join(os.fsencode(line) for line in lines[:2])
    return headers + "".join(lines[2:]).encode(snapshot.encoding, errors="surrogateescape")


def unified_diff(path: str, before: str, after: str) -> str:
    """A unified diff that `patch -p0` applies; lines keep their own endings."""
    lines: List[str] = []
    for line in difflib.unified_diff(split_lines(before), split_lines(after), path, path):
        lines.append(line)
        if not line.endswith(("\n", "\r")):
            lines.append("\n\\ No newline at end of file\n")
    return "".join(lines)


# -- many files (api.fix_paths runs them) ----------------------------------------------
class Outcome(Protocol):
    """What fix_summary reads of each file's result (api.FixResult)."""

    @property
    def fixed(self) -> int: ...
    @property
    def changed(self) -> bool: ...
    @property
    def remaining(self) -> Sequence[Diagnostic]: ...
    @property
    def threaded(self) -> int: ...
    @property
    def new(self) -> int: ...


def fix_summary(outcomes: Sequence[Outcome], mode: FixMode, write: bool, files_checked: int) -> str:
    """`Fixed 3 problems in 2 files, 1 remaining (1 fixable with `--unsafe-fixes`).`"""
    fixed = sum(o.fixed for o in outcomes)
    changed = sum(1 for o in outcomes if o.changed)
    remaining = [d for o in outcomes for d in o.remaining]
    if not fixed and not remaining and not changed:
        return f"Nothing to fix ({_plural(files_checked, 'file')} checked)."
    verb, rest = ("Fixed", "remaining") if write else ("Would fix", "would remain")
    text = f"{verb} {_plural(fixed, 'problem')} in {_plural(changed, 'file')}, {len(remaining)} {rest}"
    notes = []
    new = sum(o.new for o in outcomes)
    if new:  # so that fixed + remaining is what was found, plus these
        notes.append(f"{new} not reported before fixing")
    hidden = sum(1 for d in remaining if d.fix is not None and d.fix.applicability is Applicability.UNSAFE)
    if hidden and not mode.unsafe:
        notes.append(f"{hidden} fixable with `--unsafe-fixes`")
    if notes:
        text += f" ({'; '.join(notes)})"
    threaded = sum(o.threaded for o in outcomes)
    if threaded:
        verb = "threaded" if write else "would thread"
        text += f"; {verb} a budget parameter through {_plural(threaded, 'function')}"
    return text + "."


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
