"""The status family's shared pieces: the status vocabulary, which status code produces, the
handler-flow judgement, the `raise` appended by DL403's fix, and each rule's documented
example (it must fire; its "Use instead" must not)."""
from __future__ import annotations

import ast
import re
import textwrap
from typing import List, Tuple

import pytest
import yaml
from fixture_cases import ROOT

from deadline_lint.catalog import load_catalog
from deadline_lint.engine.checker import Checker
from deadline_lint.engine.context import FileContext
from deadline_lint.engine.edits import append_statement
from deadline_lint.support.source import SourceFile
from deadline_lint.families.registry import all_rules
from deadline_lint.families.shared.errors.status_catalog import Status, build_statuses, validate_statuses
from deadline_lint.families.shared.errors.statuses import CANCELLED, EXPIRED, QUOTA, StatusAnalysis
from deadline_lint.families.status.handler_flow import (
    BREAKS,
    CONTINUES,
    FALLS_THROUGH,
    RAISES_OTHER,
    RETURNS,
    cancels_then_awaits,
    handler_leaks,
)
from deadline_lint.fixes.loop import apply_edits
from deadline_lint.settings.profile import build_profile, default_profile

STATUS_CODES = ("DL401", "DL402", "DL403", "DL404")


# -- the vocabulary ---------------------------------------------------------------------------
def test_the_built_in_status_vocabulary_is_valid() -> None:
    content = yaml.safe_load((ROOT / "src/deadline_lint/catalog/statuses.yaml").read_text())
    assert validate_statuses(content) is None


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"phrases": {429: "too many"}}, "`phrases`"),
        ({"constants": {"x": {"form": "{nope}"}}}, "`constants.x.form`"),
        ({"classes": {"x": {"form": "{camel}", "codes": [418]}}}, "`classes.x.codes`"),
        ({"calls": {"f": {"position": -1}}}, "`calls.f`"),
        ({"methods": {"abort": "first"}}, "`methods`"),
        ({"surprise": 1}, "keys among"),
    ],
)
def test_a_malformed_vocabulary_says_what_was_expected(change, expected) -> None:
    content = yaml.safe_load((ROOT / "src/deadline_lint/catalog/statuses.yaml").read_text())
    content.update(change)
    assert expected in validate_statuses(content)


def test_families_spell_each_status_once() -> None:
    vocabulary = build_statuses(load_catalog().data["statuses"])
    assert vocabulary.spelling("http.HTTPStatus", Status(http=504)) == "GATEWAY_TIMEOUT"
    assert vocabulary.spelling("starlette.status", Status(http=429)) == "HTTP_429_TOO_MANY_REQUESTS"
    assert vocabulary.spelling("aiohttp.web", Status(http=503)) == "HTTPServiceUnavailable"
    assert vocabulary.spelling("grpc.StatusCode", Status(grpc="UNAVAILABLE")) == "UNAVAILABLE"
    assert vocabulary.spelling("aiohttp.web", Status(http=499)) is None
    assert vocabulary.named("fastapi.status.HTTP_429_TOO_MANY_REQUESTS").status == Status(http=429)


# -- what code produces -----------------------------------------------------------------------
HEADER = (
    "import grpc, flask\nfrom http import HTTPStatus\nfrom aiohttp import web\n"
    "from fastapi import HTTPException, status\nfrom starlette.responses import JSONResponse\n"
    "from werkzeug.exceptions import TooManyRequests\nimport sanic.response\n"
)


def produced(statement: str, profile=None, header: str = HEADER) -> List[Tuple[str, Tuple[str, ...], str]]:
    text = header + statement + "\n"
    tree = ast.parse(text)
    ctx = FileContext(SourceFile(text, "svc.py"), tree, profile or default_profile(), load_catalog())
    statuses = ctx.analysis(StatusAnalysis)
    found = []
    node = tree.body[-1]
    for candidate in [node, *ast.walk(node)]:
        if isinstance(candidate, (ast.Call, ast.Raise, ast.Return, ast.Assign)):
            for each in statuses.produced(candidate, ctx.module_scope):
                respelled = statuses.respell(each, statuses.expired_like(each.status))
                meanings = tuple(sorted(statuses.meanings(each.status)))
                found.append((str(each.status), meanings, respelled and respelled[0]))
    return sorted(set(found))


