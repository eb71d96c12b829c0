"""Every rule family; importing this package registers all rules."""
from deadline_lint.rules import clock, outbound, retry, status  # noqa: F401
