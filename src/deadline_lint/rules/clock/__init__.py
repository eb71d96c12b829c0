"""Clocks: remaining time is monotonic, and the wire carries durations, not instants."""
from deadline_lint.rules.clock import (  # noqa: F401
    wall_clock_deadline_math,
)
