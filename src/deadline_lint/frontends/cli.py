"""The `deadline-lint` command: check, fix, rules, explain.

Exit codes: 0 no findings, 1 findings (including files that could not be checked),
2 usage or configuration error, or a report that could not be written. A reader that closes
the pipe early leaves the status the findings give (delivery.py says why).
Also 2: a worker process lost (killed by a signal other than SIGTERM/SIGINT, such as the
out-of-memory killer's SIGKILL: the message names it).

`fix` (and `check --fix`) exit with what remains after fixing: 0 nothing remains, 1 problems
remain (unfixable, unsafe-only without `--unsafe-fixes`, DL005 did-not-converge) or a fixed
file could not be written (it changed on disk meanwhile); `--exit-non-zero-on-fix` also
exits 1 when anything was fixed. With `--diff` nothing is written: 1 if any file would
change (or could not be fixed), else 0. 130 when interrupted (Ctrl-C or SIGTERM): every
file is then either untouched or completely fixed, and the message says how many were written.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, List, Optional, Sequence, TextIO, Tuple

from deadline_lint import __version__
from deadline_lint.cache.results import CACHE_DIR_ENV, CACHE_DIR_NAME, default_cache_dir
from deadline_lint.frontends.adoption import add_commands
from deadline_lint.frontends.delivery import deliver, silence_stdout
from deadline_lint.frontends.output import DOCUMENT_FORMATS, WRITERS, write_statistics
from deadline_lint.run.api import FixResult, Options, Session
from deadline_lint.run.selection import parse_selectors
from deadline_lint.run.worker_exits import WorkerLost
from deadline_lint.settings.profile import ProfileError
from deadline_lint.support.diagnostics import Diagnostic
from deadline_lint.support.tool_codes import TOOL_CODES

if TYPE_CHECKING:
    from deadline_lint.frontends.baseline import Entry

# Fixing, baselines, noqa edits and rule docs are imported where they are used: a check
# answered from the results cache starts without loading the rules or LibCST.

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of processes from 1, got {value!r}")
    return number


def _add_selection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", default=["."], help="files or folders (default: .); - reads stdin")
    parser.add_argument("--stdin-filename", help="with -: the path to report (and match profile settings) for stdin")
    parser.add_argument("--profile", help="adoption profile YAML for every file (default: per file, "
                        "[tool.deadline-lint] in the nearest pyproject.toml that has one)")
    parser.add_argument("--select", type=parse_selectors, default=[], help="only these codes or prefixes (DL101,DL1)")
    parser.add_argument("--extend-select", type=parse_selectors, default=[], help="add these codes, e.g. opt-in DL106")
    parser.add_argument("--ignore", type=parse_selectors, default=[], help="skip these codes or prefixes")
    parser.add_argument("--exclude", action="append", default=[],
                        help="gitignore-style glob of paths to skip, relative to the working directory (repeatable)")
    parser.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false",
                        help="also check files that .gitignore, .git/info/exclude or git's global excludes ignore")
    parser.add_argument("--jobs", "-j", type=_positive_int, default=None,
                        help="processes, at most one per file and CPU (default: by file count)")


def _add_fix_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes marked unsafe")
    parser.add_argument("--extend-safe-fixes", type=parse_selectors, default=[],
                        help="treat the unsafe fixes of these codes or prefixes as safe (adds to the profile's)")
    parser.add_argument("--extend-unsafe-fixes", type=parse_selectors, default=[],
                        help="treat the safe fixes of these codes or prefixes as unsafe (adds to the profile's)")
    parser.add_argument("--diff", action="store_true",
                        help="print a unified diff of the fixes and write nothing (exit 1 if there are changes)")
    parser.add_argument("--thread-budget", action="store_true",
                        help="give functions with unbudgeted outbound calls a keyword-only `budget_s` "
                             "parameter and forward it from callers in the same module")
    parser.add_argument("--exit-non-zero-on-fix", action="store_true",
                        help="exit 1 when anything was fixed, even if nothing remains")


_WIDTH: List[int] = []  # asked once per parser built (`build_parser` forgets it)


def _help_width() -> int:
    """The width argparse's formatter would ask `shutil.get_terminal_size` for: argparse builds
    a formatter for every argument added, and importing shutil loads bz2, lzma and more, which
    a check never uses."""
    if not _WIDTH:
        _WIDTH.append(_terminal_columns() - 2)
    return _WIDTH[0]


def _terminal_columns() -> int:
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Parser(argparse.ArgumentParser):
    def _get_formatter(self) -> argparse.HelpFormatter:
        return self.formatter_class(prog=self.prog, width=_help_width())  # type: ignore[call-arg]


def build_parser() -> argparse.ArgumentParser:
    _WIDTH.clear()
    parser = _Parser(
        prog="deadline-lint",
        description="Crossing a call boundary never creates more request time.",
    )
    parser.add_argument("--version", action="version", version=f"deadline-lint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    check = commands.add_parser("check", help="report problems")
    _add_selection(check)
    check.add_argument("--format", choices=sorted(WRITERS), default="text")
    check.add_argument("--statistics", action="store_true", help="print a count per code")
    check.add_argument("--output-file", help="write the report here instead of stdout")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when problems are found")
    check.add_argument("--fix", action="store_true", help="apply fixes first (as `deadline-lint fix`)")
    check.add_argument("--add-noqa", action="store_true",
                       help="append `# noqa: CODE` to every line with a finding (keeping existing noqa codes)")
    check.add_argument("--baseline", metavar="FILE",
                       help="report only findings not recorded in FILE (see --write-baseline)")
    check.add_argument("--write-baseline", metavar="FILE",
                       help="record every current finding in FILE and exit 0")
    check.add_argument("--no-cache", action="store_true",
                       help="check every file again, neither reading nor writing the results cache")
    check.add_argument("--cache-dir", metavar="DIR",
                       help=f"where the results cache lives (default: ${CACHE_DIR_ENV}, else "
                            f"{CACHE_DIR_NAME} in the working directory)")
    _add_fix_options(check)

    fix = commands.add_parser("fix", help="apply safe fixes (unsafe ones too with --unsafe-fixes)")
    _add_selection(fix)
    _add_fix_options(fix)
    fix.add_argument("--exit-zero", action="store_true", help="exit 0 even when problems remain")

    commands.add_parser("rules", help="list every rule")
    explain = commands.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("code")
    commands.add_parser("server", help="run the language server on stdin/stdout (needs the `lsp` extra)")
    COMMANDS.update(add_commands(commands, _add_selection, cmd_fix))
    return parser


def _options(args: argparse.Namespace) -> Options:
    """The command line, translated for the API."""
    cache = args.command == "check" and not getattr(args, "no_cache", True) and args.paths != ["-"]
    return Options(
        select=tuple(args.select), ignore=tuple(args.ignore), extend_select=tuple(args.extend_select),
        extend_safe_fixes=tuple(getattr(args, "extend_safe_fixes", ())),
        extend_unsafe_fixes=tuple(getattr(args, "extend_unsafe_fixes", ())),
        profile=args.profile,
        unsafe_fixes=getattr(args, "unsafe_fixes", False), thread_budget=getattr(args, "thread_budget", False),
        mint_at_edges=getattr(args, "mint_at_edges", False),
        write=not getattr(args, "diff", False),
        jobs=args.jobs,
        cache_dir=(args.cache_dir or default_cache_dir()) if cache else None,
        exclude=tuple(args.exclude), respect_gitignore=args.respect_gitignore,
    )


def _reads_stdin(args: argparse.Namespace) -> bool:
    if "-" in args.paths and args.paths != ["-"]:
        raise ProfileError("-: stdin cannot be combined with other paths")
    return args.paths == ["-"]


def _stdin_name(args: argparse.Namespace) -> str:
    return args.stdin_filename or "-"


def _load(args: argparse.Namespace) -> Tuple[Session, List[str]]:
    """Each file's checker comes from its own profile (config.py), so the order and grouping
    of the paths never changes a file's findings."""
    options = _options(args)
    session = Session(options)
    if _reads_stdin(args):
        session.checker(os.path.abspath(_stdin_name(args)))  # a broken profile: exit 2 now
        files: List[str] = []
    else:
        files, args.unlistable = session.files(args.paths)
    for warning in session.checkers.resolver.warnings():
        print(f"deadline-lint: warning: {warning}", file=sys.stderr)
    return session, files


