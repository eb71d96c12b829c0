"""End to end: `deadline-lint server` as a subprocess, driven over stdio by pytest-lsp's client.

A small project (its profile turns the project index on) with a handler that has fixable and
unfixable findings and reaches a wrapper in another module. The tests open it, compare what
arrives with `check --format json`, apply code actions, change the wrapper on disk and in a
buffer, and send a syntax error and a broken profile.
"""
from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable, List, Optional

import pytest

from deadline_lint.frontends.cli import main

# pytest-lsp's client, lsprotocol's types and pygls' from_fs_path, imported by `_lsp` below in
# the process that runs these tests: importing them is a second of every xdist worker's
# collection otherwise. (pyproject.toml keeps pytest-lsp's plugin off: these tests drive its
# client themselves and use none of its fixtures.)
pytest_lsp: Any = None
types: Any = None
from_fs_path: Any = None


@pytest.fixture(autouse=True, scope="module")
def _lsp() -> None:
    global pytest_lsp, types, from_fs_path
    pytest.importorskip("pygls")
    pytest_lsp = pytest.importorskip("pytest_lsp")
    from lsprotocol import types
    from pygls.uris import from_fs_path

HANDLER = textwrap.dedent('''\
    import time

    import requests

    from app.transport import get_json


    def fetch(url):
        return requests.get("\U0001F680/" + url)


    def wait(probe, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            probe()


    def through_project(url):
        return get_json(url)


    def poll(probe, budget):
        end = time.time() + budget
        while time.time() < end:
            probe()
''')
TRANSPORT = textwrap.dedent('''\
    import requests


    def get_json(url, timeout=None):
        return requests.get(url, timeout=timeout).json()
''')
BOUNDED_TRANSPORT = TRANSPORT.replace("timeout=None", "timeout=5.0")
WAIT = 15.0  # seconds before a test gives up waiting for the server (never reached when it works)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0"\n\n[tool.deadline-lint]\nproject_index = true\n'
    )
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "transport.py").write_text(TRANSPORT)
    (tmp_path / "app" / "handler.py").write_text(HANDLER)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "pyproject.toml").write_text("[tool.deadline-lint]\nretry_budgett = 3\n")
    (tmp_path / "bad" / "job.py").write_text("import requests\nrequests.get('x')\n")
    return tmp_path


def run(coroutine) -> None:
    asyncio.run(asyncio.wait_for(coroutine, 60))


async def started(project: Path, capabilities: types.ClientCapabilities, registered: Optional[list] = None):
    client = pytest_lsp.make_test_lsp_client()
    if registered is not None:
        @client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(params: types.RegistrationParams) -> None:
            registered.extend(params.registrations)
    env = {**os.environ, "DEADLINE_LINT_CACHE_DIR": str(project / ".cache")}
    await client.start_io(sys.executable, "-m", "deadline_lint", "server", cwd=str(project), env=env)
    result = await client.initialize_session(types.InitializeParams(
        capabilities=capabilities, root_uri=from_fs_path(str(project)),
    ))
    return client, result


async def until(condition: Callable[[], bool], seen: Callable[[], object] = lambda: None) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + WAIT
    while not condition():
        if loop.time() > end:
            raise AssertionError(f"the server did not answer in time; last seen: {seen()!r}")
        await asyncio.sleep(0.02)


def utf16(line: str, column: int) -> int:
    return len(line[:column - 1].encode("utf-16-le")) // 2


def cli(project: Path, args: List[str], stdin: str = "") -> str:
    """The command line's output, run in this process (from the project's folder)."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
    before, sys.stdin = sys.stdin, io.TextIOWrapper(io.BytesIO(stdin.encode()))
    try:
        with contextlib.chdir(project), contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            main(args)
    finally:
        sys.stdin = before
    out.flush()
    return out.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]


def cli_findings(project: Path, name: str, text: str) -> List[tuple]:
    """What `check --format json` reports for the file, as LSP ranges (UTF-16 columns)."""
    lines = text.splitlines()
    return sorted(
        (d["code"], d["line"] - 1, utf16(lines[d["line"] - 1], d["column"]),
         d["end_line"] - 1, utf16(lines[d["end_line"] - 1], d["end_column"]), d["message"])
        for d in json.loads(cli(project, ["check", "--format", "json", "--no-cache", name]))
    )


def shown(diagnostics) -> List[tuple]:
    return sorted(
        (d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character, d.message)
        for d in diagnostics
    )


def apply(text: str, edit: types.TextEdit) -> str:
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        before = "".join(lines[:position.line])
        line = lines[position.line] if position.line < len(lines) else ""
        units, chars = 0, 0
        while units < position.character:
            units += len(line[chars].encode("utf-16-le")) // 2
            chars += 1
        return len(before) + chars

    return text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]


def only_edit(action: types.CodeAction, uri: str) -> types.TextEdit:
    assert action.edit is not None and action.edit.changes is not None
    (edit,) = action.edit.changes[uri]
    return edit


class Buffer:
    """One open document on the client's side."""

    def __init__(self, client, path: Path) -> None:
        self.client, self.uri, self.version = client, from_fs_path(str(path)), 1
        self.text = path.read_text()
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=self.uri, language_id="python", version=1, text=self.text)
        ))

    def change(self, text: str) -> None:
        self.version += 1
        self.text = text
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        ))

    async def actions(self, line: int, only=None) -> List[types.CodeAction]:
        found = await self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri),
            range=types.Range(
                start=types.Position(line=line, character=0), end=types.Position(line=line + 1, character=0)
            ),
            context=types.CodeActionContext(diagnostics=[], only=only),
        ))
        return list(found or [])


