"""What the spawn family's rules share: the prefilter words and the shared text filter."""
from __future__ import annotations

from typing import Callable, FrozenSet

from deadline_lint.catalog import Catalog
from deadline_lint.catalog.spawn import spawn_catalog
from deadline_lint.profile import Profile


def words_filter(catalog: Catalog, key: str, words: FrozenSet[str]) -> Callable[[str], bool]:
    """One shared callable per word set, so the engine runs it once for every rule using it."""
    ordered = tuple(sorted(words))
    return catalog.cached(("words", key, ordered), lambda: lambda text: any(w in text for w in ordered))


def task_words(profile: Profile, catalog: Catalog) -> FrozenSet[str]:
    return spawn_catalog(catalog, profile["spawn_helpers"]).task_words


def child_words(profile: Profile, catalog: Catalog) -> FrozenSet[str]:
    return spawn_catalog(catalog, profile["spawn_helpers"]).child_words


def budget_words(profile: Profile, catalog: Catalog) -> FrozenSet[str]:
    """A budgeted function needs one of these in the file: a budget parameter name or type,
    a gRPC servicer, or a budget accessor."""
    budget = profile["budget"]
    data = catalog.data.get("budget", {}) or {}
    names = [*budget["parameters"], *budget["seconds_parameters"], *budget["types"], *budget["accessors"]]
    names.extend(data.get("types", {}) or {})
    names.extend(data.get("accessors", {}) or {})
    names.append(data.get("servicer_base_suffix", "Servicer"))
    return frozenset(name.rpartition(".")[2] for name in names if name)
