"""DL3xx: retries that retry expiry or cancellation, retry outside the budget, or stack."""
from deadline_lint.rules.retry import (  # noqa: F401  (importing registers the rules)
    retry_on_expiry_or_cancel,
    retry_policy_admits_expiry,
    retry_outside_budget,
    stacked_retries,
)
