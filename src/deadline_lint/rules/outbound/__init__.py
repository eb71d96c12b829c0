"""Outbound calls: every call that leaves the process carries a timeout from the budget."""
from deadline_lint.rules.outbound import call_without_budget, unbounded_timeout  # noqa: F401
