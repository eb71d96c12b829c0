"""What the names a file imports from its project stand for, judged from its import lines (a
text scan, no parse of the file): the prefilter's project half for every family that follows
project facts."""
from __future__ import annotations

from typing import Iterator

from deadline_lint.semantics.facts import Fact, holds_in
from deadline_lint.semantics.modules import ModuleSource, absolute_name, project_of
from deadline_lint.semantics.scan import import_table
from deadline_lint.semantics.summary import External, Names, Symbol, Target


def imported_targets(text: str, path: str) -> Iterator[Target]:
    """What each name the file imports from its project resolves to (a project module, a
    symbol, or what the project re-exports from outside); names from outside are skipped."""
    found = project_of(path)
    if found is None:
        return
    modules, name, is_package = found
    names = Names(modules, ModuleSource(name, path, is_package, text))
    own_top = name.split(".")[0]
    for target in sorted(set(import_table(text).values())):
        target = absolute_name(name, is_package, target)
        if (own_top and target.split(".")[0] == own_top) or modules.is_project_name(target):
            resolved = names.resolve(target)
            if resolved is not None:
                yield resolved


def imports_fact_holder(fact: Fact, text: str, path: str) -> bool:
    """The file imports a project name whose module has a symbol `fact` holds for (a
    function, or a method of an imported class): only then can a call here reach one through
    the project."""
    found = project_of(path)
    if found is None:
        return False
    modules, name, is_package = found
    names = Names(modules, ModuleSource(name, path, is_package, text))
    seen = set()
    for target in imported_targets(text, path):
        module = target.module if isinstance(target, Symbol) else target
        if isinstance(module, ModuleSource) and module.path != path and module.path not in seen:
            seen.add(module.path)
            if holds_in(fact, module, names):
                return True
    return False


def reexports_from(text: str, path: str, packages: frozenset) -> bool:
    """The file imports, through a project module, a module or object of one of `packages`
    (`from project.metrics import time`)."""
    return any(
        isinstance(target, External) and target.qualname.split(".")[0] in packages
        for target in imported_targets(text, path)
    )
