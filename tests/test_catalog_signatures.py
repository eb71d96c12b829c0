"""The catalog against the real signatures of the libraries installed in the test
environment: the timeout's parameter name, its position (or that it is keyword-only) and the
library's default. A wrong position makes DL101 fire on a call that already passes a timeout
positionally, and its fix then adds a second one (`TypeError: got multiple values`)."""
from __future__ import annotations

import importlib
import inspect
import socket
from typing import Any, List, Optional, Tuple

import pytest

from deadline_lint.catalog import CLIENT, load_catalog

CATALOG = load_catalog()

# APIs whose signature takes the timeout only through **kwargs, and where those go.
FORWARDED_TO = {
    "requests.": "requests.Session.request",
    "requests.Session.send": "requests.adapters.HTTPAdapter.send",
    "aiohttp.ClientSession.": "aiohttp.ClientSession._request",
    "aiohttp.request": "aiohttp.ClientSession._request",
    "asyncpg.create_pool": "asyncpg.connect",
    # boto3's module-level client()/resource() pass everything to the default Session's.
    "boto3.client": "boto3.session.Session.client",
    "boto3.resource": "boto3.session.Session.resource",
    # urllib3: request() and the managers pass **kw on to a connection pool's urlopen; the
    # managers' constructors and connection_from_url pass theirs to the pool's constructor.
    "urllib3.HTTPConnectionPool.": "urllib3.HTTPConnectionPool.urlopen",
    "urllib3.HTTPSConnectionPool.": "urllib3.HTTPSConnectionPool.urlopen",
    "urllib3.PoolManager.": "urllib3.HTTPConnectionPool.urlopen",
    "urllib3.ProxyManager.": "urllib3.HTTPConnectionPool.urlopen",
    "urllib3.PoolManager": "urllib3.HTTPConnectionPool",
    "urllib3.ProxyManager": "urllib3.HTTPConnectionPool",
    "urllib3.connection_from_url": "urllib3.HTTPConnectionPool",
    "websocket.WebSocket.connect": "websocket.create_connection",
}
_MISSING = object()


def _resolve(qualname: str) -> Any:
    """The object named, or _MISSING when its library is not installed here."""
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            found = getattr(found, part)  # a listed name that does not exist fails the test
        return found
    return _MISSING


def _parameters(target: Any) -> List[inspect.Parameter]:
    parameters = list(inspect.signature(target).parameters.values())
    if inspect.isfunction(target) and parameters and parameters[0].name == "self":
        parameters = parameters[1:]  # a method looked up on its class
    return parameters


def _forwarded(qualname: str) -> Optional[str]:
    matches = [target for prefix, target in FORWARDED_TO.items() if qualname.startswith(prefix)]
    return max(matches, key=len) if matches else None


def _seconds(default: Any, owner: str) -> Any:
    """A parameter default as the catalog's seconds (None: no limit)."""
    if default is None and owner.startswith("boto3."):  # config=None: botocore's own defaults
        return importlib.import_module("botocore.endpoint").DEFAULT_TIMEOUT
    if default is inspect.Parameter.empty or default is None:
        return None  # required (`asyncio.wait_for`) or no limit
    if default is getattr(socket, "_GLOBAL_DEFAULT_TIMEOUT", _MISSING):
        return socket.getdefaulttimeout()
    if type(default).__name__ == "_TYPE_DEFAULT":  # urllib3's sentinel: the socket default
        return socket.getdefaulttimeout()
    if type(default).__name__ == "UseClientDefault":  # httpx: the client's own default
        return _seconds(_timeout_parameter(owner.rpartition(".")[0], "timeout")[0].default, owner)
    if type(default).__name__ == "_SENTINEL":  # aiohttp: the session's DEFAULT_TIMEOUT
        return importlib.import_module("aiohttp.client").DEFAULT_TIMEOUT.total
    for attribute in ("total", "read"):  # aiohttp.ClientTimeout, httpx.Timeout
        if hasattr(default, attribute):
            return getattr(default, attribute)
    return default


def _timeout_parameter(qualname: str, keyword: str) -> Tuple[inspect.Parameter, int, int]:
    """The timeout parameter, its index and the count of parameters that can be positional."""
    target = _resolve(qualname)
    parameters = _parameters(target)
    positional = sum(1 for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    for index, parameter in enumerate(parameters):
        if parameter.name == keyword:
            return parameter, index, positional
    forwarded = _forwarded(qualname)
    assert forwarded, f"{qualname} has no parameter `{keyword}`"
    assert any(p.kind is p.VAR_KEYWORD for p in parameters), f"{qualname} takes no **kwargs to pass `{keyword}` on"
    parameter, _, _ = _timeout_parameter(forwarded, keyword)
    return parameter, positional, positional  # reachable by keyword only


def _entries():
    for qualname, api in sorted(CATALOG.apis.items()):
        yield pytest.param(qualname, api.keyword, api.position, api.default_timeout, api.kind, id=qualname)
    factories = {}
    for factory, built in CATALOG.factories.items():
        factories.setdefault(built, []).append(factory)
    for qualname, client in sorted(CATALOG.classes.items()):
        if not client.constructor_keyword:
            continue
        # A class built through factories (asyncpg.connect) is checked through them.
        for called in sorted(factories.get(qualname, [qualname])):
            api = CATALOG.constructor_api(client, called)
            yield pytest.param(called, api.keyword, api.position, api.default_timeout, CLIENT, id=called + "()")


@pytest.mark.parametrize("qualname, keyword, position, default, kind", list(_entries()))
def test_catalog_matches_the_real_signature(qualname, keyword, position, default, kind) -> None:
    target = _resolve(qualname)
    if target is _MISSING:
        pytest.skip(f"{qualname.split('.')[0]} is not installed")
    if keyword is None:  # takes no timeout: a fix must never add one
        names = {p.name for p in _parameters(target)}
        assert "timeout" not in names, f"{qualname} does take a timeout"
        return
    parameter, index, positional = _timeout_parameter(qualname, keyword)
    if parameter.kind is parameter.POSITIONAL_OR_KEYWORD and index < positional:
        assert position == index, f"{qualname}: `{keyword}` is positional parameter {index}, catalog says {position}"
    else:
        # Keyword-only here; a position past every positional parameter (kept for older
        # Python versions, e.g. http.client.HTTPSConnection) can never be reached by mistake.
        assert position is None or position >= positional, f"{qualname}: `{keyword}` is keyword-only"
    if kind == CLIENT or default is not None or _seconds(parameter.default, qualname) is not None:
        assert _seconds(parameter.default, qualname) == default, f"{qualname}: default of `{keyword}`"


def test_installed_libraries_are_actually_compared() -> None:
    """The comparison is only worth something if the libraries are there (the test extra
    installs them); this fails rather than letting every case above skip."""
    for library in ("requests", "httpx", "aiohttp", "redis", "asyncpg"):
        assert _resolve(library) is not _MISSING, f"{library} is missing from the test environment"


def test_a_positional_timeout_is_seen_and_never_given_twice() -> None:
    from deadline_lint.engine.checker import Checker
    from deadline_lint.fixes.loop import FixMode, fix_text

    text = (
        "import requests\n"
        "def f(url):\n"
        '    return requests.Session().request("GET", url, None, None, None, None, None, None, 5)\n'
    )
    checker = Checker()
    assert [d.code for d in checker.check_text(text, "a.py")] == []
    assert fix_text(checker, text, "a.py", FixMode(unsafe=True)).text == text
