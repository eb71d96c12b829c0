"""Outbound calls: every call that leaves the process carries a timeout from the budget."""
from deadline_lint.families.outbound import (  # noqa: F401
    budget_can_grow,
    budget_header_not_forwarded,
    call_without_budget,
    fixed_timeout_ignores_budget,
    no_refuse_check,
    remainder_without_margin,
    stale_remainder_reused,
    unbounded_timeout,
)
