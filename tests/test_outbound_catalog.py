"""The outbound catalog as data, the profile extending it, the text prefilter, receivers and
"budget in scope": behaviour the fixtures rely on, checked directly."""
from __future__ import annotations

import ast
import textwrap

import pytest

from deadline_lint.catalog import CLIENT, WAIT, load_catalog
from deadline_lint.engine.checker import Checker
from deadline_lint.engine.context import FileContext
from deadline_lint.engine.requires import Text
from deadline_lint.engine.rule import DOC_SECTIONS
from deadline_lint.families.outbound.analysis.outbound import OutboundSites
from deadline_lint.families.registry import all_rules
from deadline_lint.families.shared.budget.budget import GRPC_CONTEXT, OBJECT, SECONDS, BudgetAnalysis
from deadline_lint.settings.profile import ProfileError, build_profile, default_profile
from deadline_lint.support.diagnostics import Applicability
from deadline_lint.support.source import SourceFile

OUTBOUND_CODES = [f"DL10{n}" for n in range(1, 9)]


def check(code: str, text: str, profile=None, select=None):
    checker = Checker(profile or default_profile(), select=select or [code])
    return [(d.line, d.code) for d in checker.check_text(textwrap.dedent(text), "example.py")]


# -- the built-in catalog ------------------------------------------------------------------
def test_catalog_lists_every_client_the_design_names() -> None:
    catalog = load_catalog()
    apis = catalog.apis
    assert apis["requests.get"].default_timeout is None
    assert apis["httpx.stream"].default_timeout == 5
    assert apis["httpx.AsyncClient.get"].default_timeout == 5
    assert apis["aiohttp.ClientSession.post"].default_timeout == 300
    assert apis["aiohttp.request"].render_timeout("t") == "aiohttp.ClientTimeout(total=t)"
    assert (apis["urllib.request.urlopen"].keyword, apis["urllib.request.urlopen"].position) == ("timeout", 2)
    assert apis["socket.create_connection"].position == 1
    assert apis["asyncio.wait_for"].kind == WAIT and apis["asyncio.wait_for"].wraps == 0
    assert apis["asyncio.open_connection"].keyword is None and apis["asyncio.open_connection"].wrap
    assert apis["asyncpg.connect"].default_timeout == 60
    assert apis["asyncpg.Pool.fetch"].keyword == "timeout"
    http_connection = catalog.classes["http.client.HTTPConnection"]
    assert (http_connection.constructor_position, http_connection.checked) == (2, True)
    assert catalog.classes["redis.Redis"].constructor_keyword == "socket_timeout"
    assert catalog.constructed_class("boto3.client").qualname == "botocore.client.BaseClient"
    assert catalog.constructed_class("asyncpg.create_pool").qualname == "asyncpg.Pool"
    assert set(catalog.timeout_objects) >= {"httpx.Timeout", "aiohttp.ClientTimeout", "botocore.config.Config"}


def test_grpc_stubs_are_matched_by_module_suffix() -> None:
    catalog = load_catalog()
    stub = catalog.client_class("shop.protos.orders_pb2_grpc.OrdersStub")
    assert stub is not None and stub.any_method
    method = catalog.method_api(stub, "PlaceOrder")
    assert (method.keyword, method.position, method.default_timeout) == ("timeout", 1, None)
    assert catalog.method_api(stub, "_private") is None
    assert catalog.client_class("shop.protos.orders_pb2.OrdersStub") is None  # messages, not stubs
    assert catalog.client_class("shop.orders_pb2_grpc.OrdersServicer") is None
    assert catalog.stub_attribute(stub, "future") is False
    assert catalog.stub_attribute(stub, "with_call") is True


def test_constructors_are_apis_of_kind_client() -> None:
    catalog = load_catalog()
    api = catalog.constructor_api(catalog.classes["redis.Redis"], "redis.Redis")
    assert (api.kind, api.keyword, api.position, api.checked) == (CLIENT, "socket_timeout", 4, True)
    factory = catalog.constructor_api(catalog.classes["asyncpg.Connection"], "asyncpg.connect")
    assert (factory.keyword, factory.position, factory.checked) == ("command_timeout", None, False)


