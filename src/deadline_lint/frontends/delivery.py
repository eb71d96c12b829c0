"""Getting a report to its reader, and the exit status that tells the truth when it cannot.

Two ways a report fails to arrive, told apart because CI reads the status:

- The reader closed the pipe early (`deadline-lint check . | head -1`). The findings are what
  they are, so the status is the one they give (1 with findings): under `set -o pipefail` a
  tree full of findings never passes. ruff (like ripgrep) exits 0 here; that turns findings
  into success, which is the one thing a checker's status must not do. Nothing is printed:
  the reader asked for less output, not for an error.
- The report could not be written (a full disk, `/dev/full`, a folder that is not there):
  one line naming where, and `EXIT_ERROR` (2), the tool's own failure, never 0.
"""
from __future__ import annotations

import os
import sys
from typing import Callable, Optional, TextIO

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

# Undecodable bytes of a file name (a surrogate escape) go out as the same bytes in a plain
# text report, as `ls` shows them; the JSON and SARIF writers spell such names themselves.
TEXT_ERRORS = "surrogateescape"


def deliver(write: Callable[[TextIO], None], output_file: Optional[str], verdict: int) -> int:
    """Run `write` on the report's stream (`output_file`, else stdout) and flush it; the exit
    status: `verdict`, also when the reader went away, or EXIT_ERROR (with one line on
    stderr) when the report could not be written."""
    where = output_file or "stdout"
    try:
        if output_file:
            with open(output_file, "w", encoding="utf-8", errors=TEXT_ERRORS) as out:
                write(out)
        else:
            _tolerate_escaped_names(sys.stdout)
            write(sys.stdout)
            sys.stdout.flush()
    except BrokenPipeError:
        if not output_file:
            silence_stdout()
        return verdict
    except OSError as exc:
        if not output_file:
            silence_stdout()  # else the interpreter's last flush fails again, with a traceback
        print(f"deadline-lint: {where}: cannot write the report: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERROR
    return verdict


def silence_stdout() -> None:
    """Point stdout at /dev/null: what is still buffered for a reader that is gone (or a
    device that is full) is dropped instead of failing again when the interpreter exits."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):  # stdout replaced (tests) or already closed
        pass


def _tolerate_escaped_names(stream: TextIO) -> None:
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors=TEXT_ERRORS)
