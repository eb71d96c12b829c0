"""DL301's fix: dropping one type from a tuple written in place, or giving up."""
from __future__ import annotations

from deadline_lint.engine.checker import Checker
from deadline_lint.fixes.loop import FixMode, fix_text

HEAD = "import requests\nfrom tenacity import retry, retry_if_exception_type\n"


def fixed(line: str) -> str:
    text = HEAD + line + "\ndef f():\n    pass\n"
    result = fix_text(Checker(select=["DL301"]), text, "svc.py", FixMode(unsafe=True))
    return result.text[len(HEAD):].splitlines()[0]


def test_the_type_and_its_comma_go() -> None:
    assert fixed("@retry(retry=retry_if_exception_type((ValueError, requests.Timeout, KeyError)))") == (
        "@retry(retry=retry_if_exception_type((ValueError, KeyError)))"
    )


def test_a_tuple_left_with_one_type_keeps_its_comma() -> None:
    assert fixed("@retry(retry=retry_if_exception_type((requests.Timeout, KeyError)))") == (
        "@retry(retry=retry_if_exception_type((KeyError,)))"
    )
    assert fixed("@retry(retry=retry_if_exception_type((KeyError, requests.Timeout,)))") == (
        "@retry(retry=retry_if_exception_type((KeyError,)))"
    )


def test_no_fix_when_nothing_else_would_be_retried_or_the_type_stands_alone() -> None:
    for line in (
        "@retry(retry=retry_if_exception_type((requests.Timeout, requests.ReadTimeout)))",
        "@retry(retry=retry_if_exception_type(requests.Timeout))",
    ):
        assert fixed(line) == line


def test_no_fix_across_a_comment() -> None:
    text = (
        HEAD
        + "@retry(retry=retry_if_exception_type((\n"
        + "    requests.Timeout,  # slow upstream\n"
        + "    KeyError,\n"
        + ")))\n"
        + "def f():\n    pass\n"
    )
    (finding,) = Checker(select=["DL301"]).check_text(text, "svc.py")
    assert finding.fix is None
