from __future__ import annotations

import ast
from typing import TYPE_CHECKING, AbstractSet, Optional, Sequence, Union

from deadline_lint.engine.requires import Look, Text, Words, in_file
from deadline_lint.engine.rule import Rule, register
from deadline_lint.families.clock.common import (
    DATE_WORDS,
    DATE_HEADER_TEXT,
    inbound_header_read,
    reads_literal_key_in_function,
    shown,
)
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.expressions import mentions_any
from deadline_lint.semantics.local.function_body import FunctionBody, function_body

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr, ast.If, ast.While, ast.Assert)


@register
class DeadlineFromDateHeader(Rule):
    """
    ## What it does
    Flags an HTTP `Date` header read (`request.headers["Date"]`, `.get("date")`, WSGI's
    `HTTP_DATE`) whose value, directly or through local names and date parsers, takes part in
    deadline or remaining-time arithmetic: added to a duration, or subtracted from another
    instant, in a statement that names a deadline, timeout, budget or remaining time
    (`deadline = sent + timeout`, `remaining = budget - (now - sent)`), or passed as a
    `*timeout*` argument. The finding is on the header read.

    Quiet when the arithmetic names nothing of the kind (HTTP cache freshness, clock-skew
    estimates for request signing, logging).

    ## Why is this bad?
    The `Date` header is the sender's wall clock, to the second, at some point while it built
    the message. Measuring time already spent from it mixes two machines' clocks: skew of a
    few seconds makes every request look expired or gives it extra time, and the one-second
    resolution alone eats small budgets. The remaining budget must arrive as a duration
    (`X-Request-Budget-Ms`, `grpc-timeout`) and be measured locally with a monotonic clock.

    ## Example
    ```python
    import time
    from email.utils import parsedate_to_datetime

    def handle(request, budget_s):
        sent = parsedate_to_datetime(request.headers["Date"]).timestamp()
        remaining = budget_s - (time.time() - sent)
        return remaining
    ```

    ## Use instead
    ```python
    import time

    def handle(request):
        deadline = time.monotonic() + int(request.headers["X-Request-Budget-Ms"]) / 1000
        return deadline
    ```

    ## Fix safety
    No fix: the sender has to send a duration first.

    ## Options
    - `budget_header`: the header your services use for the remaining budget.
    """

    code = "DL203"
    name = "deadline-from-date-header"
    summary = "remaining time computed from an inbound Date header"
    node_types = (ast.Subscript, ast.Call)

    needs = (in_file(Words(*DATE_WORDS) & Text(lambda rule: DATE_HEADER_TEXT)),)
    first_looks = dict.fromkeys(node_types, Look(reads_literal_key_in_function))

    def visit_Subscript(self, node: ast.Subscript, ctx: "FileView") -> None:
        self._check_read(node, ctx)

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        self._check_read(node, ctx)

    def _check_read(self, node: Union[ast.Subscript, ast.Call], ctx: "FileView") -> None:
        read = inbound_header_read(node, ctx)
        if read is None or not read[0].is_date_key(read[1]):
            return
        wire = read[0]
        derived = wire.derived_names(ctx.scope, node)
        body = function_body(ctx.scope)
        words = wire.vocabulary.deadline_words + ("remaining", "deadline", "elapsed-budget")
        for binop in body.nodes(ast.BinOp):
            if not isinstance(binop.op, (ast.Add, ast.Sub)):
                continue
            if not any(_from_read(side, node, derived) for side in (binop.left, binop.right)):
                continue
            statement = _statement_of(binop, body)
            if statement is not None and _names_a_deadline(statement, words):
                ctx.report(
                    self,
                    node,
                    f"`{shown(ctx, node)}` is the sender's wall clock: take the remaining time from a "
                    "duration header and measure it with `time.monotonic()`",
                )
                return


def _from_read(expr: ast.expr, read: ast.AST, derived: AbstractSet[str]) -> bool:
    return any(sub is read for sub in walk_nodes(expr)) or mentions_any(expr, derived)


def _statement_of(node: ast.AST, body: FunctionBody) -> Optional[ast.AST]:
    current: Optional[ast.AST] = node
    while current is not None and not isinstance(current, _STATEMENTS):
        current = body.parent(current)
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return None
    return current


def _names_a_deadline(statement: ast.AST, words: Sequence[str]) -> bool:
    """Any name, attribute or keyword in the statement (the target included) that says
    deadline, timeout, budget or remaining."""
    if isinstance(statement, (ast.If, ast.While, ast.Assert)):
        statement = statement.test  # not the branches
    for sub in walk_nodes(statement):
        text = None
        if isinstance(sub, ast.Name):
            text = sub.id
        elif isinstance(sub, ast.Attribute):
            text = sub.attr
        elif isinstance(sub, ast.keyword):
            text = sub.arg
        if text and any(word in text.lower().replace("_", "-") for word in words):
            return True
    return False
