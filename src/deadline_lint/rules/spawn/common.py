"""What the spawn family's rules share: the prefilter words and the shared text filter."""
from __future__ import annotations

from typing import Callable, FrozenSet

from deadline_lint.catalog import Catalog
from deadline_lint.catalog.spawn import spawn_catalog
from deadline_lint.analysis.budget_text import budget_words  # noqa: F401  (re-exported for the rules)
from deadline_lint.profile import Profile


def words_filter(catalog: Catalog, key: str, words: FrozenSet[str]) -> Callable[[str], bool]:
    """One shared callable per word set, so the engine runs it once for every rule using it."""
    ordered = tuple(sorted(words))
    return catalog.cached(("words", key, ordered), lambda: lambda text: any(w in text for w in ordered))


def task_words(profile: Profile, catalog: Catalog) -> FrozenSet[str]:
    return spawn_catalog(catalog, profile["spawn_helpers"]).task_words


def child_words(profile: Profile, catalog: Catalog) -> FrozenSet[str]:
    return spawn_catalog(catalog, profile["spawn_helpers"]).child_words
