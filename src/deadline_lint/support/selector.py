"""The `Selector` type (`DL101`, `DL1`, `ALL`): parsed once and matched the same way
everywhere (rule selection, fix classes, per-path ignores, noqa). A leaf: the profile and
the engine import it; checking that selectors name known rules is selection.py's."""
from __future__ import annotations

import re
from typing import Iterable, Tuple

SELECTOR_PATTERN = r"^(ALL|DL[0-9]{0,3})$"
_SELECTOR = re.compile(SELECTOR_PATTERN)


class Selector:
    """Some selectors, each `ALL` or a code prefix. A code's match is the longest selector it
    starts with (`ALL` counts as the shortest, length 0): that is how ignore and select, and
    extend_safe_fixes and extend_unsafe_fixes, are weighed against each other."""

    __slots__ = ("selectors", "_all", "_prefixes")

    def __init__(self, selectors: Iterable[str] = ()) -> None:
        self.selectors: Tuple[str, ...] = tuple(selectors)
        self._all = "ALL" in self.selectors
        self._prefixes = tuple(sorted({s for s in self.selectors if s != "ALL"}, key=len, reverse=True))

    def __bool__(self) -> bool:
        return bool(self.selectors)

    def __add__(self, other: "Selector") -> "Selector":
        return Selector(self.selectors + other.selectors)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Selector) and other.selectors == self.selectors

    def __hash__(self) -> int:
        return hash(self.selectors)

    def __repr__(self) -> str:
        return f"Selector({list(self.selectors)!r})"

    def __reduce__(self):
        return Selector, (self.selectors,)

    def match_length(self, code: str) -> int:
        """The length of the longest selector `code` starts with; 0 for ALL; -1 for none."""
        for prefix in self._prefixes:
            if code.startswith(prefix):
                return len(prefix)
        return 0 if self._all else -1

    def matches(self, code: str) -> bool:
        return self.match_length(code) >= 0

    def names_exactly(self, code: str) -> bool:
        """Opt-in rules turn on only this way: ALL and prefixes do not count."""
        return code in self.selectors

    def beats(self, other: "Selector", code: str) -> bool:
        """This selector matches `code` more specifically than `other` does."""
        return self.match_length(code) > other.match_length(code)


def is_selector(value: object) -> bool:
    return isinstance(value, str) and _SELECTOR.match(value) is not None

