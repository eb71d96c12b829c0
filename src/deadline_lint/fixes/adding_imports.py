"""Adding the imports a fix needs: through LibCST's AddImportsVisitor, or, for code LibCST
cannot take, as plain lines after the docstring and `from __future__` imports."""
from __future__ import annotations

import ast
import functools
from typing import Optional, Sequence, Set, Tuple

from deadline_lint.semantics.local.imports import parse_import
from deadline_lint.support.source import SourceFile


def add_imports(text: str, imports: Sequence[str]) -> Optional[str]:
    """`text` with each import added unless already there; None if LibCST cannot do it.

    An import is written `time`, `import os.path`, `import x as y` or `from time import
    monotonic` (optionally `as name`)."""
    return _added_imports(text, tuple(imports))


# LibCST's parse is the slowest step of a fix, and the same text is often given the same
# imports again: the codemod and `fix` fixing one file alike, an editor asking for the fixes of
# an unchanged buffer, the simulation comparing the two. The answer depends on nothing else.
@functools.lru_cache(maxsize=16)
def _added_imports(text: str, imports: Tuple[str, ...]) -> Optional[str]:
    import libcst
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    context = CodemodContext()
    for spec in imports:
        parsed = parse_import(spec)
        if parsed is None:
            return None
        module, name, alias = parsed
        AddImportsVisitor.add_needed_import(context, module, name, alias)
    try:
        tree = libcst.parse_module(text)
        return AddImportsVisitor(context).transform_module(tree).code
    except Exception:  # libcst.ParserSyntaxError, RecursionError on deep code: prove or bail
        return None


def insert_import_lines(text: str, imports: Sequence[str]) -> Optional[str]:
    """`text` with each import missing at module level added as a line of its own, after the
    docstring and `from __future__` imports; without LibCST, for code it cannot take. None
    when the place is not a line of its own (`"doc"; import x`) or the text does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    present: Set[Tuple[Optional[str], ...]] = set()
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            present.update(("import", a.name, a.asname) for a in statement.names)
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0:
            present.update(("from", statement.module, a.name, a.asname) for a in statement.names)
    lines = []
    for spec in imports:
        parsed = parse_import(spec)
        if parsed is None:
            return None
        module, name, alias = parsed
        if name is None:
            key: tuple = ("import", module, alias)
            line = f"import {module}" + (f" as {alias}" if alias else "")
        else:
            key = ("from", module, name, alias)
            line = f"from {module} import {name}" + (f" as {alias}" if alias else "")
        if key not in present:
            lines.append(line + "\n")
    if not lines:
        return text
    body = list(tree.body)
    if (
        body and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    while body and isinstance(body[0], ast.ImportFrom) and body[0].module == "__future__":
        body = body[1:]
    if not body:
        return text + ("" if not text or text.endswith(("\n", "\r")) else "\n") + "".join(lines)
    first = body[0]
    decorators = getattr(first, "decorator_list", None) or []
    line_number = min([first.lineno, *(d.lineno for d in decorators)])
    if first.col_offset != 0 or any(d.col_offset != 1 for d in decorators):
        return None  # shares its line with what comes before
    source = SourceFile(text, "<imports>")
    at = source.offset(line_number, 0)
    return text[:at] + "".join(lines) + text[at:]
