"""What an `except` clause, a retry filter or an `isinstance` test lets through: each class
(`Element`) with the expiry, cancel and breaker types it admits (`Admitted`), as read by
`ExceptionAnalysis` (`exceptions.py`); and a status-code test (`StatusTest`)."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import FrozenSet, Optional, Tuple

from deadline_lint.catalog.exceptions import CATALOG, ExceptionType

CATCH_ALL = "BaseException"


@dataclass(frozen=True)
class Admitted:
    kind: str  # EXPIRY, CANCEL or BREAKER
    type: str  # the concrete type (or status code) let through
    named: str  # the qualified name the code wrote for this element
    direct: bool  # the element is of this kind itself (not a base class of one)
    node: ast.AST  # where to report: the element, or the handler of a bare `except:`
    source: str = CATALOG  # catalog / profile / convention / subclass: how the kind is known
    status: bool = False  # `type` is a status code carried by an error class (grpc)


@dataclass(frozen=True)
class Element:
    """One class of a filter. `qualname` is None when it could not be resolved."""

    node: ast.AST
    qualname: Optional[str]
    admitted: Tuple[Admitted, ...]  # at most one per kind


@dataclass(frozen=True)
class Admission:
    elements: Tuple[Element, ...]
    complete: bool  # every element resolved (False: something dynamic or unknown is in it)

    @property
    def catch_all(self) -> bool:
        return any(e.qualname == CATCH_ALL for e in self.elements)

    @property
    def kinds(self) -> FrozenSet[str]:
        return frozenset(a.kind for e in self.elements for a in e.admitted)

    def all(self, kind: str) -> Tuple[Admitted, ...]:
        return tuple(a for e in self.elements for a in e.admitted if a.kind == kind)

    def admits(self, kind: str) -> Optional[Admitted]:
        """The best witness that `kind` gets through: a directly named type first."""
        found = self.all(kind)
        for admitted in found:
            if admitted.direct:
                return admitted
        return found[0] if found else None


@dataclass(frozen=True)
class StatusTest:
    """`err.code() == grpc.StatusCode.DEADLINE_EXCEEDED` (or `is`, `!=`, `in (...)`)."""

    statuses: Tuple[ExceptionType, ...]  # the expiry / cancel status codes compared against
    subject: ast.expr  # the other side, typically `err.code()`
    negated: bool  # `!=`, `is not`, `not in`

    @property
    def kinds(self) -> FrozenSet[str]:
        return frozenset(s.kind for s in self.statuses if s.kind)
