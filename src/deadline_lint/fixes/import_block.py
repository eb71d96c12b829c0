"""Adding `import time` (or `from M import N`) the way LibCST's AddImportsVisitor does, without
LibCST, for the common case: a module whose top import block is plain.

LibCST parses and regenerates the whole file to add one line; in `bench/simulate.py` that was
16 of 37 CPU s of fixing. Its placement rule, which this module reproduces exactly:

- the *top block* is the run of statements that are each alone on a line and each an import,
  after an optional first-statement docstring (a single string literal);
- an import already in the top block is not added again (imports elsewhere do not count);
- new lines go after the top block (after the docstring when the block is empty; before the
  first statement, after the file's leading comments, when there is neither): every plain
  `import` first, sorted, then one `from M import a, b` per module, sorted;
- the statement after them gets a blank line before it unless the lines between already start
  with a blank one; the new lines use the file's first line ending.

Anything else returns None and LibCST does it: aliases, `__future__`, a `from M import` of a
module the block already imports from (LibCST merges the names into that statement), a star
import, statements sharing a line (`;`), a `__strict__` flag, a byte-order mark, form feeds, no
statement at all, and a last line with no line ending. `bench/import_placement.py` compares the
two on every file of a corpus; tests/test_import_block.py on the shapes that matter.
"""
from __future__ import annotations

import ast
import io
import tokenize
from typing import Dict, List, Optional, Sequence, Set, Tuple

from deadline_lint.support.source import split_lines
from deadline_lint.semantics.local.imports import parse_import

_STATEMENT_ALONE_TAIL = ("", "#")


def add_imports_plainly(text: str, imports: Sequence[str]) -> Optional[str]:
    """`text` with each import added as AddImportsVisitor would add it, or None when the
    module is not the plain case above (the caller then asks LibCST)."""
    wanted = _wanted(imports)
    if wanted is None or not text or text.startswith("\ufeff") or "\f" in text:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    body = tree.body
    if not body:
        return None
    lines = split_lines(text)
    index = 0
    if _is_docstring(body[0], lines):
        index = 1
    elif isinstance(body[0], ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == "__strict__" for t in body[0].targets
    ):
        return None
    while index < len(body) and isinstance(body[index], (ast.Import, ast.ImportFrom)):
        index += 1
    top = body[:index]
    if any(not _alone(statement, lines) for statement in top):
        return None
    if index < len(body) and not _starts_a_line(body[index], lines):
        return None  # `import os; x = 1` or a decorator sharing a line: not ours to judge
    block = [s for s in top if isinstance(s, (ast.Import, ast.ImportFrom))]
    needed = _missing(wanted, block)
    if needed is None:
        return None
    modules, froms = needed
    if not modules and not froms:
        return text
    newline = _first_newline(text)
    new = [f"import {m}{newline}" for m in sorted(modules)]
    new += [f"from {m} import {', '.join(sorted(names))}{newline}" for m, names in sorted(froms.items())]
    after = body[index] if index < len(body) else None
    if top:
        last_line = top[-1].end_lineno or top[-1].lineno
        if last_line > len(lines) or not lines[last_line - 1].endswith(("\n", "\r")):
            return None  # LibCST writes the new lines without a final line ending there
        at = sum(len(line) for line in lines[:last_line])
        gap = lines[last_line:_first_line(after) - 1] if after is not None else []
    else:
        assert after is not None
        at = sum(len(line) for line in lines[:_first_line(after) - 1])
        gap = []  # the leading comments are the module's header, not the statement's
    blank = ""
    if after is not None:
        first_gap = gap[0].strip() if gap else "#"
        if first_gap.startswith("#"):
            blank = newline
        elif first_gap:
            return None  # not a blank or comment line between two statements: unknown
    return text[:at] + "".join(new) + blank + text[at:]


def _wanted(imports: Sequence[str]) -> Optional[Tuple[Set[str], Dict[str, Set[str]]]]:
    modules: Set[str] = set()
    froms: Dict[str, Set[str]] = {}
    for spec in imports:
        parsed = parse_import(spec)
        if parsed is None:
            return None
        module, name, alias = parsed
        if alias is not None or module == "__future__":
            return None
        if name is None:
            modules.add(module)
        else:
            froms.setdefault(module, set()).add(name)
    return modules, froms


def _missing(
    wanted: Tuple[Set[str], Dict[str, Set[str]]], block: Sequence[ast.stmt]
) -> Optional[Tuple[Set[str], Dict[str, Set[str]]]]:
    """What the block lacks; None when LibCST would merge into an existing statement."""
    modules, froms = wanted
    present: Set[str] = set()
    imported_from: Dict[str, Set[str]] = {}
    for statement in block:
        if isinstance(statement, ast.Import):
            present.update(a.name for a in statement.names if a.asname is None)
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
            names = imported_from.setdefault(statement.module, set())
            names.update(a.name for a in statement.names if a.asname is None)
            if any(a.name == "*" for a in statement.names) or any(a.asname for a in statement.names):
                names.add("*?")  # star or aliased: LibCST's bookkeeping differs, let it decide
    missing_froms: Dict[str, Set[str]] = {}
    for module, names in froms.items():
        if module not in imported_from:
            missing_froms[module] = set(names)
            continue
        there = imported_from[module]
        if "*?" in there or not names <= there:
            return None
    return modules - present, missing_froms


def _is_docstring(statement: ast.stmt, lines: List[str]) -> bool:
    """A first statement LibCST skips: one string literal alone on its line(s)."""
    if not (
        isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, (str, bytes))
    ):
        return False
    segment = "".join(lines[statement.lineno - 1:statement.end_lineno])
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(segment).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    return sum(1 for t in tokens if t.type == tokenize.STRING) == 1


def _first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", None) or []
    return min([statement.lineno, *(d.lineno for d in decorators)])


def _starts_a_line(statement: ast.stmt, lines: List[str]) -> bool:
    decorators = getattr(statement, "decorator_list", None) or []
    if statement.col_offset != 0 or any(d.col_offset != 1 for d in decorators):
        return False
    return not decorators or all(lines[d.lineno - 1].lstrip().startswith("@") for d in decorators)


def _alone(statement: ast.stmt, lines: List[str]) -> bool:
    """Starts a line and nothing but a comment follows it on its last line."""
    if statement.col_offset != 0 or statement.end_lineno is None or statement.end_col_offset is None:
        return False
    if statement.end_lineno > len(lines):
        return False
    last = lines[statement.end_lineno - 1].encode("utf-8", "surrogatepass")
    tail = last[statement.end_col_offset:].decode("utf-8", "surrogatepass").strip()
    return tail[:1] in _STATEMENT_ALONE_TAIL


def _first_newline(text: str) -> str:
    for i, char in enumerate(text):
        if char == "\n":
            return "\n"
        if char == "\r":
            return "\r\n" if text[i + 1:i + 2] == "\n" else "\r"
    return "\n"
