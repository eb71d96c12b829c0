"""The commands that run the checker: `check` (with its report, `--statistics`, the
baseline and `--add-noqa`) and `fix` (`check --fix`, `--diff`, fixing stdin for editors).
cli.py registers them and says what their exit statuses mean."""
from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from typing import TYPE_CHECKING, List, Sequence, TextIO

from deadline_lint.frontends.cli_arguments import load, reads_stdin, stdin_name, unused_flags
from deadline_lint.frontends.delivery import deliver
from deadline_lint.frontends.output import DOCUMENT_FORMATS, WRITERS, write_statistics
from deadline_lint.run.api import FixResult, Session
from deadline_lint.settings.profile import ProfileError
from deadline_lint.support.diagnostics import Diagnostic

if TYPE_CHECKING:
    from deadline_lint.frontends.baseline import Entry

# Fixing, baselines and noqa edits are imported where they are used: a check answered from
# the results cache starts without loading the rules or LibCST.

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def cmd_check(args: argparse.Namespace) -> int:
    unused_flags(args, fixing=args.fix or args.diff)
    if (args.fix or args.diff) and (args.add_noqa or args.baseline or args.write_baseline):
        raise ProfileError("--add-noqa, --baseline and --write-baseline cannot be combined with --fix or --diff")
    if args.fix or args.diff:
        return cmd_fix(args)
    session, files = load(args)
    adoption = [flag for flag, on in (("--add-noqa", args.add_noqa), ("--baseline", args.baseline),
                                      ("--write-baseline", args.write_baseline)) if on]
    if adoption and reads_stdin(args):
        raise ProfileError(f"{adoption[0]}: needs files, not stdin")
    if reads_stdin(args):
        found = session.lint_bytes(sys.stdin.buffer.read(), stdin_name(args)).diagnostics
        files = [stdin_name(args)]
    else:
        results = [d for result in session.lint_paths(files) for d in result.diagnostics]
        found = sorted([*results, *args.unlistable], key=Diagnostic.sort_key)
    if args.add_noqa:
        return _add_noqa(found)
    if args.write_baseline:
        from deadline_lint.frontends.baseline import write_baseline

        count = write_baseline(args.write_baseline, found)
        print(f"deadline-lint: recorded {count} finding{'' if count == 1 else 's'} in {args.write_baseline}",
              file=sys.stderr)
        return EXIT_CLEAN
    stale: List[Entry] = []
    if args.baseline:
        from deadline_lint.frontends.baseline import apply_baseline, load_baseline

        filtered = apply_baseline(found, load_baseline(args.baseline), args.baseline, files)
        found, stale = filtered.new, filtered.stale
    verdict = args.verdict = EXIT_FINDINGS if found and not args.exit_zero else EXIT_CLEAN

    def write(out: TextIO) -> None:
        WRITERS[args.format](found, out, len(files))
        if args.statistics:
            # A JSON or SARIF document stays valid: its statistics go to stderr.
            stats_out = sys.stderr if args.format in DOCUMENT_FORMATS else out
            write_statistics(found, stats_out)
            if args.baseline:
                _write_stale(stale, args.baseline, stats_out)

    return deliver(write, args.output_file, verdict)


def _add_noqa(found: Sequence[Diagnostic]) -> int:
    from deadline_lint.fixes.writes import WriteRefused, match_newlines, read_snapshot, write_atomic
    from deadline_lint.frontends.noqa import add_noqa
    from deadline_lint.support.source import DecodeError

    by_path: dict = {}
    for diagnostic in found:
        by_path.setdefault(diagnostic.path, []).append(diagnostic)
    added = skipped = changed = refused = unwritten = 0
    for path, diagnostics in sorted(by_path.items()):
        try:
            snapshot = read_snapshot(path)
        except (OSError, DecodeError):
            continue  # reported as DL002/DL006 by the check itself
        result = add_noqa(snapshot.text, diagnostics)
        skipped += result.skipped
        if result.text == snapshot.text:
            continue
        try:
            write_atomic(snapshot, match_newlines(snapshot.text, result.text))
        except (WriteRefused, OSError) as exc:
            # The other files still get theirs: one refusal does not end the run.
            print(f"deadline-lint: {path}: not written: {exc}", file=sys.stderr)
            refused += result.added
            unwritten += 1
            continue
        added += result.added
        changed += 1
    message = f"Added {added} noqa directive{'' if added == 1 else 's'} in {changed} file{'' if changed == 1 else 's'}"
    if skipped:
        message += (
            f"; {skipped} line{'' if skipped == 1 else 's'} could not take a comment (inside a string or continued)"
        )
    if refused:
        message += f"; {refused} not added in {unwritten} file{'' if unwritten == 1 else 's'} that could not be written"
    print(message + ".", file=sys.stderr)
    return EXIT_FINDINGS if refused else EXIT_CLEAN


