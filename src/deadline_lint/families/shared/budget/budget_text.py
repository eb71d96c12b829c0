"""Whether a file's text can hold a budgeted function at all: a budget needs a parameter
named or annotated as one, a gRPC servicer, or a budget accessor, and each of those spells a
profile or catalog word in the text (imports under another name still spell the original).
Rules that only judge budgeted code ask this once per file and skip the rest cheaply, which
matters when the engine's own prefilter is off (the flake8 and pylint plugins, benchmarks)."""
from __future__ import annotations

from typing import TYPE_CHECKING, FrozenSet

from deadline_lint.catalog import Catalog
from deadline_lint.settings.profile import Profile

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


def budget_words(profile: Profile, catalog: Catalog) -> FrozenSet[str]:
    """A budget parameter name or type, a gRPC servicer, or a budget accessor."""
    budget = profile.budget
    data = catalog.data.get("budget", {}) or {}
    names = [*budget.parameters, *budget.seconds_parameters, *budget.types, *budget.accessors, *budget.context_vars]
    names.extend(data.get("types", {}) or {})
    names.extend(data.get("accessors", {}) or {})
    names.append(data.get("servicer_base_suffix", "Servicer"))
    # A built-in context (AWS Lambda's) is worth a look where its remainder is read.
    for roles in (data.get("roles", {}) or {}).values():
        names.extend((roles or {}).get("raw_remainder_ms", ()) or ())
    return frozenset(name.rpartition(".")[2] for name in names if name)


def budget_parameter_words(profile: Profile, catalog: Catalog) -> FrozenSet[str]:
    """What a parameter that *receives* a budget is called or annotated with: a callee
    DL503 can forward to spells one of these (a servicer or an accessor only makes callers)."""
    budget = profile.budget
    types = dict((catalog.data.get("budget", {}) or {}).get("types", {}) or {})
    names = [*budget.parameters, *budget.seconds_parameters, *budget.types]
    names.extend(name for name, kind in types.items() if kind == "object")
    return frozenset(name.rpartition(".")[2] for name in names if name)


class BudgetText:
    def __init__(self, ctx: "FileView") -> None:
        text = ctx.source.text
        self.possible = any(word in text for word in budget_words(ctx.profile, ctx.catalog))
        # ... and whether a function can receive one (what DL503 forwards to).
        self.receivers = self.possible and any(
            word in text for word in budget_parameter_words(ctx.profile, ctx.catalog)
        )
