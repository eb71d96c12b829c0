"""Building text edits for fixes from ast nodes. Each builder proves its edit is well-formed
or returns None ("prove or bail"): a rule then reports without a fix."""
from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import List, Optional, Tuple, Union

from deadline_lint.support.diagnostics import Edit
from deadline_lint.support.source import Located, SourceFile


def replace_node(source: SourceFile, node: Located, text: str) -> Edit:
    start, end = source.node_span(node)
    return Edit(start, end, text)


def insert_keyword(source: SourceFile, call: ast.Call, keyword: str, value: str) -> Optional[Edit]:
    """Add `keyword=value` as the call's last argument, keeping its layout and trailing comma."""
    start, end = source.node_span(call)
    text = source.text
    close = end - 1
    if close <= start or text[close] != ")":
        return None
    arguments: List[Located] = [*call.args, *call.keywords]
    if not arguments:
        func_end = source.node_span(call.func)[1]
        between = text[func_end:close]
        if between.strip() != "(":
            return None  # comments or odd spacing between the parentheses: leave it alone
        return Edit(close, close, f"{keyword}={value}")
    if len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.GeneratorExp):
        return None  # `f(x for x in y)` needs parentheses added first
    last_start, last_end = max((source.node_span(a) for a in arguments), key=lambda span: span[1])
    insert_at = _after_closing_parens(text, last_end, close)
    if insert_at is None:
        return None
    own_line = _own_lines(text, last_start, insert_at, close, [f"{keyword}={value}"])
    return own_line or Edit(insert_at, insert_at, f", {keyword}={value}")


def _own_lines(text: str, last_start: int, comma: int, close: int, items: List[str]) -> Optional[Edit]:
    """Arguments one per line with a trailing comma: new ones get lines of their own too,
    with the same indent and newline. Anything else on those lines (a comment): None."""
    if text[comma:comma + 1] != ",":
        return None
    line_start = max(text.rfind("\n", 0, last_start), text.rfind("\r", 0, last_start)) + 1
    indent = text[line_start:last_start]
    if indent.strip(" \t"):
        return None  # the last argument shares its line with something else
    after = text[comma + 1:close]
    newline = re.match(r"[ \t]*(\r\n|\r|\n)", after)
    if newline is None or after.strip(" \t\r\n"):
        return None
    return Edit(comma + 1, comma + 1, "".join(f"{newline.group(1)}{indent}{item}," for item in items))


def _after_closing_parens(text: str, position: int, close: int) -> Optional[int]:
    """The last argument's span in ast excludes parentheses around it (`f((a))`): step over
    those, plus whitespace and comments, stopping before a comma or the call's own `)`."""
    insert_at = position
    index = position
    while index < close:
        char = text[index]
        if char == ")":
            index += 1
            insert_at = index
        elif char in " \t\r\n\\":
            index += 1
        elif char == "#":
            newline = text.find("\n", index)
            if newline < 0 or newline > close:
                return None
            index = newline
        elif char == ",":
            return insert_at
        else:
            return None
    return insert_at


FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef]


def add_keyword_only_parameter(source: SourceFile, function: FunctionNode, parameter: str) -> Optional[Edit]:
    """Add `parameter` (e.g. `budget_s: float = 10.0`) as the def's last keyword-only
    parameter, adding the bare `*` when there is none; keeps layout and trailing comma.
    Signatures with `*args`/`**kwargs` or ending in `/` are left alone."""
    args = function.args
    if args.vararg is not None or args.kwarg is not None:
        return None
    parens = _signature_parens(source, function)
    if parens is None:
        return None
    open_paren, close = parens
    text = source.text
    elements: List[Located] = [*args.posonlyargs, *args.args, *args.kwonlyargs, *args.defaults]
    elements.extend(d for d in args.kw_defaults if d is not None)
    if not elements:
        if text[open_paren + 1:close].strip():
            return None  # a comment inside empty parentheses: leave it alone
        return Edit(close, close, f"*, {parameter}")
    last_end = max(source.node_span(e)[1] for e in elements)
    insert_at = _after_closing_parens(text, last_end, close)
    if insert_at is None:
        return None
    rest = re.sub(r"#[^\r\n]*", "", text[insert_at:close])
    if rest.replace(",", "", 1).strip(" \t\r\n\\"):
        return None  # e.g. `def f(a, /)`: the marker, not a parameter, comes last
    items = [parameter] if args.kwonlyargs else ["*", parameter]
    last_parameter = max((*args.posonlyargs, *args.args, *args.kwonlyargs), key=lambda a: source.node_span(a)[0])
    own_lines = _own_lines(text, source.node_span(last_parameter)[0], insert_at, close, items)
    return own_lines or Edit(insert_at, insert_at, ", " + ", ".join(items))


