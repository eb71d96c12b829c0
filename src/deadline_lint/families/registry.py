"""Every rule: importing this module imports every family, whose rules register themselves
with `engine.rule.register`."""
from __future__ import annotations

from typing import Dict, Tuple, Type

from deadline_lint.engine.rule import Rule, registered_rules
from deadline_lint.support.tool_codes import TOOL_CODES
from deadline_lint.families import clock, outbound, retry, spawn, status, trace  # noqa: F401  (registers them)


def all_rules() -> Dict[str, Type[Rule]]:
    return registered_rules()


def known_codes() -> Tuple[str, ...]:
    """Every code the tool can report, from the registry at run time (rules merged later
    count automatically) plus the tool codes DL0xx."""
    return tuple(sorted({*TOOL_CODES, *all_rules()}))
