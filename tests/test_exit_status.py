"""The exit status tells the truth when the report cannot reach its reader (issue 35, items 1
and 4): a reader that closes the pipe early never turns findings into success, a report that
cannot be written is one line and exit 2, every format survives a file name that is not
UTF-8, and `--add-noqa` does every file it can write."""
from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deadline_lint.frontends.cli import main

BAD = "import requests\nrequests.get('u')\n"
# Enough findings that the report is far larger than a pipe's buffer (64 KiB on Linux), so
# the writer is still writing when the reader has gone.
MANY = "import requests\n" + "requests.get('u')\n" * 3000


class _Refusing(io.StringIO):
    """A stdout whose reader is gone (or whose device is full) once `after` writes went in."""

    def __init__(self, error: OSError, after: int = 0) -> None:
        super().__init__()
        self.error, self.after = error, after

    def write(self, text: str) -> int:
        if self.after <= 0:
            raise self.error
        self.after -= 1
        return super().write(text)


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "svc.py").write_text(BAD)
    (tmp_path / "clean.py").write_text("x = 1\n")
    return tmp_path


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_a_reader_that_closes_early_leaves_the_findings_status(tree, monkeypatch, fmt) -> None:
    monkeypatch.setattr(sys, "stdout", _Refusing(BrokenPipeError(errno.EPIPE, "Broken pipe")))
    assert main(["check", "--no-cache", "--format", fmt, "."]) == 1
    monkeypatch.setattr(sys, "stdout", _Refusing(BrokenPipeError(errno.EPIPE, "Broken pipe")))
    assert main(["check", "--no-cache", "--format", fmt, "--exit-zero", "."]) == 0
    monkeypatch.setattr(sys, "stdout", _Refusing(BrokenPipeError(errno.EPIPE, "Broken pipe")))
    assert main(["check", "--no-cache", "--format", fmt, "clean.py"]) == 0


def test_fix_keeps_its_status_when_the_reader_closes_early(tree, monkeypatch) -> None:
    (tree / "svc.py").write_text("import requests\nrequests.get('u', timeout=None)\n")  # unsafe fix only
    monkeypatch.setattr(sys, "stdout", _Refusing(BrokenPipeError(errno.EPIPE, "Broken pipe")))
    assert main(["fix", "."]) == 1
    monkeypatch.setattr(sys, "stdout", _Refusing(BrokenPipeError(errno.EPIPE, "Broken pipe")))
    assert main(["fix", "--diff", "--unsafe-fixes", "."]) == 1


def test_check_piped_into_head_fails_under_pipefail(tmp_path) -> None:
    (tmp_path / "svc.py").write_text(MANY)
    command = [sys.executable, "-m", "deadline_lint", "check", "--no-cache", "."]
    with subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()  # what `head -1` does after its line
        err = process.stderr.read().decode()
        status = process.wait()
    assert first.startswith(b"svc.py:2:1: DL101")
    assert status == 1
    assert err == ""  # the reader asked for less output, not for an error


def test_a_full_stdout_is_one_line_and_exit_2(tree, monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "stdout", _Refusing(OSError(errno.ENOSPC, "No space left on device"), after=0))
    assert main(["check", "--no-cache", "."]) == 2
    assert capsys.readouterr().err == "deadline-lint: stdout: cannot write the report: No space left on device\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("where", ["--output-file", "stdout"])
@pytest.mark.parametrize("files", [["svc.py"], ["clean.py"]])
def test_dev_full_is_one_line_and_exit_2_never_a_traceback(tree, where, files) -> None:
    command = [sys.executable, "-m", "deadline_lint", "check", "--no-cache", *files]
    if where == "stdout":
        with open("/dev/full", "w") as full:
            done = subprocess.run(command, cwd=tree, stdout=full, stderr=subprocess.PIPE, text=True)
        shown = "stdout"
    else:
        done = subprocess.run([*command, "--output-file", "/dev/full"], cwd=tree, capture_output=True, text=True)
        shown = "/dev/full"
    assert done.returncode == 2
    assert done.stderr == f"deadline-lint: {shown}: cannot write the report: No space left on device\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_fix_report_to_dev_full_is_exit_2_after_writing_the_fixes(tree) -> None:
    (tree / "b.py").write_text("import requests\ndef f(u, budget):\n    requests.get(u)\n")
    done = subprocess.run([sys.executable, "-m", "deadline_lint", "fix", "b.py", "--diff"], cwd=tree,
                          stdout=open("/dev/full", "w"), stderr=subprocess.PIPE, text=True)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == "deadline-lint: stdout: cannot write the report: No space left on device"


@pytest.fixture
def undecodable_name(tmp_path, monkeypatch) -> str:
    if sys.platform == "darwin" or sys.platform.startswith("win"):
        pytest.skip("the file system insists on Unicode names")
    monkeypatch.chdir(tmp_path)
    with open(os.path.join(os.fsencode(tmp_path), b"bad\xff.py"), "wb") as out:
        out.write(BAD.encode())
    return os.fsdecode(b"bad\xff.py")


def test_sarif_names_a_file_that_is_not_utf8_by_its_bytes(undecodable_name, capsys) -> None:
    assert main(["check", "--no-cache", "--format", "sarif", "--output-file", "out.sarif", "."]) == 1
    with open("out.sarif", encoding="utf-8") as handle:  # strict: the whole document is UTF-8
        document = json.load(handle)
    (result,) = document["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bad%FF.py"


def test_json_never_holds_a_lone_surrogate(undecodable_name, capsys) -> None:
    assert main(["check", "--no-cache", "--format", "json", "."]) == 1
    out = capsys.readouterr().out
    (finding,) = json.loads(out)
    assert finding["path"] == "bad\ufffd.py"
    assert "\\udc" not in out  # a strict parser (Go's, serde's) rejects an escaped lone surrogate


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_text_reports_name_the_file_by_its_bytes(undecodable_name, fmt) -> None:
    assert main(["check", "--no-cache", "--format", fmt, "--output-file", "out.txt", "."]) == 1
    with open("out.txt", "rb") as handle:
        assert b"bad\xff.py" in handle.read()


def test_add_noqa_does_every_file_it_may_write_and_says_what_it_could_not(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(BAD)
    (tmp_path / "a.py").chmod(0o444)  # refused even for root: the writer honours the mode
    try:
        status = main(["check", "--no-cache", "--add-noqa", "."])
    finally:
        (tmp_path / "a.py").chmod(0o644)
    err = capsys.readouterr().err
    assert status == 1
    assert (tmp_path / "a.py").read_text() == BAD
    for name in ("b.py", "c.py"):
        assert (tmp_path / name).read_text() == BAD.replace("('u')\n", "('u')  # noqa: DL101\n")
    assert err.splitlines() == [
        "deadline-lint: a.py: not written: read-only file (mode 0444); not written",
        "Added 2 noqa directives in 2 files; 1 not added in 1 file that could not be written.",
    ]
