"""Worker processes live no longer than the run that started them (issue 19, defect 2)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the workers")

SOURCE = "import requests\n\n\n" + "".join(
    f"def call_{n}(url):\n    return requests.get(url)\n\n\n" for n in range(60)
)


def many_files(folder: Path, count: int = 400) -> List[Path]:
    folder.mkdir()
    paths = [folder / f"svc_{n}.py" for n in range(count)]
    for path in paths:
        path.write_text(SOURCE)
    return paths


def start(args: List[str], cwd: Path) -> "subprocess.Popen[bytes]":
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "deadline_lint", *args], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


def children(parent: int) -> List[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it runs no code)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def written(paths: List[Path]) -> Dict[Path, int]:
    return {path: path.stat().st_mtime_ns for path in paths}


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def workers_at_work(proc: "subprocess.Popen[bytes]", paths: List[Path], fixing: bool) -> List[int]:
    """The run's workers, once they are at work (fixing: once the first file was written)."""
    if fixing:
        before = written(paths)
        assert wait_for(lambda: written(paths) != before, 60), "no file was ever fixed"
    else:
        assert wait_for(lambda: len(children(proc.pid)) >= 2, 60)
    workers = children(proc.pid)
    assert workers, "the run has no worker processes"
    return workers


@pytest.mark.parametrize("command", [["fix", "--unsafe-fixes"], ["check", "--no-cache"]])
def test_workers_stop_when_the_run_is_killed(tmp_path: Path, command: List[str]) -> None:
    paths = many_files(tmp_path / "tree")
    proc = start([*command, "--jobs", "2", "tree"], tmp_path)
    workers: List[int] = []
    try:
        workers = workers_at_work(proc, paths, fixing=command[0] == "fix")
        proc.kill()  # SIGKILL: the run gets no chance to stop them itself
        proc.wait()
        assert wait_for(lambda: not any(alive(pid) for pid in workers), 5), "workers outlived the run"
        after = written(paths)
        time.sleep(1)
        assert written(paths) == after  # nothing written once they are gone
    finally:
        proc.kill()
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert not list((tmp_path / "tree").glob("*.tmp*")) and len(list((tmp_path / "tree").iterdir())) == len(paths)


