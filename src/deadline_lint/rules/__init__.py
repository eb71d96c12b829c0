"""Every rule family; importing this package registers all rules."""
from deadline_lint.rules import outbound  # noqa: F401
from deadline_lint.rules import retry  # noqa: F401
from deadline_lint.rules import status  # noqa: F401
