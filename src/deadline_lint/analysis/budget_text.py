"""Whether a file's text can hold a budgeted function at all: a budget needs a parameter
named or annotated as one, a gRPC servicer, or a budget accessor, and each of those spells a
profile or catalog word in the text (imports under another name still spell the original).
Rules that only judge budgeted code ask this once per file and skip the rest cheaply, which
matters when the engine's own prefilter is off (the flake8 and pylint plugins, benchmarks)."""
from __future__ import annotations

from typing import TYPE_CHECKING, FrozenSet

from deadline_lint.catalog import Catalog
from deadline_lint.profile import Profile

if TYPE_CHECKING:
    from deadline_lint.context import FileContext


def budget_words(profile: Profile, catalog: Catalog) -> FrozenSet[str]:
    """A budget parameter name or type, a gRPC servicer, or a budget accessor."""
    budget = profile["budget"]
    data = catalog.data.get("budget", {}) or {}
    names = [*budget["parameters"], *budget["seconds_parameters"], *budget["types"], *budget["accessors"]]
    names.extend(data.get("types", {}) or {})
    names.extend(data.get("accessors", {}) or {})
    names.append(data.get("servicer_base_suffix", "Servicer"))
    return frozenset(name.rpartition(".")[2] for name in names if name)


class BudgetText:
    def __init__(self, ctx: "FileContext") -> None:
        words = budget_words(ctx.profile, ctx.catalog)
        text = ctx.source.text
        self.possible = any(word in text for word in words)