def _unused_flags(args: argparse.Namespace, fixing: bool) -> None:
    """A flag that would do nothing is a usage error, not silently ignored."""
    if args.stdin_filename and "-" not in args.paths:
        raise ProfileError("--stdin-filename: only applies when reading stdin (pass `-` as the path)")
    if not fixing:
        for flag in ("unsafe_fixes", "thread_budget", "exit_non_zero_on_fix"):
            if getattr(args, flag, False):
                raise ProfileError(f"--{flag.replace('_', '-')}: only applies with --fix (or `deadline-lint fix`)")


def cmd_check(args: argparse.Namespace) -> int:
    _unused_flags(args, fixing=args.fix or args.diff)
    if (args.fix or args.diff) and (args.add_noqa or args.baseline or args.write_baseline):
        raise ProfileError("--add-noqa, --baseline and --write-baseline cannot be combined with --fix or --diff")
    if args.fix or args.diff:
        return cmd_fix(args)
    session, files = _load(args)
    adoption = [flag for flag, on in (("--add-noqa", args.add_noqa), ("--baseline", args.baseline),
                                      ("--write-baseline", args.write_baseline)) if on]
    if adoption and _reads_stdin(args):
        raise ProfileError(f"{adoption[0]}: needs files, not stdin")
    if _reads_stdin(args):
        found = session.lint_bytes(sys.stdin.buffer.read(), _stdin_name(args)).diagnostics
        files = [_stdin_name(args)]
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

    _unused_flags(args, fixing=True)
    session, files = _load(args)
    if _reads_stdin(args):
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
    name = _stdin_name(args)
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


