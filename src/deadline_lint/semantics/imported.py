"""What the names a file imports from its project can bring, judged from its import lines (a
text scan, no parse of the file): the prefilter's project half for every family that follows
project facts. Imported modules are parsed only when their text (or that of a module they
import) can hold the fact."""
from __future__ import annotations

from typing import FrozenSet, Iterable, List, Optional, Tuple

from deadline_lint.semantics.facts import Fact, holds_in
from deadline_lint.semantics.modules import ModuleSource, ProjectModules, absolute_name, project_of
from deadline_lint.semantics.scan import import_table
from deadline_lint.semantics.session import current
from deadline_lint.semantics.summary import Names


class _ProjectImports:
    """The project's names, the absolute targets of the file's project imports, and (built on
    first use) the distinct project modules defining them: the same for every family asking
    about one file, so it is worked out once per file."""

    __slots__ = ("names", "targets", "_modules", "_path")

    def __init__(self, names: Names, targets: Tuple[str, ...], path: str) -> None:
        self.names = names
        self.targets = targets
        self._path = path
        self._modules: Optional[List[ModuleSource]] = None

    def modules(self) -> List[ModuleSource]:
        if self._modules is None:
            seen = set()
            self._modules = []
            for target in self.targets:
                module = self.names.defining_module(target)
                if module is None or module.path == self._path or module.path in seen:
                    continue
                seen.add(module.path)
                self._modules.append(module)
        return self._modules


def _project_imports(text: str, path: str) -> Optional[_ProjectImports]:
    """The file's project imports; the last file's answer is kept (every family asks it in
    turn about the file being checked), for as long as its project's modules are the same
    (an editor that saw files change gets a new `ProjectModules`)."""
    found = project_of(path)
    if found is None:
        return None
    last = current().state(LastImports)
    cached = last.held
    if cached is not None and cached[0] is text and cached[1] == path and cached[2] is found[0]:
        return cached[3]
    modules, name, is_package = found
    names = Names(modules, ModuleSource(name, path, is_package, text))
    own_top = name.split(".")[0]
    targets = (absolute_name(name, is_package, t) for t in sorted(set(import_table(text).values())))
    imports = _ProjectImports(names, tuple(
        t for t in targets if (own_top and t.split(".")[0] == own_top) or names.is_project_name(t)
    ), path)
    last.held = (text, path, modules, imports)
    return imports


class LastImports:
    """The last file's project imports (see `_project_imports`)."""

    def __init__(self) -> None:
        self.held: Optional[Tuple[str, str, ProjectModules, _ProjectImports]] = None


def may_import_mentioning(text: str, path: str, sources: Iterable[str], word: str) -> bool:
    """A name imported from one of `sources` (as its import line spells the module: `.b`,
    `pkg.b`) may be a project module's or come from one, and the file imports a project module
    whose text holds `word` (as `imports_module_mentioning` judges it). A library's names
    (`requests`) never reach the project."""
    found = _project_imports(text, path)
    if found is None:
        return False
    if not any(source.startswith(".") or found.names.is_project_name(source) for source in sources):
        return False
    return any(word in module.text for module in found.modules())


def imports_fact_holder(fact: Fact, text: str, path: str) -> bool:
    """The file imports a project module that holds `fact` for some symbol (a function, or a
    method of one of its classes), directly or through what it imports."""
    found = _project_imports(text, path)
    if found is None:
        return False
    return any(holds_in(fact, module, found.names) for module in found.modules())


def project_imports(text: str, path: str) -> Optional[Tuple[Names, Tuple[str, ...]]]:
    """The project's names and the absolute targets of the file's project imports (None: the
    file is in no project)."""
    found = _project_imports(text, path)
    return (found.names, found.targets) if found is not None else None


def reexports_from(text: str, path: str, packages: FrozenSet[str]) -> bool:
    """The file imports, through a project module, a module or object of one of `packages`
    (`from project.metrics import time`)."""
    found = _project_imports(text, path)
    if found is None:
        return False
    names = found.names
    for target in found.targets:
        if target.rpartition(".")[2] not in packages:
            continue  # a project module re-exports `time` as `time` (`from app.metrics import time`)
        outside = names.reexport(target)
        if outside is not None and outside.qualname.split(".")[0] in packages:
            return True
    return False


def holds_here_or_imported(fact: Fact, text: str, path: str) -> bool:
    """The file itself holds `fact` for one of its symbols (judged from its text first, parsed
    only when that cannot rule it out), or imports a project module that does."""
    if fact.may_hold(text):
        found = project_of(path)
        modules, name, is_package = found if found is not None else (None, "", False)
        own = ModuleSource(name, path, is_package, text)
        if holds_in(fact, own, Names(modules, own)):
            return True  # (also for a text in no project: stdin, the codemod)
    return imports_fact_holder(fact, text, path)


def imports_module_mentioning(text: str, path: str, word: str) -> bool:
    """The file imports a project module whose text holds `word` (a look before any parse)."""
    found = _project_imports(text, path)
    return found is not None and any(word in module.text for module in found.modules())
