"""The expiry and cancel types a retry filter or an except clause names (DL301): which
types it names itself, what it still lets through by a base class once one is gone, the
edit that drops one from a tuple written in place, and whether a policy stops at an overall
deadline of its own (then its attempts' own expiry is no finding)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator, Optional, Sequence, Tuple

from deadline_lint.catalog.retry import DELAY
from deadline_lint.families.retry.common import budget_of, drop_element, elements_of, shown
from deadline_lint.families.retry.analysis.retry_policy import RetryPolicy
from deadline_lint.families.shared.errors.exceptions import CANCEL, EXPIRY, Admission, Admitted
from deadline_lint.semantics.local.expressions import mentions_any
from deadline_lint.support.diagnostics import Edit

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

KINDS = (EXPIRY, CANCEL)


def still_admitted(admission: Admission, admitted: Admitted, ctx: "FileView", advice: str) -> str:
    """What the filter lets through by a base class once the named type is gone
    (`requests.ConnectionError` still admits `requests.ConnectTimeout`): the fix cannot remove
    that, so the message says so."""
    for element in admission.elements:
        if element.node is admitted.node:
            continue
        for other in element.admitted:
            if other.kind == admitted.kind and not other.direct:
                named = shown(ctx, element.node) if isinstance(element.node, ast.expr) else other.named
                return (
                    f"; `{named}`, which stays, "
                    f"still lets its subclass `{other.type}` through: {advice.format(type=other.type)}"
                )
    return ""


def qualnames(admission: Admission) -> Iterator[str]:
    """The classes an admission names and those it lets through as its subclasses."""
    for element in admission.elements:
        if element.qualname:
            yield element.qualname
        for admitted in element.admitted:
            yield admitted.named


def named_types(admission: Admission) -> Iterator[Admitted]:
    """Expiry or cancel types the filter names itself (not through a base class)."""
    for element in admission.elements:
        for admitted in element.admitted:
            if admitted.kind in KINDS and admitted.direct:
                yield admitted
                break


def spelled(ctx: "FileView", admitted: Admitted) -> str:
    """The type as the code spells it (`RT`, `exceptions.ReadTimeout`)."""
    if isinstance(admitted.node, ast.expr):
        return shown(ctx, admitted.node)
    return admitted.named


def drop_type(
    ctx: "FileView", container: Optional[ast.AST], admission: Admission, admitted: Admitted,
) -> Tuple[Edit, ...]:
    """Drop the type from the tuple written in place, when something else stays in it."""
    siblings: Optional[Sequence[ast.expr]] = elements_of(container)
    if siblings is None or not any(s is admitted.node for s in siblings):
        return ()
    flagged = {id(a.node) for a in named_types(admission)}
    if all(id(s) in flagged for s in siblings):
        return ()  # nothing would be left to retry: a decision, not a rewrite
    index = next(i for i, s in enumerate(siblings) if s is admitted.node)
    tuple_left = isinstance(container, ast.Tuple) and container.elts is siblings and _written(ctx, container)
    edit = drop_element(ctx.source, siblings, index, tuple_left=tuple_left)
    return (edit,) if edit is not None else ()


def _written(ctx: "FileView", container: ast.AST) -> bool:
    """A tuple in the source (not the arguments of `if_exception_type(A, B)` seen as one)."""
    return ctx.source.segment(container).startswith("(")


_OVERALL_DEADLINE_APIS = ("google.api_core.retry.",)  # `timeout=` bounds the whole retry, not an attempt


def overall_deadline(policy: RetryPolicy, ctx: "FileView") -> bool:
    """The policy stops at a deadline of its own: google-api-core's explicit `timeout=` /
    `deadline=`, or any delay stop that reads the budget in scope."""
    delays = [stop.node for stop in policy.stops if stop.kind == DELAY and stop.node is not None]
    if not delays:
        return False
    if policy.api.qualname.startswith(_OVERALL_DEADLINE_APIS):
        return True
    budget = budget_of(ctx)
    return budget is not None and any(mentions_any(node, budget.names) for node in delays)