# -- adding a client is a data entry --------------------------------------------------------
ACME_CLIENT = [
    {
        "library": "acme-queue",
        "default_timeout": None,
        "keyword": "wait_s",
        "functions": ["acme.queue.publish", {"name": "acme.queue.consume", "position": 1}],
        "classes": {"acme.queue.Broker": {"methods": ["publish"], "constructor_keyword": "default_wait_s"}},
        "timeout_objects": {"acme.queue.Wait": {"fields": {"seconds": 0}}},
    }
]

ACME_CODE = """
    import acme.queue

    def handler(message, budget):
        acme.queue.publish(message)
        acme.queue.consume("orders", 2.0)
        acme.queue.Broker().publish(message)
        acme.queue.Broker(default_wait_s=1).publish(message)
        acme.queue.Wait(None)
"""


def test_a_client_added_through_the_profile_is_checked() -> None:
    profile = build_profile({"outbound": ACME_CLIENT}, "test")
    assert check("DL101", ACME_CODE) == []  # unknown without the profile
    assert check("DL101", ACME_CODE, profile) == [(5, "DL101"), (7, "DL101")]
    assert check("DL102", ACME_CODE, profile) == [(6, "DL102"), (8, "DL102")]
    assert check("DL103", ACME_CODE, profile) == [(9, "DL103")]


def test_the_fix_uses_the_profile_clients_keyword() -> None:
    profile = build_profile({"outbound": ACME_CLIENT}, "test")
    checker = Checker(profile, select=["DL101"])
    found = checker.check_text(textwrap.dedent(ACME_CODE), "example.py")
    assert [e.text for d in found for e in d.fix.edits] == [", wait_s=budget.timeout()"] * 2


def test_a_profile_entry_replaces_a_built_in_one() -> None:
    code = "import redis\ncache = redis.Redis(host='cache')\n"
    assert check("DL101", code) == []  # redis-py 8: 5 s by default
    older_redis = [{"library": "redis<8", "default_timeout": None, "keyword": None, "classes": {
        "redis.Redis": {"constructor_keyword": "socket_timeout", "checked": True}}}]
    assert check("DL101", code, build_profile({"outbound": older_redis}, "test")) == [(2, "DL101")]


@pytest.mark.parametrize(
    "group, expected",
    [
        ({"library": "x", "stubs": [{"module_suffix": "_pb2_grpc"}]}, "`module_suffix` and `class_suffix`"),
        ({"library": "x", "timeout_objects": {"x.T": {"fields": []}}}, "`fields` as a mapping"),
        ({"library": "x", "timeout_objects": {"x.T": {"fields": {"a": 0}, "unbounded_if_none": ["b"]}}},
         "`unbounded_if_none` as a list of names from `fields`"),
        ({"library": "x", "functions": [{"name": "x.f", "kind": "wait"}]}, "`wraps`"),
        ({"library": "x", "functions": [{"name": "x.f", "wrap": "{nope}"}]}, "`wrap` as a template"),
        ({"library": "x", "timeout_template": "{seconds}"}, "`timeout_template` as a template"),
        ({"library": "x", "classes": {"x.C": {"checked": "yes"}}}, "`checked` as true or false"),
        ({"library": "x", "classes": {"x.C": {"methods": [{"name": "m", "colour": 1}]}}}, "`methods` entries"),
        ({"library": "x", "colour": "red"}, "client group keys among"),
    ],
)
def test_malformed_client_groups_are_one_clear_line(group, expected) -> None:
    with pytest.raises(ProfileError) as info:
        build_profile({"outbound": [group]}, "profile.yaml")
    message = str(info.value)
    assert message.startswith("profile.yaml: outbound: expected") and expected in message
    assert "\n" not in message


