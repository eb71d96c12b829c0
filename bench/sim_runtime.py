"""The world a simulated call tree runs in (bench/simulate.py): a virtual clock, a request
deadline, and fake `requests`, `httpx`, `aiohttp`, `grpc`, `tenacity`, `time` and `asyncio`
modules that record every outbound call instead of making it.

Nothing here touches `sys.modules`: a generated module is executed with its own
`__builtins__`, whose `__import__` hands it these fakes (and its own package's modules), so
the test process's real `time`, `asyncio` and friends are never replaced.

Every hop takes a random virtual duration (and fails now and then, so retries retry); a hop
that would take longer than its timeout raises the library's timeout error after exactly the
timeout. Every backoff sleep advances the virtual clock. Parallel branches (`asyncio.gather`,
`TaskGroup`) each start at the parent's time; the parent resumes at the latest end.
"""
from __future__ import annotations

import asyncio as _real_asyncio
import builtins
import contextvars
import functools
import math
import random
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

HOP_MARGIN_S = 0.05
REFUSE_BELOW_S = 0.1
EDGE_TOTAL_S = 10.0
TIMEOUT_FLOOR_S = 0.001

_now: contextvars.ContextVar[float] = contextvars.ContextVar("virtual_now", default=0.0)


def now() -> float:
    return _now.get()


def advance(seconds: float) -> None:
    _now.set(_now.get() + max(0.0, seconds))


@dataclass
class Call:
    """One outbound call as the fake transport saw it."""

    site: str  # the call site's id (the URL / request the generated code passes)
    library: str
    timeout: Optional[float]  # None: no limit
    start: float
    deadline: float
    frames: List[str]  # generated functions on the stack, outermost first
    attempt: int = 1  # how many times this site was called so far in this request
    checked_at: Optional[float] = None  # its function passed a refuse check then, before this call
    # generated functions on the stack that a retry decorator is running again (attempt 2 on)
    retried: Tuple[str, ...] = ()

    @property
    def remaining(self) -> float:
        return self.deadline - self.start


@dataclass
class Request:
    deadline: float
    rng: random.Random
    calls: List[Call] = field(default_factory=list)
    refuse_checks: int = 0
    package: str = ""
    attempts: Dict[str, int] = field(default_factory=dict)
    # frame -> (when it passed a refuse check, hops made by then): the next hop is judged when
    # nothing but sleeping happened in between
    checked: Dict[str, Any] = field(default_factory=dict)


class _State:
    request: Optional[Request] = None


STATE = _State()


class Simulated(Exception):
    """Base of every error a fake raises: a request ending with one is a normal outcome."""


class Refused(Simulated):
    """Raised by generated code that refuses work below the refuse threshold."""


# The generated frames of whoever started the current task (`gather`, `TaskGroup`): a task's
# own stack begins at its coroutine, so without them a branch looks like an entry point.
_spawned_by: contextvars.ContextVar[tuple] = contextvars.ContextVar("spawned_by", default=())


# The generated functions a retry decorator is running again now (`module.qualname`, as in
# `Call.frames`): what a call below them owes to a retry that knew nothing of the budget.
_retried: contextvars.ContextVar[Tuple[str, ...]] = contextvars.ContextVar("retried", default=())


def _frames(package: str, depth: int = 2) -> List[str]:
    names: List[str] = []
    frame = sys._getframe(depth)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module == package or module.startswith(package + "."):
            names.append(f"{module.rsplit('.', 1)[-1]}.{frame.f_code.co_qualname}")
        frame = frame.f_back
    return [*_spawned_by.get(), *names[::-1]]


def _spawner() -> tuple:
    """The generated frames starting a task now (called from the fake gather/TaskGroup)."""
    request = STATE.request
    return tuple(_frames(request.package, 3)) if request is not None else ()


