"""What the trace family's rules share: prefilter words from the trace catalog."""
from __future__ import annotations

from typing import FrozenSet

from deadline_lint.catalog import Catalog
from deadline_lint.families.trace.trace_catalog import trace_catalog


def span_words(catalog: Catalog) -> FrozenSet[str]:
    return trace_catalog(catalog).span_methods


def metric_words(catalog: Catalog) -> FrozenSet[str]:
    trace = trace_catalog(catalog)
    return trace.label_methods | trace.instrument_methods


def tracer_modules(catalog: Catalog) -> FrozenSet[str]:
    trace = trace_catalog(catalog)
    return frozenset(name.split(".")[0] for name in trace.tracer_factories | trace.tracer_types)


def metric_modules(catalog: Catalog) -> FrozenSet[str]:
    trace = trace_catalog(catalog)
    names = trace.prometheus_metrics | trace.meter_factories | trace.meter_types
    return frozenset(name.split(".")[0] for name in names)
