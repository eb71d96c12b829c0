"""The semantics layer as the file being checked sees it (`ctx.analysis(FileSemantics)`):
which project symbol a call names, and what a family's fact says about it."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, FrozenSet, NamedTuple, Optional, Protocol, Set

from deadline_lint.semantics.facts import Answer, Fact, P, ProjectFacts, locals_of, text_may_hold
from deadline_lint.semantics.local.scopes import IMPORT, OTHER, Scope
from deadline_lint.semantics.modules import ModuleSource, project_of
from deadline_lint.semantics.receivers import Receivers
from deadline_lint.semantics.summary import CLASS, FUNCTION, FUNCTIONS, External, ModuleTree, Names, Symbol, tree_of

from deadline_lint.support.source import SourceFile

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


class ParsedFile(Protocol):
    """All the semantics of a file read of it: a check's view (`FileView`), or the budget
    threader's own index of a module."""

    @property
    def source(self) -> SourceFile: ...

    @property
    def tree(self) -> ast.Module: ...


class FileSemantics:
    def __init__(self, ctx: ParsedFile) -> None:
        found = project_of(ctx.source.path)
        modules, name, is_package = found if found is not None else (None, "", False)
        self.own = ModuleSource(name, ctx.source.path, is_package, ctx.source.text, ctx.tree)
        self.names = Names(modules, self.own)
        self.facts = ProjectFacts(self.names)
        self.receivers = Receivers(self.names)
        self._fact_names: Dict[str, FactNames] = {}

    @property
    def summary(self) -> ModuleTree:
        """The checked module's own tree view (its tree is the one being walked)."""
        found = tree_of(self.own)
        assert found is not None  # the walked tree parsed
        return found

    def names_for(self, fact: Fact) -> "FactNames":
        """Which names of this file can reach a symbol `fact` holds for (once per fact)."""
        found = self._fact_names.get(fact.name)
        if found is None:
            found = self._fact_names[fact.name] = _fact_names(self, fact)
        return found

    def fact_at(self, fact: Fact[P], func: ast.expr, scope: Scope) -> Optional[Answer[P]]:
        """What `fact` says about the project function or method a call's `func` names."""
        symbol = self.callee(func, scope)
        return self.facts.about(fact, symbol) if symbol is not None else None

    def callee(self, func: ast.expr, scope: Scope) -> Optional[Symbol]:
        """The project def a call names: a function of this module or imported from the
        project, `module.function`, or a method on a receiver of a known project class."""
        if isinstance(func, ast.Name):
            bindings = scope.lookup(func.id)
            if not bindings or len(bindings) != 1:
                return None
            binding = bindings[0]
            if binding.kind == OTHER and isinstance(binding.value, FUNCTIONS):
                if self.summary.defs.get(func.id) is binding.value:
                    return Symbol(self.own, (func.id,), FUNCTION)
                return None  # a nested def: not a project symbol
            if binding.kind == IMPORT and binding.scope.parent is None:
                return self._function(self.summary.qualname_of(func))
            return None
        if not isinstance(func, ast.Attribute):
            return None
        head = func.value
        while isinstance(head, ast.Attribute):
            head = head.value
        if isinstance(head, ast.Name):
            bindings = scope.lookup(head.id)
            if bindings and len(bindings) == 1 and bindings[0].scope.parent is None and bindings[0].kind == IMPORT:
                return self._function(self.summary.qualname_of(func))  # `tasks.spawn(...)`
        klass = self.receivers.class_of(func.value, scope, self.summary)
        if klass is None:
            return None
        return self.names.member(klass, func.attr)

    def _function(self, qualname: Optional[str]) -> Optional[Symbol]:
        if qualname is None:
            return None
        found = self.names.symbol(qualname)
        return found if found is not None and found.is_function else None


