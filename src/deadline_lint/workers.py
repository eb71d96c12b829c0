"""The one process pool, for checking and fixing many files (api.lint_paths / fix_paths).

A worker lives no longer than the process that started it: when that process dies (even by
SIGKILL, which runs no clean-up of its own) each worker stops before it reads or writes
another file. On Linux the kernel tells it (PR_SET_PDEATHSIG; strictly, when the thread that
started it ends, which is the thread iterating the run: keep iterating in that thread);
elsewhere a thread watches for the parent to change. SIGTERM or SIGINT end a worker quietly, with no traceback: a file
being written is left untouched or whole (writes.write_atomic removes its temporary file
on the way out), and the run then ends as interrupted.
"""
from __future__ import annotations

import functools
import os
import signal
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator, List, Sequence

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_WATCH_SECONDS = 0.2  # the fallback's look at the parent


class Interrupted(KeyboardInterrupt):
    """A worker was stopped (a signal to it, or the machine ran out of memory): the run ends
    as if interrupted, every file untouched or completely fixed."""


class _Stopped(BaseException):
    """Raised in a worker by SIGTERM / SIGINT while it works: not an Exception, so no rule's
    `except Exception` can swallow it, and `finally` blocks (a write's clean-up) still run."""


_working = False  # inside a task: a signal unwinds it; otherwise the worker exits at once


def run(
    options: Any, task: Callable[[Any, Sequence[str]], List[Any]], paths: Sequence[str], workers: int
) -> Iterator[List[Any]]:
    """`task(options, chunk)` over chunks of `paths` in `workers` processes; the chunks'
    results in order."""
    size = max(1, len(paths) // (workers * 4))
    chunks = [paths[i:i + size] for i in range(0, len(paths), size)]
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_start_worker)
    try:
        yield from pool.map(functools.partial(_call, task, options), chunks)
    except BrokenProcessPool:
        raise Interrupted("a worker process stopped") from None
    finally:
        # On the way out early (Ctrl-C, an error) no chunk that has not started is started.
        pool.shutdown(wait=True, cancel_futures=True)


def _call(task: Callable[[Any, Sequence[str]], List[Any]], options: Any, chunk: Sequence[str]) -> List[Any]:
    global _working
    _working = True
    try:
        return task(options, chunk)
    except _Stopped:
        os._exit(128 + signal.SIGTERM)  # the parent is gone or stopping us: nothing to report
    finally:
        _working = False


def _start_worker() -> None:
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _on_signal)
    _die_with_parent(os.getppid())


def _on_signal(signum: int, frame: object) -> None:
    if _working:
        raise _Stopped()
    os._exit(128 + signum)


def _die_with_parent(parent: int) -> None:
    """SIGTERM to this process when `parent` (the process that started it) dies."""
    if sys.platform.startswith("linux") and _pdeathsig(signal.SIGTERM):
        if os.getppid() != parent:  # it died before the kernel was told
            os.kill(os.getpid(), signal.SIGTERM)
        return
    watcher = threading.Thread(target=_watch, args=(parent,), name="deadline-lint-parent", daemon=True)
    watcher.start()


def _pdeathsig(signum: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int) -> None:
    """The portable fallback: an orphan gets a new parent (init or a subreaper)."""
    import time

    while os.getppid() == parent:
        time.sleep(_WATCH_SECONDS)
    os.kill(os.getpid(), signal.SIGTERM)
