"""Statuses and cancellation: expiry and cancellation keep their own statuses and propagate."""
from deadline_lint.rules.status import (  # noqa: F401
    expiry_mapped_to_429,
)