def cmd_rules(_: argparse.Namespace) -> int:
    from deadline_lint.families.registry import all_rules

    print(f"{'code':6}  {'name':40}  {'default':7}  fix")
    for code, tool in TOOL_CODES.items():
        print(f"{code:6}  {tool.name:40}  {'on':7}  -")
    for code, cls in all_rules().items():
        fix = cls.fix_applicability.value if cls.fix_applicability else "-"
        print(f"{code:6}  {cls.name:40}  {'on' if cls.default_enabled else 'opt-in':7}  {fix}")
    return EXIT_CLEAN


def cmd_explain(args: argparse.Namespace) -> int:
    """The rule's page from docs/rules/, word for word (without its "generated" comment)."""
    from deadline_lint.families.registry import all_rules
    from deadline_lint.frontends.docs import GENERATED, rule_page, tool_page

    code = args.code.upper()
    rules = all_rules()
    page = rule_page(rules[code]) if code in rules else tool_page(TOOL_CODES[code]) if code in TOOL_CODES else None
    if page is not None:
        sys.stdout.write(page.replace(GENERATED + "\n", "", 1))
        return EXIT_CLEAN
    print(f"deadline-lint: unknown rule code {args.code!r} (see `deadline-lint rules`)", file=sys.stderr)
    return EXIT_ERROR


def cmd_server(_: argparse.Namespace) -> int:
    from deadline_lint.frontends.server import run

    return run()


COMMANDS = {"check": cmd_check, "fix": cmd_fix, "rules": cmd_rules, "explain": cmd_explain, "server": cmd_server}


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except ProfileError as exc:
        print(f"deadline-lint: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"deadline-lint: interrupted{_written_so_far()}", file=sys.stderr)
        return 130
    except WorkerLost as exc:
        print(f"deadline-lint: {exc}{_written_so_far()}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:  # the reader went away: the status stays what the findings say
        silence_stdout()
        return _verdict_so_far(args)
    finally:
        writes = _fixing_writes()
        if writes is not None:
            writes.stop_counting()


def _verdict_so_far(args: argparse.Namespace) -> int:
    """The status of a run whose reader closed the pipe: what its findings gave, once known;
    before that, a check or fix cannot claim success."""
    verdict = getattr(args, "verdict", None)
    if verdict is not None:
        return verdict
    return EXIT_FINDINGS if args.command in ("check", "fix", "adopt") else EXIT_CLEAN


def _written_so_far() -> str:
    """For a run that ends early: how many files `fix` had written (nothing for `check`)."""
    writes = _fixing_writes()
    written = None if writes is None else writes.writes_counted()
    return "" if written is None else (
        f"; {written} file{'' if written == 1 else 's'} already fixed and written, every other file untouched"
    )


def run() -> None:
    """The console script and `python -m deadline_lint`. A reader that closed the pipe early
    must not turn the findings' exit status into a traceback at interpreter exit."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        silence_stdout()
    sys.exit(code)


def _fixing_writes():
    """The module counting fixed files' writes, if this run fixed anything (a check that
    never fixes never loads it)."""
    return sys.modules.get("deadline_lint.fixes.writes")


__all__ = ["main", "run"]