def _hop(site: Any, library: str, timeout: Optional[float], timeout_error: Callable[[], Exception],
         connect_error: Callable[[], Exception], connect_timeout: Optional[Callable[[], Exception]] = None) -> None:
    """Record the call, then spend its virtual duration (or its timeout, and raise)."""
    request = STATE.request
    assert request is not None, "an outbound call outside a simulated request"
    site = str(site)
    request.attempts[site] = request.attempts.get(site, 0) + 1
    frames = _frames(request.package)
    caller = next((f for f in reversed(frames) if not f.split(".")[-1].startswith("fetch_")), "")
    check = request.checked.pop(caller, None)
    checked_at = check[0] if check is not None and check[1] == len(request.calls) else None
    request.calls.append(Call(site, library, timeout, now(), request.deadline, frames,
                              request.attempts[site], checked_at, _retried.get()))
    rng = request.rng
    if rng.random() < 0.15:  # a transient failure early in the call
        spent = rng.uniform(0.001, 0.05)
        if timeout is not None and spent >= timeout:
            advance(timeout)
            raise (connect_timeout or timeout_error)()
        advance(spent)
        raise connect_error()
    duration = rng.expovariate(1 / 0.4)  # most hops are quick, a few are slow
    if timeout is not None and duration >= timeout:
        advance(timeout)
        if connect_timeout is not None and rng.random() < 0.3:
            raise connect_timeout()  # expired while connecting: requests' ConnectTimeout
        raise timeout_error()
    advance(duration)


def _seconds(value: Any, default: Optional[float]) -> Optional[float]:
    """A timeout argument as seconds (None: no limit); tuples and timeout objects by their
    largest part, as that is how long the call may wait."""
    if value is _MISSING:
        return default
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        parts = [_seconds(v, None) for v in value]
        return None if any(p is None for p in parts) else sum(parts)  # type: ignore[arg-type]
    total = getattr(value, "simulated_seconds", _MISSING)
    if total is not _MISSING:
        return total  # type: ignore[return-value]
    number = float(value)
    return None if math.isinf(number) else number


_MISSING = object()


# -- requests ------------------------------------------------------------------------
def _requests_module() -> types.ModuleType:
    m = types.ModuleType("requests")

    class RequestException(Simulated, OSError):
        pass

    class ConnectionError(RequestException):  # noqa: A001 - requests' own name
        pass

    class Timeout(RequestException):
        pass

    class ConnectTimeout(ConnectionError, Timeout):
        pass

    class ReadTimeout(Timeout):
        pass

    class Response:
        ok = True
        status_code = 200
        text = "{}"

        def json(self) -> dict:
            return {}

    def request(method: str, url: str, timeout: Any = _MISSING, **kwargs: Any) -> Response:
        _hop(url, "requests", _seconds(timeout, None), ReadTimeout, ConnectionError, ConnectTimeout)
        return Response()

    def verb(name: str) -> Callable[..., Response]:
        def call(url: str, timeout: Any = _MISSING, **kwargs: Any) -> Response:
            return request(name, url, timeout=timeout, **kwargs)
        return call

    class Session:
        def request(self, method: str, url: str, timeout: Any = _MISSING, **kwargs: Any) -> Response:
            return request(method, url, timeout=timeout, **kwargs)

    for name in ("get", "post", "put", "delete", "head", "patch"):
        setattr(m, name, verb(name))
        setattr(Session, name, (lambda n: lambda self, url, timeout=_MISSING, **kw:
                                request(n, url, timeout=timeout, **kw))(name))
    m.request = request
    m.Session = Session
    m.RequestException, m.ConnectionError, m.Timeout = RequestException, ConnectionError, Timeout
    m.ConnectTimeout, m.ReadTimeout, m.Response = ConnectTimeout, ReadTimeout, Response
    return m


# -- httpx ---------------------------------------------------------------------------
def _httpx_module() -> types.ModuleType:
    m = types.ModuleType("httpx")

    class HTTPError(Simulated):
        pass

    class TransportError(HTTPError):
        pass

    class ConnectError(TransportError):
        pass

    class TimeoutException(TransportError):
        pass

    class ReadTimeout(TimeoutException):
        pass

    class ConnectTimeout(TimeoutException):
        pass

    class Timeout:
        def __init__(self, timeout: Any = _MISSING, **parts: Any) -> None:
            self.simulated_seconds = _seconds(timeout, 5.0)

    class Response:
        status_code = 200
        text = "{}"

        def json(self) -> dict:
            return {}

    def _call(url: str, timeout: Any) -> Response:
        _hop(url, "httpx", _seconds(timeout, 5.0), ReadTimeout, ConnectError, ConnectTimeout)
        return Response()

    class Client:
        def __init__(self, timeout: Any = _MISSING, **kwargs: Any) -> None:
            self._timeout = timeout

        def request(self, method: str, url: str, timeout: Any = _MISSING, **kwargs: Any) -> Response:
            return _call(url, self._timeout if timeout is _MISSING else timeout)

    class AsyncClient(Client):
        async def request(self, method: str, url: str, timeout: Any = _MISSING, **kwargs: Any) -> Response:  # type: ignore[override]
            return _call(url, self._timeout if timeout is _MISSING else timeout)

    def verb(name: str) -> Callable[..., Response]:
        def call(url: str, timeout: Any = _MISSING, **kwargs: Any) -> Response:
            return _call(url, timeout)
        return call

    for name in ("get", "post", "put", "delete", "head", "patch"):
        setattr(m, name, verb(name))
        setattr(Client, name, (lambda n: lambda self, url, timeout=_MISSING, **kw:
                               Client.request(self, n, url, timeout=timeout))(name))
        setattr(AsyncClient, name, (lambda n: lambda self, url, timeout=_MISSING, **kw:
                                    AsyncClient.request(self, n, url, timeout=timeout))(name))
    m.Client, m.AsyncClient, m.Timeout, m.Response = Client, AsyncClient, Timeout, Response
    m.HTTPError, m.TransportError, m.ConnectError = HTTPError, TransportError, ConnectError
    m.TimeoutException, m.ReadTimeout, m.ConnectTimeout = TimeoutException, ReadTimeout, ConnectTimeout
    return m


