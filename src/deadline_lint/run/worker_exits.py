"""How a worker process ended, told truthfully (workers.py raises these, cli.py reports them).

A worker stopped the way a run is stopped (SIGTERM or SIGINT, to it or to the run) ends the
run as interrupted (exit 130). A worker killed by any other signal, SIGKILL above all (what
the kernel's out-of-memory killer sends), or one that exited by itself, is not an
interruption: the run ends with exit 2 and one line saying how the worker ended and which
files it had in hand, so a user can find the file that took the memory.
"""
from __future__ import annotations

import signal
from typing import Optional, Sequence

# How a worker stopped by SIGTERM / SIGINT ends: its handler's `os._exit(128 + SIGTERM)`, or
# the default action before the handler is in place.
_STOPPED_CODES = frozenset({128 + signal.SIGTERM, -signal.SIGTERM, -signal.SIGINT})
_SIGKILL = 9  # signal.SIGKILL, which Windows lacks
_NAMED = 3  # files of the lost worker's chunk named in the message


class Interrupted(KeyboardInterrupt):
    """A worker was stopped (SIGTERM or SIGINT to it): the run ends as if interrupted, every
    file untouched or completely fixed."""


class WorkerLost(Exception):
    """A worker ended in a way nobody asked for: killed by another signal (SIGKILL is what
    the out-of-memory killer sends), or exited on its own. Not an interruption: the message
    says what happened and which files it was on."""


def lost_worker(exitcode: Optional[int], paths: Sequence[str]) -> BaseException:
    """Interrupted when the worker was stopped the way a user or the system stops a run
    (SIGTERM, SIGINT: its handler exits 143, or the default action), else WorkerLost naming
    how it ended and the files it had in hand."""
    if exitcode is None or exitcode in _STOPPED_CODES:
        return Interrupted("a worker process stopped")
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        how = f"was killed by {name}"
        if -exitcode == _SIGKILL:
            how += " (the signal the out-of-memory killer sends)"
    else:
        how = f"exited with status {exitcode}"
    shown = ", ".join(paths[:_NAMED])
    more = f" and {len(paths) - _NAMED} more" if len(paths) > _NAMED else ""
    on = f" while working on {shown}{more}" if paths else ""
    return WorkerLost(f"a worker process {how}{on}; the run could not finish")
