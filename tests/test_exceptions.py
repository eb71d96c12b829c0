"""The exception vocabulary (catalog) and what exception expressions admit (analysis)."""
from __future__ import annotations

import ast
from typing import List, Optional

import pytest

from deadline_lint.catalog import load_catalog
from deadline_lint.catalog.exceptions import build_vocabulary, validate_vocabulary
from deadline_lint.engine.checker import Checker
from deadline_lint.engine.context import FileContext
from deadline_lint.support.source import SourceFile
from deadline_lint.families.shared.errors.exceptions import BREAKER, CANCEL, EXPIRY, Admission, ExceptionAnalysis
from deadline_lint.semantics.local.scopes import Scope
from deadline_lint.settings.profile import build_profile

# -- the vocabulary ---------------------------------------------------------------------
VOCABULARY = load_catalog().exceptions


@pytest.mark.parametrize(
    "base, admitted",
    [
        ("OSError", "TimeoutError"),
        ("OSError", "requests.ReadTimeout"),  # RequestException derives from IOError
        ("Exception", "httpx.PoolTimeout"),
        ("BaseException", "asyncio.CancelledError"),
        ("requests.RequestException", "requests.Timeout"),
        ("requests.ConnectionError", "requests.ConnectTimeout"),
        ("aiohttp.ServerConnectionError", "aiohttp.ServerTimeoutError"),
        ("aiohttp.ClientError", "aiohttp.ServerTimeoutError"),
        ("TimeoutError", "aiohttp.ServerTimeoutError"),  # via asyncio.TimeoutError since 3.11
        ("grpc.RpcError", "grpc.StatusCode.DEADLINE_EXCEEDED"),
        ("google.api_core.exceptions.GoogleAPICallError", "google.api_core.exceptions.DeadlineExceeded"),
        ("urllib3.exceptions.HTTPError", "urllib3.exceptions.ReadTimeoutError"),
        ("Exception", "pybreaker.CircuitBreakerError"),
    ],
)
def test_a_base_class_admits_what_derives_from_it(base: str, admitted: str) -> None:
    assert admitted in {t.qualname for t in VOCABULARY.admitted(base)}


@pytest.mark.parametrize(
    "base, not_admitted",
    [
        ("Exception", "asyncio.CancelledError"),  # BaseException since 3.8
        ("OSError", "httpx.TimeoutException"),
        ("ConnectionError", "requests.ConnectTimeout"),  # the builtin, not requests'
        ("requests.ConnectionError", "requests.ReadTimeout"),
        ("httpx.HTTPError", "asyncio.CancelledError"),
    ],
)
def test_unrelated_classes_do_not_admit(base: str, not_admitted: str) -> None:
    assert not_admitted not in {t.qualname for t in VOCABULARY.admitted(base)}


def test_other_import_paths_map_to_the_catalog_spelling() -> None:
    assert VOCABULARY.canonical("requests.exceptions.ConnectTimeout") == "requests.ConnectTimeout"
    assert VOCABULARY.canonical("builtins.TimeoutError") == "TimeoutError"
    assert VOCABULARY.canonical("IOError") == "OSError"
    assert VOCABULARY.get("asyncio.exceptions.CancelledError").kind == CANCEL


def test_kinds_and_statuses() -> None:
    assert VOCABULARY.get("socket.timeout").kind == EXPIRY
    assert VOCABULARY.get("pybreaker.CircuitBreakerError").kind == BREAKER
    statuses = {s.qualname: s.kind for s in VOCABULARY.statuses()}
    assert statuses == {"grpc.StatusCode.DEADLINE_EXCEEDED": EXPIRY, "grpc.StatusCode.CANCELLED": CANCEL}


def test_conventions() -> None:
    assert VOCABULARY.convention_kind("acme.UpstreamTimeout") == EXPIRY
    assert VOCABULARY.convention_kind("DeadlineReached") == EXPIRY
    assert VOCABULARY.convention_kind("TokenExpired") == EXPIRY
    assert VOCABULARY.convention_kind("JobCanceled") == CANCEL
    assert VOCABULARY.convention_kind("CircuitOpenError") == BREAKER
    assert VOCABULARY.convention_kind("UpstreamError") is None


@pytest.mark.parametrize(
    "content, expected",
    [
        ({"types": {"A": {"bases": ["B"]}}}, "listed types"),
        ({"types": {"A": {"kind": "slow"}}}, "kind"),
        ({"types": {"A": {"bases": ["B"]}, "B": {"bases": ["A"]}}}, "cycle"),
        ({"statuses": {"S": {"kind": "expiry", "carried_by": ["X"]}}}, "carried_by"),
        ({"conventions": {"slow": ["Slow"]}}, "conventions"),
        ({"typos": {}}, "keys among"),
    ],
)
def test_malformed_vocabulary_is_named(content, expected: str) -> None:
    problem = validate_vocabulary(content)
    assert problem is not None and expected in problem


