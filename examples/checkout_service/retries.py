"""Retries with tenacity: only what failed fast, and never past the budget."""
import httpx
from tenacity import AsyncRetrying, retry, retry_if_exception_type, stop_after_attempt, stop_after_delay

from checkout_service.budget import Budget

catalog = httpx.AsyncClient(base_url="http://catalog.internal", timeout=5.0)


# Bug: a read timeout means the catalog is slow; three more tries make it slower for everyone.
@retry(retry=retry_if_exception_type((httpx.ConnectError, httpx.ReadTimeout)), stop=stop_after_attempt(3))
async def load_catalog() -> dict:
    return (await catalog.get("/products")).json()


# Correct: a refused connection failed fast and may be retried.
@retry(retry=retry_if_exception_type(httpx.ConnectError), stop=stop_after_attempt(3))
async def load_promotions() -> dict:
    return (await catalog.get("/promotions")).json()


async def price(sku: str, budget: Budget) -> dict:
    # Bug: `TransportError` is the base of `TimeoutException`: the budget's expiry is retried too.
    async for attempt in AsyncRetrying(
        retry=retry_if_exception_type(httpx.TransportError), stop=stop_after_delay(budget.timeout())
    ):
        with attempt:
            return (await catalog.get(f"/price/{sku}", timeout=budget.timeout())).json()
    raise AssertionError("unreachable")


async def stock_level(sku: str, budget: Budget) -> dict:
    # Bug: five attempts, whatever the caller has left.
    async for attempt in AsyncRetrying(retry=retry_if_exception_type(httpx.ConnectError), stop=stop_after_attempt(5)):
        with attempt:
            return (await catalog.get(f"/stock/{sku}", timeout=budget.timeout())).json()
    raise AssertionError("unreachable")


async def stock_level_in_budget(sku: str, budget: Budget) -> dict:
    # Correct: the retries stop when the budget does.
    async for attempt in AsyncRetrying(
        retry=retry_if_exception_type(httpx.ConnectError), stop=stop_after_delay(budget.timeout())
    ):
        with attempt:
            return (await catalog.get(f"/stock/{sku}", timeout=budget.timeout())).json()
    raise AssertionError("unreachable")


@retry(retry=retry_if_exception_type(httpx.ConnectError), stop=stop_after_attempt(3))
async def refresh_storefront() -> None:
    # Bug: load_promotions retries three times on its own: up to nine requests for one refresh.
    await load_promotions()
    # Correct: a plain call, retried once, by this function's own policy.
    await catalog.post("/storefront/refresh")