def _signature_parens(source: SourceFile, function: FunctionNode) -> Optional[Tuple[int, int]]:
    """Offsets of the `(` and `)` around a def's parameters, found with the tokenizer (ast has
    no position for them); None when the header does not tokenize as expected."""
    start = source.offset(function.lineno, function.col_offset)
    header = source.text[start:]
    # newline="": the reader splits lines at \n, \r\n and \r, as SourceFile does.
    reader = io.StringIO(header, newline="")
    line_starts = [0]
    depth = 0
    open_paren = None
    try:
        for token in tokenize.generate_tokens(reader.readline):
            if token.type != tokenize.OP or token.string not in ("(", ")"):
                continue
            while len(line_starts) < token.start[0]:
                line_starts.append(_next_line_start(header, line_starts[-1]))
            offset = line_starts[token.start[0] - 1] + token.start[1]
            if token.string == "(":
                if open_paren is None:
                    open_paren = offset
                depth += 1
            else:
                depth -= 1
                if depth == 0 and open_paren is not None:
                    return start + open_paren, start + offset
    except (tokenize.TokenError, SyntaxError):
        return None
    return None


def _next_line_start(text: str, offset: int) -> int:
    """Offset just past the line ending (\n, \r\n or \r) at or after `offset`."""
    for index in range(offset, len(text)):
        char = text[index]
        if char == "\n":
            return index + 1
        if char == "\r":
            return index + 2 if text[index + 1:index + 2] == "\n" else index + 1
    return len(text)


def append_statement(source: SourceFile, owner: Located, body: List[ast.stmt], statement: str) -> Optional[Edit]:
    """Add `statement` as the last statement of `body` (a block of `owner`, e.g. a handler),
    at the block's indentation on a line of its own, or after `; ` when the block sits on the
    owner's line (`except E: pass`). A block that is just `pass` or `...` is replaced instead."""
    if not body:
        return None
    first, last = body[0], body[-1]
    if len(body) == 1 and _is_placeholder(first):
        return replace_node(source, first, statement)
    last_line_number = last.end_lineno or last.lineno
    if first.lineno == owner.lineno:
        if last_line_number != owner.lineno or isinstance(last, _COMPOUND):
            return None
        end = source.node_span(last)[1]
        return Edit(end, end, f"; {statement}")
    line = source.line_text(first.lineno)
    indent = line[: source.char_column(first.lineno, first.col_offset)]
    if indent.strip(" \t"):
        return None  # the block's first statement shares its line with something else
    last_line = source.line_text(last_line_number)
    content = last_line.rstrip("\r\n")
    newline = last_line[len(content):] or _newline_of(source)
    if content.rstrip().endswith("\\"):
        return None
    at = source.line_starts[last_line_number - 1] + len(content)
    return Edit(at, at, f"{newline}{indent}{statement}")


_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
             ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _is_placeholder(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Pass) or (
        isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and stmt.value.value is Ellipsis
    )


def _newline_of(source: SourceFile) -> str:
    first = source.line_text(1)
    ending = first[len(first.rstrip("\r\n")):]
    return ending or "\n"
