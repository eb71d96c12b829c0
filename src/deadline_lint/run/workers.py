"""The one process pool, for checking and fixing many files (api.lint_paths / fix_paths).

Each worker has a pipe of its own to the run: it is sent one chunk of paths at a time and
sends back that chunk's results. Nothing is shared between workers (no queue, no lock), so a
worker that stops at any moment, even halfway through sending a result, costs only its own
pipe: the run reads the end of it, and ends as interrupted when the worker was stopped by
SIGTERM or SIGINT, or with what did happen otherwise (killed by SIGKILL, the out-of-memory
killer's signal, or exited by itself: worker_exits.py). (concurrent.futures' pool shares
one result queue and its lock between its workers: a worker stopped while sending left the
run waiting forever for the rest of a message and the other worker waiting for the lock.)

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
import multiprocessing
import os
import signal
import sys
import threading
import traceback
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from deadline_lint.run.worker_exits import lost_worker

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_WATCH_SECONDS = 0.2  # the fallback's look at the parent
_STOPPING = (signal.SIGTERM, signal.SIGINT)
_EXIT_WAIT_SECONDS = 10.0  # a worker whose pipe closed is exiting; past this, call it stopped


class _Stopped(BaseException):
    """Raised in a worker by SIGTERM / SIGINT while it works: not an Exception, so no rule's
    `except Exception` can swallow it, and `finally` blocks (a write's clean-up) still run."""


class _RemoteTraceback(Exception):
    """The traceback of an exception a task raised in a worker (the cause of the one raised here)."""


_working = False  # inside a task: a signal unwinds it; otherwise the worker exits at once
_stopping = False  # a stopping signal arrived: the worker ends, whatever the task makes of it


def run(
    options: Any, task: Callable[[Any, Sequence[str]], List[Any]], paths: Sequence[str], workers: int
) -> Iterator[List[Any]]:
    """`task(options, chunk)` over chunks of `paths` in `workers` processes; the chunks'
    results in order."""
    size = max(1, len(paths) // (workers * 4))
    chunks = [paths[i:i + size] for i in range(0, len(paths), size)]
    pool = _Pool(functools.partial(_call, task, options))
    try:
        pool.start(min(workers, len(chunks)))
        yield from pool.map(chunks)
    finally:
        # On the way out early (Ctrl-C, an error) no chunk that has not started is started.
        pool.close()


class _Worker:
    def __init__(self, process: Any, connection: Connection) -> None:
        self.process = process
        self.connection = connection
        self.chunk: Optional[int] = None  # the index of the chunk it is working on
        self.paths: Sequence[str] = ()  # ... and its paths


class _Pool:
    def __init__(self, work: Callable[[Sequence[str]], List[Any]]) -> None:
        self.work = work
        self.workers: List[_Worker] = []
        self.broken = False  # a worker stopped: the others are stopped at once

    def start(self, count: int) -> None:
        context = multiprocessing.get_context()
        forked = context.get_start_method() == "fork"
        # A stopping signal that arrives before a worker has its handlers waits for them
        # (a forked or spawned process starts with this thread's mask), instead of meeting
        # the handler it inherited from the run (a traceback).
        masked = _block(_STOPPING)
        try:
            for _ in range(count):
                mine, theirs = context.Pipe()
                # A forked worker closes the run's ends of the pipes it inherited (its own and
                # the earlier workers'): each pipe has one worker at its far end.
                inherited = tuple(w.connection.fileno() for w in self.workers) + (mine.fileno(),) if forked else ()
                process = context.Process(target=_serve, args=(theirs, self.work, inherited, masked), daemon=True,
                                          name="deadline-lint-worker")
                try:
                    process.start()
                finally:
                    theirs.close()
                self.workers.append(_Worker(process, mine))
        finally:
            _unblock(_STOPPING, masked)

    def map(self, chunks: Sequence[Sequence[str]]) -> Iterator[List[Any]]:
        done: Dict[int, List[Any]] = {}
        sent = 0
        for worker in self.workers:
            if sent < len(chunks):
                self._send(worker, sent, chunks[sent])
                sent += 1
        for index in range(len(chunks)):
            while index not in done:
                busy = [w for w in self.workers if w.chunk is not None]
                ready = wait([w.connection for w in busy])
                for worker in [w for w in busy if w.connection in ready]:
                    finished, result = self._receive(worker)
                    done[finished] = result
                    if sent < len(chunks):
                        self._send(worker, sent, chunks[sent])
                        sent += 1
            yield done.pop(index)

    def _send(self, worker: _Worker, index: int, chunk: Sequence[str]) -> None:
        try:
            worker.connection.send((index, chunk))
        except OSError:
            raise self._lost(worker) from None
        worker.chunk = index
        worker.paths = chunk

    def _receive(self, worker: _Worker) -> Tuple[int, List[Any]]:
        """The chunk `worker` was working on and its results (a task's exception is raised here)."""
        try:
            index, ok, value = worker.connection.recv()
        except (EOFError, OSError):  # it stopped, possibly halfway through a message
            raise self._lost(worker) from None
        worker.chunk = None
        if not ok:
            error, remote = value
            raise error from _RemoteTraceback(remote)
        return index, value

    def _lost(self, worker: _Worker) -> BaseException:
        """Why the worker's pipe closed, from how its process ended."""
        self.broken = True
        worker.process.join(_EXIT_WAIT_SECONDS)  # its end of the pipe closes as it exits
        return lost_worker(worker.process.exitcode, worker.paths)

    def close(self) -> None:
        """Stop every worker. One still on a chunk finishes it first (its files are then
        whole), unless the run is interrupted: then the others stop at once."""
        for worker in self.workers:
            if worker.chunk is not None and not self.broken:
                try:
                    self._receive(worker)
                except KeyboardInterrupt:  # Interrupted (it stopped), or Ctrl-C again
                    self.broken = True
                except Exception:  # a task's error or a lost worker: the run's reason is on its way
                    pass
        for worker in self.workers:
            if self.broken:
                worker.process.terminate()
            else:
                try:
                    worker.connection.send(None)
                except OSError:
                    pass
            worker.connection.close()
        for worker in self.workers:
            worker.process.join()


def _serve(connection: Connection, work: Callable[[Sequence[str]], List[Any]], inherited: Sequence[int],
           masked: bool) -> None:
    """A worker: chunks in, their results out, until the run sends None or goes away."""
    try:
        for fd in inherited:
            os.close(fd)
        _start_worker()
        _unblock(_STOPPING, masked)
        while True:
            try:
                message = connection.recv()
            except (EOFError, OSError):
                return
            if message is None:
                return
            index, chunk = message
            outcome: Tuple[int, bool, Any]
            try:
                outcome = (index, True, work(chunk))
            except Exception as exc:
                outcome = (index, False, (exc, traceback.format_exc()))
            try:
                connection.send(outcome)
            except OSError:  # the run stopped reading
                return
            except Exception as exc:  # pickling failed (before anything was sent)
                problem = RuntimeError(f"a worker could not send its result back: {exc!r}")
                connection.send((index, False, (problem, traceback.format_exc())))
    except _Stopped:
        os._exit(128 + signal.SIGTERM)


def _block(signals: Sequence[int]) -> bool:
    """Block `signals` in this thread (a worker started from it starts with them blocked)."""
    if not hasattr(signal, "pthread_sigmask"):
        return False
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    return True


def _unblock(signals: Sequence[int], masked: bool) -> None:
    if masked:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)


def _call(task: Callable[[Any, Sequence[str]], List[Any]], options: Any, chunk: Sequence[str]) -> List[Any]:
    global _working
    _working = True
    try:
        result = task(options, chunk)
    except BaseException:
        # _Stopped, or what became of it: raised inside an import's class body it arrives as
        # a RuntimeError ("Error calling __set_name__"), which is not the task's error.
        if _stopping:
            os._exit(128 + signal.SIGTERM)  # the parent is gone or stopping us: nothing to report
        raise
    finally:
        _working = False
    if _stopping:  # the task caught it (an `except Exception` around a wrapped _Stopped)
        os._exit(128 + signal.SIGTERM)
    return result


def _start_worker() -> None:
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _on_signal)
    sys.unraisablehook = _unraisable
    _die_with_parent(os.getppid())


def _unraisable(unraisable: Any) -> None:
    """A stop that lands in a finalizer or a weakref callback (importlib's module-lock `cb`
    while a worker imports a rule lazily) cannot raise there: Python would print it with a
    traceback and carry on. The worker is stopping, so it ends now, as `_call` would."""
    if isinstance(unraisable.exc_value, _Stopped) or _stopping:
        os._exit(128 + signal.SIGTERM)
    sys.__unraisablehook__(unraisable)


def _on_signal(signum: int, frame: object) -> None:
    global _stopping
    _stopping = True
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