def test_push_client_end_to_end(project: Path) -> None:
    async def scenario() -> None:
        client, result = await started(project, types.ClientCapabilities())
        provider = result.capabilities.diagnostic_provider
        assert provider is not None and provider.inter_file_dependencies
        pushed = client.diagnostics

        handler = Buffer(client, project / "app" / "handler.py")
        await until(lambda: handler.uri in pushed)
        expected = cli_findings(project, os.path.join("app", "handler.py"), HANDLER)
        assert [(f[0], f[1]) for f in expected] == [
            ("DL101", 8), ("DL101", 18), ("DL201", 12), ("DL201", 13), ("DL201", 22), ("DL201", 23)]
        assert shown(pushed[handler.uri]) == expected
        first = sorted(pushed[handler.uri], key=lambda d: d.range.start.line)[0]
        assert first.severity == types.DiagnosticSeverity.Warning and first.source == "deadline-lint"
        assert first.code_description.href.endswith("/docs/rules/DL101.md")
        assert first.data["fix"]["applicability"] == "unsafe"

        # A quick fix, labelled unsafe, and the suppression for the unsafe DL101 on line 9.
        titles = [a.title for a in await handler.actions(8, only=[types.CodeActionKind.QuickFix])]
        assert titles == ["Fix DL101: insert timeout=10.0 (unsafe)", "Suppress DL101 on this line (# noqa)"]

        # The safe quick fix of the DL201s in `wait` (one fix for the deadline's reads): they go.
        quick = [a for a in await handler.actions(12) if a.title.startswith("Fix DL201")]
        assert len(quick) == 1 and quick[0].is_preferred and quick[0].kind == types.CodeActionKind.QuickFix
        handler.change(apply(handler.text, only_edit(quick[0], handler.uri)))
        assert "deadline = time.monotonic() + timeout" in handler.text and "end = time.time()" in handler.text
        await until(lambda: [d.range.start.line for d in pushed[handler.uri] if d.code == "DL201"] == [22, 23],
                    lambda: (handler.text, pushed[handler.uri]))

        # Fix all safe: the text `deadline-lint fix` makes of the buffer.
        (fix_all,) = await handler.actions(0, only=[types.CodeActionKind.SourceFixAll])
        assert fix_all.kind == "source.fixAll.deadline-lint"
        fixed = apply(handler.text, only_edit(fix_all, handler.uri))
        assert fixed == cli(project, ["fix", "-", "--stdin-filename", "app/handler.py"], handler.text)
        handler.change(fixed)
        await until(lambda: not any(d.code == "DL201" for d in pushed[handler.uri]))

        # Suppressing the DL101 on line 9 with a noqa comment.
        (suppress,) = [a for a in await handler.actions(8) if a.title.startswith("Suppress")]
        handler.change(apply(handler.text, only_edit(suppress, handler.uri)))
        assert 'requests.get("\U0001F680/" + url)  # noqa: DL101\n' in handler.text
        await until(lambda: [d.range.start.line for d in pushed[handler.uri]] == [18])

        # The wrapper changes on disk: the finding that reached it through the project goes.
        (project / "app" / "transport.py").write_text(BOUNDED_TRANSPORT)
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=from_fs_path(str(project / "app" / "transport.py")), type=types.FileChangeType.Changed)
        ]))
        await until(lambda: list(pushed[handler.uri]) == [])

        # ... and back in an unsaved buffer: it returns, without anything saved.
        transport = Buffer(client, project / "app" / "transport.py")
        transport.change(TRANSPORT)
        await until(lambda: [d.range.start.line for d in pushed[handler.uri]] == [18])
        assert "get_json" in pushed[handler.uri][0].message

        # A syntax error is its DL001 diagnostic; the server carries on. (As in `check`, only
        # in a file that mentions something a rule looks for: others are never parsed.)
        broken = project / "app" / "broken.py"
        broken.write_text("import requests\n\ndef f(:\n    requests.get(url)\n")
        syntax = Buffer(client, broken)
        await until(lambda: syntax.uri in pushed)
        (error,) = pushed[syntax.uri]
        assert error.code == "DL001" and error.severity == types.DiagnosticSeverity.Error
        assert error.range.start == types.Position(line=2, character=6)

        # A broken profile: one diagnostic at the top of the file naming the key.
        job = Buffer(client, project / "bad" / "job.py")
        await until(lambda: job.uri in pushed)
        (problem,) = pushed[job.uri]
        assert "retry_budgett" in problem.message and problem.range.start == types.Position(line=0, character=0)
        assert problem.severity == types.DiagnosticSeverity.Error
        assert await job.actions(1) == []

        await client.shutdown_session()
        assert client._server.returncode == 0  # noqa: SLF001 - the process pytest-lsp started

    run(scenario())


