"""Codes for tests that need a well-formed code no rule has: computed from the registry when
the test runs, so a rule that lands later (DL504, a new family DL7) never turns an "unknown
code" test into a wrong one."""
from __future__ import annotations

from deadline_lint.families.registry import known_codes


def unused_code(family: str = "9") -> str:
    """A well-formed code of `family` (one digit) that names no rule, the highest free one."""
    known = set(known_codes())
    for number in range(99, -1, -1):
        code = f"DL{family}{number:02d}"
        if code not in known:
            return code
    raise AssertionError(f"every DL{family}xx code is taken")


def unused_prefix() -> str:
    """A well-formed prefix (`DL9`, else `DL99`...) that no known code starts with."""
    known = known_codes()
    for prefix in [f"DL{digit}" for digit in "987654321"] + [f"DL{n:02d}" for n in range(99, 9, -1)]:
        if not any(code.startswith(prefix) for code in known):
            return prefix
    raise AssertionError("every prefix is taken")