def test_the_built_in_vocabulary_is_valid() -> None:
    import yaml

    from deadline_lint.catalog import _HERE

    assert validate_vocabulary(yaml.safe_load((_HERE / "exceptions.yaml").read_text())) is None
    assert build_vocabulary(None).admitted("Exception") == ()


# -- the analysis -------------------------------------------------------------------------
def analysis(text: str, profile: Optional[dict] = None) -> ExceptionAnalysis:
    checker = Checker(profile=build_profile(profile, "test.yaml") if profile else None)
    tree = ast.parse(text)
    ctx = FileContext(SourceFile(text, "svc.py"), tree, checker.profile, checker.catalog)
    return ctx.analysis(ExceptionAnalysis)


def scope_of(exc: ExceptionAnalysis, function: str) -> Scope:
    ctx = exc.ctx
    for node in ast.walk(ctx.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            chain: List[ast.AST] = []
            # the scopes of enclosing classes/functions first, so that parents are right
            for outer in ast.walk(ctx.tree):
                if isinstance(outer, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    child is node for child in ast.walk(outer)
                ):
                    chain.append(outer)
            scope = ctx.module_scope
            for outer in chain:
                scope = ctx.resolver.scope_of(outer, scope)
            return scope
    raise AssertionError(function)


def handlers(exc: ExceptionAnalysis, function: str) -> List[Admission]:
    scope = scope_of(exc, function)
    return [exc.handler(h, scope) for h in ast.walk(scope.node) if isinstance(h, ast.ExceptHandler)]


def test_direct_and_through_a_base_class() -> None:
    exc = analysis(
        "import requests\n"
        "def f():\n"
        "    try: pass\n"
        "    except requests.Timeout: pass\n"
        "    except requests.ConnectionError: pass\n"
        "    except ValueError: pass\n"
    )
    timeout, connection, value = handlers(exc, "f")
    direct = timeout.admits(EXPIRY)
    assert direct.direct and direct.type == "requests.Timeout" and direct.named == "requests.Timeout"
    via = connection.admits(EXPIRY)
    assert not via.direct and via.type == "requests.ConnectTimeout" and via.named == "requests.ConnectionError"
    assert value.kinds == frozenset() and value.complete


def test_tuples_and_the_element_to_report_on() -> None:
    exc = analysis(
        "import asyncio\nfrom httpx import ReadTimeout as RT\n"
        "def f():\n"
        "    try: pass\n"
        "    except (ValueError, RT, asyncio.CancelledError): pass\n"
    )
    (adm,) = handlers(exc, "f")
    expiry, cancel = adm.admits(EXPIRY), adm.admits(CANCEL)
    assert expiry.type == "httpx.ReadTimeout" and isinstance(expiry.node, ast.Name) and expiry.node.id == "RT"
    assert cancel.type == "asyncio.CancelledError" and cancel.direct
    assert [e.qualname for e in adm.elements] == ["ValueError", "httpx.ReadTimeout", "asyncio.CancelledError"]


def test_names_bound_to_tuples_module_function_and_class_level() -> None:
    exc = analysis(
        "import socket, requests\n"
        "RETRYABLE = (ConnectionError, socket.timeout)\n"
        "MORE = RETRYABLE + (requests.ReadTimeout,)\n"
        "def f():\n"
        "    local = [KeyError, *MORE]\n"
        "    try: pass\n"
        "    except RETRYABLE: pass\n"
        "    except tuple(local): pass\n"
        "class C:\n"
        "    ERRORS = (OSError,)\n"
        "    def m(self):\n"
        "        try: pass\n"
        "        except self.ERRORS: pass\n"
    )
    module, dynamic = handlers(exc, "f")
    assert module.admits(EXPIRY).type == "socket.timeout" and module.complete
    assert dynamic.kinds == frozenset() and not dynamic.complete  # `tuple(...)`: a call, unknown
    scope = scope_of(exc, "f")
    local = next(n for n in ast.walk(scope.node) if isinstance(n, ast.Name) and n.id == "local")
    found = exc.admits(local, scope)
    assert [e.qualname for e in found.elements] == [
        "KeyError", "ConnectionError", "socket.timeout", "requests.ReadTimeout",
    ]
    (method,) = handlers(exc, "m")
    assert method.admits(EXPIRY).type == "socket.timeout" and not method.admits(EXPIRY).direct


def test_bare_except_and_base_exception_admit_cancel() -> None:
    exc = analysis(
        "import asyncio\n"
        "async def f():\n"
        "    try: pass\n"
        "    except: pass\n"
        "    try: pass\n"
        "    except BaseException: pass\n"
        "    try: pass\n"
        "    except Exception: pass\n"
    )
    bare, base, exception = handlers(exc, "f")
    assert bare.catch_all and base.catch_all and not exception.catch_all
    assert bare.admits(CANCEL).type == "asyncio.CancelledError"
    assert isinstance(bare.admits(CANCEL).node, ast.ExceptHandler)
    assert base.admits(CANCEL).type == "asyncio.CancelledError" and not base.admits(CANCEL).direct
    assert exception.admits(EXPIRY).type == "asyncio.TimeoutError"  # the file uses asyncio
    assert exception.admits(CANCEL) is None or exception.admits(CANCEL).type != "asyncio.CancelledError"


def test_conventions_subclasses_and_unknowns() -> None:
    exc = analysis(
        "import requests\n"
        "from acme.errors import UpstreamTimeout, UpstreamError, JobCancelled\n"
        "class SlowBackend(requests.Timeout): pass\n"
        "class BreakerOpenError(Exception): pass\n"
        "class Plain(Exception): pass\n"
        "Alias = requests.ReadTimeout\n"
        "def f(errors):\n"
        "    try: pass\n"
        "    except (UpstreamTimeout, UpstreamError, JobCancelled): pass\n"
        "    except (SlowBackend, BreakerOpenError, Plain, Alias): pass\n"
        "    except errors: pass\n"
    )
    imported, local, parameter = handlers(exc, "f")
    assert imported.admits(EXPIRY).source == "convention" and imported.admits(CANCEL).type == "acme.errors.JobCancelled"
    assert imported.complete
    assert local.admits(EXPIRY).type == "SlowBackend" and local.admits(EXPIRY).source == "subclass"
    assert local.admits(BREAKER).type == "BreakerOpenError"
    assert [a.type for a in local.all(EXPIRY)] == ["SlowBackend", "requests.ReadTimeout"]
    assert parameter.kinds == frozenset() and not parameter.complete


def test_the_profile_adds_its_own_types() -> None:
    text = (
        "from acme import errors\n"
        "def f():\n"
        "    try: pass\n"
        "    except (errors.Overdue, errors.Gone, errors.Tripped): pass\n"
    )
    (quiet,) = handlers(analysis(text), "f")
    assert quiet.kinds == frozenset()
    profile = {"exceptions": {
        "expiry": ["acme.errors.Overdue"], "cancel": ["acme.errors.Gone"], "breaker": ["acme.errors.Tripped"],
    }}
    (adm,) = handlers(analysis(text, profile), "f")
    assert adm.admits(EXPIRY).source == "profile" and adm.admits(CANCEL).type == "acme.errors.Gone"
    assert adm.admits(BREAKER).type == "acme.errors.Tripped"
    wide = analysis(text, profile).vocabulary.admitted("Exception")
    assert {"acme.errors.Overdue", "acme.errors.Gone", "acme.errors.Tripped"} <= {t.qualname for t in wide}


def test_status_codes_and_comparisons() -> None:
    exc = analysis(
        "import grpc\nfrom grpc import StatusCode as SC\n"
        "def f(err):\n"
        "    a = err.code() == grpc.StatusCode.DEADLINE_EXCEEDED\n"
        "    b = SC.CANCELLED is not err.code()\n"
        "    c = err.code() in (SC.UNAVAILABLE, SC.DEADLINE_EXCEEDED)\n"
        "    d = err.code() == grpc.StatusCode.UNAVAILABLE\n"
        "    e = isinstance(err, grpc.RpcError)\n"
    )
    scope = scope_of(exc, "f")
    compares = [n for n in ast.walk(scope.node) if isinstance(n, ast.Compare)]
    a, b, c, d = (exc.status_test(n, scope) for n in compares)
    assert a.kinds == {EXPIRY} and not a.negated and isinstance(a.subject, ast.Call)
    assert b.kinds == {CANCEL} and b.negated
    assert c.kinds == {EXPIRY}
    assert d is None
    call = next(
        n for n in ast.walk(scope.node) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "isinstance"
    )
    subject, adm = exc.isinstance_test(call, scope)
    assert subject.id == "err"
    assert adm.admits(EXPIRY).type == "grpc.StatusCode.DEADLINE_EXCEEDED" and adm.admits(EXPIRY).status
