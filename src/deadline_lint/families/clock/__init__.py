"""Clocks: remaining time is monotonic, and the wire carries durations, not instants."""
from deadline_lint.families.clock import (  # noqa: F401
    absolute_deadline_on_wire,
    deadline_from_date_header,
    inbound_budget_not_capped,
    wall_clock_deadline_math,
)
