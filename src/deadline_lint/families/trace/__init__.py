"""Traces and metrics: spans record the remainder, metrics never label by it."""
from deadline_lint.families.trace import (  # noqa: F401
    deadline_in_metric_label,
    hop_without_remaining_in_trace,
)
