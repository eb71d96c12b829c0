"""The source `adopt --scaffold` writes (scaffold.py picks and fills them): one module a team
reviews and owns, so it is plain Python with no import of deadline-lint, and imports only the
framework it serves. `$name` placeholders are filled by `string.Template` (Python source has
no `$`); the numbers and the header name come from the profile, so the module and the checker
agree on them."""
from __future__ import annotations

CORE = '''\
"""The request's deadline budget, minted once where a request enters and read below it.

Written by `deadline-lint adopt --scaffold`; yours to review, change and own.$usage

Below the edge, code reads the budget and never mints a new one: `remaining_seconds()` (what
deadline-lint's fixes call under `fix.propagation = "context"`, taking the hop margin off
themselves) or `current_budget()` for the `Budget` itself.
"""
from __future__ import annotations

$imports

BUDGET_HEADER = $header
EDGE_TOTAL_S = $edge_total
HOP_MARGIN_S = $hop_margin
REFUSE_BELOW_S = $refuse_below


class BudgetExhausted(TimeoutError):
    """Too little of the request's time is left to start another hop."""


class Budget:
    """What is left of one request's time, on the monotonic clock (never the wall clock)."""

    __slots__ = ("_clock", "_deadline")

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        # Never more than the edge total: nothing below the edge creates time.
        self._deadline = clock() + max(0.0, min(seconds, EDGE_TOTAL_S))

    def remaining(self) -> float:
        """Seconds left, with no hop margin taken off; 0.0 once expired."""
        return max(0.0, self._deadline - self._clock())

    def expired(self) -> bool:
        return self.remaining() <= 0.0

    def check(self, threshold: float = REFUSE_BELOW_S) -> None:
        """Refuse work that cannot finish: raise BudgetExhausted below `threshold` seconds."""
        left = self.remaining()
        if left < threshold:
            raise BudgetExhausted(f"{left:.3f} s left, below the {threshold:.3f} s refuse threshold")

    def timeout(self, margin: float = HOP_MARGIN_S) -> float:
        """The next hop's timeout: what is left minus the hop margin, at least 1 ms. Raises
        BudgetExhausted when the margin would take everything left."""
        left = self.remaining()
        if left - margin <= 0.0:
            raise BudgetExhausted(f"{left:.3f} s left, no more than the {margin:.3f} s hop margin")
        return max(0.001, left - margin)

    def header_value(self, margin: float = HOP_MARGIN_S) -> str:
        """BUDGET_HEADER's value for the next hop: milliseconds left after the margin (a
        duration, never an instant: no two machines need to agree on the time)."""
        return str(max(1, int(self.timeout(margin) * 1000)))


REQUEST_BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("budget", default=None)


def current_budget() -> Budget | None:
    """The budget of the request being served, or None outside one."""
    return REQUEST_BUDGET.get()


def remaining_seconds() -> float:
    """Seconds left of the request's budget. Outside a request (a script, a test), the edge
    total: a missing deadline is the edge total, never infinite time."""
    budget = REQUEST_BUDGET.get()
    return EDGE_TOTAL_S if budget is None else budget.remaining()


@contextlib.contextmanager
def budget_scope(budget: Budget) -> Iterator[Budget]:
    """`budget` is the current one inside the `with` block (each request's own context)."""
    token = REQUEST_BUDGET.set(budget)
    try:
        yield budget
    finally:
        REQUEST_BUDGET.reset(token)


def seconds_from_header(value: str | None) -> float:
    """The budget an inbound BUDGET_HEADER value claims, in seconds, capped at the edge total;
    no header (or an empty one) is the edge total. Raises ValueError for a value that is not
    a positive, finite number of milliseconds."""
    if value is None or not value.strip():
        return EDGE_TOTAL_S
    try:
        milliseconds = float(value)
    except ValueError:
        milliseconds = math.nan
    if not math.isfinite(milliseconds) or milliseconds <= 0:
        raise ValueError(f"{BUDGET_HEADER}: expected a positive number of milliseconds, got {value[:40]!r}")
    return max(0.0, min(milliseconds / 1000, EDGE_TOTAL_S))
'''

ASGI = '''

_HEADER_KEY = BUDGET_HEADER.lower().encode("latin-1")


class DeadlineBudgetMiddleware:
    """ASGI middleware: each HTTP request runs inside its own budget, from BUDGET_HEADER.
    An invalid header is answered 400 before the app sees the request."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        raw = next((v for k, v in scope.get("headers", ()) if k.lower() == _HEADER_KEY), None)
        try:
            seconds = seconds_from_header(None if raw is None else raw.decode("latin-1"))
        except ValueError as exc:
            body = str(exc).encode("utf-8")
            await send({"type": "http.response.start", "status": 400,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                    (b"content-length", str(len(body)).encode("ascii"))]})
            await send({"type": "http.response.body", "body": body})
            return
        with budget_scope(Budget(seconds)):
            await self.app(scope, receive, send)
'''

