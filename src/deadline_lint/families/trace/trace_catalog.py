"""The trace section of the catalog (trace.yaml) as a typed value: tracers and their span
methods, Prometheus metrics and OpenTelemetry instruments. Built once per catalog."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, FrozenSet, Mapping, Optional

from deadline_lint.catalog import Catalog
from deadline_lint.catalog.names import name_set


@dataclass(frozen=True)
class TraceCatalog:
    tracer_factories: FrozenSet[str]
    tracer_types: FrozenSet[str]
    span_methods: FrozenSet[str]
    attributes_keyword: str
    attributes_position: Optional[int]
    prometheus_metrics: FrozenSet[str]
    label_methods: FrozenSet[str]
    meter_factories: FrozenSet[str]
    meter_types: FrozenSet[str]
    instrument_methods: FrozenSet[str]
    record_methods: FrozenSet[str]
    metric_attributes_keyword: str


def _names(section: Mapping[str, Any], key: str) -> FrozenSet[str]:
    return name_set(section, key, "trace.yaml")


def _mapping(section: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = section.get(key) or {}
    if not isinstance(value, dict):
        raise RuntimeError(f"trace.yaml: {key}: expected a mapping")
    return value


def trace_catalog(catalog: Catalog) -> TraceCatalog:
    return catalog.cached(TraceCatalog, lambda: _build(catalog.data.get("trace") or {}))


def _build(section: Mapping[str, Any]) -> TraceCatalog:
    tracers, metrics = _mapping(section, "tracers"), _mapping(section, "metrics")
    attributes = _mapping(tracers, "attributes")
    return TraceCatalog(
        tracer_factories=_names(tracers, "factories"),
        tracer_types=_names(tracers, "types"),
        span_methods=_names(tracers, "span_methods"),
        attributes_keyword=str(attributes.get("keyword", "attributes")),
        attributes_position=attributes.get("position"),
        prometheus_metrics=_names(metrics, "prometheus"),
        label_methods=_names(metrics, "label_methods"),
        meter_factories=_names(metrics, "meter_factories"),
        meter_types=_names(metrics, "meter_types"),
        instrument_methods=_names(metrics, "instrument_methods"),
        record_methods=_names(metrics, "record_methods"),
        metric_attributes_keyword=str(metrics.get("attributes_keyword", "attributes")),
    )
