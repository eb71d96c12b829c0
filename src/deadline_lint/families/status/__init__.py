"""Statuses and cancellation: expiry and cancellation keep their own statuses and propagate."""
from deadline_lint.families.status import (  # noqa: F401
    breaker_reported_as_deadline,
    cancel_and_expiry_conflated,
    cancellation_swallowed,
    expiry_mapped_to_429,
)
