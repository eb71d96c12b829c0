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
import sys
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping, Optional, Sequence

from deadline_lint import __version__
from deadline_lint.frontends.adoption import add_adopt_arguments, add_edges_arguments, cmd_adopt, cmd_edges
from deadline_lint.frontends.cli_arguments import (
    Parser,
    add_check_arguments,
    add_explain_arguments,
    add_fix_arguments,
    forget_help_width,
)
from deadline_lint.frontends.cli_commands import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, cmd_check, cmd_fix
from deadline_lint.frontends.delivery import silence_stdout
from deadline_lint.run.worker_exits import WorkerLost
from deadline_lint.settings.profile import ProfileError
from deadline_lint.support.tool_codes import TOOL_CODES

# Rule docs and the server are imported where they are used: a check answered from the
# results cache starts without loading the rules or LibCST.


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
    from deadline_lint.frontends.lsp.server import run

    return run()


@dataclass(frozen=True)
class Command:
    help: str
    run: Callable[[argparse.Namespace], int]
    arguments: Optional[Callable[[argparse.ArgumentParser], None]] = None  # adds its own


# The subcommands, in the order `--help` lists them. A new one is a line here; its arguments
# and its body live in a module of their own (cli_arguments.py, cli_commands.py).
COMMANDS: Mapping[str, Command] = MappingProxyType({
    "check": Command("report problems", cmd_check, add_check_arguments),
    "fix": Command("apply safe fixes (unsafe ones too with --unsafe-fixes)", cmd_fix, add_fix_arguments),
    "rules": Command("list every rule", cmd_rules),
    "explain": Command("print a rule's documentation", cmd_explain, add_explain_arguments),
    "server": Command("run the language server on stdin/stdout (needs the `lsp` extra)", cmd_server),
    "edges": Command("list the entry points a request enters through", cmd_edges, add_edges_arguments),
    "adopt": Command(
        "mint the budget at each edge and thread it to what they reach "
        "(fix --thread-budget --unsafe-fixes, from the edges only)",
        cmd_adopt, add_adopt_arguments,
    ),
})


def build_parser() -> argparse.ArgumentParser:
    forget_help_width()
    parser = Parser(
        prog="deadline-lint",
        description="Crossing a call boundary never creates more request time.",
    )
    parser.add_argument("--version", action="version", version=f"deadline-lint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    for name, command in COMMANDS.items():
        subparser = commands.add_parser(name, help=command.help)
        if command.arguments is not None:
            command.arguments(subparser)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command].run(args)
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
