"""Parsing a file's text once, and the diagnostic that says why a text could not be parsed."""
from __future__ import annotations

import ast
import sys
import threading
from typing import List, Union

from deadline_lint.engine.syntax_versions import newer_syntax_message
from deadline_lint.support.diagnostics import Diagnostic, tool_diagnostic
from deadline_lint.support.source import SourceFile

_OWN_FRAMES = 10  # thread bootstrap and ast.parse: what a fresh-stack parse adds to a script's


def parse_source(text: str, path: str) -> Union[ast.Module, Diagnostic]:
    """An ast.Module, or the DL001 / DL002 / DL007 diagnostic that says why there is none."""
    try:
        return ast.parse(text, filename=path, type_comments=False)
    except SyntaxError as exc:
        return _syntax_error(exc, text, path)
    except (RecursionError, MemoryError):
        # CPython's parser limit shrinks with the caller's stack depth: try again from a
        # fresh thread's stack, where it is what `python file.py` accepts.
        outcome = _parse_on_fresh_stack(text, path)
        if isinstance(outcome, ast.Module):
            return outcome
        if isinstance(outcome, SyntaxError):
            return _syntax_error(outcome, text, path)
        return tool_diagnostic(path, "DL007", "too deeply nested to analyse (beyond the Python parser's limit)")
    except ValueError as exc:  # e.g. NUL bytes handed to us as text
        return tool_diagnostic(path, "DL002", f"cannot parse file: {exc}")


def _syntax_error(exc: SyntaxError, text: str, path: str) -> Diagnostic:
    line = exc.lineno or 1
    column = max(exc.offset or 1, 1)
    if "too many nested" in (exc.msg or ""):  # the parser's own nesting limit: valid code
        return tool_diagnostic(
            path, "DL007", "too deeply nested to analyse (beyond the Python parser's limit)", line, column
        )
    newer = newer_syntax_message(SourceFile(text, path).line_text(line))
    return tool_diagnostic(path, "DL001", newer or f"syntax error: {exc.msg}", line, column)


def _parse_on_fresh_stack(text: str, path: str) -> object:
    """ast.parse on a new thread: the Module, or the exception it raised."""
    outcome: List[object] = [None]

    def parse() -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + _OWN_FRAMES)  # the frames above this one are ours
        try:
            outcome[0] = ast.parse(text, filename=path, type_comments=False)
        except (SyntaxError, RecursionError, MemoryError, ValueError) as exc:
            outcome[0] = exc
        finally:
            sys.setrecursionlimit(limit)

    worker = threading.Thread(target=parse, name="deadline-lint-parse")
    worker.start()
    worker.join()
    return outcome[0]
