"""Work handed to the job queue: it runs after the response, in a worker, on a schedule of its own."""
from celery import Celery

from checkout_service.budget import Budget

queue = Celery("checkout", broker="redis://queue:6379/0")
STATEMENT_FRESHNESS_S = 600


@queue.task
def build_statement(order_id: str) -> None:
    ...


def request_statement(order_id: str, budget: Budget) -> None:
    # Bug: the job expires with the request's last milliseconds, not when a statement is stale.
    build_statement.apply_async(args=(order_id,), expires=budget.remaining())


def request_statement_copy(order_id: str, budget: Budget) -> None:
    # Correct: the job's own freshness bound, chosen when it is enqueued.
    build_statement.apply_async(args=(order_id,), expires=STATEMENT_FRESHNESS_S)
