from __future__ import annotations

from types import MappingProxyType
import ast
import re
from typing import TYPE_CHECKING, Optional

from deadline_lint.catalog import Catalog
from deadline_lint.engine.requires import Words, in_body, in_file
from deadline_lint.engine.rule import Rule, register
from deadline_lint.families.shared.budget.budget import INSTANT as BUDGET_INSTANT
from deadline_lint.families.shared.budget.budget import SECONDS, Budget, BudgetAnalysis, budget_in_scope
from deadline_lint.families.shared.budget.budget_types import HOP_TIMEOUT, RAW_REMAINDER, RAW_REMAINDER_MS
from deadline_lint.families.shared.time.time_values import DEADLINE, INSTANT, SPAN, is_absolute_instant, time_value
from deadline_lint.families.trace.common import metric_modules, metric_words
from deadline_lint.families.trace.telemetry import Telemetry
from deadline_lint.families.trace.trace_catalog import trace_catalog
from deadline_lint.settings.profile import Profile

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_CONVERSIONS = frozenset({"str", "int", "float", "round", "repr"})
_SCALINGS = (ast.Mult, ast.Div, ast.Add, ast.Sub)
# Methods of a known budget that read its remainder besides the fix template's (a project's
# `remaining()`, as the design names it); only on a name the budget analysis already holds.
_REMAINDER_ROLES = frozenset({RAW_REMAINDER, RAW_REMAINDER_MS, HOP_TIMEOUT})
_BUDGET_REMAINDER_METHODS = frozenset({"remaining"})
_WHAT = MappingProxyType({INSTANT: "a clock reading", DEADLINE: "a deadline", SPAN: "a remaining or elapsed time"})


