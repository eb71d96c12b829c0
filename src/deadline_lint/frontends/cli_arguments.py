"""The command line's arguments: the options `check` and `fix` share (which files, which
profile and codes, how to fix), the help width, and their translation into the run's
`Options`; also loading a run's files and the flags that would do nothing."""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Tuple

from deadline_lint.cache.results import CACHE_DIR_ENV, CACHE_DIR_NAME, default_cache_dir
from deadline_lint.frontends.output import WRITERS
from deadline_lint.run.api import Options, Session
from deadline_lint.run.selection import parse_selectors
from deadline_lint.settings.profile import ProfileError


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of processes from 1, got {value!r}")
    return number


def add_selection(parser: argparse.ArgumentParser) -> None:
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


def add_fix_options(parser: argparse.ArgumentParser) -> None:
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


def forget_help_width() -> None:
    _WIDTH.clear()


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


class Parser(argparse.ArgumentParser):
    def _get_formatter(self) -> argparse.HelpFormatter:
        return self.formatter_class(prog=self.prog, width=_help_width())  # type: ignore[call-arg]


def add_check_arguments(check: argparse.ArgumentParser) -> None:
    add_selection(check)
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
    add_fix_options(check)


def add_fix_arguments(fix: argparse.ArgumentParser) -> None:
    add_selection(fix)
    add_fix_options(fix)
    fix.add_argument("--exit-zero", action="store_true", help="exit 0 even when problems remain")


def add_explain_arguments(explain: argparse.ArgumentParser) -> None:
    explain.add_argument("code")


def options_of(args: argparse.Namespace) -> Options:
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


def reads_stdin(args: argparse.Namespace) -> bool:
    if "-" in args.paths and args.paths != ["-"]:
        raise ProfileError("-: stdin cannot be combined with other paths")
    return args.paths == ["-"]


def stdin_name(args: argparse.Namespace) -> str:
    return args.stdin_filename or "-"


def load(args: argparse.Namespace) -> Tuple[Session, List[str]]:
    """Each file's checker comes from its own profile (config.py), so the order and grouping
    of the paths never changes a file's findings."""
    options = options_of(args)
    session = Session(options)
    if reads_stdin(args):
        session.checker(os.path.abspath(stdin_name(args)))  # a broken profile: exit 2 now
        files: List[str] = []
    else:
        files, args.unlistable = session.files(args.paths)
    for warning in session.checkers.resolver.warnings():
        print(f"deadline-lint: warning: {warning}", file=sys.stderr)
    return session, files


def unused_flags(args: argparse.Namespace, fixing: bool) -> None:
    """A flag that would do nothing is a usage error, not silently ignored."""
    if args.stdin_filename and "-" not in args.paths:
        raise ProfileError("--stdin-filename: only applies when reading stdin (pass `-` as the path)")
    if not fixing:
        for flag in ("unsafe_fixes", "thread_budget", "exit_non_zero_on_fix"):
            if getattr(args, flag, False):
                raise ProfileError(f"--{flag.replace('_', '-')}: only applies with --fix (or `deadline-lint fix`)")