def _write_stale(stale: Sequence[Entry], baseline: str, out) -> None:
    if not stale:
        out.write(f"No stale entries in {baseline}.\n")
        return
    out.write(f"{len(stale)} stale entr{'y' if len(stale) == 1 else 'ies'} in {baseline} (fixed or gone; "
              f"rewrite it with --write-baseline):\n")
    for entry in stale:
        nth = f" (occurrence {entry.occurrence + 1})" if entry.occurrence else ""
        out.write(f"  {entry.path}: {entry.code} {entry.text}{nth}\n")


def cmd_fix(args: argparse.Namespace) -> int:
    """`fix` and `check --fix` / `check --diff`: fix, then report what remains."""
    from deadline_lint.fixes.loop import fix_summary

    unused_flags(args, fixing=True)
    session, files = load(args)
    if reads_stdin(args):
        return _fix_stdin(session, args)
    if not args.diff:
        from deadline_lint.fixes.writes import count_writes

        count_writes()  # so an interruption can say how many files were already fixed
    with _sigterm_interrupts():
        outcomes = list(session.fix_paths(files))
    outcomes.extend(FixResult(d.path, [d]) for d in args.unlistable)
    summary = fix_summary(outcomes, session.options.fix_mode(), not args.diff, len(files))
    for outcome in outcomes:
        if outcome.refused:
            print(f"deadline-lint: {outcome.path}: {outcome.refused}", file=sys.stderr)
    failed = any(o.refused or o.gave_up for o in outcomes)
    if args.diff:
        verdict = args.verdict = EXIT_FINDINGS if failed or any(o.changed for o in outcomes) else EXIT_CLEAN
        verdict = deliver(lambda out: _write_diffs(outcomes, out), None, verdict)
        print(summary, file=sys.stderr)
        return verdict
    remaining = sorted((d for o in outcomes for d in o.remaining), key=lambda d: d.sort_key())
    output_format = getattr(args, "format", "text")
    if failed or (args.exit_non_zero_on_fix and any(o.changed for o in outcomes)):
        verdict = EXIT_FINDINGS
    else:
        verdict = EXIT_FINDINGS if remaining and not args.exit_zero else EXIT_CLEAN
    args.verdict = verdict

    def write(out: TextIO) -> None:
        WRITERS[output_format](remaining, out, len(files))
        if getattr(args, "statistics", False):
            write_statistics(remaining, sys.stderr if output_format in DOCUMENT_FORMATS else out)
        print(summary, file=out if output_format == "text" else sys.stderr)

    # The fixes are written already: a report that cannot be written is still exit 2.
    return deliver(write, getattr(args, "output_file", None), verdict)


def _fix_stdin(session: Session, args: argparse.Namespace) -> int:
    """For editors: the fixed source (or, with --diff, the diff) on stdout, what remains on
    stderr. Undecodable input is passed through unchanged with its DL002 on stderr."""
    from deadline_lint.fixes.loop import diff_like
    from deadline_lint.fixes.writes import WriteRefused, encode_like, snapshot_of
    from deadline_lint.support.source import DecodeError

    data = sys.stdin.buffer.read()
    name = stdin_name(args)
    try:
        snapshot = snapshot_of(name, data)
    except DecodeError as exc:
        sys.stdout.buffer.write(data)
        print(f"{name}:1:1: DL002 cannot decode file: {exc}", file=sys.stderr)
        return EXIT_FINDINGS
    result = session.fix_text(snapshot.text, name)
    assert result.text is not None
    try:  # the input's own encoding and BOM, like a fixed file on disk
        fixed = encode_like(snapshot, result.text)
    except WriteRefused as exc:
        print(f"deadline-lint: {name}: {exc}", file=sys.stderr)
        sys.stdout.buffer.write(data)
        return EXIT_FINDINGS
    if args.diff:
        verdict = EXIT_FINDINGS if result.changed or result.gave_up else EXIT_CLEAN
    elif result.gave_up or (args.exit_non_zero_on_fix and result.changed):
        verdict = EXIT_FINDINGS
    else:
        verdict = EXIT_FINDINGS if result.remaining and not args.exit_zero else EXIT_CLEAN
    args.verdict = verdict
    output = diff_like(snapshot, result.text) if args.diff and result.changed else b"" if args.diff else fixed
    verdict = deliver(lambda out: _write_bytes(output, out), None, verdict)
    for d in result.remaining:
        print(f"{d.path}:{d.line}:{d.column}: {d.code} {d.message}", file=sys.stderr)
    return verdict


def _write_bytes(data: bytes, out: TextIO) -> None:
    out.flush()
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        out.write(data.decode("utf-8", errors="replace"))
    else:
        buffer.write(data)
        buffer.flush()


def _write_diffs(outcomes: Sequence[FixResult], out: TextIO) -> None:
    """The diff goes out byte for byte (UTF-8, each line's own newline), ready for `patch -p0`."""
    _write_bytes(b"".join(o.diff for o in outcomes), out)


@contextlib.contextmanager
def _sigterm_interrupts():
    """SIGTERM while fixing becomes KeyboardInterrupt, so a write in progress deletes its
    temporary file on the way out (the original is only ever replaced whole)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)