# -- aiohttp -------------------------------------------------------------------------
def _aiohttp_module() -> types.ModuleType:
    m = types.ModuleType("aiohttp")

    class ClientError(Simulated):
        pass

    class ClientConnectionError(ClientError):
        pass

    class ServerTimeoutError(ClientConnectionError, _real_asyncio.TimeoutError):
        pass

    class ClientTimeout:
        def __init__(self, total: Any = None, connect: Any = None, sock_read: Any = None,
                     sock_connect: Any = None) -> None:
            self.simulated_seconds = _seconds(total, None)

    class _Response:
        status = 200

        async def text(self) -> str:
            return "{}"

        async def json(self) -> dict:
            return {}

    class _Pending:
        def __init__(self, url: str, timeout: Any) -> None:
            self.url, self.timeout = url, timeout

        def _run(self) -> _Response:
            _hop(self.url, "aiohttp", _seconds(self.timeout, 300.0), ServerTimeoutError, ClientConnectionError)
            return _Response()

        def __await__(self):
            return self._coroutine().__await__()

        async def _coroutine(self) -> _Response:
            return self._run()

        async def __aenter__(self) -> _Response:
            return self._run()

        async def __aexit__(self, *exc: Any) -> None:
            return None

    class ClientSession:
        def __init__(self, timeout: Any = _MISSING, **kwargs: Any) -> None:
            self._timeout = ClientTimeout(300.0) if timeout is _MISSING or timeout is None else timeout

        def request(self, method: str, url: str, timeout: Any = _MISSING, **kwargs: Any) -> _Pending:
            return _Pending(url, self._timeout if timeout is _MISSING else timeout)

        async def __aenter__(self) -> "ClientSession":
            return self

        async def __aexit__(self, *exc: Any) -> None:
            return None

        async def close(self) -> None:
            return None

    for name in ("get", "post", "put", "delete", "head", "patch"):
        setattr(ClientSession, name, (lambda n: lambda self, url, timeout=_MISSING, **kw:
                                      ClientSession.request(self, n, url, timeout=timeout))(name))
    m.ClientSession, m.ClientTimeout = ClientSession, ClientTimeout
    m.ClientError, m.ClientConnectionError = ClientError, ClientConnectionError
    m.ServerTimeoutError = ServerTimeoutError
    return m


# -- grpc and a generated stub module ------------------------------------------------------
def _grpc_module() -> types.ModuleType:
    m = types.ModuleType("grpc")

    class StatusCode:
        DEADLINE_EXCEEDED = "DEADLINE_EXCEEDED"
        UNAVAILABLE = "UNAVAILABLE"
        CANCELLED = "CANCELLED"

    class RpcError(Simulated):
        def __init__(self, code: str = StatusCode.UNAVAILABLE) -> None:
            super().__init__(code)
            self._code = code

        def code(self) -> str:
            return self._code

    class ServicerContext:
        """What a servicer method is given: the inbound call's remaining time."""

        def __init__(self, deadline: float) -> None:
            self._deadline = deadline

        def time_remaining(self) -> float:
            return max(0.0, self._deadline - now())

        def abort(self, code: Any, details: str = "") -> None:
            raise RpcError(code)

    class Channel:
        pass

    m.StatusCode, m.RpcError, m.ServicerContext, m.Channel = StatusCode, RpcError, ServicerContext, Channel
    m.insecure_channel = lambda target, **kwargs: Channel()
    return m


