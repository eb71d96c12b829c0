"""Building text edits for fixes from ast nodes. Each builder proves its edit is well-formed
or returns None ("prove or bail"): a rule then reports without a fix."""
from __future__ import annotations

import ast
from typing import Optional

from deadline_lint.diagnostics import Edit
from deadline_lint.source import SourceFile


def replace_node(source: SourceFile, node: ast.AST, text: str) -> Edit:
    start, end = source.node_span(node)
    return Edit(start, end, text)


def insert_keyword(source: SourceFile, call: ast.Call, keyword: str, value: str) -> Optional[Edit]:
    """Add `keyword=value` as the call's last argument, keeping its layout and trailing comma."""
    start, end = source.node_span(call)
    text = source.text
    close = end - 1
    if close <= start or text[close] != ")":
        return None
    arguments = [*call.args, *call.keywords]
    if not arguments:
        func_end = source.node_span(call.func)[1]
        between = text[func_end:close]
        if between.strip() != "(":
            return None  # comments or odd spacing between the parentheses: leave it alone
        return Edit(close, close, f"{keyword}={value}")
    if len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.GeneratorExp):
        return None  # `f(x for x in y)` needs parentheses added first
    last_end = max(source.node_span(a)[1] for a in arguments)
    insert_at = _after_closing_parens(text, last_end, close)
    if insert_at is None:
        return None
    return Edit(insert_at, insert_at, f", {keyword}={value}")


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
