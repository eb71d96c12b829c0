"""Rule selectors (`DL101`, `DL1`, `ALL`) as the user gives them: parsed from an option, and
checked to name a known code (or an error naming the nearest one). Matching is `Selector`'s
(selector.py).

"Known" is computed from the rule registry at run time, so rules that land later count
without anyone updating a list here.
"""
from __future__ import annotations

from typing import Iterable, List, Sequence

from deadline_lint.support.selector import SELECTOR_PATTERN, Selector, is_selector

__all__ = ["SELECTOR_PATTERN", "Selector", "SelectorError", "check_selectors", "is_selector", "parse_selectors"]


class SelectorError(ValueError):
    """One line: what was given, and the nearest known code."""


def parse_selectors(value: str) -> List[str]:
    """`DL101, dl1` -> ["DL101", "DL1"] (validated later, so the error can be one line)."""
    return [code.strip().upper() for code in value.split(",") if code.strip()]


def _known() -> Sequence[str]:
    from deadline_lint.families.registry import known_codes

    return known_codes()


def is_known(selector: str, codes: Sequence[str]) -> bool:
    one = Selector((selector,))
    return any(one.matches(code) for code in codes)


def nearest_code(selector: str, codes: Sequence[str]) -> str:
    import difflib  # only for a selector that names no code: not on every check's import path

    close = difflib.get_close_matches(selector, codes, n=1, cutoff=0.0)
    return close[0] if close else codes[0]


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
