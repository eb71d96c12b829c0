"""Safe writes: a fixed file keeps its encoding, BOM, newlines and mode; a file changed on disk
meanwhile is not overwritten; an interrupted run leaves no torn file."""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import deadline_lint.fixes.writes as writes
from deadline_lint.engine.checker import Checker
from deadline_lint.fixes.loop import FixMode, fix_file
from deadline_lint.fixes.writes import (
    TEMP_SUFFIX,
    WriteRefused,
    match_newlines,
    newline_style,
    read_snapshot,
    write_atomic,
)

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "import requests\n\n\ndef health(budget):\n    return requests.get('http://inventory/health').ok\n"
AFTER = BEFORE.replace("/health')", "/health', timeout=budget.timeout())")


def leftovers(folder: Path) -> list:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(TEMP_SUFFIX))


def fix(path: Path):
    return fix_file(Checker(), str(path), FixMode())


# -- what is kept ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "prefix, encoding",
    [
        (b"", "utf-8"),
        (b"\xef\xbb\xbf", "utf-8"),
        (b"# -*- coding: latin-1 -*-\n", "latin-1"),
        (b"# vim: set fileencoding=cp1252 :\n", "cp1252"),
    ],
    ids=["utf-8", "bom", "latin-1-cookie", "cp1252-cookie"],
)
def test_encoding_and_bom_are_kept(tmp_path: Path, prefix: bytes, encoding: str) -> None:
    body = "# café, naïve: ß\n" + BEFORE
    path = tmp_path / "svc.py"
    path.write_bytes(prefix + body.encode(encoding))
    assert fix(path).written
    expected = prefix + ("# café, naïve: ß\n" + AFTER).encode(encoding)
    assert path.read_bytes() == expected


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_newline_style_is_kept_even_for_added_lines(tmp_path: Path, newline: str) -> None:
    # The DL101 fix adds no newline; a multi-line argument list adds one (the own-line layout).
    source = "import requests\n\ndef f(url, budget):\n    requests.get(\n        url,\n    )\n"
    path = tmp_path / "svc.py"
    path.write_bytes(source.replace("\n", newline).encode())
    assert fix(path).written
    expected = source.replace("        url,\n", "        url,\n        timeout=budget.timeout(),\n")
    assert path.read_bytes() == expected.replace("\n", newline).encode()


def test_newline_helpers() -> None:
    assert newline_style("a\r\nb\r\n") == "\r\n"
    assert newline_style("a\nb\r\n") is None
    assert newline_style("a") is None
    assert match_newlines("a\r\nb\r\n", "a\r\nx\ny\r\n") == "a\r\nx\r\ny\r\n"
    assert match_newlines("a\rb\r", "a\rx\ny\r") == "a\rx\ry\r"
    assert match_newlines("a\nb\r\n", "a\nx\n") == "a\nx\n"  # mixed: left alone


def test_mode_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "tool.py"
    path.write_text(BEFORE)
    path.chmod(0o751)
    assert fix(path).written
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert path.read_text() == AFTER


def test_a_symlink_stays_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "real.py"
    target.write_text(BEFORE)
    link = tmp_path / "link.py"
    link.symlink_to(target)
    assert fix(link).written
    assert link.is_symlink()
    assert target.read_text() == AFTER


def test_text_that_cannot_be_encoded_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "svc.py"
    path.write_bytes(b"# -*- coding: ascii -*-\nx = 1\n")
    snapshot = read_snapshot(str(path))
    with pytest.raises(WriteRefused, match="cannot be encoded as ascii"):
        write_atomic(snapshot, "# -*- coding: ascii -*-\nx = 'é'\n")
    assert path.read_bytes() == b"# -*- coding: ascii -*-\nx = 1\n"
    assert leftovers(tmp_path) == []


# -- changed on disk meanwhile -----------------------------------------------------------------
def test_a_file_changed_since_it_was_read_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "svc.py"
    path.write_text(BEFORE)
    snapshot = read_snapshot(str(path))
    path.write_text(BEFORE + "# edited meanwhile\n")
    with pytest.raises(WriteRefused, match="changed on disk"):
        write_atomic(snapshot, AFTER)
    assert path.read_text() == BEFORE + "# edited meanwhile\n"
    assert leftovers(tmp_path) == []


def test_same_size_edit_with_the_old_mtime_is_still_caught(tmp_path: Path) -> None:
    path = tmp_path / "svc.py"
    path.write_text(BEFORE)
    snapshot = read_snapshot(str(path))
    path.write_text(BEFORE.replace("health", "HEALTH"))
    os.utime(path, ns=(snapshot.mtime_ns, snapshot.mtime_ns))  # same size, same mtime
    with pytest.raises(WriteRefused):
        write_atomic(snapshot, AFTER)
    assert "HEALTH" in path.read_text()


