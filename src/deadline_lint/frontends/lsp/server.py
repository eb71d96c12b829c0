"""`deadline-lint server`: a Language Server over stdio (pygls 2; `pip install
'deadline-lint[lsp]'`).

Diagnostics are what `check` reports for the buffer's unsaved text (server_engine.py is the
only part that asks the run). A client that pulls diagnostics (LSP 3.17
`textDocument/diagnostic`) gets them when it asks; any other client gets them pushed on open,
on save and, debounced, on change. Each carries its code, a link to the rule's page, the
severity (tool codes are errors, rule findings warnings), its range and its fix in `data`.

Code actions: a quick fix per finding with a fix ("(unsafe)" when it is), "suppress on this
line" (`# noqa`, as `--add-noqa` writes it), and "fix all safe" as `source.fixAll.deadline-lint`
(the text `deadline-lint fix` would write). Every edit is computed from the server's own
findings for the document's current text, never from what the client sends back
(server_shapes.py).

A file's findings depend on the project modules it imports (whenever the semantics layer
looked into its project): when one changes on disk (`workspace/didChangeWatchedFiles`) or in a buffer, the
open files that reach it are checked again (pushed, or a `workspace/diagnostic/refresh`).
"""
from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import Any, BinaryIO, Dict, FrozenSet, Iterable, List, Optional, Sequence, cast

from deadline_lint import __version__
from deadline_lint.frontends.lsp.server_engine import UNSAVED_PATH, BufferCheck, Engine
from deadline_lint.frontends.lsp.server_io import SKIPPED, BoundedReader, skipped_message
from deadline_lint.frontends.lsp.server_shapes import (
    FIX_ALL_KIND,
    SOURCE,
    Checked,
    code_actions,
    lsp_diagnostics,
)

try:
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer
    from pygls.uris import to_fs_path
except ImportError:  # pragma: no cover - reported by `run`
    types = None  # type: ignore[assignment]
    LanguageServer = object  # type: ignore[assignment,misc]

DEBOUNCE_SECONDS = 0.25  # after the last change, before a pushed re-check
# Files whose change can change a profile, or where projects start.
_SETTINGS_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
_WATCHED = ("**/*.py", "**/pyproject.toml", "**/setup.cfg", "**/setup.py", "**/*.yaml", "**/*.yml")

log = logging.getLogger(__name__)


class DeadlineLintServer(LanguageServer):  # type: ignore[misc,valid-type]
    def __init__(self) -> None:
        super().__init__("deadline-lint", __version__)
        self.engine = Engine()
        self.checked: Dict[str, Checked] = {}
        self.pending: Dict[str, asyncio.TimerHandle] = {}
        self._refresh: Optional[asyncio.TimerHandle] = None
        self._results = 0

    # -- what the client can do ----------------------------------------------------------
    @property
    def pulls(self) -> bool:
        caps = self.client_capabilities.text_document
        return caps is not None and caps.diagnostic is not None

    def _can_refresh(self) -> bool:
        workspace = self.client_capabilities.workspace
        return bool(workspace and workspace.diagnostics and workspace.diagnostics.refresh_support)

    # -- checking ------------------------------------------------------------------------
    def path_of(self, uri: str) -> str:
        path = to_fs_path(uri) if uri.startswith("file:") else None
        return path or UNSAVED_PATH

    def current(self, uri: str) -> Checked:
        """The findings for the document's current text, checked now if they are not known.
        A document the client never opened has none: pygls would read it from disk (a
        traceback when it is not there, a hang on a FIFO), and edits to it are no one's."""
        if uri not in self.workspace.text_documents:
            return Checked(None, "", BufferCheck(), "unopened")
        document = self.workspace.get_text_document(uri)
        known = self.checked.get(uri)
        if (
            known is not None and not known.stale
            and known.version == document.version and known.text == document.source
        ):
            return known
        text = document.source
        self._results += 1
        # A client may open other languages' files too (a profile YAML, pyproject.toml).
        python = document.language_id in (None, "", "python") or uri.endswith((".py", ".pyi"))
        result = self.engine.check(text, self.path_of(uri)) if python else BufferCheck()
        checked = Checked(document.version, text, result, str(self._results))
        self.checked[uri] = checked
        return checked

    def publish(self, uri: str) -> None:
        if self.pulls or uri not in self.workspace.text_documents:
            return
        checked = self.current(uri)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=checked.version, diagnostics=lsp_diagnostics(checked, self.encoding()),
        ))

    def encoding(self) -> str:
        return str(self.workspace.position_encoding or types.PositionEncodingKind.Utf16)

    def schedule(self, uri: str, delay: float) -> None:
        """Publish after `delay` seconds without a further change (push clients only)."""
        handle = self.pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        if self.pulls:
            return
        loop = asyncio.get_running_loop()
        self.pending[uri] = loop.call_later(delay, self._publish_pending, uri)

    def _publish_pending(self, uri: str) -> None:
        self.pending.pop(uri, None)
        self._guarded(self.publish, uri)

    def _guarded(self, action, *args) -> None:
        """A bug of ours ends up in the log, never as a dead server."""
        try:
            action(*args)
        except Exception:  # noqa: BLE001 - reported, and the server keeps serving
            log.exception("deadline-lint server: %s failed", getattr(action, "__name__", action))

    # -- project facts -------------------------------------------------------------------
    def project_changed(self, paths: Iterable[str], created: bool = False, delay: float = 0) -> None:
        """Files changed (on disk or in a buffer): forget the project's memos and check
        again every other open file whose findings were computed from them. Only files
        that looked into their project depend on other files."""
        if not any(known.result.project_index for known in self.checked.values()):
            return
        changed = {os.path.abspath(p) for p in paths}
        self.engine.invalidate(changed)

        def appears_in(folders: FrozenSet[str]) -> bool:  # a lookup failed there before
            return any(path.startswith(folder + os.sep) for path in changed for folder in folders)

        dependents = [
            uri for uri, known in self.checked.items()
            if known.result.project_index and self.path_of(uri) not in changed
            and (changed & known.result.reach or (created and appears_in(known.result.folders)))
        ]
        self._recheck(dependents, delay)

    def settings_changed(self) -> None:
        self.engine.reload()
        self.engine.forget_project_facts()
        self._recheck(list(self.checked))

    def _recheck(self, uris: Sequence[str], delay: float = 0) -> None:
        """Mark their findings stale; push them again after `delay`, or ask a pulling
        client to pull again (once per burst of changes)."""
        for uri in uris:
            self.checked[uri].stale = True
        if not uris:
            return
        if not self.pulls:
            for uri in uris:
                self.schedule(uri, delay)
        elif self._can_refresh():
            if self._refresh is not None:
                self._refresh.cancel()
            self._refresh = asyncio.get_running_loop().call_later(delay, self._send_refresh)

    def _send_refresh(self) -> None:
        self._refresh = None
        self.workspace_diagnostic_refresh(None)


