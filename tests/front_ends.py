"""The front ends' own entry points (`python -m deadline_lint`, `flake8`, `pylint`), run in this
process: the same argv and working folder as the command, without an interpreter start and the
front end's imports for every run. Each front end is still run as a real command elsewhere
(test_cli, test_projects' folder checks, test_monorepo, test_config)."""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
from pathlib import Path
from typing import Callable, Dict, List, Tuple

from deadline_lint.frontends.cli import main as cli_main


def _pylint(argv: List[str]) -> int:
    from pylint.lint import Run

    return Run(argv, exit=False).linter.msg_status


def _flake8(argv: List[str]) -> int:
    from flake8.main.cli import main

    # One process: flake8's worker pool would fork this one (the command keeps the pool).
    return main(["--jobs=1", *argv])


def _flake8_deadline_lint_only(argv: List[str]) -> int:
    """flake8 without the checks it ships (pyflakes' F, pycodestyle's E and W), which run on
    every file whatever `--select` says and are a third of its time on the fixtures: the
    plugin's findings, flake8's selection, noqa handling and report are the same either way
    (the plugin is a tree plugin that reads nothing of theirs). For test_parity; the command
    with every plugin runs in test_monorepo and test_config, and in this process in
    test_projects."""
    from flake8.plugins import finder

    find = finder.find_plugins

    def without_its_own(cfg, opts):  # type: ignore[no-untyped-def]
        return [plugin for plugin in find(cfg, opts) if plugin.package not in ("pyflakes", "pycodestyle")]

    finder.find_plugins = without_its_own
    try:
        return _flake8(argv)
    finally:
        finder.find_plugins = find


IN_PROCESS: Dict[str, Callable[[List[str]], int]] = {
    "deadline_lint": cli_main, "flake8": _flake8, "pylint": _pylint,
    "flake8-deadline-lint-only": _flake8_deadline_lint_only,
}


def run_in_process(module: str, argv: List[str], cwd: Path) -> Tuple[int, str]:
    """(exit code, stderr) of `python -m <module> <argv>` run in `cwd`, in this process. The
    report must go to a file (`--output-file` and the like): stdout is not captured."""
    errors = io.StringIO()
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stderr(errors):
            code = IN_PROCESS[module](argv)
    finally:
        os.chdir(previous)
    return code, errors.getvalue()


def run_cli(argv: List[str], cwd: Path) -> "subprocess.CompletedProcess[str]":
    """`python -m deadline_lint <argv>` run in `cwd`, in this process, as `subprocess.run(...,
    capture_output=True, text=True)` reports it: exit code, stdout and stderr."""
    out, errors = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(errors):
            try:
                code = cli_main(argv)
            except SystemExit as exc:  # argparse's usage errors
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os.chdir(previous)
    out.flush()
    stdout = out.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]
    return subprocess.CompletedProcess(["deadline-lint", *argv], code, stdout, errors.getvalue())
