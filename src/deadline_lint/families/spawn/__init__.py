"""Spawning and forwarding: every child is owned and cancellable, every callee gets the budget."""
from deadline_lint.families.spawn import (  # noqa: F401
    budget_not_forwarded,
    child_without_cancel_token,
    task_without_owner,
)
