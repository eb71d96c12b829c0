from __future__ import annotations

import ast
import json
from typing import TYPE_CHECKING, Optional

from deadline_lint.catalog import Catalog
from deadline_lint.engine.edits import insert_keyword
from deadline_lint.engine.requires import Words, in_body, in_file
from deadline_lint.engine.rule import Rule, register
from deadline_lint.families.shared.budget.budget import budget_in_scope
from deadline_lint.families.shared.budget.budget_text import BudgetText
from deadline_lint.families.trace.common import span_words, tracer_modules
from deadline_lint.families.trace.telemetry import Telemetry
from deadline_lint.families.trace.trace_catalog import trace_catalog
from deadline_lint.semantics.local.usage import string_constants
from deadline_lint.settings.profile import Profile
from deadline_lint.support.diagnostics import Applicability, Edit

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


@register
class HopWithoutRemainingInTrace(Rule):
    """
    ## What it does
    Opt-in. In a function with a budget in scope, flags a span started on a known tracer
    (`tracer.start_as_current_span(...)`, `tracer.start_span(...)`, with the tracer from
    `opentelemetry.trace.get_tracer()` or annotated as a `Tracer`) when nothing records the
    remaining milliseconds on it: its `attributes=` has no entry named by the profile's
    `trace_remaining_attribute` (default `deadline.remaining_ms`) and the function never
    mentions that name (`span.set_attribute("deadline.remaining_ms", ...)`). Attributes
    passed as anything but a dict literal are left alone.

    ## Why is this bad?
    When a request times out, the trace is where someone finds out which hop ate the
    budget. Without the remainder at each hop's start, a trace shows durations but not
    whether a hop started with 2 s or 2 ms left, nor whether expiry or cancellation ended it.

    ## Example
    ```python
    from opentelemetry import trace

    tracer = trace.get_tracer(__name__)

    def quote(request, budget):
        with tracer.start_as_current_span("quote"):
            return pricing.price(request, budget=budget)
    ```

    ## Use instead
    ```python
    from opentelemetry import trace

    tracer = trace.get_tracer(__name__)

    def quote(request, budget):
        with tracer.start_as_current_span(
            "quote", attributes={"deadline.remaining_ms": int(1000 * budget.timeout())}
        ):
            return pricing.price(request, budget=budget)
    ```

    ## Fix safety
    Unsafe: it changes what the trace sends. The fix adds the attribute to the span's
    `attributes=` (creating the argument or adding an entry to a dict literal) with the
    value `int(1000 * <timeout>)`, where `<timeout>` is what the budget in scope gives an
    outbound call (the profile's `fix.*` templates).

    ## Options
    - Opt-in: select `DL601` by its exact code (`--extend-select DL601`).
    - `trace_remaining_attribute`: the attribute name.
    - `budget.*`, `fix.*`: what counts as a budget and the expression the fix records.
    """

    code = "DL601"
    name = "hop-without-remaining-in-trace"
    summary = "span started in a budgeted function without the remaining-ms attribute"
    default_enabled = False
    fix_applicability = Applicability.UNSAFE
    node_types = (ast.Call,)

    # A tracer cannot come from anywhere but the modules the listed APIs live in.
    # Every finding is at a call of a span method, which spells the method's name.
    needs = (
        in_file(Words.of(lambda rule: span_words(rule.catalog)) & Words.of(lambda rule: tracer_modules(rule.catalog))),
        in_body(Words.of(lambda rule: trace_catalog(rule.catalog).span_methods)),
    )

    def __init__(self, profile: Profile, catalog: Catalog) -> None:
        super().__init__(profile, catalog)
        self._methods = trace_catalog(catalog).span_methods

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        func = node.func
        if type(func) is not ast.Attribute or func.attr not in self._methods:
            return
        if not ctx.analysis(BudgetText).possible:
            return
        span = ctx.analysis(Telemetry).span_start(node, ctx.scope)
        if span is None:
            return
        budget = budget_in_scope(ctx)
        if budget is None:
            return
        attribute = self.profile.trace_remaining_attribute
        if attribute in string_constants(ctx.scope):
            return
        attributes = span.attributes
        if attributes is not None and not isinstance(attributes, ast.Dict):
            return  # built elsewhere: cannot tell what it holds
        if attributes is not None and any(key is None for key in attributes.keys):
            return  # `{**common}` may carry it
        timeout = budget.timeout_expression(self.profile)
        message = f"span `{span.method}` in a budgeted function does not record `{attribute}`"
        if timeout is None:
            ctx.report(self, node, f"{message}: set it to the remaining milliseconds at hop start")
            return
        value = f"int(1000 * {timeout})" if _atomic(timeout) else f"int(1000 * ({timeout}))"
        entry = f"{json.dumps(attribute)}: {value}"
        edit = _attribute_edit(ctx, node, attributes, entry, self.catalog)
        ctx.report(self, node, f"{message}: add `{entry}` to its attributes",
                   [edit] if edit else (), description=f"record {attribute}")


def _atomic(expression: str) -> bool:
    if expression.startswith("(") and expression.endswith(")"):
        return True  # already parenthesized as a whole (the optional-budget fallback)
    try:
        return isinstance(ast.parse(expression, mode="eval").body, (ast.Name, ast.Attribute, ast.Call))
    except SyntaxError:
        return False


def _attribute_edit(
    ctx: "FileView", call: ast.Call, attributes: Optional[ast.Dict], entry: str, catalog: Catalog
) -> Optional[Edit]:
    if attributes is None:
        return insert_keyword(ctx.source, call, trace_catalog(catalog).attributes_keyword, "{" + entry + "}")
    start, end = ctx.source.node_span(attributes)
    if ctx.source.text[start] != "{":
        return None
    separator = ", " if attributes.keys else ""
    return Edit(start + 1, start + 1, entry + separator)
