"""Only regular files are read (issue 35, item 3): a FIFO named `*.py` in a walked folder or on
the command line, or a profile that is one, never hangs `check` or `fix`; it is one line and a
tool code (DL006 for a file to check, exit 2 for a profile or baseline)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")

BAD = "import requests\nrequests.get('u')\n"
FIFO_DL006 = "b.py:1:1: DL006 cannot read file: not a regular file (a FIFO)"
# Not a time limit on the tool: the guard that turns a hang (nobody ever writes to the FIFO)
# into a failure instead of a suite that never ends.
HANG_GUARD_SECONDS = 300


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "deadline_lint", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=HANG_GUARD_SECONDS)


@pytest.fixture
def tree(tmp_path) -> Path:
    (tmp_path / "a.py").write_text(BAD)
    os.mkfifo(tmp_path / "b.py")
    return tmp_path


@pytest.mark.parametrize("cached", [True, False])
@pytest.mark.parametrize("named", [["."], ["a.py", "b.py"]])
def test_check_reports_a_fifo_and_checks_the_rest(tree, named, cached) -> None:
    cache = ["--cache-dir", str(tree / "cache")] if cached else ["--no-cache"]
    for _ in range(2 if cached else 1):  # the cold run, then the warm one
        done = run(tree, "check", *cache, *named)
        lines = done.stdout.splitlines()
        assert done.returncode == 1, done.stderr
        assert FIFO_DL006 in lines and lines[0].startswith("a.py:2:1: DL101")
        assert lines[-1].startswith("Found 2 problems in 2 of 2 files checked")


def test_fix_reports_a_fifo_and_fixes_the_rest(tree) -> None:
    done = run(tree, "fix", "--unsafe-fixes", ".")
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0] == FIFO_DL006
    assert "timeout=" in (tree / "a.py").read_text()


@pytest.mark.parametrize("how", ["--profile", "pyproject"])
def test_a_profile_that_is_a_fifo_is_one_line_and_exit_2(tmp_path, how) -> None:
    (tmp_path / "a.py").write_text(BAD)
    os.mkfifo(tmp_path / "profile.yaml")
    if how == "pyproject":
        (tmp_path / "pyproject.toml").write_text('[tool.deadline-lint]\nprofile = "profile.yaml"\n')
        args = ["a.py"]
        shown = str(tmp_path / "profile.yaml")
    else:
        args = ["--profile", "profile.yaml", "a.py"]
        shown = "profile.yaml"
    for command in (["check", "--no-cache"], ["fix"]):
        done = run(tmp_path, *command, *args)
        assert done.returncode == 2
        assert done.stderr == f"deadline-lint: {shown}: cannot be read: not a regular file (a FIFO)\n"


def test_a_baseline_that_is_a_fifo_is_one_line_and_exit_2(tmp_path) -> None:
    (tmp_path / "a.py").write_text(BAD)
    os.mkfifo(tmp_path / "base.json")
    done = run(tmp_path, "check", "--no-cache", "--baseline", "base.json", "a.py")
    assert done.returncode == 2
    assert done.stderr == "deadline-lint: base.json: cannot read the baseline: not a regular file (a FIFO)\n"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_is_not_read(tmp_path) -> None:
    from deadline_lint.engine.reading import read_file
    from deadline_lint.support.regular_files import NotRegularFile, open_regular

    with pytest.raises(NotRegularFile, match=r"not a regular file \(a character device\)"):
        open_regular("/dev/zero")
    found = read_file("/dev/zero")
    assert not hasattr(found, "data") and found.code == "DL006"  # type: ignore[union-attr]
    with pytest.raises(NotRegularFile, match=r"\(a folder\)"):
        open_regular(str(tmp_path))
