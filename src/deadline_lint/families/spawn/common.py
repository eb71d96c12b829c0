"""What the spawn family's rules share: the prefilter words and the shared text filter."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, FrozenSet

from deadline_lint.catalog import Catalog
from deadline_lint.families.spawn.spawn import Spawns
from deadline_lint.families.spawn.spawn_catalog import spawn_catalog
from deadline_lint.families.spawn.spawn_facts import ReturnsTask, returns_task
from deadline_lint.semantics.imported import imports_fact_holder
from deadline_lint.settings.profile import Profile

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


def task_words(profile: Profile, catalog: Catalog) -> FrozenSet[str]:
    return spawn_catalog(catalog, profile.spawn_helpers).task_words


def child_words(profile: Profile, catalog: Catalog) -> FrozenSet[str]:
    return spawn_catalog(catalog, profile.spawn_helpers).child_words


def task_wrappers(profile: Profile, catalog: Catalog) -> ReturnsTask:
    """The project fact DL501 asks about calls that no vocabulary names: a project function or
    method that starts a task and hands it back (`analysis/spawn_facts.py`)."""
    return returns_task(spawn_catalog(catalog, profile.spawn_helpers))


def imports_task_wrapper(profile: Profile, catalog: Catalog) -> Callable[[str, str], bool]:
    """The file-level `Project` need of DL501: an imported project module holds a task wrapper."""
    fact = task_wrappers(profile, catalog)
    return catalog.cached(
        imports_task_wrapper, lambda: lambda text, path: imports_fact_holder(fact, text, path), fact.name
    )


def may_start(func: ast.expr, words: FrozenSet[str], ctx: "FileView") -> bool:
    """A cheap first look: the call's name is one of `words`, or a plain name an import
    binds (`from asyncio import create_task as spawn`)."""
    if type(func) is ast.Attribute:
        return func.attr in words
    if type(func) is ast.Name:
        name = func.id
        if name in words:
            return True
        # A renamed import still spells the original in the file: only then look at imports.
        return ctx.analysis(Spawns).possible and name in ctx.resolver.imported_names(ctx.scope)
    return False


def start_first_look(profile: Profile, catalog: Catalog) -> Callable[[ast.Call, "FileView"], bool]:
    """The first look DL501 and DL502 share: the call may start a task or a child (their
    words together); each rule then checks its own words."""
    words = task_words(profile, catalog) | child_words(profile, catalog)
    return catalog.cached(start_first_look, lambda: lambda node, ctx: may_start(node.func, words, ctx), words)