# -- the text prefilter ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, parsed",
    [
        ("import os, requests\nrequests.get(u)\n", True),
        ("from requests.api import get\n", True),
        ("import asyncio\nasyncio.wait_for(x, 1)\n", True),
        ("import asyncio\nasyncio.sleep(1)\n", False),  # asyncio alone is everywhere
        ("# requests are welcome\nprint('requests')\n", False),  # the word, but no import
        ("from . import orders_pb2_grpc\n", True),
        ("from .client import Redis  # inside redis itself\n", False),
        ("from requests.exceptions import Timeout\n", False),  # binds nothing that calls out
        ("from redis import asyncio as aioredis\n", True),
        ("from requests import (\n    codes,  # statuses\n    Session,\n)\n", True),
    ],
)
def test_a_file_is_parsed_only_when_it_imports_a_listed_module(text: str, parsed: bool) -> None:
    assert Checker(select=OUTBOUND_CODES).could_fire(text) is parsed


def test_the_import_look_is_shared_by_all_outbound_rules() -> None:
    checker = Checker(select=["DL1"], extend_select=["DL106", "DL108"])
    looks = {
        rule.code: {id(leaf.test) for leaf in needs.file.leaves() if isinstance(leaf, Text)}
        for rule, needs in zip(checker.rules, checker.needs)
    }
    # One import look for all (the engine asks it once per file); DL104 and DL105 also share
    # the look that admits budget hops.
    assert {rule.code for rule in checker.rules} == {code for code in all_rules() if code.startswith("DL1")}
    assert len(set.intersection(*looks.values())) == 1
    assert looks["DL104"] == looks["DL105"] and len(looks["DL104"]) == 2 and len(looks["DL101"]) == 1


@pytest.mark.parametrize(
    "text, parsed",
    [
        ("import time\ndef f(c, t):\n    d = time.monotonic() + t\n    c.x(timeout=d - time.monotonic())\n", True),
        ("def f(c, budget):\n    c.x(timeout = budget.timeout())\n", True),
        ("def f(c, budget):\n    c.x(read_timeout=budget.timeout())\n", False),  # not a hop keyword
        ("def f(c, budget):\n    return c.timeout == budget\n", False),  # compared, not passed
        ("def f(c, t):\n    c.x(timeout=t)\n", False),  # no budget word, no clock call
    ],
)
def test_budget_value_rules_also_parse_files_passing_a_budget_at_a_hop_keyword(text: str, parsed: bool) -> None:
    assert Checker(select=["DL104"]).could_fire(text) is parsed
    assert Checker(select=["DL101"]).could_fire(text) is False


# -- receivers ----------------------------------------------------------------------------
def _context(code: str) -> FileContext:
    text = textwrap.dedent(code)
    checker = Checker(select=["DL101"])
    return FileContext(SourceFile(text, "example.py"), ast.parse(text), checker.profile, checker.catalog)


_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _scopes(ctx: FileContext):
    """The scope every node sits in, built the way the engine's walk builds them."""
    where = {}
    stack = [(ctx.tree, ctx.module_scope)]
    while stack:
        node, scope = stack.pop()
        where[id(node)] = scope
        inner = ctx.resolver.scope_of(node, scope) if isinstance(node, _SCOPE_NODES) else scope
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return where


def _call_views(code: str, marker: str):
    """Both views of the call on the line containing `marker`, in the scope it sits in."""
    ctx = _context(code)
    line = next(i for i, text in enumerate(ctx.source.text.splitlines(), 1) if marker in text)
    call = next(n for n in ast.walk(ctx.tree) if isinstance(n, ast.Call) and n.lineno == line)
    ctx.scope = _scopes(ctx)[id(call)]
    sites = ctx.analysis(OutboundSites)
    return sites.call(call), sites.construction(call)


