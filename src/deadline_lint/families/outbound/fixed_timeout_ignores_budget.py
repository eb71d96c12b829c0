from __future__ import annotations

import ast
from typing import TYPE_CHECKING, List, Optional

from deadline_lint.catalog import CLIENT
from deadline_lint.engine.edits import insert_keyword, replace_node
from deadline_lint.engine.rule import register
from deadline_lint.families.outbound.analysis.outbound import outbound_sites
from deadline_lint.families.outbound.analysis.outbound_calls import (
    FROM_CALL,
    FROM_CONSTRUCTOR,
    FROM_DEFAULT,
    OutboundCall,
)
from deadline_lint.families.outbound.analysis.timeout_objects import timeout_fields, timeout_object
from deadline_lint.families.outbound.common import (
    OutboundRule,
    bounded_externally,
    budget_expression,
    is_fixed_timeout,
    proven_number,
    single_assignment,
)
from deadline_lint.families.shared.budget.budget import Budget, budget_in_scope, given_timeout, given_timeout_polls
from deadline_lint.semantics.local.declared import is_number
from deadline_lint.semantics.local.expressions import is_unbounded, mentions_any
from deadline_lint.support.diagnostics import Applicability, Edit
from deadline_lint.families.shared.budget.fix_tags import INSERTS_BUDGET_TAGS

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


@register
class FixedTimeoutIgnoresBudget(OutboundRule):
    """
    ## What it does
    Flags an outbound call made while a budget is in scope whose timeout does not derive from
    that budget: a literal (`timeout=5`), a constant (`TIMEOUT`), an attribute
    (`self.timeout`, `settings.HTTP_TIMEOUT`), a timeout fixed when the client was built
    (`httpx.Client(timeout=5)`), or a bounded library default (httpx waits 5 s, boto3 60 s).
    Timeouts passed in from elsewhere (a parameter, a call result) are not judged.
    Opt-in: with `budget.timeout_parameters: [timeout]`, a function with no budget in scope
    whose own numeric `timeout` parameter (a number default, or annotated `float` / `int`)
    was given by its caller counts as budgeted by it: `def fetch(url, timeout=10.0)` that
    calls `requests.get(url, timeout=30)` ignores what it was given. Attempts inside a loop
    that compares that timeout (`while time.time() - start < timeout:`) are polling, not
    ignoring it, and stay quiet.

    ## Why is this bad?
    A fixed timeout is right only by accident. When the caller has 300 ms left, a 5 s
    timeout keeps working for 4.7 s after anyone still wants the answer; when it has 30 s,
    the local cap may be the right limit. The effective limit is
    `min(remaining - margin, local cap)`: a local cap may shorten, never lengthen.

    ## Example
    ```python
    import httpx

    def get_price(sku, budget):
        return httpx.get(f"{PRICES}/{sku}", timeout=5.0)
    ```

    ## Use instead
    ```python
    import httpx

    def get_price(sku, budget):
        return httpx.get(f"{PRICES}/{sku}", timeout=min(5.0, budget.timeout()))
    ```

    ## Fix safety
    Unsafe: it replaces an explicit value (or the library's finite default) with a shorter
    one, so a call that used to succeed late can now time out. A plain number (a literal, or a
    name bound once to one) becomes `min(<number>, <budget expression>)`, also inside a tuple or
    a timeout object; a library default gets the budget expression as an explicit timeout
    (that one inserts a budget, so the codemod applies it). Attributes,
    constants of unknown type and timeout objects passed around by name get no fix, since
    `min()` of them might not be a number. No fix either when the budget has no fix template
    (an absolute deadline such as `trio.current_effective_deadline()`).

    ## Options
    - `budget.*`: what counts as a budget; `fix.*`: the budget expression inserted.
    - `max_bounded_default_s`: defaults above it are DL101's, not this rule's.
    - `budget.timeout_parameters`: parameter names whose numeric value is the time the
      function was given (default none; see bench/results/notebook-to-stop-29.md for the measurement).
    """

    code = "DL102"
    name = "fixed-timeout-ignores-budget"
    summary = "a budget is in scope but the call's timeout does not derive from it"
    fix_applicability = Applicability.UNSAFE

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        sites = outbound_sites(ctx, node)
        budget = budget_in_scope(ctx) if sites else None
        why = "although a budget is in scope"
        if budget is None and sites:
            budget = given_timeout(ctx)  # opt-in: the function's own numeric `timeout`
            if budget is not None and given_timeout_polls(ctx, budget):
                return
            if budget is not None:
                why = f"although the function is given `{budget.kinds[0][0]}`"
        if budget is None:
            return
        for call in sites:
            if call.api.kind == CLIENT and not call.api.checked:
                continue  # the calls made through it are checked instead
            if bounded_externally(node, ctx):
                return
            if call.source == FROM_CALL:
                self._fixed_argument(node, call, budget, ctx, why)
            elif call.source == FROM_DEFAULT:
                self._library_default(node, call, budget, ctx, why)
            elif call.source == FROM_CONSTRUCTOR:
                self._client_timeout(node, call, budget, ctx, why)

    def _fixed_argument(self, node: ast.Call, call: OutboundCall, budget: Budget, ctx: "FileView", why: str) -> None:
        timeout = call.timeout
        if timeout is None:
            return  # passed to the call: never None
        if mentions_any(timeout, budget.names) or is_unbounded(timeout, ctx.scope, ctx.resolver):
            return  # derived from the budget, or DL103's
        if not is_fixed_timeout(timeout, ctx.scope, ctx):
            return  # passed in from elsewhere: cannot tell
        shown = ctx.source.segment(timeout)
        derived = budget_expression(ctx, budget, node)
        unset = _timeout_object_without_limits(timeout, ctx)
        if unset is not None:  # `Config(retries=...)`: no timeout at all, the library's default
            default = call.default_timeout
            waits = f"the library default ({default:g} s)" if default is not None else "the library default"
            message = (
                f"`{call.display_name}` waits {waits}: `{_short(shown)}` sets no timeout {why}: "
                f"set {unset} from the budget"
            )
            ctx.report(self, timeout, message, (), description="set the timeout from the budget")
            return
        edits = _capped(timeout, derived, ctx) if derived else None
        if _has_parts(timeout, ctx):
            advice = "cap each of its parts by the remaining budget"
            advice += f" (`min(<part>, {derived})`)" if derived else ""
        elif derived and "\n" not in shown:
            advice = f"pass `min({shown}, {derived})`"
        else:
            advice = "cap it by the remaining budget"
        message = (
            f"`{call.display_name}` has a fixed timeout (`{_short(shown)}`) {why}: {advice}"
        )
        ctx.report(self, timeout, message, edits or (), description="cap the timeout by the budget")

    def _library_default(self, node: ast.Call, call: OutboundCall, budget: Budget, ctx: "FileView", why: str) -> None:
        api = call.api
        default = call.default_timeout
        if api.keyword is None or default is None or default > self.profile.max_bounded_default_s:
            return  # no per-call timeout, or an unbounded default: DL101's
        if default == 0:
            return  # the call does not wait unless asked to (RQ's `Job.latest_result()`)
        derived = budget_expression(ctx, budget, node)
        value = api.render_timeout(derived) if derived else None
        edit = insert_keyword(ctx.source, node, api.keyword, value) if value else None
        advice = f"pass `{api.keyword}={value}`" if value else f"pass `{api.keyword}=` from the budget"
        message = (
            f"`{call.display_name}` uses the library default ({default:g} s) {why}: {advice}"
        )
        imports = api.imports if edit else ()
        description = f"insert {api.keyword}=..."
        ctx.report(self, node, message, [edit] if edit else (), description=description, imports=imports,
                   tags=INSERTS_BUDGET_TAGS)

    def _client_timeout(self, node: ast.Call, call: OutboundCall, budget: Budget, ctx: "FileView", why: str) -> None:
        api = call.api
        ctor_timeout = call.timeout
        if ctor_timeout is None or api.keyword is None or mentions_any(ctor_timeout, budget.names):
            return  # nothing to pass per call, or the client was built from this budget
        if is_unbounded(ctor_timeout, ctx.scope, ctx.resolver):
            return  # DL103, at the constructor
        derived = budget_expression(ctx, budget, node)
        shown = ctx.source.segment(ctor_timeout)
        edit = None
        if derived and is_number(ctor_timeout):
            value = api.render_timeout(f"min({shown}, {derived})")
            edit = insert_keyword(ctx.source, node, api.keyword, value)
        message = (
            f"`{call.display_name}` runs with its client's fixed timeout (`{_short(shown)}`) {why}: "
            f"pass `{api.keyword}=` capped by the budget"
        )
        imports = api.imports if edit else ()
        description = f"insert {api.keyword}=..."
        ctx.report(self, node, message, [edit] if edit else (), description=description, imports=imports)


