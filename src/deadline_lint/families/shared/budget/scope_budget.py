"""The budget a scope has (`Budget`): the names that carry the request's remaining time, the
kind of each direct source, and the timeout a fix derives from it. budget.py finds it."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from types import MappingProxyType
from typing import FrozenSet, List, Optional, Tuple

from deadline_lint.families.shared.budget.budget_types import GRPC_CONTEXT, LAMBDA_CONTEXT, OBJECT, BudgetType
from deadline_lint.semantics.local.expressions import dotted_text
from deadline_lint.semantics.local.scopes import ASSIGN, WITH, Scope
from deadline_lint.settings.profile import Profile

SECONDS, INSTANT, DERIVED = "seconds", "instant", "derived"

_TEMPLATE_FOR_KIND = MappingProxyType({
    OBJECT: "budget_expression",
    GRPC_CONTEXT: "grpc_context_expression",
    LAMBDA_CONTEXT: "lambda_context_expression",
    SECONDS: "seconds_expression",
})
OBJECT_KINDS = frozenset({OBJECT, GRPC_CONTEXT, LAMBDA_CONTEXT})


@dataclass(frozen=True)
class BudgetSource:
    name: str
    kind: str


@dataclass(frozen=True)
class Budget:
    names: FrozenSet[str]  # every name that carries or derives from the budget
    kinds: Tuple[Tuple[str, str], ...]  # (name, kind) for the direct sources, in priority order
    optional: FrozenSet[str] = frozenset()  # parameters that default to None (or are Optional)
    typed: Tuple[Tuple[str, BudgetType], ...] = ()  # (name, budget type) for budget objects

    @property
    def primary(self) -> Optional[BudgetSource]:
        """The source a fix derives a timeout from: one with a template, first found."""
        for name, kind in self.kinds:
            if kind in _TEMPLATE_FOR_KIND:
                return BudgetSource(name, kind)
        return None

    def timeout_expression(self, profile: Profile, spelled: Optional[str] = None) -> Optional[str]:
        """The primary source's timeout (`budget.timeout()`), the source spelled `spelled`
        when the caller holds it under another name (a local it was read into)."""
        source = self.primary
        if source is None:
            return None
        expression = profile.render(_TEMPLATE_FOR_KIND[source.kind], spelled or source.name)
        if source.name in self.optional:
            # `budget=None` callers exist: the edge default stands in for a missing budget.
            edge = profile.render("edge_expression")
            return f"({expression} if {source.name} is not None else {edge})"
        return expression

    def type_of(self, name: str) -> Optional[BudgetType]:
        """The budget type of a budget object's name (None: not a budget object)."""
        for source, budget_type in self.typed:
            if source == name:
                return budget_type
        return None

    def kind_of(self, name: str) -> Optional[str]:
        for source, kind in self.kinds:
            if source == name:
                return kind
        return DERIVED if name in self.names else None


def assignments(scope: Scope) -> List[Tuple[str, ast.expr]]:
    """Each name's assigned values (`x = v`, `x: T = v`, `(x := v)` in a test, `with v as
    x`), in source order."""
    pairs: List[Tuple[str, ast.expr]] = []
    for name, bindings in scope.bindings().items():
        for binding in bindings:
            if binding.kind in (ASSIGN, WITH) and isinstance(binding.value, ast.expr):
                pairs.append((name, binding.value))
    pairs.sort(key=lambda pair: (getattr(pair[1], "lineno", 0), getattr(pair[1], "col_offset", 0)))
    return pairs


def receiver_text(node: ast.expr) -> Optional[str]:
    return node.id if isinstance(node, ast.Name) else dotted_text(node) if isinstance(node, ast.Attribute) else None
