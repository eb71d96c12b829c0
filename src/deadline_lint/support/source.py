"""A decoded source file: text, positions in characters, comments and suppressions."""
from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import FrozenSet, List, Optional, Protocol, Tuple

from deadline_lint.support.selector import Selector

# flake8's noqa grammar: `# noqa`, `# noqa: DL101`, `# noqa:DL101,DL103`.
_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.I)
_OWN = re.compile(r"#\s*deadline-lint:\s*ignore(?:\[(?P<codes>[A-Z0-9,\s]+)\])?", re.I)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.I)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")

ALL_CODES: FrozenSet[str] = frozenset({"*"})


def split_lines(text: str) -> List[str]:
    """Lines with their endings, split only where the tokenizer ends a line (\n, \r\n, \r):
    str.splitlines() would also split on form feeds and U+2028."""
    return _LINE.findall(text)



class Located(Protocol):
    """A node with a position in the source: an expression, a statement, a handler, an
    argument, a keyword (what `ast.parse` gives a position to)."""

    @property
    def lineno(self) -> int: ...
    @property
    def col_offset(self) -> int: ...
    @property
    def end_lineno(self) -> Optional[int]: ...
    @property
    def end_col_offset(self) -> Optional[int]: ...


# What `ast.parse` gives a position to (a Python 3.12 type parameter aside).
_LOCATED = (ast.expr, ast.stmt, ast.excepthandler, ast.arg, ast.keyword, ast.alias, ast.pattern)


def located(node: ast.AST) -> Located:
    """`node`, known to have a position; TypeError for a node that has none (`ast.arguments`)."""
    if isinstance(node, _LOCATED):
        return node
    raise TypeError(f"{type(node).__name__} has no position")

class DecodeError(Exception):
    """The bytes are not text in the declared (or default UTF-8) encoding."""


NUL_BYTE = "contains a NUL byte"  # not text: the interpreter refuses such a file


def decode_source(data: bytes) -> str:
    """Decode like the interpreter does: BOM, then a PEP 263 cookie, else UTF-8."""
    if b"\0" in data:
        raise DecodeError(NUL_BYTE)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise DecodeError(str(exc)) from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise DecodeError(f"cannot be decoded as {encoding}: {exc.reason if hasattr(exc, 'reason') else exc}") from None
    return text[1:] if text.startswith("\ufeff") else text


class SourceFile:
    """Source text plus lazily built indexes; offsets are character offsets into `text`."""

    def __init__(self, text: str, path: str = "<stdin>") -> None:
        self.text = text
        self.path = path
        self._line_starts: Optional[List[int]] = None
        self._lines: Optional[List[str]] = None
        self._comments: Optional[List[Tuple[int, int]]] = None

    # -- lines and offsets -------------------------------------------------
    @property
    def lines(self) -> List[str]:
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines

    @property
    def line_starts(self) -> List[int]:
        if self._line_starts is None:
            starts = [0]
            for line in self.lines:
                starts.append(starts[-1] + len(line))
            self._line_starts = starts
        return self._line_starts

    def line_text(self, lineno: int) -> str:
        lines = self.lines
        return lines[lineno - 1] if 0 < lineno <= len(lines) else ""

    def char_column(self, lineno: int, byte_col: int) -> int:
        """ast gives UTF-8 byte columns; users and editors count characters."""
        line = self.line_text(lineno)
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def offset(self, lineno: int, byte_col: int) -> int:
        starts = self.line_starts
        if lineno - 1 >= len(starts):
            return len(self.text)
        return starts[lineno - 1] + self.char_column(lineno, byte_col)

    def node_span(self, node: "Located") -> Tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)
        end_line = node.lineno if node.end_lineno is None else node.end_lineno
        end = self.offset(end_line, node.col_offset if node.end_col_offset is None else node.end_col_offset)
        return start, end

    def segment(self, node: ast.AST) -> str:
        start, end = self.node_span(located(node))
        return self.text[start:end]

    # -- comments ----------------------------------------------------------
    def comment_spans(self) -> List[Tuple[int, int]]:
        if self._comments is None:
            spans: List[Tuple[int, int]] = []
            try:
                for tok in tokenize.generate_tokens(io.StringIO(self.text).readline):
                    if tok.type == tokenize.COMMENT:
                        start = self.line_starts[tok.start[0] - 1] + tok.start[1]
                        spans.append((start, start + len(tok.string)))
            except (tokenize.TokenError, SyntaxError):
                pass
            self._comments = spans
        return self._comments

    def touches_comment(self, start: int, end: int) -> bool:
        if "#" not in self.text[start:end]:
            return False
        return any(s < end and start < e for s, e in self.comment_spans())

    # -- suppressions ------------------------------------------------------
    def suppressed_codes(self, lineno: int, include_noqa: bool = True) -> FrozenSet[str]:
        """Codes silenced on this physical line; ALL_CODES for a bare `# noqa`. Under flake8,
        `# noqa` is flake8's own business and only our `# deadline-lint: ignore` is read here."""
        line = self.line_text(lineno)
        if "#" not in line:
            return frozenset()
        codes: set = set()
        for pattern in (_NOQA, _OWN) if include_noqa else (_OWN,):
            for match in pattern.finditer(line):
                listed = match.group("codes")
                if not listed:
                    return ALL_CODES
                # flake8 compares `# noqa` codes as written (`# noqa: dl101` silences nothing
                # there), so every front end does; our own pragma is ours to read leniently.
                found = _CODE.findall(listed)
                codes.update(found if pattern is _NOQA else (code.upper() for code in found))
        return frozenset(codes)

    def is_suppressed(self, lineno: int, code: str, include_noqa: bool = True) -> bool:
        codes = self.suppressed_codes(lineno, include_noqa)
        if codes is ALL_CODES:
            return True
        # flake8 semantics: a listed prefix (`DL1`) silences the whole family.
        return Selector(codes).matches(code)

