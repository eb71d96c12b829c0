"""The retry catalog (retry.yaml) and the retry-policy analysis."""
from __future__ import annotations

import ast
from typing import Optional

import pytest

from deadline_lint.catalog import _HERE, load_catalog
from deadline_lint.catalog.retry import ALL, ALL_BUT, ATTEMPTS, DELAY, NEVER, NOTHING, TYPES, validate_retry_catalog
from deadline_lint.engine.checker import Checker
from deadline_lint.engine.context import FileContext
from deadline_lint.families.retry.analysis.retry import RetryAnalysis
from deadline_lint.families.retry.analysis.retry_policy import UNKNOWN
from deadline_lint.families.shared.errors.exceptions import EXPIRY
from deadline_lint.settings.profile import build_profile
from deadline_lint.support.source import SourceFile

CATALOG = load_catalog().retry


def test_the_built_in_retry_catalog_is_valid_and_knows_other_import_paths() -> None:
    import yaml

    assert validate_retry_catalog(yaml.safe_load((_HERE / "retry.yaml").read_text())) is None
    assert CATALOG.policy("tenacity.asyncio.AsyncRetrying").qualname == "tenacity.AsyncRetrying"
    assert CATALOG.predicate("tenacity.retry.retry_if_exception_type").admits == TYPES
    assert CATALOG.policy("google.api_core.retry_async.AsyncRetry") is not None
    assert CATALOG.policy("stamina.retry").filter.keyword == "on"  # YAML would read a bare `on` as true
    assert CATALOG.is_sleep("asyncio.sleep") and not CATALOG.is_sleep("time.monotonic")


@pytest.mark.parametrize(
    "content, expected",
    [
        ({"policies": {"x.retry": {"form": "wrapper"}}}, "form"),
        ({"policies": {"x.retry": {"form": "decorator", "stops": {"n": "forever"}}}}, "stops"),
        ({"predicates": {"x.p": {"admits": "some"}}}, "admits"),
        ({"client_retries": {"x.C": {"position": -1}}}, "position"),
        ({"sleep": []}, "keys among"),
        ({"outside_requests": {"names": ["(unclosed"]}}, "regular expressions"),
        ({"outside_requests": {"callers": []}}, "outside_requests"),
    ],
)
def test_malformed_retry_catalog_is_named(content, expected: str) -> None:
    problem = validate_retry_catalog(content)
    assert problem is not None and expected in problem


def test_outside_requests_follows_private_callees_of_background_code_only() -> None:
    from deadline_lint.families.shared.lifecycle import Lifecycle

    ctx, _, tree = setup(
        "import asyncio\n"
        "class Jobs:\n"
        "    def start(self):\n"
        "        self._task = asyncio.create_task(self._loop())\n"
        "    async def _loop(self):\n"
        "        await self._tick()\n"
        "    async def _tick(self):\n"
        "        pass\n"
        "    async def handle(self, request):\n"
        "        await self._shared()\n"
        "        await self.public()\n"
        "    async def _shared(self):\n"
        "        pass\n"
        "    async def public(self):\n"
        "        pass\n"
        "    async def on_shutdown(self):\n"
        "        await self.public()\n"
    )
    lifecycle = ctx.analysis(Lifecycle)
    outside = {name for name in ("start", "_loop", "_tick", "handle", "_shared", "public", "on_shutdown")
               if lifecycle.outside(function(tree, name))}
    assert outside == {"_loop", "_tick", "on_shutdown"}


def setup(text: str, profile: Optional[dict] = None):
    checker = Checker(profile=build_profile(profile, "test.yaml") if profile else None)
    tree = ast.parse(text)
    ctx = FileContext(SourceFile(text, "svc.py"), tree, checker.profile, checker.catalog)
    return ctx, ctx.analysis(RetryAnalysis), tree


def function(tree: ast.Module, name: str) -> ast.AST:
    return next(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name)


def test_decorators_with_and_without_parentheses() -> None:
    ctx, retry, tree = setup(
        "import tenacity, backoff, requests\n"
        "from tenacity import retry\n"
        "@retry\n"
        "def bare(): pass\n"
        "@tenacity.retry(retry=tenacity.retry_if_exception_type(requests.Timeout) | tenacity.retry_if_result(bool),\n"
        "                stop=tenacity.stop_after_attempt(3) | tenacity.stop_after_delay(5))\n"
        "def called(): pass\n"
        "@backoff.on_exception(backoff.expo, OSError, giveup=bool)\n"
        "def gives_up(): pass\n"
        "def plain(): pass\n"
    )
    (bare,) = retry.decorators(function(tree, "bare"))
    assert bare.call is None and not bare.filter_given and [p.state for p in bare.filter] == [ALL]
    assert [s.kind for s in bare.stops] == [NEVER]
    (called,) = retry.decorators(function(tree, "called"))
    assert [p.state for p in called.filter] == [TYPES, NOTHING]
    assert called.filter[0].admission.admits(EXPIRY).type == "requests.Timeout"
    assert [s.kind for s in called.stops] == [ATTEMPTS, DELAY]
    (gives_up,) = retry.decorators(function(tree, "gives_up"))
    assert gives_up.giveup and gives_up.filter[0].admission.admits(EXPIRY) is not None
    assert retry.decorators(function(tree, "plain")) == ()
    assert retry.retrying_function(function(tree, "bare")) and not retry.retrying_function(function(tree, "plain"))


