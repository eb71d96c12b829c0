"""What a fix run counts: which findings went, which are new, and which stayed although the
run would have fixed them. The summary's numbers come from here, so they add up."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Callable, List, Sequence, Tuple

from deadline_lint.support.diagnostics import Diagnostic, Fix, tool_diagnostic


def without_unapplied_fixes(found: List[Diagnostic], path: str, applies: Callable[[Fix], bool]) -> List[Diagnostic]:
    """What remains once the loop stopped: a finding whose fix this mode applies is left only
    when its fix could not go in (its edits change nothing, or conflict with themselves). It
    stays, without a fix it never gets, and DL005 says so: a remaining finding marked
    fixable, with no word on why `fix` left it, would be a count that does not add up."""
    stuck = [d for d in found if d.fix is not None and applies(d.fix)]
    if not stuck:
        return found
    named = ", ".join(f"{d.code} (line {d.line})" for d in stuck)
    reason = tool_diagnostic(path, "DL005", f"the fix of {named} could not be applied; the finding remains")
    ids = {id(d) for d in stuck}
    unstuck = [replace(d, fix=None) if id(d) in ids else d for d in found]
    return sorted([*unstuck, reason], key=Diagnostic.sort_key)


_LINE_NUMBER = re.compile(r"\bline \d+")


def tally(before: Sequence[Diagnostic], after: Sequence[Diagnostic]) -> Tuple[int, int]:
    """(fixed, new): findings of `before` gone from `after`, and findings of `after` that
    `before` did not have, matched by code and message (a line number a message names may
    have moved with an added import). Counted so, the numbers add up whatever the fixes did:
    one fix can settle two findings (DL201's two reads of one timer share their edits),
    another finding can go with it, and fixed code can show a finding the original hid;
    counting applied fixes instead said "Fixed 4 problems, 0 remaining" after "Found 6"."""
    unmatched = Counter(_identity(d) for d in before)
    new = 0
    for diagnostic in after:
        key = _identity(diagnostic)
        if unmatched[key] > 0:
            unmatched[key] -= 1
        else:
            new += 1
    return sum(unmatched.values()), new


def _identity(diagnostic: Diagnostic) -> Tuple[str, str]:
    return diagnostic.code, _LINE_NUMBER.sub("line N", diagnostic.message)
