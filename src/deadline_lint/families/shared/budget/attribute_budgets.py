"""Budgets a function reads from attributes: the attribute-shaped sources
(`request.state.budget`, `g.budget`, `request.budget`) and `self.<attr>` where the method's
class stores only budget objects on it (`self.budget = budget` in `__init__`). Named by
their dotted text, which `mentions_any` matches."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Tuple

from deadline_lint.catalog import Catalog
from deadline_lint.families.shared.budget.budget_parameters import is_self
from deadline_lint.families.shared.budget.budget_sources import BudgetSources, Found
from deadline_lint.families.shared.budget.budget_text import budget_words
from deadline_lint.families.shared.budget.scope_budget import OBJECT_KINDS, Budget
from deadline_lint.semantics.local.declared import is_none
from deadline_lint.semantics.local.expressions import dotted_text
from deadline_lint.semantics.local.function_body import function_body
from deadline_lint.semantics.local.scopes import Scope
from deadline_lint.settings.profile import Profile

if TYPE_CHECKING:
    from deadline_lint.semantics.local.resolve import Resolver
    from deadline_lint.support.source import SourceFile

_STORED, _BASE = "budget.stored", "budget.base"  # the scope facts this module keeps


@dataclass(frozen=True)
class _Stored:
    """A class's budget attributes, as kept in its scope's facts."""

    by_attribute: Dict[str, Found]


# A method's budget from everything but attributes (the budget a stored value comes from),
# handed in by the caller on each question: kept here, it would hold its owner in a cycle.
OwnBudget = Callable[[Scope], Optional[Budget]]


class AttributeBudgets:
    """Per file: the attribute-shaped budgets of each function."""

    def __init__(
        self, resolver: "Resolver", catalog: Catalog, profile: Profile, sources: BudgetSources,
        source: Optional["SourceFile"],
    ) -> None:
        self.resolver = resolver
        self.sources = sources
        self._source = source
        # Attribute sources are looked for only in files that spell one of their names.
        text = source.text if source is not None else ""
        self._state_words = tuple(sorted(sources.state_names))
        self._reads_sources = source is None or any(word in text for word in self._state_words)
        # A class keeps a budget on `self` only where some method has one: a budget word.
        self._words = tuple(sorted(budget_words(profile, catalog)))
        self._may_keep = source is None or any(word in text for word in self._words)

    def sources_read(self, scope: Scope, own_budget: Optional[OwnBudget]) -> List[Tuple[str, Found]]:
        """The attribute-shaped budget sources the function reads itself, by dotted text:
        `request.state.budget`, `g.budget`, `request.budget`, and `self.<attr>` where the class
        keeps a budget object (not without `own_budget`)."""
        if not self._may_keep:
            return []  # no budget word in the file: no source, and nothing kept on `self`
        stored = self._stored_budgets(scope, own_budget) if own_budget is not None else {}
        if not self._reads_sources and not stored:
            return []
        if self._source is not None:
            text = self._source.segment(scope.node)
            if not any(word in text for word in self._state_words) and not any(attr in text for attr in stored):
                return []
        found: Dict[str, Found] = {}
        for node in function_body(scope).nodes(ast.Attribute):
            source = self.sources.attribute_source(node, scope)
            if source is None and node.attr in stored and is_self(node.value, scope):
                source = stored[node.attr]
            dotted = dotted_text(node) if source is not None else None
            if source is not None and dotted is not None:
                found.setdefault(dotted, source)
        return sorted(found.items())

    def _stored_budgets(self, scope: Scope, own_budget: OwnBudget) -> Dict[str, Found]:
        """For a method: the attributes its class stores only budget objects on
        (`self.budget = budget` in `__init__`), with their kind and type."""
        class_scope = scope.enclosing_class
        if class_scope is None:
            return {}
        cached = class_scope.facts.get(_STORED)
        if isinstance(cached, _Stored):
            return cached.by_attribute
        class_scope.facts[_STORED] = _Stored({})  # a method asking while this runs sees none
        if self._source is not None:
            text = self._source.segment(class_scope.node)
            if not any(word in text for word in self._words):
                return {}  # no method of the class can have a budget to keep
        stores: Dict[str, List[Optional[Found]]] = {}
        class_node = class_scope.node
        for stmt in class_node.body if isinstance(class_node, ast.ClassDef) else ():
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            method = self.resolver.scope_of(stmt, class_scope)
            if not stmt.args.args:
                continue
            base = None
            for node in function_body(method).nodes(ast.Assign):
                for target in node.targets:
                    if not (isinstance(target, ast.Attribute) and is_self(target.value, method)):
                        continue
                    if is_none(node.value):
                        continue
                    if base is None:
                        base = self._base_budget(method, own_budget)
                    stores.setdefault(target.attr, []).append(self._stored_value(node.value, base, method))
        result: Dict[str, Found] = {}
        for attr, values in stores.items():
            first = values[0] if values else None
            if first is not None and all(v == first for v in values):
                result[attr] = first
        class_scope.facts[_STORED] = _Stored(result)
        return result

    def _base_budget(self, method: Scope, own_budget: OwnBudget) -> Optional[Budget]:
        if _BASE not in method.facts:
            method.facts[_BASE] = own_budget(method)
        found = method.facts[_BASE]  # stored just now or before: a Budget or None
        return found if isinstance(found, Budget) else None

    def _stored_value(self, value: ast.expr, base: Optional[Budget], method: Scope) -> Optional[Found]:
        if isinstance(value, ast.Name) and base is not None:
            kind = base.kind_of(value.id)
            budget_type = base.type_of(value.id)
            if kind in OBJECT_KINDS and budget_type is not None:
                return kind, budget_type
            return None
        source = self.sources.source(value, method)
        return source if source is not None and source[0] in OBJECT_KINDS else None
