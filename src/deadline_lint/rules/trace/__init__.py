"""Traces and metrics: spans record the remainder, metrics never label by it."""
from deadline_lint.rules.trace import (  # noqa: F401
    hop_without_remaining_in_trace,
)