def build_server() -> DeadlineLintServer:
    server = DeadlineLintServer()

    @server.feature(types.INITIALIZED)
    async def initialized(ls: DeadlineLintServer, params: Any) -> None:
        watched = ls.client_capabilities.workspace
        dynamic = watched and watched.did_change_watched_files and watched.did_change_watched_files.dynamic_registration
        if not dynamic:
            return
        options = types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=pattern) for pattern in _WATCHED]
        )
        registration = types.Registration(
            id="deadline-lint-watched-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=options,
        )
        try:
            await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
        except Exception:  # noqa: BLE001 - the client refused: buffers still work
            log.warning("deadline-lint server: the client did not register file watchers")

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DeadlineLintServer, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls._guarded(_buffer_changed, ls, uri)
        ls.schedule(uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DeadlineLintServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls._guarded(_buffer_changed, ls, uri)
        ls.schedule(uri, DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: DeadlineLintServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DeadlineLintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        handle = ls.pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        path = ls.path_of(uri)
        if path != UNSAVED_PATH:
            ls.engine.use_unsaved(path, None)  # the file on disk counts again
            ls._guarded(ls.project_changed, [path])
        ls.checked.pop(uri, None)
        if not ls.pulls:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False),
    )
    def pull(ls: DeadlineLintServer, params: types.DocumentDiagnosticParams):
        checked = ls.current(params.text_document.uri)
        if params.previous_result_id == checked.result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=checked.result_id)
        return types.RelatedFullDocumentDiagnosticReport(
            items=lsp_diagnostics(checked, ls.encoding()), result_id=checked.result_id,
        )

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: DeadlineLintServer, params: types.DidChangeWatchedFilesParams) -> None:
        open_paths = {ls.path_of(uri) for uri in ls.workspace.text_documents}
        modules: List[str] = []
        created = False
        settings = False
        for change in params.changes:
            path = ls.path_of(change.uri)
            if path == UNSAVED_PATH:
                continue
            if os.path.basename(path) in _SETTINGS_FILES or path.endswith((".yaml", ".yml")):
                settings = True
            elif path.endswith(".py") and path not in open_paths:  # an open buffer wins
                modules.append(path)
                created = created or change.type != types.FileChangeType.Changed
        if settings:
            ls._guarded(ls.settings_changed)
        elif modules:
            ls._guarded(ls.project_changed, modules, created)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    def actions(ls: DeadlineLintServer, params: types.CodeActionParams):
        uri = params.text_document.uri
        return code_actions(uri, ls.current(uri), params, ls.encoding(), ls.path_of(uri), ls.engine)

    @server.feature(SKIPPED)
    def skipped(ls: DeadlineLintServer, params: Any) -> None:
        log.warning(skipped_message(params))

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: DeadlineLintServer, params: Any) -> None:
        for handle in [*ls.pending.values(), *([ls._refresh] if ls._refresh else [])]:
            handle.cancel()
        ls.pending.clear()
        ls._refresh = None

    return server


def _buffer_changed(ls: DeadlineLintServer, uri: str) -> None:
    """The semantics layer reads the buffer, not the file; what reached it is checked again."""
    path = ls.path_of(uri)
    if path == UNSAVED_PATH:
        return
    ls.engine.use_unsaved(path, ls.workspace.get_text_document(uri).source)
    ls.project_changed([path], delay=DEBOUNCE_SECONDS)



def run() -> int:
    """Serve on stdin/stdout until the client says `exit`."""
    if types is None:
        print("deadline-lint: the language server needs pygls: pip install 'deadline-lint[lsp]'", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="deadline-lint server: %(message)s")
    build_server().start_io(stdin=cast(BinaryIO, BoundedReader(sys.stdin.buffer)))
    return 0
