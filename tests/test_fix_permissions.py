"""`fix` never takes a file over: a file the user may not write is refused with one line (exit
1), owner and mode never change, hard links stay one file, and a CR-only file keeps its last
line ending. The unprivileged cases run the CLI as `nobody` (through setpriv) when the suite
runs as root, since root may write anything."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from deadline_lint.frontends.cli import main

UNBUDGETED = "import requests\n\n\ndef f():\n    return requests.get('u')\n"
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
SETPRIV = shutil.which("setpriv")
needs_nobody = pytest.mark.skipif(not (AS_ROOT and SETPRIV), reason="needs root and setpriv to run as nobody")


def _fix_as_nobody(path: Path) -> subprocess.CompletedProcess:
    command = [SETPRIV, "--reuid=nobody", "--regid=nogroup", "--clear-groups",
               sys.executable, "-m", "deadline_lint", "fix", "--unsafe-fixes", str(path)]
    return subprocess.run(command, capture_output=True, text=True, cwd=path.parent)


@pytest.fixture
def shared_folder():
    """A folder nobody can reach (pytest's tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="dl-perm-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_read_only_file_is_refused_even_for_root(tmp_path: Path, capsys) -> None:
    target = tmp_path / "ro.py"
    target.write_text(UNBUDGETED)
    target.chmod(0o444)
    assert main(["fix", "--unsafe-fixes", str(target)]) == 1
    err = capsys.readouterr().err
    assert f"{target}: read-only file (mode 0444); not written" in err
    assert target.read_text() == UNBUDGETED
    assert stat.S_IMODE(target.stat().st_mode) == 0o444


@needs_nobody
@pytest.mark.parametrize("folder_mode", [0o755, 0o777], ids=["folder-not-writable", "folder-writable"])
def test_a_file_nobody_may_not_write_is_refused_and_keeps_its_owner(shared_folder: Path, folder_mode: int) -> None:
    target = shared_folder / "root_owned.py"
    target.write_text(UNBUDGETED)
    target.chmod(0o644)
    shared_folder.chmod(folder_mode)  # writable: a rename could replace the file; it must not
    proc = _fix_as_nobody(target)
    assert proc.returncode == 1, proc.stderr
    refusals = [line for line in proc.stderr.splitlines() if "not written" in line]
    assert refusals == [f"deadline-lint: {target}: permission denied: you may not write this file; not written"]
    assert "Traceback" not in proc.stderr
    status = target.stat()
    assert target.read_text() == UNBUDGETED
    assert (status.st_uid, stat.S_IMODE(status.st_mode)) == (0, 0o644)


@needs_nobody
def test_a_group_writable_file_of_someone_else_keeps_owner_and_mode(shared_folder: Path) -> None:
    target = shared_folder / "shared.py"
    target.write_text(UNBUDGETED)
    os.chown(target, 0, 65534)  # root's, group nogroup, which nobody is in
    target.chmod(0o664)
    shared_folder.chmod(0o777)
    proc = _fix_as_nobody(target)
    assert "timeout=10.0" in target.read_text(), proc.stderr
    status = target.stat()
    assert (status.st_uid, status.st_gid, stat.S_IMODE(status.st_mode)) == (0, 65534, 0o664)


def test_hard_links_stay_one_file(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text(UNBUDGETED)
    link = tmp_path / "b.py"
    os.link(target, link)
    inode = target.stat().st_ino
    assert main(["fix", "--unsafe-fixes", str(target)]) == 0
    assert target.stat().st_ino == inode and target.stat().st_nlink == 2
    assert "timeout=10.0" in link.read_text()


def test_a_cr_only_file_keeps_its_final_line_ending(tmp_path: Path) -> None:
    """The DL201 fix adds an import through LibCST, which dropped a lone final CR."""
    target = tmp_path / "cr.py"
    target.write_bytes(b"from time import time\rdef wait(probe, timeout):\r    deadline = time() + timeout\r"
                       b"    while time() < deadline:\r        probe()\r")
    assert main(["fix", str(target)]) == 0
    data = target.read_bytes()
    assert b"monotonic() < deadline" in data
    assert data.endswith(b"probe()\r") and b"\n" not in data


def test_ctrl_c_during_fix_says_how_many_files_were_written(tmp_path: Path, monkeypatch, capsys) -> None:
    import deadline_lint.fixes.loop as fixes

    paths = []
    for index in range(4):
        path = tmp_path / f"m{index}.py"
        path.write_text(UNBUDGETED)
        paths.append(str(path))
    calls = []
    real = fixes.fix_file

    def interrupted_on_the_third(*args, **kwargs):
        calls.append(args[1])
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(fixes, "fix_file", interrupted_on_the_third)
    assert main(["fix", "--unsafe-fixes", "--jobs", "1", *paths]) == 130
    err = capsys.readouterr().err
    assert "deadline-lint: interrupted; 2 files already fixed and written, every other file untouched" in err
    assert [("timeout=10.0" in Path(p).read_text()) for p in paths] == [True, True, False, False]