def _stub_module(grpc: types.ModuleType) -> types.ModuleType:
    """`svc_pb2_grpc`: every public attribute of a `*Stub` is a remote method."""
    m = types.ModuleType("svc_pb2_grpc")

    class _Method:
        def __init__(self, name: str) -> None:
            self.name = name

        def __call__(self, request: Any, timeout: Any = _MISSING, metadata: Any = None, **kwargs: Any) -> str:
            _hop(request, "grpc", _seconds(timeout, None),
                 lambda: grpc.RpcError(grpc.StatusCode.DEADLINE_EXCEEDED),
                 lambda: grpc.RpcError(grpc.StatusCode.UNAVAILABLE))
            return "reply"

    class StockStub:
        def __init__(self, channel: Any) -> None:
            for name in ("Reserve", "Price", "Get"):
                setattr(self, name, _Method(name))

    class StockServicer:
        pass

    m.StockStub, m.StockServicer = StockStub, StockServicer
    return m


# -- tenacity ------------------------------------------------------------------------
def _tenacity_module() -> types.ModuleType:
    m = types.ModuleType("tenacity")

    def stop_after_attempt(n: int) -> Callable[[int, float], bool]:
        return lambda attempt, elapsed: attempt >= n

    def stop_after_delay(seconds: float) -> Callable[[int, float], bool]:
        return lambda attempt, elapsed: elapsed >= seconds

    def wait_fixed(seconds: float) -> Callable[[int], float]:
        return lambda attempt: seconds

    def wait_exponential(multiplier: float = 1, max: float = 10) -> Callable[[int], float]:  # noqa: A002
        return lambda attempt: min(max, multiplier * 2 ** (attempt - 1))

    def retry_if_exception_type(types_: Any = Exception) -> Callable[[BaseException], bool]:
        return lambda exc: isinstance(exc, types_)

    def retry(stop: Any = None, wait: Any = None, retry: Any = None, reraise: bool = True, **kwargs: Any):
        stop = stop or (lambda attempt, elapsed: False)
        wait = wait or (lambda attempt: 0.0)
        retry = retry or (lambda exc: isinstance(exc, Exception))

        def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
            name = f"{function.__module__.rsplit('.', 1)[-1]}.{function.__qualname__}"

            def again(attempt: int) -> Any:
                return _retried.set((*_retried.get(), name)) if attempt > 1 else None

            if _real_asyncio.iscoroutinefunction(function):
                @functools.wraps(function)
                async def run_async(*args: Any, **kwargs: Any) -> Any:
                    started, attempt = now(), 0
                    while True:
                        attempt += 1
                        token = again(attempt)
                        try:
                            return await function(*args, **kwargs)
                        except BaseException as exc:
                            if not retry(exc) or stop(attempt, now() - started):
                                raise
                        finally:
                            if token is not None:
                                _retried.reset(token)
                        advance(wait(attempt))
                return run_async

            @functools.wraps(function)
            def run(*args: Any, **kwargs: Any) -> Any:
                started, attempt = now(), 0
                while True:
                    attempt += 1
                    token = again(attempt)
                    try:
                        return function(*args, **kwargs)
                    except BaseException as exc:
                        if not retry(exc) or stop(attempt, now() - started):
                            raise
                    finally:
                        if token is not None:
                            _retried.reset(token)
                    advance(wait(attempt))
            return run
        return decorate

    m.retry, m.stop_after_attempt, m.stop_after_delay = retry, stop_after_attempt, stop_after_delay
    m.wait_fixed, m.wait_exponential, m.retry_if_exception_type = wait_fixed, wait_exponential, retry_if_exception_type
    return m


# -- time and asyncio on the virtual clock --------------------------------------------------
def _time_module() -> types.ModuleType:
    m = types.ModuleType("time")
    m.monotonic = m.perf_counter = m.time = now
    m.sleep = advance
    return m