def _capped(timeout: ast.expr, derived: str, ctx: "FileView") -> Optional[List[Edit]]:
    """`min(<number>, <budget>)` for every number the timeout is made of; None when any part
    is not provably a number."""
    numbers: List[ast.expr] = []
    if not _collect_numbers(timeout, ctx, numbers):
        return None
    return [replace_node(ctx.source, n, f"min({ctx.source.segment(n)}, {derived})") for n in numbers]


def _collect_numbers(expr: ast.expr, ctx: "FileView", numbers: List[ast.expr]) -> bool:
    """Adds to `numbers` the parts of a timeout that are provably numbers; False when some
    part is not. (A function, not a closure calling itself: that closure would be a cycle
    holding the file's context, and with it the tree, until the cyclic collector runs.)"""
    if proven_number(expr, ctx.scope):
        numbers.append(expr)
        return True
    if isinstance(expr, ast.Tuple):
        return all(_collect_numbers(element, ctx, numbers) for element in expr.elts)
    spec = timeout_object(expr, ctx.scope, ctx.resolver, ctx.catalog)
    if spec is not None and isinstance(expr, ast.Call):  # only a call builds a timeout object
        values = [value for _, value in timeout_fields(expr, spec)]
        return bool(values) and all(_collect_numbers(value, ctx, numbers) for value in values)
    return False


def _timeout_object_without_limits(timeout: ast.expr, ctx: "FileView") -> Optional[str]:
    """For a timeout object built with none of its timeout fields: those fields, for advice."""
    if not isinstance(timeout, ast.Call):
        return None
    spec = timeout_object(timeout, ctx.scope, ctx.resolver, ctx.catalog)
    if spec is None or list(timeout_fields(timeout, spec)) or any(k.arg is None for k in timeout.keywords):
        return None
    return " and ".join(f"`{name}`" for name in spec.fields)


def _has_parts(timeout: ast.expr, ctx: "FileView") -> bool:
    """A (connect, read) tuple or a timeout object, seen through a name bound once to one."""
    for _ in range(4):
        if isinstance(timeout, ast.Name):
            binding = single_assignment(timeout.id, ctx.scope)
            if binding is None:
                return False
            timeout = binding.value
    if isinstance(timeout, ast.Tuple):
        return True
    return timeout_object(timeout, ctx.scope, ctx.resolver, ctx.catalog) is not None


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 40 else text[:37] + "..."
