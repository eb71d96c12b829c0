"""Telemetry calls: spans started on a known tracer, and metric calls that take labels or
attributes (Prometheus `.labels(...)`, OpenTelemetry instruments' `attributes=`). Per file,
asked for with `ctx.analysis(Telemetry)`."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, List, Optional

from deadline_lint.families.shared.instances import InstanceTest
from deadline_lint.families.trace.trace_catalog import TraceCatalog, trace_catalog
from deadline_lint.semantics.local.expressions import argument_at
from deadline_lint.semantics.local.scopes import ASSIGN, Scope
from deadline_lint.support.records import dataclass

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


@dataclass(frozen=True)
class SpanStart:
    call: ast.Call
    method: str
    attributes: Optional[ast.expr]  # the initial attributes argument, if passed


@dataclass(frozen=True)
class MetricLabels:
    call: ast.Call
    display: str  # `REQUESTS.labels`
    values: List[ast.expr]  # the label / attribute values


class Telemetry:
    def __init__(self, ctx: "FileView") -> None:
        self.resolver = ctx.resolver
        self.catalog: TraceCatalog = trace_catalog(ctx.catalog)
        trace = self.catalog
        self.tracers = InstanceTest(self.resolver, trace.tracer_factories, trace.tracer_types)
        self.prometheus = InstanceTest(self.resolver, trace.prometheus_metrics, trace.prometheus_metrics)
        self.meters = InstanceTest(self.resolver, trace.meter_factories, trace.meter_types)
        # A tracer or a metric comes from its library's module, which the text then names.
        text = ctx.source.text
        self.tracers_possible = _mentions_module(text, trace.tracer_factories | trace.tracer_types)
        self.metrics_possible = _mentions_module(
            text, trace.prometheus_metrics | trace.meter_factories | trace.meter_types
        )

    def span_start(self, call: ast.Call, scope: Scope) -> Optional[SpanStart]:
        if not self.tracers_possible:
            return None
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr not in self.catalog.span_methods:
            return None
        if not self.tracers.matches(func.value, scope):
            return None
        attributes = argument_at(call, self.catalog.attributes_position, self.catalog.attributes_keyword)
        return SpanStart(call, func.attr, attributes)

    def metric_labels(self, call: ast.Call, scope: Scope) -> Optional[MetricLabels]:
        if not self.metrics_possible:
            return None
        func = call.func
        if not isinstance(func, ast.Attribute):
            return None
        trace = self.catalog
        display = _display(func)
        if func.attr in trace.label_methods and self.prometheus.matches(func.value, scope):
            return MetricLabels(call, display, [*call.args, *(k.value for k in call.keywords)])
        if func.attr in trace.record_methods and self._is_instrument(func.value, scope):
            attributes = argument_at(call, 1, trace.metric_attributes_keyword)
            if isinstance(attributes, ast.Dict):
                return MetricLabels(call, display, [v for v in attributes.values if v is not None])
            if attributes is not None:
                return MetricLabels(call, display, [attributes])
        return None

    def _is_instrument(self, expr: ast.expr, scope: Scope) -> bool:
        """`meter.create_counter(...)`, directly or through a local, module or class name."""
        if isinstance(expr, ast.Call):
            func = expr.func
            return (
                isinstance(func, ast.Attribute)
                and func.attr in self.catalog.instrument_methods
                and self.meters.matches(func.value, scope)
            )
        if isinstance(expr, ast.Name):
            bindings = scope.lookup(expr.id)
            return bool(bindings) and all(
                b.kind == ASSIGN and isinstance(b.value, ast.Call) and self._is_instrument(b.value, b.scope)
                for b in bindings  # type: ignore[union-attr]
            )
        return False


def _mentions_module(text: str, qualnames) -> bool:
    return any(module in text for module in {name.split(".")[0] for name in qualnames})


def _display(func: ast.Attribute) -> str:
    try:
        return ast.unparse(func)
    except Exception:  # pragma: no cover - unparse handles every expression ast makes
        return func.attr
