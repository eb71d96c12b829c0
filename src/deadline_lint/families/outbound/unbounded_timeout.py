from __future__ import annotations

import ast
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from deadline_lint.catalog import TimeoutObject
from deadline_lint.engine.edits import insert_keyword, replace_node
from deadline_lint.engine.rule import register
from deadline_lint.families.outbound.analysis.outbound import outbound_sites
from deadline_lint.families.outbound.analysis.outbound_calls import FROM_CALL, OutboundCall
from deadline_lint.families.outbound.analysis.timeout_objects import timeout_object, unbounded_fields
from deadline_lint.families.outbound.analysis.unbounded_settings import setting_unset
from deadline_lint.families.outbound.common import OutboundRule, bounded_externally, fix_timeout
from deadline_lint.semantics.local.expressions import is_unbounded
from deadline_lint.support.source import Located
from deadline_lint.support.diagnostics import Applicability, Edit

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


@register
class UnboundedTimeout(OutboundRule):
    """
    ## What it does
    Flags a timeout that is explicitly unbounded: `timeout=None`, `float("inf")`,
    `math.inf`, a `(connect, read)` tuple with an unbounded part, `asyncio.wait_for(x, None)`,
    and timeout objects that set no limit (`httpx.Timeout(None)`,
    `aiohttp.ClientTimeout(total=None)`, `aiohttp.ClientTimeout()`,
    `botocore.config.Config(read_timeout=None)`). A client built with an unbounded timeout
    (`httpx.Client(timeout=None)`, `redis.Redis(socket_timeout=None)`) is reported once, where
    it is built, not at each of its calls. A module-level setting that is unbounded unless
    configured counts too, defined in this module or another of the project:
    `TIMEOUT = int(raw) if raw else None` with `raw = os.getenv("TIMEOUT", "")`, or a
    `TIMEOUT = None` fallback (no fix: the bound for the unset case is the service's choice).

    ## Why is this bad?
    `timeout=None` reads like a decision but means "wait forever": the call can outlive the
    request and every retry budget above it. A missing inbound deadline means the edge total,
    never infinite time.

    ## Example
    ```python
    import httpx
    import requests

    def refund(url, body, budget):
        requests.post(url, json=body, timeout=None)

    client = httpx.AsyncClient(timeout=httpx.Timeout(None))
    ```

    ## Use instead
    ```python
    import httpx
    import requests

    def refund(url, body, budget):
        requests.post(url, json=body, timeout=budget.timeout())

    client = httpx.AsyncClient(timeout=httpx.Timeout(10.0))
    ```

    ## Fix safety
    Unsafe: the fix replaces an explicit value, the unbounded one, with a timeout from the
    budget in scope (or the edge default). A call that was meant to stream or wait for as
    long as it takes can now fail with a timeout where it used to succeed.

    ## Options
    - `fix.*` and `edge_total_ms`: what the fix inserts.
    - `outbound`: the organisation's own clients and timeout objects.
    """

    code = "DL103"
    name = "unbounded-timeout"
    summary = "timeout=None, float('inf'), ClientTimeout(total=None) and friends"
    fix_applicability = Applicability.UNSAFE

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        for call in outbound_sites(ctx, node):
            # Calls through a client built unbounded are FROM_CONSTRUCTOR: reported at the
            # constructor, which is itself a site.
            if call.source != FROM_CALL or call.timeout is None:
                continue
            if not is_unbounded(call.timeout, ctx.scope, ctx.resolver):
                self._check_setting(call, ctx)
                continue
            if bounded_externally(node, ctx):
                continue
            expression, _ = fix_timeout(ctx, node)
            shown = ctx.source.segment(call.timeout)
            if isinstance(call.timeout, ast.Tuple):
                # (connect, read): bound only the unbounded parts, keep the others as they are.
                parts = [e for e in call.timeout.elts if is_unbounded(e, ctx.scope, ctx.resolver)]
                edits = [replace_node(ctx.source, part, expression) for part in parts]
                value = _apply_edits(ctx, call.timeout, edits)
                imports: Tuple[str, ...] = ()
            else:
                value = call.api.render_timeout(expression)
                edits = [replace_node(ctx.source, call.timeout, value)]
                imports = call.api.imports
            message = f"`{call.display_name}` is given an unbounded timeout (`{shown}`): pass `{value}` instead"
            ctx.report(self, call.timeout, message, edits, description=f"replace with {value}", imports=imports)
        self._check_timeout_object(node, ctx)

    def _check_setting(self, call: OutboundCall, ctx: "FileView") -> None:
        """`timeout=TIMEOUT` where the module's `TIMEOUT` is None unless configured. No fix:
        the bound to use when it is not set is the service's choice."""
        if not isinstance(call.timeout, ast.Name):
            return  # only a module's setting, spelled by its name, can be unset
        unset = setting_unset(call.timeout, ctx)
        if unset is None or bounded_externally(call.node, ctx):
            return
        name = call.timeout.id
        message = (
            f"`{call.display_name}` is given `{name}`, which is unbounded when not configured "
            f"({unset.shown()}): give it a bound for that case"
        )
        ctx.report(self, call.timeout, message)

    def _check_timeout_object(self, node: ast.Call, ctx: "FileView") -> None:
        spec = timeout_object(node, ctx.scope, ctx.resolver, ctx.catalog)
        if spec is None:
            return
        unbounded = unbounded_fields(node, spec, ctx.scope, ctx.resolver)
        if not unbounded:
            self._check_setting_fields(node, spec, ctx)
            return
        expression, _ = fix_timeout(ctx, node)
        edits: List[Optional[Edit]] = []
        for field, value in unbounded:
            if value is None:
                edits.append(insert_keyword(ctx.source, node, field, expression))
            else:
                edits.append(replace_node(ctx.source, value, expression))
        names = ", ".join(f"`{field}`" for field, _ in unbounded)
        message = f"`{spec.qualname}` sets no limit ({names}): set `{unbounded[0][0]}={expression}`"
        if len(unbounded) > 1:
            message = f"`{spec.qualname}` sets no limit ({names}): set each to `{expression}`"
        fixable = [e for e in edits if e is not None]
        if len(fixable) < len(edits):
            fixable = []  # a field could not be set: no partial fix
        ctx.report(self, node, message, fixable, description=f"set {names} to {expression}")

    def _check_setting_fields(self, node: ast.Call, spec: TimeoutObject, ctx: "FileView") -> None:
        """`ClientTimeout(total=TIMEOUT)` where the module's `TIMEOUT` is None unless set."""
        for keyword in node.keywords:  # a field given by name is what it says, `**kwargs` or not
            field, value = keyword.arg, keyword.value
            if field not in spec.unbounded_if_none or not isinstance(value, ast.Name):
                continue  # only a module's setting, spelled by its name, can be unset
            unset = setting_unset(value, ctx)
            if unset is not None:
                message = (
                    f"`{spec.qualname}` sets `{field}={value.id}`, which is unbounded when not configured "
                    f"({unset.shown()}): give it a bound for that case"
                )
                ctx.report(self, value, message)


def _apply_edits(ctx: "FileView", node: Located, edits: Sequence[Edit]) -> str:
    """How `node` reads once `edits` (inside it) are applied: for the message."""
    start, end = ctx.source.node_span(node)
    text = ctx.source.text
    pieces: List[str] = []
    position = start
    for edit in sorted(edits, key=lambda e: e.start):
        pieces.extend((text[position:edit.start], edit.text))
        position = edit.end
    pieces.append(text[position:end])
    return "".join(pieces)
