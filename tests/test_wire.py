"""The wire analysis: header and metadata reads and writes, keys, and derived names."""
from __future__ import annotations

import ast
import textwrap

from deadline_lint.engine.checker import Checker
from deadline_lint.engine.context import FileContext
from deadline_lint.support.source import SourceFile
from deadline_lint.families.clock.wire import WireValues, literal_key_read, normalise_key

_CHECKER = Checker()


def _context(code: str):
    text = textwrap.dedent(code)
    tree = ast.parse(text)
    ctx = FileContext(SourceFile(text, "m.py"), tree, _CHECKER.profile, _CHECKER.catalog)
    function = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    return ctx, ctx.resolver.scope_of(function, ctx.module_scope), function


def test_keys_are_normalised() -> None:
    assert normalise_key("HTTP_X_REQUEST_BUDGET_MS") == "x-request-budget-ms"
    assert normalise_key(" X_Deadline ") == "x-deadline"


def test_reads_from_every_container_spelling() -> None:
    ctx, scope, function = _context('''
        def f(request, context, environ, headers, config):
            a = request.headers["X-Request-Budget-Ms"]
            b = headers.get("grpc-timeout", "1S")
            c = dict(context.invocation_metadata())["x-deadline"]
            md = dict(context.invocation_metadata())
            d = md.get("x-budget")
            e = environ["HTTP_DATE"]
            f = request.META.get("HTTP_X_TIMEOUT")
            g = config["timeout"]
    ''')
    wire = ctx.analysis(WireValues)
    reads = {}
    for node in ast.walk(function):
        if literal_key_read(node) is not None:
            key = wire.header_read(node, scope)
            if key is not None:
                reads[key] = node
    assert sorted(reads) == ["date", "grpc-timeout", "x-budget", "x-deadline", "x-request-budget-ms", "x-timeout"]
    assert all(wire.is_budget_key(k) for k in reads if k != "date") and not wire.is_budget_key("date")
    assert wire.is_date_key("date")


def test_writes_and_derived_names() -> None:
    ctx, scope, function = _context('''
        def f(request, stub, budget):
            raw = request.headers["X-Request-Budget-Ms"]
            seconds = int(raw) / 1000
            capped = min(seconds, 10)
            other = 3
            headers = {"X-Deadline": 1, "Accept": "json"}
            request.headers["x-timeout"] = 2
            stub.Call(None, metadata=[("grpc-timeout", "1S")])
            payload = {"deadline": 5}
    ''')
    wire = ctx.analysis(WireValues)
    written = []
    for node in ast.walk(function):
        if isinstance(node, (ast.Assign, ast.keyword, ast.Call)):
            written.extend(key for key, _, _ in wire.header_writes(node, scope))
    assert sorted(written) == ["accept", "grpc-timeout", "x-deadline", "x-timeout"]
    read = function.body[0].value
    assert wire.derived_names(scope, read) == {"raw", "seconds", "capped"}
