"""Timeout objects (`httpx.Timeout(...)`, `aiohttp.ClientTimeout(...)`): whether a call
builds one, the fields it is built with, and which of them leave it unbounded."""
from __future__ import annotations

import ast
from typing import FrozenSet, Iterator, List, Optional, Tuple

from deadline_lint.catalog import Catalog, TimeoutObject
from deadline_lint.families.outbound.analysis.outbound_calls import hides_arguments, may_be_listed
from deadline_lint.semantics.local.expressions import argument_at, is_unbounded
from deadline_lint.semantics.local.resolve import Resolver
from deadline_lint.semantics.local.scopes import Scope


def may_build_timeout_object(call: ast.Call, scope: Scope, resolver: Resolver, catalog: Catalog) -> bool:
    """The first look of `timeout_object`: timeout objects are built from their module,
    never from an instance."""
    return bool(catalog.timeout_objects) and may_be_listed(call.func, scope, resolver, catalog, _NO_METHODS)


_NO_METHODS: FrozenSet[str] = frozenset()


def timeout_object(call: ast.AST, scope: Scope, resolver: Resolver, catalog: Catalog) -> Optional[TimeoutObject]:
    if not isinstance(call, ast.Call) or not may_build_timeout_object(call, scope, resolver, catalog):
        return None
    qualname = resolver.qualified_name(call.func, scope)
    return catalog.timeout_objects.get(qualname) if qualname is not None else None


def timeout_fields(call: ast.Call, spec: TimeoutObject) -> Iterator[Tuple[str, ast.expr]]:
    """The (field, value) pairs a timeout object is built with."""
    for name, position in spec.fields.items():
        value = argument_at(call, position, name)
        if value is not None:
            yield name, value


def unbounded_fields(
    call: ast.Call, spec: TimeoutObject, scope: Scope, resolver: Resolver
) -> List[Tuple[str, Optional[ast.expr]]]:
    """The field values that make a timeout object unbounded; [] when it is bounded or when we
    cannot tell (`**kwargs`). An object built empty that means "no limit" yields [(field, None)]."""
    if hides_arguments(call):
        return []
    given = list(timeout_fields(call, spec))
    if not given:
        return [(spec.primary_field, None)] if spec.unbounded_if_empty else []
    return [
        (name, value)
        for name, value in given
        if name in spec.unbounded_if_none and is_unbounded(value, scope, resolver)
    ]
