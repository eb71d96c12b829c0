"""Rule selectors (`DL101`, `DL1`, `ALL`): known or an error naming the nearest known code.

"Known" is computed from the rule registry at run time, so rules that land later count
without anyone updating a list here.
"""
from __future__ import annotations

import difflib
import re
from typing import Iterable, List, Sequence

_SELECTOR = re.compile(r"^(ALL|DL[0-9]{0,3})$")


class SelectorError(ValueError):
    """One line: what was given, and the nearest known code."""


def parse_selectors(value: str) -> List[str]:
    """`DL101, dl1` -> ["DL101", "DL1"] (validated later, so the error can be one line)."""
    return [code.strip().upper() for code in value.split(",") if code.strip()]


def _known() -> Sequence[str]:
    from deadline_lint.registry import known_codes

    return known_codes()


def is_known(selector: str, codes: Sequence[str]) -> bool:
    return selector == "ALL" or any(code.startswith(selector) for code in codes)


def nearest_code(selector: str, codes: Sequence[str]) -> str:
    close = difflib.get_close_matches(selector, codes, n=1, cutoff=0.0)
    return close[0] if close else codes[0]


def check_selectors(selectors: Iterable[str], where: str) -> None:
    """Raise SelectorError for the first selector that is malformed or names no known code."""
    selectors = list(selectors)
    if not selectors:
        return  # nothing to check: the rules need not be loaded (a cached run may need none)
    codes = _known()
    for selector in selectors:
        if not isinstance(selector, str) or not _SELECTOR.match(selector):
            raise SelectorError(
                f"{where}: not a rule code or prefix: {selector!r} (expected e.g. DL101, DL1 or ALL)"
            )
        if not is_known(selector, codes):
            raise SelectorError(
                f"{where}: unknown rule code or prefix {selector!r} "
                f"(nearest known code: {nearest_code(selector, codes)})"
            )
