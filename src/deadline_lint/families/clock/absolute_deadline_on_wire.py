from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional, Union

from deadline_lint.engine.requires import Look, Text, Words, in_file
from deadline_lint.engine.rule import Rule, register
from deadline_lint.families.clock.common import WIRE_WORDS, WRITE, key_text_filter, shown
from deadline_lint.families.clock.wire import WireValues
from deadline_lint.families.shared.time.time_values import is_absolute_instant

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


@register
class AbsoluteDeadlineOnWire(Rule):
    """
    ## What it does
    Flags a header or gRPC metadata entry whose key names a deadline, a timeout or a budget
    (the profile's `budget_header`, `grpc-timeout`, or any key containing `deadline`,
    `timeout`, `budget`, `time-remaining`, `time-left`) and whose value is an absolute instant:
    a clock reading or a deadline derived from one (`time.time() + t`, `datetime.now()`,
    `time.monotonic() + t`), or any `.timestamp()` / `.isoformat()`, also inside `str(...)`,
    `int(...)` or an f-string.

    It looks at dict literals passed as `headers=` / `metadata=` (or assigned to a name like
    `headers`, or merged with `headers.update(...)`), at `headers[key] = value` stores, and
    at `(key, value)` pairs passed as metadata or appended to it. Message fields of other
    shapes are not checked. The finding is on the value.

    ## Why is this bad?
    An absolute instant means something only where it was read: the receiver compares it with
    its own clock, which disagrees with the sender's by whatever skew the two machines have (a
    monotonic reading means nothing at all elsewhere). A few seconds of skew turn a healthy
    deadline into one that expired before it arrived, or into extra time. The wire carries the
    *remaining duration*; each hop turns it back into a local monotonic deadline.

    ## Example
    ```python
    import time
    import requests

    def call(url, timeout):
        deadline = time.time() + timeout
        return requests.get(url, headers={"X-Request-Deadline": str(deadline)}, timeout=timeout)
    ```

    ## Use instead
    ```python
    import requests

    def call(url, timeout):
        return requests.get(url, headers={"X-Request-Budget-Ms": str(int(timeout * 1000))}, timeout=timeout)
    ```

    ## Fix safety
    No fix: the receiving side must read a duration instead, so the change spans services.

    ## Options
    - `budget_header`: the header or metadata key your services use for the remaining budget.
    """

    code = "DL202"
    name = "absolute-deadline-on-wire"
    summary = "a header or metadata entry carries an absolute deadline instead of a remaining duration"
    node_types = (ast.Assign, ast.keyword, ast.Call)

    needs = (
        in_file(
            Words(*WIRE_WORDS)
            & Text(lambda rule: key_text_filter(rule.catalog, rule.profile.budget_header, WIRE_WORDS, WRITE))
        ),
    )
    first_looks = dict.fromkeys(node_types, Look.of(lambda rule: _may_write_headers))

    def visit_Assign(self, node: ast.Assign, ctx: "FileView") -> None:
        self._check_writes(node, ctx)

    def visit_keyword(self, node: ast.keyword, ctx: "FileView") -> None:
        self._check_writes(node, ctx)

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        self._check_writes(node, ctx)

    def _check_writes(self, node: Union[ast.Assign, ast.keyword, ast.Call], ctx: "FileView") -> None:
        if not _may_write_headers(node):
            return
        wire = ctx.analysis(WireValues)
        for key, _, value in wire.header_writes(node, ctx.scope):
            if wire.is_budget_key(key) and is_absolute_instant(ctx, value, any_clock=True):
                ctx.report(
                    self,
                    value,
                    f"`{key}` carries an absolute instant (`{shown(ctx, value)}`): "
                    "send the remaining duration instead, e.g. milliseconds left",
                )


_WRITING_METHODS = frozenset({"update", "append"})
_CONTAINER_LITERALS = (ast.Dict, ast.List, ast.Tuple)


def _may_write_headers(node: ast.AST, ctx: Optional["FileView"] = None) -> bool:
    """A cheap first look before asking the wire analysis (most nodes stop here)."""
    if isinstance(node, ast.Call):
        func = node.func
        return isinstance(func, ast.Attribute) and func.attr in _WRITING_METHODS and len(node.args) == 1
    if isinstance(node, ast.keyword):
        return isinstance(node.value, _CONTAINER_LITERALS)
    if isinstance(node, ast.Assign):
        return isinstance(node.value, _CONTAINER_LITERALS) or any(isinstance(t, ast.Subscript) for t in node.targets)
    return False