def test_predicates_exclusions_and_unknowns() -> None:
    ctx, retry, tree = setup(
        "from tenacity import Retrying, retry_if_not_exception_type, retry_if_exception_type, stop_after_attempt\n"
        "POLICY = retry_if_not_exception_type(TimeoutError)\n"
        "def f(options, check):\n"
        "    a = Retrying(retry=POLICY)\n"
        "    b = Retrying(retry=retry_if_exception_type() & check)\n"
        "    c = Retrying(**options)\n"
        "    d = Retrying(stop=stop_after_attempt(1))\n"
        "    e = Retrying(retry=check, stop=lambda state: False)\n"
    )
    scope = ctx.resolver.scope_of(function(tree, "f"), ctx.module_scope)
    calls = [n.value for n in function(tree, "f").body]
    a, b, c, d, e = (retry.policy_call(call, scope) for call in calls)
    assert a.filter[0].state == ALL_BUT and a.filter[0].admission.admits(EXPIRY).direct
    assert [p.state for p in b.filter] == [UNKNOWN]
    assert [p.state for p in c.filter] == [UNKNOWN] and [s.kind for s in c.stops] == [UNKNOWN]
    assert not d.retries and a.retries
    assert [s.kind for s in e.stops] == [UNKNOWN]


def test_policy_loops_and_hand_written_loops() -> None:
    ctx, retry, tree = setup(
        "import time, requests, stamina\n"
        "def f(url, items):\n"
        "    for attempt in stamina.retry_context(on=ValueError):\n"
        "        with attempt:\n"
        "            pass\n"
        "    for attempt in range(3):\n"
        "        try:\n"
        "            return requests.get(url, timeout=1)\n"
        "        except requests.Timeout:\n"
        "            time.sleep(1)\n"
        "    for item in items:\n"
        "        try:\n"
        "            return item()\n"
        "        except ValueError:\n"
        "            continue\n"
        "    while True:\n"
        "        try:\n"
        "            value = requests.get(url, timeout=1)\n"
        "        except requests.Timeout:\n"
        "            raise\n"
        "        break\n"
    )
    node = function(tree, "f")
    scope = ctx.resolver.scope_of(node, ctx.module_scope)
    policy_loop, counted, over_data, reraising = node.body
    assert retry.policy_loop(policy_loop, scope).api.qualname == "stamina.retry_context"
    loop = retry.loop(counted, scope)
    assert len(loop.handlers) == 1 and [ast.unparse(s.func) for s in loop.sleeps] == ["time.sleep"]
    assert retry.loop(over_data, scope) is None
    assert retry.loop(reraising, scope) is None


def test_clients_with_their_own_retries() -> None:
    ctx, retry, tree = setup(
        "import requests, httpx\n"
        "from requests.adapters import HTTPAdapter\n"
        "from urllib3.util import Retry\n"
        "s = requests.Session()\n"
        "s.mount('https://', HTTPAdapter(max_retries=Retry(total=3)))\n"
        "z = requests.Session()\n"
        "z.mount('https://', HTTPAdapter(max_retries=Retry(0)))\n"
        "c = httpx.Client(transport=httpx.HTTPTransport(retries=2))\n"
        "def f():\n"
        "    s.get('u'); z.get('u'); c.get('u')\n"
    )
    node = function(tree, "f")
    scope = ctx.resolver.scope_of(node, ctx.module_scope)
    s_call, z_call, c_call = [statement.value for statement in node.body]
    assert ast.unparse(retry.own_retries(s_call, scope).func) == "HTTPAdapter"
    assert retry.own_retries(z_call, scope) is None
    assert ast.unparse(retry.own_retries(c_call, scope).func) == "httpx.HTTPTransport"


def test_the_profile_adds_retry_decorators() -> None:
    text = "from acme.retry import retrying\n@retrying(times=3)\ndef f(): pass\n"
    _, quiet, tree = setup(text)
    assert not quiet.retrying_function(function(tree, "f"))
    _, retry, tree = setup(text, {"retry_decorators": ["acme.retry.retrying"]})
    assert retry.retrying_function(function(tree, "f"))
    (policy,) = retry.decorators(function(tree, "f"))
    assert [p.state for p in policy.filter] == [UNKNOWN] and [s.kind for s in policy.stops] == [UNKNOWN]