AIOHTTP = '''

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def deadline_budget_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Each request runs inside its own budget, from BUDGET_HEADER (invalid: 400)."""
    try:
        seconds = seconds_from_header(request.headers.get(BUDGET_HEADER))
    except ValueError as exc:
        raise web.HTTPBadRequest(text=str(exc)) from None
    with budget_scope(Budget(seconds)):
        return await handler(request)
'''

FLASK = '''

_TOKEN = "deadline_budget_token"


def install_deadline_budget(app: Flask) -> None:
    """Each request of `app` runs inside its own budget, from BUDGET_HEADER (invalid: 400)."""
    app.before_request(_open_budget)
    app.teardown_request(_close_budget)


def _open_budget() -> tuple[str, int] | None:
    try:
        seconds = seconds_from_header(request.headers.get(BUDGET_HEADER))
    except ValueError as exc:
        return str(exc), 400
    setattr(g, _TOKEN, REQUEST_BUDGET.set(Budget(seconds)))
    return None


def _close_budget(_: BaseException | None) -> None:
    token = g.pop(_TOKEN, None)
    if token is not None:
        REQUEST_BUDGET.reset(token)
'''

DJANGO = '''

class DjangoDeadlineBudgetMiddleware:
    """Django middleware: each request runs inside its own budget, from BUDGET_HEADER
    (invalid: 400)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            seconds = seconds_from_header(request.headers.get(BUDGET_HEADER))
        except ValueError as exc:
            return HttpResponseBadRequest(str(exc))
        with budget_scope(Budget(seconds)):
            return self.get_response(request)
'''

GRPC_COMMON = '''

def budget_from_context(context: Any) -> Budget:
    """A servicer context's budget: `time_remaining()` is None when the client set no
    deadline, which is the edge total; never more than the edge total."""
    left = context.time_remaining()
    return Budget(EDGE_TOTAL_S if left is None else max(0.0, min(left, EDGE_TOTAL_S)))


def _wrapped(handler: Any, unary: Callable[[Any], Any], streaming: Callable[[Any], Any]) -> Any:
    """The handler with its behaviour run inside the call's budget (None stays None)."""
    if handler is None:
        return None
    for kind, make, wrap in (
        ("unary_unary", grpc.unary_unary_rpc_method_handler, unary),
        ("unary_stream", grpc.unary_stream_rpc_method_handler, streaming),
        ("stream_unary", grpc.stream_unary_rpc_method_handler, unary),
        ("stream_stream", grpc.stream_stream_rpc_method_handler, streaming),
    ):
        behavior = getattr(handler, kind, None)
        if behavior is not None:
            return make(wrap(behavior), request_deserializer=handler.request_deserializer,
                        response_serializer=handler.response_serializer)
    return handler
'''

GRPC_SYNC = '''

def _unary(behavior: Callable[..., Any]) -> Callable[..., Any]:
    def run(request: Any, context: Any) -> Any:
        with budget_scope(budget_from_context(context)):
            return behavior(request, context)
    return run


def _streaming(behavior: Callable[..., Any]) -> Callable[..., Any]:
    def run(request: Any, context: Any) -> Iterator[Any]:
        with budget_scope(budget_from_context(context)):
            yield from behavior(request, context)
    return run


class DeadlineBudgetInterceptor(grpc.ServerInterceptor):
    """Each call runs inside its own budget, from the client's deadline."""

    def intercept_service(self, continuation: Callable[[Any], Any], handler_call_details: Any) -> Any:
        return _wrapped(continuation(handler_call_details), _unary, _streaming)
'''

GRPC_AIO = '''

def _aio_unary(behavior: Callable[..., Any]) -> Callable[..., Any]:
    async def run(request: Any, context: Any) -> Any:
        with budget_scope(budget_from_context(context)):
            return await behavior(request, context)
    return run


def _aio_streaming(behavior: Callable[..., Any]) -> Callable[..., Any]:
    if not inspect.isasyncgenfunction(behavior):
        return _aio_unary(behavior)  # a coroutine that writes with `context.write()`

    async def run(request: Any, context: Any) -> AsyncIterator[Any]:
        with budget_scope(budget_from_context(context)):
            async for response in behavior(request, context):
                yield response
    return run


class AioDeadlineBudgetInterceptor(grpc.aio.ServerInterceptor):
    """Each call runs inside its own budget, from the client's deadline."""

    async def intercept_service(self, continuation: Callable[[Any], Awaitable[Any]], handler_call_details: Any) -> Any:
        return _wrapped(await continuation(handler_call_details), _aio_unary, _aio_streaming)
'''
