"""DL3xx: retries that retry expiry or cancellation, retry outside the budget, or stack."""
from deadline_lint.families.retry import (  # noqa: F401  (importing registers the rules)
    retry_on_expiry_or_cancel,
    retry_outside_budget,
    retry_policy_admits_expiry,
    stacked_retries,
)