class FactNames(NamedTuple):
    """The names through which a call in this file can reach a symbol a fact holds for."""

    functions: FrozenSet[str]  # `fn(...)`: this module's functions and imported ones
    modules: Dict[str, FrozenSet[str]]  # `alias.fn(...)`: an imported project module's functions
    methods: FrozenSet[str]  # `obj.m(...)`: methods of this module's or imported project classes
    reexports: Dict[str, str]  # bound name -> what a project module re-exports from outside

    @property
    def any(self) -> bool:
        return bool(self.functions or self.modules or self.methods or self.reexports)

    def may_reach(self, func: ast.expr) -> bool:
        """A cheap first look at a call's callee, before any resolution."""
        if isinstance(func, ast.Name):
            return func.id in self.functions
        if isinstance(func, ast.Attribute):
            if func.attr in self.methods:
                return True
            head = func.value
            return isinstance(head, ast.Name) and func.attr in self.modules.get(head.id, ())
        return False


def _fact_names(semantics: "FileSemantics", fact: Fact) -> FactNames:
    names, facts, own = semantics.names, semantics.facts, semantics.own
    functions: Set[str] = set()
    methods: Set[str] = set()
    modules: Dict[str, FrozenSet[str]] = {}
    reexports: Dict[str, str] = {}

    def holding_methods(klass: Symbol) -> None:
        for owner in names.mro(klass):
            if not text_may_hold(fact, owner.module, names):
                continue
            for path in locals_of(fact, owner.module):
                parts = tuple(path.split("."))
                if len(parts) == 2 and parts[0] == owner.path[0]:
                    if facts.about(fact, Symbol(owner.module, parts, FUNCTION)) is not None:
                        methods.add(parts[1])

    summary = semantics.summary.summary
    own_may_hold = text_may_hold(fact, own, names)
    if own_may_hold:  # this module's own functions and classes
        for path in locals_of(fact, own):
            if "." not in path and facts.about(fact, Symbol(own, (path,), FUNCTION)) is not None:
                functions.add(path)
    for class_name, table in summary.classes.items():
        if own_may_hold or any(base is not None for base in table.bases):
            holding_methods(Symbol(own, (class_name,), CLASS))
    for bound, target in summary.imports.items():
        if not names.is_project_name(target):
            continue
        defining = names.defining_module(target)
        if defining is None or not text_may_hold(fact, defining, names):
            # Only a re-export from outside the project could still matter.
            if target.rpartition(".")[2] in fact.reexported:
                outside = names.reexport(target)
                if outside is not None:
                    reexports[bound] = outside.qualname
            continue
        resolved = names.resolve(target)
        if isinstance(resolved, External):
            reexports[bound] = resolved.qualname
        elif isinstance(resolved, Symbol) and resolved.is_function:
            if facts.about(fact, resolved) is not None:
                functions.add(bound)
        elif isinstance(resolved, Symbol) and resolved.is_class:
            holding_methods(resolved)
        elif isinstance(resolved, ModuleSource):
            held = set()
            for path in locals_of(fact, resolved):
                parts = tuple(path.split("."))
                if facts.about(fact, Symbol(resolved, parts, FUNCTION)) is not None:
                    if len(parts) == 1:
                        held.add(path)
                    else:
                        methods.add(parts[-1])  # `obj.m()` on an instance of one of its classes
            if held:
                modules[bound] = frozenset(held)
    return FactNames(frozenset(functions), modules, frozenset(methods), reexports)


class FactUse:
    """A family's per-file use of one fact (`ctx.analysis(Subclass)`): the names of this file
    through which a call can reach a holder, computed once, and what a call reaches. Most
    files have none, and their calls cost one set lookup."""

    def __init__(self, ctx: "FileView", fact: Fact) -> None:
        self.ctx = ctx
        self.fact = fact
        self._names: Optional[FactNames] = None

    @property
    def names(self) -> FactNames:
        if self._names is None:
            self._names = self.ctx.analysis(FileSemantics).names_for(self.fact)
        return self._names

    def reached(self, call: ast.Call, scope: Scope) -> Optional[Answer]:
        if not self.names.may_reach(call.func):
            return None
        return self.ctx.analysis(FileSemantics).fact_at(self.fact, call.func, scope)