def test_concurrent_edit_during_fix_is_reported_by_the_cli(tmp_path: Path, monkeypatch, capsys) -> None:
    import deadline_lint.fixes.loop as fixes
    from deadline_lint.frontends.cli import main

    path = tmp_path / "svc.py"
    path.write_text(BEFORE)
    real_fix_text = fixes.fix_text

    def fix_text_while_someone_edits(*args, **kwargs):
        result = real_fix_text(*args, **kwargs)
        path.write_text(BEFORE + "# saved from the editor\n")
        return result

    monkeypatch.setattr(fixes, "fix_text", fix_text_while_someone_edits)
    assert main(["fix", str(path)]) == 1
    assert path.read_text() == BEFORE + "# saved from the editor\n"
    captured = capsys.readouterr()
    assert f"deadline-lint: {path}: the file changed on disk while being fixed; not overwritten" in captured.err
    assert "Fixed 0 problems" in captured.out


# -- interrupted writes ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "error", [OSError(28, "No space left on device"), KeyboardInterrupt()], ids=["disk-full", "ctrl-c"]
)
def test_a_write_that_fails_halfway_leaves_the_original_and_no_temp_file(tmp_path: Path, monkeypatch, error) -> None:
    path = tmp_path / "svc.py"
    path.write_text(BEFORE)

    def half_then_fail(handle, data):
        handle.write(data[: len(data) // 2])
        handle.flush()
        raise error

    monkeypatch.setattr(writes, "_write_all", half_then_fail)
    if isinstance(error, KeyboardInterrupt):
        with pytest.raises(KeyboardInterrupt):
            fix(path)
    else:
        outcome = fix(path)
        assert outcome.refused and "No space left" in outcome.refused and not outcome.written
    assert path.read_text() == BEFORE
    assert leftovers(tmp_path) == []


def test_a_stop_right_after_the_temporary_file_is_created_removes_it(tmp_path: Path, monkeypatch) -> None:
    """A worker's SIGTERM raises wherever it lands: here, the instant the temporary file exists,
    before anything was written to it (a flaky leftover in test_workers before the fix)."""
    path = tmp_path / "svc.py"
    path.write_text(BEFORE)
    real_open = os.open

    def open_then_stop(name, flags, mode=0o777, **kwargs):
        fd = real_open(name, flags, mode, **kwargs)
        if str(name).endswith(writes.TEMP_SUFFIX):
            os.close(fd)
            raise KeyboardInterrupt  # what _Stopped is to the write: a BaseException
        return fd

    monkeypatch.setattr(os, "open", open_then_stop)
    with pytest.raises(KeyboardInterrupt):
        fix(path)
    assert path.read_text() == BEFORE
    assert leftovers(tmp_path) == []


def test_an_unwritable_folder_is_reported_not_raised(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root can write anywhere")
    path = tmp_path / "svc.py"
    path.write_text(BEFORE)
    tmp_path.chmod(0o555)
    try:
        outcome = fix(path)
    finally:
        tmp_path.chmod(0o755)
    assert outcome.refused and path.read_text() == BEFORE


# A child process runs `deadline-lint fix` over three files; the second write stops halfway
# (signalling that it has) and the parent kills the child right there.
CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import deadline_lint.fixes.writes as writes
    from deadline_lint.frontends.cli import main

    folder = Path(sys.argv[1])
    calls = []

    def stall_on_the_second_file(handle, data):
        calls.append(1)
        if len(calls) < 2:
            handle.write(data)
            return
        handle.write(data[: len(data) // 2])
        handle.flush()
        (folder.parent / "stalled").write_text("halfway")
        time.sleep(300)

    writes._write_all = stall_on_the_second_file
    sys.exit(main(["fix", "--jobs", "1", str(folder)]))
    """
)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_killing_fix_mid_write_leaves_each_file_original_or_fully_fixed(tmp_path: Path, sig) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (folder / name).write_text(BEFORE)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(folder)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 120  # generous: only guards against a hung test
        while not (tmp_path / "stalled").exists():
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the child never reached the second write"
            time.sleep(0.02)
        child.send_signal(sig)
        child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == (130 if sig == signal.SIGTERM else -signal.SIGKILL)
    assert (folder / "a.py").read_text() == AFTER  # written before the kill: complete
    assert (folder / "b.py").read_text() == BEFORE  # being written: untouched
    assert (folder / "c.py").read_text() == BEFORE  # not reached
    if sig == signal.SIGTERM:
        assert leftovers(folder) == []  # cleaned up on the way out
    else:
        # SIGKILL allows no cleanup: at most the temporary file remains, recognisably named.
        assert all(name.startswith(".b.py.") for name in leftovers(folder))
    assert sorted(p.name for p in folder.iterdir() if not p.name.endswith(TEMP_SUFFIX)) == ["a.py", "b.py", "c.py"]
