"""The editor server against a client that misbehaves: raw bytes over stdio, no LSP client
library, so that what is sent is exactly what a broken client would send."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

pytest.importorskip("pygls")


def message(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


INITIALIZE = message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
INITIALIZED = message({"jsonrpc": "2.0", "method": "initialized", "params": {}})
SHUTDOWN = message({"jsonrpc": "2.0", "id": 99, "method": "shutdown"})
EXIT = message({"jsonrpc": "2.0", "method": "exit"})


def serve(folder: Path, sent: bytes) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "deadline_lint", "server"], input=sent, capture_output=True, cwd=str(folder),
        timeout=120,
    )


def answers(stdout: bytes) -> List[dict]:
    found = []
    while stdout:
        head, _, rest = stdout.partition(b"\r\n\r\n")
        size = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        found.append(json.loads(rest[:size]))
        stdout = rest[size:]
    return found


def test_a_code_action_on_a_never_opened_document_is_no_action(tmp_path: Path) -> None:
    (tmp_path / "on_disk.py").write_text("import requests\nrequests.get('u')\n")
    asked = [
        message({"jsonrpc": "2.0", "id": n, "method": "textDocument/codeAction", "params": {
            "textDocument": {"uri": (tmp_path / name).as_uri()},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}},
            "context": {"diagnostics": []},
        }})
        for n, name in ((2, "missing.py"), (3, "on_disk.py"))
    ]
    pulled = message({"jsonrpc": "2.0", "id": 4, "method": "textDocument/diagnostic", "params": {
        "textDocument": {"uri": (tmp_path / "missing.py").as_uri()}}})
    done = serve(tmp_path, INITIALIZE + INITIALIZED + b"".join(asked) + pulled + SHUTDOWN + EXIT)
    by_id = {a.get("id"): a for a in answers(done.stdout)}
    assert by_id[2] == {"id": 2, "jsonrpc": "2.0", "result": []}
    assert by_id[3] == {"id": 3, "jsonrpc": "2.0", "result": []}  # not opened: not the server's to edit
    assert by_id[4]["result"]["items"] == []
    assert b"Traceback" not in done.stderr and done.returncode == 0


def test_a_huge_content_length_is_one_line_not_a_memory_error(tmp_path: Path) -> None:
    done = serve(tmp_path, INITIALIZE + INITIALIZED + b"Content-Length: 99999999999999\r\n\r\n{}")
    assert b"MemoryError" not in done.stderr and b"Traceback" not in done.stderr
    assert done.returncode == 0


def test_an_oversized_message_is_skipped_and_the_server_serves_on(tmp_path: Path) -> None:
    from deadline_lint.frontends.lsp.server_io import MAX_MESSAGE_BYTES

    oversized = b"Content-Length: %d\r\n\r\n" % (MAX_MESSAGE_BYTES + 1) + b" " * (MAX_MESSAGE_BYTES + 1)
    done = serve(tmp_path, INITIALIZE + INITIALIZED + oversized + SHUTDOWN + EXIT)
    assert [a.get("id") for a in answers(done.stdout)] == [1, 99]  # still in step with the client
    (line,) = [x for x in done.stderr.decode().splitlines() if "skipped" in x]
    assert line == (f"deadline-lint server: skipped a message of {MAX_MESSAGE_BYTES + 1} bytes "
                    f"(Content-Length); the limit is {MAX_MESSAGE_BYTES} bytes")
    assert "Traceback" not in done.stderr.decode() and done.returncode == 0


def test_the_bounded_reader_holds_one_chunk_of_a_dropped_body() -> None:
    from deadline_lint.frontends.lsp.server_io import MAX_HEADER_BYTES, SKIPPED, BoundedReader

    reader = BoundedReader(io.BytesIO(b"x" * 10 + b"Content-Length: 2\r\n"), limit=4)
    assert json.loads(reader.read(10))["method"] == SKIPPED
    assert reader.readline() == b"Content-Length: 2\r\n"  # the next message starts where it should
    long_line = BoundedReader(io.BytesIO(b"y" * (MAX_HEADER_BYTES + 5) + b"\r\n"))
    assert len(long_line.readline()) == MAX_HEADER_BYTES
    assert BoundedReader(io.BytesIO(b"abc"), limit=1).read(10) == b""  # the client went away


@pytest.mark.parametrize("text", [
    "import requests\nrequests.get('u')\nx = 1\0\n",  # a file a rule would look at
    "x = 1\0\n",  # and one no rule would parse
])
def test_a_nul_byte_is_the_same_tool_code_in_every_front_end(tmp_path: Path, monkeypatch, text: str) -> None:
    from deadline_lint.frontends.cli import main
    from deadline_lint.frontends.lsp.server_engine import Engine
    from deadline_lint.run import api

    monkeypatch.chdir(tmp_path)
    api.reset()
    (tmp_path / "nul.py").write_bytes(text.encode())
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    main(["check", "--no-cache", "--format", "json", "nul.py"])
    on_disk = [(d["code"], d["message"]) for d in json.loads(out.getvalue())]
    assert on_disk == [("DL002", "cannot decode file: contains a NUL byte")]
    assert [(d.code, d.message) for d in Engine().check(text, str(tmp_path / "nul.py")).diagnostics] == on_disk
    assert [(d.code, d.message) for d in api.lint_text(text, "nul.py").diagnostics] == on_disk