@register
class DeadlineInMetricLabel(Rule):
    """
    ## What it does
    Flags a deadline, a timestamp or a remaining-time value used as a metric label: a
    value passed to a Prometheus metric's `.labels(...)` (`prometheus_client.Counter`,
    `Gauge`, `Histogram`, `Summary`, ...) or in the `attributes=` of an OpenTelemetry
    instrument's `add` / `record` / `set` (an instrument made by `meter.create_counter(...)`
    and friends). A value counts when the shared time-values analysis shows it holds a clock
    reading, a deadline or a span between instants (`time.time() + 5`, `deadline - now`,
    `datetime.now().isoformat()`), or when it is the budget's remaining time
    (`context.time_remaining()`, `budget.timeout()`, `budget.remaining()`, a remaining-seconds
    name), also through `str()`, `int()`, `round()`, an f-string, or a change of unit or an
    offset by a number (`int(budget.timeout() * 1000)`). Dividing down to buckets (`// 5`,
    `% 5`) and passing the value to a function (`bucket(budget.timeout())`) stay quiet: that
    is how a bounded label is made.

    ## Why is this bad?
    Every distinct label value is a new time series. A timestamp or a remainder is
    different on every request, so the metric's cardinality grows without bound until the
    metrics backend drops data or falls over, and no query can aggregate it.

    ## Example
    ```python
    from prometheus_client import Counter

    REQUESTS = Counter("requests_total", "Requests", ["method", "remaining"])

    def handle(request, context):
        REQUESTS.labels(method="quote", remaining=str(context.time_remaining())).inc()
    ```

    ## Use instead
    ```python
    from prometheus_client import Counter, Histogram

    REQUESTS = Counter("requests_total", "Requests", ["method"])
    REMAINING_AT_START = Histogram("remaining_at_start_seconds", "Budget left on arrival")

    def handle(request, context):
        REQUESTS.labels(method="quote").inc()
        REMAINING_AT_START.observe(context.time_remaining())
    ```

    ## Fix safety
    No fix: the value belongs in a histogram observation or a span attribute; which one is
    the service's choice.

    ## Options
    - `budget.*`: what counts as a budget (its remaining time counts as a time value).
    """

    code = "DL602"
    name = "deadline-in-metric-label"
    summary = "deadline, timestamp or remaining-time value used as a metric label"
    node_types = (ast.Call,)

    # A metric cannot come from anywhere but the modules the listed APIs live in.
    # Every finding is at a call of a label or record method, which spells the method's name.
    needs = (
        in_file(
            Words.of(lambda rule: metric_words(rule.catalog)) & Words.of(lambda rule: metric_modules(rule.catalog))
        ),
        in_body(
            Words.of(
                lambda rule: trace_catalog(rule.catalog).label_methods | trace_catalog(rule.catalog).record_methods
            )
        ),
    )

    def __init__(self, profile: Profile, catalog: Catalog) -> None:
        super().__init__(profile, catalog)
        trace = trace_catalog(catalog)
        self._methods = trace.label_methods | trace.record_methods

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        func = node.func
        if type(func) is not ast.Attribute or func.attr not in self._methods:
            return
        labels = ctx.analysis(Telemetry).metric_labels(node, ctx.scope)
        if labels is None:
            return
        for value in labels.values:
            what = self._time_value(ctx, value)
            if what is not None:
                ctx.report(self, node, f"`{labels.display}(...)` gets {what} as a label value: every request "
                           "makes a new time series; observe it in a histogram instead")
                return

    def _time_value(self, ctx: "FileView", value: ast.expr) -> Optional[str]:
        value = _peel(value)
        if is_absolute_instant(ctx, value):
            return "a timestamp"
        found = time_value(ctx, value)
        if found is not None:
            return _WHAT.get(found.role, "a time value")
        if self._remaining(value, budget_in_scope(ctx), ctx):
            return "the remaining budget"
        scaled = _scaled_operand(value)
        if scaled is not None:  # `budget.timeout() * 1000` is as unbounded as the remainder it scales
            return self._time_value(ctx, scaled)
        return None

    def _remaining(self, value: ast.expr, budget: Optional[Budget], ctx: "FileView") -> bool:
        """A remaining-seconds name of the budget, `<budget>.timeout()` (the profile's
        template method), or a raw remainder method (`context.time_remaining()`) on any name:
        the catalog's method names are specific to budgets."""
        if isinstance(value, ast.Name):
            return budget is not None and budget.kind_of(value.id) in (SECONDS, BUDGET_INSTANT)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and not value.args:
            receiver, method = value.func.value, value.func.attr
            if ctx.analysis(BudgetAnalysis).role(value, budget) in _REMAINDER_ROLES:
                return True  # `budget.remaining()`, `request.state.budget.timeout()`: by its type's roles
            if not isinstance(receiver, ast.Name):
                return False
            if method in ctx.catalog.budget.context_methods:
                return True
            if budget is None or receiver.id not in budget.names:
                return False
            template = ctx.profile.fix.budget_expression
            return method in _BUDGET_REMAINDER_METHODS or method in re.findall(r"\{budget\}\.(\w+)\(", template)
        return False


def _scaled_operand(value: ast.expr) -> Optional[ast.expr]:
    """The time value in `x * 1000`, `x / 60`, `x + 0.5`, `1000 * x`: a unit change or an
    offset by a number keeps every distinct value distinct. Not `x // 10` or `x % 10`:
    dividing down to a few buckets is what a bounded label looks like, so it stays quiet."""
    if not isinstance(value, ast.BinOp) or not isinstance(value.op, _SCALINGS):
        return None
    if _is_number(value.right):
        return value.left
    if _is_number(value.left):
        return value.right
    return None


def _is_number(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _peel(value: ast.expr) -> ast.expr:
    """`str(x)`, `round(x)`, `f"{x}"`: the value inside."""
    while True:
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in _CONVERSIONS
            and len(value.args) >= 1
        ):
            value = value.args[0]
        elif isinstance(value, ast.JoinedStr):
            parts = [p for p in value.values if isinstance(p, ast.FormattedValue)]
            if len(parts) != 1:
                return value
            value = parts[0].value
        else:
            return value
