"""What the trace family's rules share: prefilter words from the trace catalog."""
from __future__ import annotations

from typing import Callable, FrozenSet

from deadline_lint.catalog import Catalog
from deadline_lint.catalog.trace import trace_catalog


def span_words(catalog: Catalog) -> FrozenSet[str]:
    return trace_catalog(catalog).span_methods


def metric_words(catalog: Catalog) -> FrozenSet[str]:
    trace = trace_catalog(catalog)
    return trace.label_methods | trace.instrument_methods


def import_filter(catalog: Catalog, key: str, modules: FrozenSet[str]) -> Callable[[str], bool]:
    """Second look: the file mentions one of the modules the listed APIs live in (a tracer or
    a metric cannot come from anywhere else)."""
    ordered = tuple(sorted(modules))
    return catalog.cached(("trace-imports", key), lambda: lambda text: any(m in text for m in ordered))


def tracer_modules(catalog: Catalog) -> FrozenSet[str]:
    trace = trace_catalog(catalog)
    return frozenset(name.split(".")[0] for name in trace.tracer_factories | trace.tracer_types)


def metric_modules(catalog: Catalog) -> FrozenSet[str]:
    trace = trace_catalog(catalog)
    names = trace.prometheus_metrics | trace.meter_factories | trace.meter_types
    return frozenset(name.split(".")[0] for name in names)
