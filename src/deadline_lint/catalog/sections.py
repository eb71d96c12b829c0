"""The budget and cancellation vocabularies (budget.yaml, cancellation.yaml) as typed values,
built once per catalog. Each field is documented at the top of its YAML file."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Mapping, Optional, Tuple

# A cancel scope's argument positions and flags: `position`, `keyword`, `blocking`.
CancelScopeSpec = Dict[str, Any]


@dataclass(frozen=True)
class BudgetCatalog:
    types: Mapping[str, str] = field(default_factory=dict)  # annotation -> kind
    roles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # kind -> role -> methods
    lambda_handlers: FrozenSet[str] = frozenset()
    flask_globals: FrozenSet[str] = frozenset()
    servicer_base_suffix: str = "Servicer"
    context_methods: FrozenSet[str] = frozenset()
    refuse_methods: FrozenSet[str] = frozenset()
    hop_keywords: FrozenSet[str] = frozenset()
    local_waits: FrozenSet[str] = frozenset()
    accessors: Mapping[str, str] = field(default_factory=dict)  # function -> seconds | instant
    cancel_scopes: Mapping[str, CancelScopeSpec] = field(default_factory=dict)


@dataclass(frozen=True)
class CancellationCatalog:
    suppressors: FrozenSet[str] = frozenset()
    own_cancellation: FrozenSet[str] = frozenset()
    exception_access: FrozenSet[str] = frozenset()
    reporting_calls: FrozenSet[str] = frozenset()
    shields: FrozenSet[str] = frozenset()
    waits_on: FrozenSet[str] = frozenset()
    task_roots: FrozenSet[str] = frozenset()
    ending_calls: Tuple[str, ...] = ()  # patterns, in the file's order


def build_budget_catalog(data: Optional[Mapping[str, Any]]) -> BudgetCatalog:
    data = data or {}
    return BudgetCatalog(
        types=dict(data.get("types") or {}),
        roles=dict(data.get("roles") or {}),
        lambda_handlers=_names(data, "lambda_handlers"),
        flask_globals=_names(data, "flask_globals"),
        servicer_base_suffix=data.get("servicer_base_suffix") or "Servicer",
        context_methods=_names(data, "context_methods"),
        refuse_methods=_names(data, "refuse_methods"),
        hop_keywords=_names(data, "hop_keywords"),
        local_waits=_names(data, "local_waits"),
        accessors=dict(data.get("accessors") or {}),
        cancel_scopes=dict(data.get("cancel_scopes") or {}),
    )


def build_cancellation_catalog(data: Optional[Mapping[str, Any]]) -> CancellationCatalog:
    data = data or {}
    return CancellationCatalog(
        suppressors=_names(data, "suppressors"),
        own_cancellation=_names(data, "own_cancellation"),
        exception_access=_names(data, "exception_access"),
        reporting_calls=_names(data, "reporting_calls"),
        shields=_names(data, "shields"),
        waits_on=_names(data, "waits_on"),
        task_roots=_names(data, "task_roots"),
        ending_calls=tuple(data.get("ending_calls") or ()),
    )


def _names(data: Mapping[str, Any], key: str) -> FrozenSet[str]:
    return frozenset(data.get(key) or ())


__all__ = [
    "BudgetCatalog", "CancelScopeSpec", "CancellationCatalog", "build_budget_catalog", "build_cancellation_catalog",
]
