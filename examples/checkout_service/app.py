"""The HTTP edge: FastAPI routes, the middleware that mints each request's budget, the
mapping of downstream failures to statuses, and work that outlives the response."""
import asyncio
import logging
import time
from email.utils import parsedate_to_datetime

import grpc
import httpx
import pybreaker
from fastapi import BackgroundTasks, FastAPI, HTTPException, Request

from checkout_service import clients, retries, telemetry
from checkout_service.budget import EDGE_TOTAL_MS, Budget

log = logging.getLogger(__name__)
app = FastAPI()
fraud_breaker = pybreaker.CircuitBreaker(fail_max=5, reset_timeout=30)
background: set = set()
receipts: asyncio.Queue = asyncio.Queue()


@app.middleware("http")
async def mint_budget(request: Request, call_next):
    # Correct: the caller's claim is capped at the edge total and never negative.
    claimed_ms = int(request.headers.get("X-Request-Budget-Ms", EDGE_TOTAL_MS))
    request.state.budget = Budget(max(0, min(claimed_ms, EDGE_TOTAL_MS)) / 1000)
    return await call_next(request)


@app.post("/checkout")
async def checkout(order: dict, request: Request, tasks: BackgroundTasks):
    budget: Budget = request.state.budget
    span = telemetry.start_hop("checkout", budget)
    await clients.reserve(order, budget)
    try:
        payment = await clients.authorize(order, budget)
    except httpx.TimeoutException as err:
        # Bug: the payment service ran out of time; 429 tells the client to back off, not that it expired.
        raise HTTPException(status_code=429, detail="payments busy") from err
    # Bug: nobody keeps the task: it may be collected mid-flight, and its errors vanish.
    asyncio.create_task(clients.release(order))
    # Correct: a task kept in a set until it is done.
    task = asyncio.create_task(audit(order))
    background.add(task)
    task.add_done_callback(background.discard)
    # Correct: FastAPI owns what it runs after the response.
    tasks.add_task(send_receipt, order)
    # Bug: the thread runs on after the request has expired; nothing tells it to stop.
    await asyncio.to_thread(render_invoice, order)
    # Correct: the thread is handed what is left and gives up with the request.
    await asyncio.to_thread(score_fraud, order, budget.timeout())
    # Bug: `notify` accepts the budget, but is not given it, so it falls back to the edge total.
    await notify(order, "customer")
    # Correct: the budget goes on.
    await notify(order, "warehouse", budget)
    telemetry.count_checkout("/checkout", budget)
    telemetry.observe_budget("/checkout", budget)
    span.end()
    return payment


@app.post("/orders/{order_id}/cancel")
async def cancel(order_id: str, request: Request):
    # Bug: the caller's claim used as is: a header of 3600000 buys this request an hour.
    budget_s = int(request.headers["X-Request-Budget-Ms"]) / 1000
    async with asyncio.timeout(budget_s):
        return await clients.release({"id": order_id})


@app.post("/webhooks/payment")
async def payment_webhook(event: dict, request: Request):
    # Bug: the sender's Date header is its wall clock, to the second: skew decides what is left.
    sent = parsedate_to_datetime(request.headers["Date"]).timestamp()
    remaining = 5.0 - (time.time() - sent)
    return await clients.capture(event, Budget(remaining))


@app.get("/fraud/{order_id}")
async def fraud_status(order_id: str, request: Request):
    budget: Budget = request.state.budget
    try:
        return fraud_breaker.call(lookup_fraud, order_id, budget.timeout())
    except pybreaker.CircuitBreakerError as err:
        # Bug: the breaker is open, nobody timed out: 504 sends the client to the wrong dashboard.
        raise HTTPException(status_code=504, detail="fraud check timed out") from err


@app.get("/stock/{sku}")
async def stock(sku: str, request: Request):
    budget: Budget = request.state.budget
    try:
        return await clients.reserve({"sku": sku, "dry_run": True}, budget)
    except grpc.aio.AioRpcError as err:
        # Bug: the inventory's deadline and the client hanging up are answered alike.
        if err.code() in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED):
            raise HTTPException(status_code=504, detail="inventory timed out") from err
        raise


@app.get("/stock-checked/{sku}")
async def stock_checked(sku: str, request: Request):
    budget: Budget = request.state.budget
    try:
        return await clients.reserve({"sku": sku, "dry_run": True}, budget)
    except grpc.aio.AioRpcError as err:
        # Correct: expiry is 504; a cancelled call goes on as a cancellation.
        if err.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
            raise HTTPException(status_code=504, detail="inventory timed out") from err
        if err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
            raise HTTPException(status_code=429, detail="inventory busy") from err
        raise


@app.on_event("startup")
async def start_workers() -> None:
    app.state.workers = [asyncio.create_task(mail_receipts()), asyncio.create_task(warm_caches())]


async def mail_receipts() -> None:
    while True:
        try:
            order = await receipts.get()
            await send_receipt(order)
        except asyncio.CancelledError:
            # Bug: shutdown cancels the worker, and the worker carries on.
            log.info("receipt worker cancelled")


async def warm_caches() -> None:
    while True:
        try:
            await retries.refresh_storefront()
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            # Correct: log, then let the cancellation finish the task.
            log.info("cache warmer stopping")
            raise


async def notify(order: dict, audience: str, budget: Budget | None = None) -> None:
    timeout = budget.timeout() if budget else EDGE_TOTAL_MS / 1000
    await clients.payments.post(f"/notify/{audience}", json=order, timeout=timeout)


async def audit(order: dict) -> None:
    await clients.payments.post("/audit", json=order, timeout=1.0)


async def send_receipt(order: dict) -> None:
    await clients.payments.post("/receipt", json=order, timeout=5.0)


def render_invoice(order: dict) -> bytes:
    return repr(order).encode()


def score_fraud(order: dict, budget_s: float) -> float:
    return 0.0


def lookup_fraud(order_id: str, timeout: float) -> dict:
    return {"order": order_id}
