"""Metrics and spans: Prometheus for counts and latencies, OpenTelemetry for traces."""
from opentelemetry import trace
from prometheus_client import Counter, Histogram

from checkout_service.budget import Budget

tracer = trace.get_tracer("checkout")
CHECKOUTS = Counter("checkouts_total", "Checkouts", ["route", "budget_ms"])
BUDGET_LEFT = Histogram("checkout_budget_left_seconds", "Budget left when a checkout ends", ["route"])


def count_checkout(route: str, budget: Budget) -> None:
    # Bug: every distinct millisecond count is a new time series.
    CHECKOUTS.labels(route=route, budget_ms=str(int(budget.remaining() * 1000))).inc()


def observe_budget(route: str, budget: Budget) -> None:
    # Correct: the remaining time is an observed value, the label stays bounded.
    BUDGET_LEFT.labels(route=route).observe(budget.remaining())


def start_hop(name: str, budget: Budget):
    # Correct: the span records what the hop started with (`deadline.remaining_ms`).
    span = tracer.start_span(name)
    span.set_attribute("deadline.remaining_ms", int(budget.remaining() * 1000))
    return span
