"""The tag of a fix that inserts a budget: one that adds a timeout (or passes the budget on)
where the call passes none. The codemod and `--thread-budget` exist to make those, so they
apply them whatever their applicability; the JSON spells the tag `"inserts_budget"`."""
from __future__ import annotations

from typing import FrozenSet

from deadline_lint.support.diagnostics import fix_tag

INSERTS_BUDGET = fix_tag("inserts_budget")
# What a rule passes as `report(..., tags=...)`.
INSERTS_BUDGET_TAGS: FrozenSet[str] = frozenset({INSERTS_BUDGET})
