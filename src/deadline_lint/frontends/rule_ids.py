"""The other names a code goes by, derived from the code in one place next to the registry:
the pylint message id and symbol (the pylint plugin registers them, the docs print them)."""
from __future__ import annotations

from deadline_lint.support.tool_codes import TOOL_CODES

PYLINT_CHECKER = "deadline-lint"  # the pylint checker of the default-on rules and tool codes


def message_id(code: str) -> str:
    """DL101 -> W9101; tool codes (family 0) are errors: DL001 -> E9001."""
    category = "E" if code in TOOL_CODES else "W"
    return f"{category}9{code[2:]}"


def symbol(code: str) -> str:
    """A rule's own name; a tool code's name under the checker's (`deadline-lint-syntax-error`)."""
    if code in TOOL_CODES:
        return f"{PYLINT_CHECKER}-{TOOL_CODES[code].name}"
    from deadline_lint.families.registry import all_rules

    return all_rules()[code].name