def test_pull_client_end_to_end(project: Path) -> None:
    capabilities = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(diagnostic=types.DiagnosticClientCapabilities()),
        workspace=types.WorkspaceClientCapabilities(
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True),
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
        ),
    )

    async def scenario() -> None:
        registered: List[types.Registration] = []
        client, _ = await started(project, capabilities, registered)
        handler = Buffer(client, project / "app" / "handler.py")

        async def pull(previous=None):
            return await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(uri=handler.uri), previous_result_id=previous,
            ))

        report = await pull()
        (watchers,) = registered  # a client that can watch files is asked to
        assert watchers.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES and watchers.register_options
        assert "**/*.py" in [w["globPattern"] for w in watchers.register_options["watchers"]]
        assert shown(report.items) == cli_findings(project, os.path.join("app", "handler.py"), HANDLER)
        again = await pull(report.result_id)
        assert again.kind == "unchanged"

        (project / "app" / "transport.py").write_text(BOUNDED_TRANSPORT)
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=from_fs_path(str(project / "app" / "transport.py")), type=types.FileChangeType.Changed)
        ]))
        await until(lambda: client.diagnostic_refresh_count == 1)
        after = await pull(report.result_id)
        assert after.kind == "full" and [d.range.start.line for d in after.items] == [8, 12, 13, 22, 23]
        # A module that did not exist appears: the file that imports it is checked again.
        (project / "app" / "late.py").write_text("from app.later import get\n\n\ndef go(url):\n    return get(url)\n")
        late = Buffer(client, project / "app" / "late.py")
        first = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=late.uri)))
        assert list(first.items) == []
        (project / "app" / "later.py").write_text(TRANSPORT.replace("get_json", "get").replace(".json()", ""))
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=from_fs_path(str(project / "app" / "later.py")), type=types.FileChangeType.Created)
        ]))
        await until(lambda: client.diagnostic_refresh_count == 2)
        second = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=late.uri), previous_result_id=first.result_id))
        assert [(d.code, d.range.start.line) for d in second.items] == [("DL101", 4)]
        assert client.diagnostics == {}  # a pulling client is never pushed to

        await client.shutdown_session()
        assert client._server.returncode == 0  # noqa: SLF001

    run(scenario())


def test_positions_and_edits_follow_the_encoding_and_line_endings() -> None:
    """Engine columns are characters; LSP's are UTF-16 units by default, over lines ended by
    \\n, \\r\\n or \\r. An edit never starts or ends inside a \\r\\n."""
    from deadline_lint.frontends.lsp.server_shapes import Positions, text_edit

    text = 'x = "\U0001F680"; y()\r\nz = 1\rw = 2\n'
    utf16_positions = Positions(text, types.PositionEncodingKind.Utf16)
    assert utf16_positions.at(1, 12) == types.Position(line=0, character=12)  # the rocket is two units
    assert Positions(text, types.PositionEncodingKind.Utf32).at(1, 12) == types.Position(line=0, character=11)
    assert Positions(text, types.PositionEncodingKind.Utf8).at(1, 12) == types.Position(line=0, character=14)
    assert utf16_positions.at(3, 1) == types.Position(line=2, character=0)  # a lone \r ends line 2
    after = text.replace("\r\nz = 1", "  # noqa: DL101\r\nz = 1")
    edit = text_edit(text, after, utf16_positions)
    assert edit == types.TextEdit(
        range=types.Range(start=types.Position(line=0, character=13), end=types.Position(line=0, character=13)),
        new_text="  # noqa: DL101",
    )
    joined = text_edit("a\r\nb\n", "a\nb\n", Positions("a\r\nb\n", types.PositionEncodingKind.Utf16))
    assert joined.range.start == types.Position(line=0, character=1) and joined.new_text == "\n"