@pytest.mark.parametrize(
    "code, display, source",
    [
        ("import httpx\nc = httpx.Client(timeout=2)\nc.get(u)  # here\n", "httpx.Client.get", "constructor"),
        ("import httpx\nwith httpx.Client() as c:\n    c.get(u)  # here\n", "httpx.Client.get", "default"),
        (
            "import httpx\nclass A:\n    def setup(self):\n        self.c = httpx.Client(timeout=1)\n"
            "    def go(self):\n        return self.c.get(u)  # here\n",
            "httpx.Client.get",
            "constructor",
        ),
        (
            "import httpx\nclass A:\n    c: httpx.AsyncClient\n    async def go(self):\n"
            "        return await self.c.get(u)  # here\n",
            "httpx.AsyncClient.get",
            "hidden",
        ),
        (
            "import asyncpg\nasync def f():\n    conn = await asyncpg.connect(d, command_timeout=3)\n"
            "    await conn.fetch(q)  # here\n",
            "asyncpg.Connection.fetch",
            "constructor",
        ),
        ("from requests import Session as S\ns = S()\ns.post(u)  # here\n", "requests.Session.post", "default"),
    ],
)
def test_receivers_resolve_to_their_client(code: str, display: str, source: str) -> None:
    call, _ = _call_views(code, "# here")
    assert call is not None and (call.display_name, call.source) == (display, source)


@pytest.mark.parametrize(
    "code",
    [
        "import requests\nclass A:\n    def go(self):\n        self.requests.get(u)  # here\n",
        "session = {}\nsession.get('k')  # here\n",
        "import requests\ndef f(requests):\n    requests.get(u)  # here\n",
        "import httpx\nc = httpx.Client() if x else None\nc.get(u)  # here\n",
    ],
)
def test_unknown_receivers_stay_unknown(code: str) -> None:
    call, built = _call_views(code, "# here")
    assert call is None and built is None


def test_a_factory_call_is_both_a_call_and_a_construction() -> None:
    call, built = _call_views("import asyncpg\nasync def f():\n    await asyncpg.connect(d)  # here\n", "# here")
    assert call.api.qualname == "asyncpg.connect" and call.api.keyword == "timeout"
    assert built.api.kind == CLIENT and built.api.keyword == "command_timeout"


