"""Rule selectors (`DL101`, `DL1`, `ALL`): one `Selector` type, parsed once and matched the
same way everywhere (rule selection, fix classes, per-path ignores, noqa), and the check that
each names a known code (or an error naming the nearest one).

"Known" is computed from the rule registry at run time, so rules that land later count
without anyone updating a list here.
"""
from __future__ import annotations

import difflib
import re
from typing import Iterable, List, Sequence, Tuple

SELECTOR_PATTERN = r"^(ALL|DL[0-9]{0,3})$"
_SELECTOR = re.compile(SELECTOR_PATTERN)


class SelectorError(ValueError):
    """One line: what was given, and the nearest known code."""


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


def parse_selectors(value: str) -> List[str]:
    """`DL101, dl1` -> ["DL101", "DL1"] (validated later, so the error can be one line)."""
    return [code.strip().upper() for code in value.split(",") if code.strip()]


def _known() -> Sequence[str]:
    from deadline_lint.rules.base import known_codes

    return known_codes()


def is_known(selector: str, codes: Sequence[str]) -> bool:
    one = Selector((selector,))
    return any(one.matches(code) for code in codes)


def nearest_code(selector: str, codes: Sequence[str]) -> str:
    close = difflib.get_close_matches(selector, codes, n=1, cutoff=0.0)
    return close[0] if close else codes[0]


def is_selector(value: object) -> bool:
    return isinstance(value, str) and _SELECTOR.match(value) is not None


def check_selectors(selectors: Iterable[str], where: str) -> None:
    """Raise SelectorError for the first selector that is malformed or names no known code."""
    selectors = list(selectors)
    if not selectors:
        return  # nothing to check: the rules need not be loaded (a cached run may need none)
    codes = _known()
    for selector in selectors:
        if not is_selector(selector):
            raise SelectorError(
                f"{where}: not a rule code or prefix: {selector!r} (expected e.g. DL101, DL1 or ALL)"
            )
        if not is_known(selector, codes):
            raise SelectorError(
                f"{where}: unknown rule code or prefix {selector!r} "
                f"(nearest known code: {nearest_code(selector, codes)})"
            )