@pytest.mark.parametrize(
    "statement, expected",
    [
        ("web.json_response({}, status=429)", ("429", (QUOTA,), "504")),
        (
            "HTTPException(status_code=status.HTTP_429_TOO_MANY_REQUESTS)",
            ("429", (QUOTA,), "status.HTTP_504_GATEWAY_TIMEOUT"),
        ),
        ("HTTPException(429)", ("429", (QUOTA,), "504")),
        ("JSONResponse({}, HTTPStatus.TOO_MANY_REQUESTS)", ("429", (QUOTA,), "HTTPStatus.GATEWAY_TIMEOUT")),
        ("raise web.HTTPTooManyRequests", ("429", (QUOTA,), "web.HTTPGatewayTimeout")),
        ("raise TooManyRequests()", ("429", (QUOTA,), "GatewayTimeout")),
        ("flask.abort(429)", ("429", (QUOTA,), "504")),
        ("sanic.response.json({}, 429)", ("429", (QUOTA,), "504")),
        ("resp.status_code = 429", ("429", (QUOTA,), "504")),
        (
            "context.set_code(grpc.StatusCode.RESOURCE_EXHAUSTED)",
            ("RESOURCE_EXHAUSTED", (QUOTA,), "grpc.StatusCode.DEADLINE_EXCEEDED"),
        ),
        (
            "context.abort(grpc.StatusCode.CANCELLED, 'gone')",
            ("CANCELLED", (CANCELLED,), "grpc.StatusCode.DEADLINE_EXCEEDED"),
        ),
        ("web.Response(status=504)", ("504", (EXPIRED,), "504")),
    ],
)
def test_which_status_a_statement_produces(statement: str, expected) -> None:
    assert produced(statement) == [expected]


@pytest.mark.parametrize(
    "statement",
    [
        "record(429)",  # a number in an unknown place is data
        "limits = {'burst': 429}",
        "if resp.status == 429: pass",
        "resp.retries = 429",
    ],
)
def test_numbers_outside_status_positions_are_not_statuses(statement: str) -> None:
    assert produced(statement) == []


def test_a_returned_pair_is_a_status_only_in_a_flask_file() -> None:
    view = "def view():\n    return {}, 429"
    assert produced(view) == [("429", (QUOTA,), "504")]
    assert produced(view, header=HEADER.replace("import grpc, flask", "import grpc")) == []


def test_a_profile_moves_the_meanings() -> None:
    profile = build_profile({"statuses": {"expired": 503, "cancelled": 444}}, "p.yaml")
    assert produced("web.Response(status=444)", profile) == [("444", (CANCELLED,), "503")]
    assert produced("web.Response(status=503)", profile)[0][1] == (EXPIRED, "refused")


# -- handler flow -----------------------------------------------------------------------------
def leaks(body: str) -> List[Tuple[str, int]]:
    text = "try:\n    pass\nexcept E as exc:\n" + textwrap.indent(textwrap.dedent(body), "    ")
    handler = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ExceptHandler))
    hands_on = lambda raise_: "Cancelled" in ast.unparse(raise_)  # noqa: E731
    return [(leak.how, leak.node.lineno - 3) for leak in handler_leaks(handler, hands_on)]


@pytest.mark.parametrize(
    "body, expected",
    [
        ("log()\n", [(FALLS_THROUGH, 1)]),
        ("log()\nraise\n", []),
        ("raise exc\n", []),
        ("raise exc from None\n", []),
        ("raise Cancelled()\n", []),
        ("raise Other() from exc\n", [(RAISES_OTHER, 1)]),
        ("if a:\n    return 1\nraise\n", [(RETURNS, 2)]),
        ("if a:\n    raise\nelse:\n    raise exc\n", []),
        ("if a:\n    raise\n", [(FALLS_THROUGH, 1)]),
        ("for x in y:\n    if x:\n        break\nraise\n", []),
        ("while True:\n    pass\n", []),
        ("while True:\n    if a:\n        break\n", [(FALLS_THROUGH, 1)]),
        ("try:\n    cleanup()\nexcept Exception:\n    pass\nraise\n", []),
        ("try:\n    cleanup()\nfinally:\n    raise\n", []),
        ("try:\n    raise Other()\nexcept Other:\n    pass\n", [(FALLS_THROUGH, 1)]),
        ("with lock:\n    return None\n", [(RETURNS, 2)]),
        ("def later():\n    return 1\nraise\n", []),
    ],
)
def test_handler_flow(body: str, expected) -> None:
    assert leaks(body) == expected


def test_loop_control_leaves_the_handler_only_outside_inner_loops() -> None:
    text = (
        "for a in b:\n    try:\n        pass\n    except E:\n"
        "        for c in d:\n            continue\n        break\n"
    )
    handler = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ExceptHandler))
    assert [(leak.how, leak.node.lineno) for leak in handler_leaks(handler)] == [(BREAKS, 7)]
    text = text.replace("        break\n", "        continue\n")
    handler = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ExceptHandler))
    assert [leak.how for leak in handler_leaks(handler)] == [CONTINUES]


@pytest.mark.parametrize(
    "code, expected",
    [
        ("task.cancel()\ntry:\n    await task\nexcept E:\n    pass\n", True),
        ("self.t.cancel()\nlog()\ntry:\n    await self.t\nexcept E:\n    pass\n", True),
        ("try:\n    task.cancel()\n    await task\nexcept E:\n    pass\n", True),
        ("other.cancel()\ntry:\n    await task\nexcept E:\n    pass\n", False),
        ("try:\n    await task\nexcept E:\n    pass\ntask.cancel()\n", False),
    ],
)
def test_cancelled_it_itself(code: str, expected: bool) -> None:
    block = ast.parse("async def f():\n" + textwrap.indent(code, "    ")).body[0].body
    index = next(i for i, stmt in enumerate(block) if isinstance(stmt, ast.Try))
    assert cancels_then_awaits(block, index, block[index].body) is expected


