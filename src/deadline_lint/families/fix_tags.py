"""The tags the families' fixes carry (`Fix.tags`), declared in one module that loads no rule,
so that whatever spells a fix (the output, the results cache, the server) knows every tag, in
a process that checked nothing itself too (a run whose files went to workers, a warm run
answered from the cache). A tag lives in a leaf module outside the rule packages: importing a
family's package loads its rules."""
from __future__ import annotations

from deadline_lint.families.shared.budget.fix_tags import INSERTS_BUDGET

FIX_TAGS = (INSERTS_BUDGET,)
