"""The server's findings and edits as LSP shapes: a document's findings for one version of its
text (`Checked`), positions in the negotiated encoding, diagnostics, the one edit between two
texts, and the code actions on a range (a quick fix per finding, "suppress on this line",
"fix all safe"). Every edit is computed from the server's own findings for the document's
current text, never from what the client sends back."""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import List, Optional, Sequence

from deadline_lint.frontends.lsp.server_engine import BufferCheck, Engine
from deadline_lint.support.diagnostics import Applicability, Diagnostic
from deadline_lint.support.source import SourceFile
from deadline_lint.support.tool_codes import TOOL_CODES

try:
    from lsprotocol import types
except ImportError:  # pragma: no cover - reported by server.run
    types = None  # type: ignore[assignment]

FIX_ALL_KIND = "source.fixAll.deadline-lint"
SOURCE = "deadline-lint"


@dataclass
class Checked:
    """A document's findings for one version of its text."""

    version: Optional[int]
    text: str
    result: BufferCheck
    result_id: str
    stale: bool = False  # a project module it reaches has changed since
    fixed: Optional[str] = None  # what "fix all safe" makes of `text`, once asked
    fixed_known: bool = False



class Positions:
    """Engine positions (1-based lines, columns and offsets in characters) as LSP positions
    in the negotiated encoding. Lines end where the engine's do (\\n, \\r\\n, \\r), as LSP's do."""

    def __init__(self, text: str, encoding: str) -> None:
        self.source = SourceFile(text, "-")
        self.encoding = encoding

    def _units(self, chars: str) -> int:
        if self.encoding == types.PositionEncodingKind.Utf32:
            return len(chars)
        if self.encoding == types.PositionEncodingKind.Utf8:
            return len(chars.encode("utf-8", "surrogatepass"))
        return len(chars.encode("utf-16-le", "surrogatepass")) // 2

    def at(self, line: int, column: int) -> "types.Position":
        lines = self.source.lines
        if line > len(lines):
            return types.Position(line=max(len(lines), 0), character=0)
        body = lines[line - 1].rstrip("\r\n") if lines else ""
        return types.Position(line=line - 1, character=self._units(body[:max(column - 1, 0)]))

    def at_offset(self, offset: int) -> "types.Position":
        starts = self.source.line_starts
        line = max(bisect_right(starts, offset) - 1, 0)
        if line >= len(self.source.lines):
            return types.Position(line=len(self.source.lines), character=0)
        return self.at(line + 1, offset - starts[line] + 1)


def lsp_diagnostics(checked: Checked, encoding: str) -> List["types.Diagnostic"]:
    from deadline_lint.frontends.docs import help_url

    positions = Positions(checked.text, encoding)
    if checked.result.profile_error is not None:
        top = types.Position(line=0, character=0)
        return [types.Diagnostic(
            range=types.Range(start=top, end=top), message=checked.result.profile_error,
            severity=types.DiagnosticSeverity.Error, source=SOURCE,
        )]
    out = []
    for d in checked.result.diagnostics:
        out.append(types.Diagnostic(
            range=types.Range(start=positions.at(d.line, d.column), end=positions.at(d.end_line, d.end_column)),
            message=d.message,
            severity=types.DiagnosticSeverity.Error if d.code in TOOL_CODES else types.DiagnosticSeverity.Warning,
            code=d.code,
            code_description=types.CodeDescription(href=help_url(d.code)),
            source=SOURCE,
            data={"name": d.name, "fix": d.fix.to_json() if d.fix else None},
        ))
    return out


def text_edit(before: str, after: str, positions: Positions) -> "types.TextEdit":
    """One edit turning `before` into `after`: the span between their common start and end
    (never splitting a \\r\\n, which would be a position inside a line ending)."""
    start = 0
    limit = min(len(before), len(after))
    while start < limit and before[start] == after[start]:
        start += 1
    end = 0
    while end < limit - start and before[-1 - end] == after[-1 - end]:
        end += 1
    if start and before[start - 1] == "\r" and before[start:start + 1] == "\n":
        start -= 1
    cut = len(before) - end  # where the unchanged tail starts
    if end and before[cut:cut + 1] == "\n" and before[cut - 1:cut] == "\r":
        end -= 1
    return types.TextEdit(
        range=types.Range(start=positions.at_offset(start), end=positions.at_offset(len(before) - end)),
        new_text=after[start:len(after) - end],
    )


def _wanted(kind: str, only: Optional[Sequence[str]]) -> bool:
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


def _overlaps(a: "types.Range", b: "types.Range") -> bool:
    key = lambda p: (p.line, p.character)  # noqa: E731
    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def code_actions(
    uri: str, checked: Checked, params: "types.CodeActionParams", encoding: str, path: str, engine: Engine,
) -> List["types.CodeAction"]:
    """The actions on `params.range` of the document at `uri` (its file at `path`)."""
    if checked.result.profile_error is not None:
        return []
    text = checked.text
    positions = Positions(text, encoding)
    only = params.context.only
    shown = lsp_diagnostics(checked, encoding)
    actions: List[types.CodeAction] = []

    def action(title: str, kind: str, after: Optional[str], diagnostics: List, preferred: bool = False) -> None:
        if after is None:
            return
        edit = types.WorkspaceEdit(changes={uri: [text_edit(text, after, positions)]})
        actions.append(types.CodeAction(
            title=title, kind=kind, diagnostics=diagnostics or None, edit=edit, is_preferred=preferred or None,
        ))

    if _wanted(types.CodeActionKind.QuickFix, only):
        for finding, lsp in zip(checked.result.diagnostics, shown):
            if not _overlaps(lsp.range, params.range):
                continue
            fix = finding.fix
            if fix is not None:
                unsafe = fix.applicability is Applicability.UNSAFE
                title = f"Fix {finding.code}: {fix.description}" + (" (unsafe)" if unsafe else "")
                action(title, types.CodeActionKind.QuickFix, engine.apply_fix(text, fix), [lsp], not unsafe)
            if finding.code not in TOOL_CODES:
                action(f"Suppress {finding.code} on this line (# noqa)", types.CodeActionKind.QuickFix,
                       engine.suppress(text, [finding]), [lsp])
    if _wanted(FIX_ALL_KIND, only) and _has_safe_fix(checked.result.diagnostics):
        if not checked.fixed_known:  # editors ask on every cursor move: the loop runs once per text
            checked.fixed, checked.fixed_known = engine.fix_all(text, path), True
        action("Fix all safe deadline-lint problems", FIX_ALL_KIND, checked.fixed, [])
    return actions


def _has_safe_fix(found: Sequence[Diagnostic]) -> bool:
    return any(d.fix is not None and d.fix.applicability is Applicability.SAFE for d in found)