# -- appending `raise` ---------------------------------------------------------------------------
def appended(text: str) -> str:
    source = SourceFile(text, "svc.py")
    handler = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.ExceptHandler))
    edit = append_statement(source, handler, handler.body, "raise")
    return apply_edits(text, [edit]) if edit is not None else "<none>"


@pytest.mark.parametrize(
    "before, after",
    [
        ("try:\n    a()\nexcept E:\n    log()\n", "try:\n    a()\nexcept E:\n    log()\n    raise\n"),
        (
            "try:\r\n\ta()\r\nexcept E:\r\n\tlog()  # why\r\n",
            "try:\r\n\ta()\r\nexcept E:\r\n\tlog()  # why\r\n\traise\r\n",
        ),
        ("try:\n    a()\nexcept E:\n    pass\n", "try:\n    a()\nexcept E:\n    raise\n"),
        ("try: a()\nexcept E: log()\n", "try: a()\nexcept E: log(); raise\n"),
        (
            "try:\n    a()\nexcept E:\n    if x:\n        y()\nelse:\n    z()",
            "try:\n    a()\nexcept E:\n    if x:\n        y()\n    raise\nelse:\n    z()",
        ),
        (
            "try:\n    a()\nexcept E:\n    log(1,\n        2)\n",
            "try:\n    a()\nexcept E:\n    log(1,\n        2)\n    raise\n",
        ),
        ("try: a()\nexcept E: log(); x = 1", "try: a()\nexcept E: log(); x = 1; raise"),
    ],
)
def test_append_raise(before: str, after: str) -> None:
    result = appended(before)
    assert result == after
    ast.parse(result)


# -- documented examples ------------------------------------------------------------------------
def _section(doc: str, title: str) -> str:
    match = re.search(rf"## {re.escape(title)}\n```python\n(.*?)```", doc, re.S)
    assert match, f"no {title} code block"
    return match.group(1)


@pytest.mark.parametrize("code", STATUS_CODES)
def test_documented_example_fires_and_its_remedy_does_not(code: str) -> None:
    rule = all_rules()[code]
    checker = Checker(select=[code])
    bad = checker.check_text(_section(rule.documentation(), "Example"), "example.py")
    good = checker.check_text(_section(rule.documentation(), "Use instead"), "example.py")
    assert [d.code for d in bad] == [code]
    assert good == []


# -- what a user sees ----------------------------------------------------------------------------
SNAPSHOT = {
    "DL401/http_frameworks.py": [
        "21:9: DL401 deadline expiry (`asyncio.TimeoutError`) is reported as 429 (`429`), a quota status: "
        "report `504` instead",
        "49:9: DL401 deadline expiry (`httpx.ReadTimeout`) is reported as 429 (`HTTPStatus.TOO_MANY_REQUESTS`), "
        "a quota status: report `HTTPStatus.GATEWAY_TIMEOUT` instead",
        "87:9: DL401 deadline expiry (`requests.Timeout`) is reported as 429 (`HTTPStatus.TOO_MANY_REQUESTS`), "
        "a quota status: report 504 instead",
    ],
    "DL402/conflated.py": [
        "14:5: DL402 cancellation (`asyncio.CancelledError`) and deadline expiry (`asyncio.TimeoutError`) are "
        "handled alike and both reported as status 504 (line 15): handle them separately, re-raise the cancellation",
        "56:17: DL402 a cancellation (`grpc.StatusCode.CANCELLED`) is reported as the expiry status "
        "DEADLINE_EXCEEDED (`grpc.StatusCode.DEADLINE_EXCEEDED`): keep cancellation and expiry apart",
    ],
    "DL403/swallowed.py": [
        "39:5: DL403 `except asyncio.CancelledError` catches the task's cancellation and returns at line 40 "
        "without re-raising it: re-raise it there (`raise`)",
        "68:5: DL403 `except BaseException` catches the task's cancellation (asyncio.CancelledError) and can "
        "reach its end without re-raising it: end the handler with `raise`",
        "98:10: DL403 `contextlib.suppress(asyncio.CancelledError)` swallows the task's cancellation: let it "
        "propagate (catch it only around a task you cancelled yourself)",
    ],
    "DL404/breakers.py": [
        "30:9: DL404 an open circuit breaker (`pybreaker.CircuitBreakerError`) is reported as a deadline error "
        "(`UpstreamTimeout`): nothing expired, the call was refused; report it as unavailable",
    ],
}


@pytest.mark.parametrize("fixture", sorted(SNAPSHOT))
def test_findings_read_as_pinned(fixture: str) -> None:
    """Line, column, code and message, once each, for representative findings."""
    path = ROOT / "fixtures" / fixture
    found = Checker(select=[fixture[:5]]).check_text(path.read_text(encoding="utf-8"), str(path))
    shown = [f"{d.line}:{d.column}: {d.code} {d.message}" for d in found]
    for expected in SNAPSHOT[fixture]:
        assert shown.count(expected) == 1, expected