# -- budget in scope ----------------------------------------------------------------------
def _budgets(code: str):
    """The budget in scope inside each function, by function name."""
    ctx = _context(code)
    where = _scopes(ctx)
    found = {}
    for node in ast.walk(ctx.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope = ctx.resolver.scope_of(node, where[id(node)])
            found[node.name] = ctx.analysis(BudgetAnalysis).budget_of(scope)
    return found


def test_budget_sources_and_their_kinds() -> None:
    budgets = _budgets(
        """
        import grpc
        from shop.protos import a_pb2_grpc

        class S(a_pb2_grpc.AServicer):
            def Call(self, request, context):
                left = context.time_remaining()
                cap = left - 0.05

        def by_name(budget):
            pass

        def by_annotation(ctx: grpc.ServicerContext):
            pass

        def nothing(request, context):
            pass
        """
    )
    call = budgets["Call"]
    assert call.kind_of("context") == GRPC_CONTEXT and call.kind_of("left") == SECONDS
    assert "cap" in call.names and call.primary.name == "context"
    assert budgets["by_name"].kind_of("budget") == OBJECT
    assert budgets["by_annotation"].kind_of("ctx") == GRPC_CONTEXT
    assert budgets["nothing"] is None


def test_nested_functions_get_their_own_scope() -> None:
    budgets = _budgets(
        """
        def outer(budget):
            def closure():
                pass

            def rebinds():
                budget = 5

            def own(budget):
                pass

        def sibling():
            pass
        """
    )
    assert budgets["closure"].kind_of("budget") == OBJECT  # sees the outer budget
    assert budgets["rebinds"] is None  # a local `budget` hides it
    assert budgets["own"].kind_of("budget") == OBJECT
    assert budgets["sibling"] is None


def test_cancel_scopes_bound_only_awaited_calls_in_their_own_function() -> None:
    code = """
        import asyncio
        import aiohttp
        import requests

        async def f(url, session: aiohttp.ClientSession, loose):
            async with asyncio.timeout(1):
                requests.get(url)
                async with aiohttp.ClientSession() as s:
                    await s.get(url)

                async def later():
                    async with aiohttp.ClientSession() as s2:
                        await s2.get(url)
            async with asyncio.timeout(None):
                async with aiohttp.ClientSession() as s3:
                    await s3.get(url)
    """
    assert check("DL101", code) == [(8, "DL101"), (14, "DL101"), (17, "DL101")]


# -- the rules themselves -----------------------------------------------------------------
EXPECTED_FIXES = {
    "DL101": Applicability.SAFE,  # the best it can be: safe only from a budget in scope
    "DL102": Applicability.UNSAFE,
    "DL103": Applicability.UNSAFE,
    "DL104": Applicability.UNSAFE,
    "DL105": None,
    "DL106": None,
    "DL107": Applicability.UNSAFE,
    "DL108": None,
}


@pytest.mark.parametrize("code", OUTBOUND_CODES)
def test_outbound_rules_are_registered_and_documented(code: str) -> None:
    rule = all_rules()[code]
    assert rule.fix_applicability == EXPECTED_FIXES[code]
    assert rule.default_enabled is (code not in ("DL106", "DL108"))
    docs = rule.documentation()
    assert [line[3:] for line in docs.splitlines() if line.startswith("## ")] == list(DOC_SECTIONS)


def test_opt_in_rules_run_only_when_selected_by_code() -> None:
    code = (
        "import requests\ndef f(url, budget):\n    url = url.strip()\n"
        "    return requests.get(url, headers={}, timeout=budget.timeout())\n"
    )
    assert check("DL1", code, select=["DL1"]) == []
    assert check("DL106", code) == [(4, "DL106")]
    assert check("DL108", code) == [(4, "DL108")]


def test_margin_of_zero_turns_dl104_off() -> None:
    code = (
        "import grpc\nimport requests\n"
        "def f(u, c: grpc.ServicerContext):\n    requests.get(u, timeout=c.time_remaining())\n"
    )
    assert check("DL104", code) == [(4, "DL104")]
    assert check("DL104", code, build_profile({"hop_margin_ms": 0}, "test")) == []


def test_the_budget_header_comes_from_the_profile() -> None:
    code = "import requests\ndef f(u, budget):\n    requests.get(u, headers={'X-Deadline-Ms': '5'})\n"
    assert check("DL108", code) == [(3, "DL108")]
    assert check("DL108", code, build_profile({"budget_header": "x-deadline-ms"}, "test")) == []


# -- the fixtures cover the catalog ----------------------------------------------------------
def test_every_outbound_rule_has_six_positives_and_a_near_miss_section() -> None:
    from fixture_cases import fixture_cases

    for code in OUTBOUND_CODES:
        cases = [case for case in fixture_cases() if case.code == code]
        assert sum(len(case.expected()) for case in cases) >= 6, code
        assert any("near misses" in case.text().lower() for case in cases), code


def test_every_catalog_library_appears_in_an_outbound_fixture() -> None:
    from fixture_cases import fixture_cases

    texts = "\n".join(case.text() for case in fixture_cases() if case.code in OUTBOUND_CODES)
    catalog = load_catalog()
    for module in sorted(catalog.outbound_modules - {"aiobotocore"}):
        assert f"import {module}" in texts or f"from {module}" in texts, module
    for pattern in catalog.stubs:
        assert pattern.module_suffix in texts


def test_stdlib_protocol_clients_take_the_timeout_where_the_catalog_says() -> None:
    """The standard library is always importable: its constructors' real signatures."""
    import importlib
    import inspect

    catalog = load_catalog()
    checked = 0
    for qualname in ("ftplib.FTP", "smtplib.SMTP", "smtplib.LMTP", "imaplib.IMAP4", "poplib.POP3"):
        client = catalog.classes[qualname]
        module, _, name = qualname.rpartition(".")
        parameters = list(inspect.signature(getattr(importlib.import_module(module), name)).parameters)
        assert parameters.index(client.constructor_keyword) == client.constructor_position, qualname
        assert client.checked and client.default_timeout is None
        checked += 1
    assert checked == 5
