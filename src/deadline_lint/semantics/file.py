"""The semantics layer as the file being checked sees it (`ctx.analysis(FileSemantics)`):
which project symbol a call names, and what a family's fact says about it."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from deadline_lint.analysis.scopes import IMPORT, OTHER, Scope
from deadline_lint.semantics.facts import Answer, Fact, P, ProjectFacts
from deadline_lint.semantics.modules import ModuleSource, project_of
from deadline_lint.semantics.receivers import Receivers
from deadline_lint.semantics.summary import FUNCTION, FUNCTIONS, ModuleTree, Names, Symbol, tree_of

if TYPE_CHECKING:
    from deadline_lint.file_view import FileView


class FileSemantics:
    def __init__(self, ctx: "FileView") -> None:
        found = project_of(ctx.source.path)
        modules, name, is_package = found if found is not None else (None, "", False)
        self.own = ModuleSource(name, ctx.source.path, is_package, ctx.source.text, ctx.tree)
        self.names = Names(modules, self.own)
        self.facts = ProjectFacts(self.names)
        self.receivers = Receivers(self.names)

    @property
    def summary(self) -> ModuleTree:
        """The checked module's own tree view (its tree is the one being walked)."""
        found = tree_of(self.own)
        assert found is not None  # the walked tree parsed
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
