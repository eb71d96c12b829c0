"""Wall-clock instants kept on an object whose class is declared, not built here (issue 32).

`def process(self, nw: NewsWrapper): ... time.time() > nw.timeout`, where `NewsWrapper`, a
project class of another module, stores `self.timeout = time.time() + t` in its methods: the
read of `nw.timeout` is that instant. The class is the parameter's annotation (`Optional` and
quoted forms included); its stores, and its bases', are read as `inherited_instants` reads a
base elsewhere, and they must all agree, as the stores of one module's attribute must.

Precision first: a parameter bound more than once, an annotation naming no project class
(or one of the checked module, which is followed where it is), a module that stores the
attribute on other objects itself (`nw.timeout = ...` here: who knows which store a read
sees), or one store that is no wall-clock instant, and the read is unknown.
"""
from __future__ import annotations

import ast
from typing import Any, Callable, List, Optional

from deadline_lint.families.shared.time.clock_catalog import WALL
from deadline_lint.semantics.local.resolve import unwrap_optional
from deadline_lint.semantics.local.scopes import PARAM, Scope


def declared_class_instant(
    elsewhere: Any, expr: ast.Attribute, scope: Scope, may_store: Callable[[str, str], bool]
) -> Optional[Any]:
    """The instant `param.attr` holds when `param` is annotated with a project class of
    another module whose stores of `attr` all keep a wall-clock instant; None otherwise.
    `elsewhere` is the checked file's `InheritedInstants` (None outside a project)."""
    annotation = declared_class(expr, scope)
    if elsewhere is None or annotation is None:
        return None
    stores = elsewhere.base_stores(annotation, expr.attr, may_store)
    return agreed_instant(stores) if stores else None


def declared_class(expr: ast.Attribute, scope: Scope) -> Optional[ast.expr]:
    """The class `param` of `param.attr` is annotated with (`Optional` and quotes taken off),
    for a parameter bound once; None otherwise. A class of the checked module itself is
    followed there (kept_deadlines), through its own stores."""
    receiver = expr.value
    if not isinstance(receiver, ast.Name):
        return None
    bindings = scope.lookup(receiver.id) or []
    if len(bindings) != 1 or bindings[0].kind != PARAM or bindings[0].annotation is None:
        return None
    return unwrap_optional(bindings[0].annotation)


def agreed_instant(stores: List[Optional[Any]]) -> Optional[Any]:
    """One kept instant from stores that all keep one, of one role and unit; None otherwise."""
    agreed = [v for v in stores if v is not None]
    if not agreed or len(agreed) != len(stores):
        return None
    first = agreed[0]
    if any((v.role, v.unit) != (first.role, first.unit) for v in agreed):
        return None
    reads = tuple(r for v in agreed for r in v.reads)
    return type(first)(first.role, WALL, first.unit, reads, True)


__all__ = ["agreed_instant", "declared_class", "declared_class_instant"]
