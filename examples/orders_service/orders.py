"""A small order service with deliberate deadline bugs (see README: `deadline-lint check examples/`)."""
import requests

from orders_service.budget import Budget

INVENTORY = "http://inventory.internal"
PAYMENTS = "http://payments.internal"
http = requests.Session()


def reserve_stock(order_id: str, budget: Budget) -> dict:
    # Bug: no timeout, and requests waits forever by default.
    response = http.post(f"{INVENTORY}/reserve", json={"order": order_id})
    return response.json()


def charge(order_id: str, amount: int, budget: Budget) -> dict:
    # Correct: the timeout is what is left of the caller's budget, minus the hop margin.
    response = requests.post(
        f"{PAYMENTS}/charge",
        json={"order": order_id, "amount": amount},
        timeout=budget.timeout(),
    )
    return response.json()


def refund(order_id: str) -> None:
    # Bug: `timeout=None` reads like a decision but means "wait forever".
    requests.post(f"{PAYMENTS}/refund", json={"order": order_id}, timeout=None)


def health() -> bool:
    # Bug: no budget here at all; a missing deadline means the edge total, never infinite time.
    return requests.get(f"{INVENTORY}/health").ok
