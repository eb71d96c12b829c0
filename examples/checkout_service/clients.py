"""Downstream calls: payments over httpx, inventory over gRPC."""
import asyncio
import time

import grpc
import httpx

from checkout_service import inventory_pb2_grpc
from checkout_service.budget import Budget

payments = httpx.AsyncClient(base_url="http://payments.internal")
# Bug: `timeout=None` reads like a decision but means "wait forever".
ledger = httpx.AsyncClient(base_url="http://ledger.internal", timeout=None)
inventory = inventory_pb2_grpc.InventoryStub(grpc.aio.insecure_channel("inventory.internal:50051"))


async def reserve(order: dict, budget: Budget):
    # Correct: the remainder minus the hop margin, as a gRPC deadline.
    return await inventory.Reserve(order, timeout=budget.timeout())


async def release(order: dict):
    # Bug: a gRPC call with no timeout never gives up (there is no default deadline).
    return await inventory.Release(order)


async def authorize(order: dict, budget: Budget) -> dict:
    # Bug: the raw remainder goes on with no hop margin taken off.
    response = await payments.post("/authorize", json=order, timeout=budget.remaining())
    return response.json()


async def capture(order: dict, budget: Budget) -> dict:
    # Correct: the budget's own timeout() has the margin off already.
    response = await payments.post("/capture", json=order, timeout=budget.timeout())
    return response.json()


async def exchange_rate(currency: str, budget: Budget) -> float:
    # Bug: a fixed 2 s, though the caller may have 200 ms left.
    response = await payments.get(f"/fx/{currency}", timeout=2.0)
    return response.json()["rate"]


async def exchange_rate_capped(currency: str, budget: Budget) -> float:
    # Correct: a local cap may shorten the budget, never lengthen it.
    response = await payments.get(f"/fx/{currency}", timeout=min(2.0, budget.timeout()))
    return response.json()["rate"]


async def record(entry: dict, budget: Budget) -> None:
    # Bug: max() puts a floor under the budget: a request with 50 ms left gets a full second.
    await ledger.post("/entries", json=entry, timeout=max(budget.timeout(), 1.0))


async def settle(order: dict, budget: Budget) -> None:
    timeout = budget.timeout()
    await payments.post("/settle", json=order, timeout=timeout)
    # Bug: `timeout` was true before the first call; the second one overspends by its duration.
    await payments.post("/notify", json=order, timeout=timeout)


async def fan_out(order: dict, budget: Budget) -> list:
    timeout = budget.timeout()
    # Correct: calls started together share one remainder.
    return await asyncio.gather(
        payments.post("/risk", json=order, timeout=timeout),
        payments.post("/loyalty", json=order, timeout=timeout),
    )


async def forward(order: dict, budget: Budget) -> dict:
    # Bug: an absolute instant on the wire means something only on this machine's clock.
    deadline = time.time() + budget.timeout()
    response = await payments.post(
        "/forward", json=order, headers={"X-Request-Deadline": str(deadline)}, timeout=budget.timeout()
    )
    return response.json()


async def forward_budget(order: dict, budget: Budget) -> dict:
    # Correct: the remaining duration; the next hop measures it on its own monotonic clock.
    response = await payments.post(
        "/forward", json=order, headers={"X-Request-Budget-Ms": budget.header_value()}, timeout=budget.timeout()
    )
    return response.json()