def _asyncio_module() -> types.ModuleType:
    m = types.ModuleType("asyncio")
    for name in ("TimeoutError", "CancelledError", "iscoroutinefunction", "run", "Task", "create_task"):
        setattr(m, name, getattr(_real_asyncio, name))

    async def sleep(seconds: float, result: Any = None) -> Any:
        advance(seconds)
        return result

    async def _from(start: float, awaitable: Any, ends: List[float], spawner: tuple = ()) -> Any:
        _now.set(start)
        _spawned_by.set(spawner)
        try:
            return await awaitable
        finally:
            ends.append(now())

    async def gather(*awaitables: Any, return_exceptions: bool = False) -> List[Any]:
        start, ends = now(), []  # type: float, List[float]
        try:
            spawner = _spawner()
            return await _real_asyncio.gather(*(_from(start, a, ends, spawner) for a in awaitables),
                                              return_exceptions=return_exceptions)
        finally:
            _now.set(max(ends, default=start))

    class TaskGroup:
        def __init__(self) -> None:
            self._group = _real_asyncio.TaskGroup()
            self._ends: List[float] = []

        async def __aenter__(self) -> "TaskGroup":
            self._start = now()
            await self._group.__aenter__()
            return self

        def create_task(self, coroutine: Any, **kwargs: Any) -> Any:
            return self._group.create_task(_from(self._start, coroutine, self._ends, _spawner()))

        async def __aexit__(self, *exc: Any) -> Any:
            try:
                return await self._group.__aexit__(*exc)
            finally:
                _now.set(max(self._ends, default=now()))

    m.sleep, m.gather, m.TaskGroup = sleep, gather, TaskGroup
    return m


# -- the budget objects the generated code uses ---------------------------------------------
def _budget_module() -> types.ModuleType:
    m = types.ModuleType("simbudget")
    current: contextvars.ContextVar[float] = contextvars.ContextVar("request_deadline", default=math.inf)

    class Budget:
        """The service's budget object: the request's deadline on the (virtual) monotonic clock."""

        def __init__(self, deadline: float) -> None:
            self.deadline = deadline

        def remaining(self) -> float:
            return max(0.0, self.deadline - now())

        def timeout(self) -> float:
            return max(TIMEOUT_FLOOR_S, self.remaining() - HOP_MARGIN_S)

    def remaining_seconds() -> float:
        """The remaining time of the request being served (request state, a context variable)."""
        return max(0.0, current.get() - now())

    def note_refuse_check() -> None:
        """Generated code calls this right after its refuse check passed: the next hop of the
        same function must start at or above the threshold."""
        request = STATE.request
        if request is not None:
            request.refuse_checks += 1
            frames = _frames(request.package)
            if frames:
                request.checked[frames[-1]] = (now(), len(request.calls))

    m.Budget, m.Refused, m.remaining_seconds, m.current_deadline = Budget, Refused, remaining_seconds, current
    m.note_refuse_check = note_refuse_check
    return m


def fakes() -> Dict[str, types.ModuleType]:
    grpc = _grpc_module()
    return {
        "requests": _requests_module(),
        "httpx": _httpx_module(),
        "aiohttp": _aiohttp_module(),
        "grpc": grpc,
        "tenacity": _tenacity_module(),
        "time": _time_module(),
        "asyncio": _asyncio_module(),
        "simbudget": _budget_module(),
        "svc_pb2_grpc": _stub_module(grpc),
    }


class Tree:
    """A generated package, executed from its texts with the fakes as its only world."""

    def __init__(self, package: str, texts: Dict[str, str], fake_modules: Dict[str, types.ModuleType]) -> None:
        self.package = package
        self.texts = texts
        self.fakes = fake_modules
        self.modules: Dict[str, types.ModuleType] = {}
        self.builtins = dict(builtins.__dict__)
        self.builtins["__import__"] = self._import

    def _import(self, name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level > 0 or name == self.package or name.startswith(self.package + "."):
            relative = name[len(self.package):].lstrip(".") if level == 0 else name
            if not relative:
                if fromlist:
                    for item in fromlist:
                        if item in self.fakes:
                            continue
                        self.module(item)
                return self._package_module(fromlist)
            return self.module(relative)
        if name in self.fakes:
            return self.fakes[name]
        return builtins.__import__(name, globals, locals, fromlist, level)

    def _package_module(self, fromlist: Any) -> Any:
        package = types.ModuleType(self.package)
        for item in fromlist or ():
            setattr(package, item, self.fakes[item] if item in self.fakes else self.module(item))
        return package

    def module(self, name: str) -> types.ModuleType:
        if name in self.modules:
            return self.modules[name]
        module = types.ModuleType(f"{self.package}.{name}")
        module.__dict__["__builtins__"] = self.builtins
        module.__dict__["__package__"] = self.package
        self.modules[name] = module
        code = compile(self.texts[name], f"<{self.package}/{name}.py>", "exec")
        exec(code, module.__dict__)
        return module