@pytest.mark.parametrize("command", [["fix", "--unsafe-fixes"], ["check", "--no-cache"]])
def test_a_terminated_worker_ends_the_run_quietly(tmp_path: Path, command: List[str]) -> None:
    paths = many_files(tmp_path / "tree")
    proc = start([*command, "--jobs", "2", "tree"], tmp_path)
    try:
        workers = workers_at_work(proc, paths, fixing=command[0] == "fix")
        os.kill(workers[0], signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert b"Traceback" not in err, err.decode(errors="replace")
    assert proc.returncode == 130, err.decode(errors="replace")
    last = err.decode().strip().splitlines()[-1]
    # `fix` also says how many files it had written before the stop; `check` writes none.
    if command[0] == "fix":
        stopped = r"deadline-lint: interrupted; \d+ files? already fixed and written, every other file untouched"
        assert re.fullmatch(stopped, last), last
    else:
        assert last == "deadline-lint: interrupted"


@pytest.mark.parametrize("command", [["fix", "--unsafe-fixes"], ["check", "--no-cache"]])
def test_a_worker_killed_by_sigkill_is_reported_as_killed(tmp_path: Path, command: List[str]) -> None:
    """What the out-of-memory killer does to a worker is not an interruption (issue 35,
    item 7): the run says which signal and which files, and exits 2."""
    paths = many_files(tmp_path / "tree")
    proc = start([*command, "--jobs", "2", "tree"], tmp_path)
    try:
        workers = workers_at_work(proc, paths, fixing=command[0] == "fix")
        os.kill(workers[0], signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert b"Traceback" not in err, err.decode(errors="replace")
    assert proc.returncode == 2, err.decode(errors="replace")
    last = err.decode().strip().splitlines()[-1]
    killed = (r"deadline-lint: a worker process was killed by SIGKILL \(the signal the out-of-memory killer "
              r"sends\) while working on tree/svc_\d+\.py, .* and \d+ more; the run could not finish")
    if command[0] == "fix":
        killed += r"; \d+ files? already fixed and written, every other file untouched"
    assert re.fullmatch(killed, last), last
    assert "interrupted" not in err.decode()


def test_how_a_worker_ended_is_named() -> None:
    from deadline_lint.run.worker_exits import Interrupted, WorkerLost, lost_worker

    assert isinstance(lost_worker(143, ["a.py"]), Interrupted)  # its SIGTERM handler's exit
    assert isinstance(lost_worker(-signal.SIGINT, ["a.py"]), Interrupted)
    assert isinstance(lost_worker(None, ["a.py"]), Interrupted)  # still exiting: nothing known
    segv = lost_worker(-signal.SIGSEGV, ["a.py"])
    assert isinstance(segv, WorkerLost) and str(segv) == (
        "a worker process was killed by SIGSEGV while working on a.py; the run could not finish"
    )
    assert str(lost_worker(1, [])) == "a worker process exited with status 1; the run could not finish"


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def blocked(pids: List[int], polls: int = 10) -> bool:
    """Each process asleep, its CPU time unchanged over `polls` looks."""
    before = {pid: cpu_ticks(pid) for pid in pids}
    for _ in range(polls):
        time.sleep(0.05)
        if any(state(pid) != "S" or cpu_ticks(pid) != before[pid] for pid in pids):
            return False
    return True


def test_workers_stopped_while_handing_back_results_end_the_run_quietly(tmp_path: Path) -> None:
    """The moment of issue 19's intermittent hang, chosen: the run is stopped (SIGSTOP), so
    the workers block handing back their first chunk's results, which are larger than a pipe
    holds; each is sent SIGTERM halfway through its message. concurrent.futures' pool shares
    one result pipe and its lock between its workers: the run then waited forever for the
    rest of the message. It must end, interrupted."""
    many_files(tmp_path / "tree")
    proc = start(["check", "--no-cache", "--jobs", "2", "tree"], tmp_path)
    workers: List[int] = []
    try:
        workers = workers_at_work(proc, [], fixing=False)
        ticks = {pid: cpu_ticks(pid) for pid in workers}
        # At work on a chunk each (so each has one to hand back), then the run stops reading.
        assert wait_for(lambda: all(cpu_ticks(pid) > ticks[pid] for pid in workers), 60)
        os.kill(proc.pid, signal.SIGSTOP)
        assert wait_for(lambda: blocked(workers), 120), "the workers never blocked on the stopped run"
        for pid in workers:
            os.kill(pid, signal.SIGTERM)
        os.kill(proc.pid, signal.SIGCONT)
        try:
            _, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            pytest.fail("the run never ended: it waits for the rest of a stopped worker's result")
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert b"Traceback" not in err, err.decode(errors="replace")
    assert proc.returncode == 130, err.decode(errors="replace")
    assert err.decode().strip().splitlines()[-1] == "deadline-lint: interrupted"


def test_a_stop_that_lands_in_a_finalizer_ends_the_worker_without_a_traceback(tmp_path: Path) -> None:
    """SIGTERM while a worker imports lazily can arrive in importlib's module-lock callback,
    where an exception cannot propagate: Python printed `Exception ignored in ... Traceback`
    and the worker carried on. It now ends with its stop status and prints nothing."""
    script = (
        "from deadline_lint.run import workers\n"
        "workers._start_worker()\n"
        "class Finalized:\n"
        "    def __del__(self):\n"
        "        raise workers._Stopped()\n"
        "Finalized()\n"
        "print('carried on')\n"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=60)
    assert done.returncode == 128 + signal.SIGTERM, done
    assert b"Traceback" not in done.stderr and b"carried on" not in done.stdout
