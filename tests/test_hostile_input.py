"""Regression tests for hostile input, edge cases and scale (issue 12): each case here was
found by a newcomer's first hour or a fuzzer, and failed before its fix."""
from __future__ import annotations

import ast
import textwrap

import pytest

from deadline_lint.engine import Checker
from deadline_lint.fixes import FixMode, fix_text
from deadline_lint.profile import TIMEOUT_FLOOR_S


def fixed(text: str, unsafe: bool = True, select=None) -> str:
    checker = Checker(select=select or [])
    return fix_text(checker, textwrap.dedent(text), "service.py", FixMode(unsafe=unsafe)).text


def _timeout_values(text: str):
    """Each `timeout=` value in `text`, evaluated with every remainder spent (0 s left)."""
    spent = {"remaining": 0.0, "left": 0.0, "budget_s": 0.0, "max": max, "min": min}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.keyword) and node.arg == "timeout":
            yield eval(compile(ast.Expression(node.value), "<timeout>", "eval"), spent)  # noqa: S307


# -- item 3: every timeout a fix derives from a budget has a positive floor -----------------
def test_a_spent_budget_never_becomes_an_invalid_timeout() -> None:
    source = """\
        import grpc
        import httpx
        import requests

        def handler(url, context: grpc.ServicerContext):
            remaining = context.time_remaining()
            requests.get(url)
            httpx.get(url, timeout=2.0)
            return requests.post(url, timeout=remaining)

        def threaded(url, *, budget_s: float = 10.0):
            requests.get(url)
    """
    text = fixed(source)
    values = [v for v in _timeout_values(text.replace("context.time_remaining()", "0.0"))]
    assert len(values) == 4 and all(v >= TIMEOUT_FLOOR_S for v in values), text


# -- item 4: DL103 bounds only the unbounded part of a (connect, read) tuple ---------------
def test_unbounded_read_timeout_keeps_the_connect_timeout() -> None:
    source = """\
        import requests
        requests.get("http://x", timeout=(3.05, None))
        requests.get("http://x", timeout=(None, 27))
    """
    checker = Checker(select=["DL103"])
    found = checker.check_text(textwrap.dedent(source), "a.py")
    assert [d.message.split(": pass ")[1] for d in found] == ["`(3.05, 10.0)` instead", "`(10.0, 27)` instead"]
    out = fixed(source, select=["DL103"])
    assert 'timeout=(3.05, 10.0))' in out and 'timeout=(10.0, 27))' in out
