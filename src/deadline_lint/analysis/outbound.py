"""Outbound calls: which calls leave the process, and what bounds how long they wait."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from deadline_lint.analysis.budget import argument_at
from deadline_lint.analysis.resolve import Resolver
from deadline_lint.analysis.scopes import Scope
from deadline_lint.catalog import Catalog, OutboundApi

# Where the effective timeout of a call comes from.
FROM_CALL = "call"  # passed to the call itself
FROM_CONSTRUCTOR = "constructor"  # passed when the client object was built
FROM_DEFAULT = "default"  # nothing passed: the library default applies
HIDDEN = "hidden"  # **kwargs or *args might carry it: we cannot tell


@dataclass(frozen=True)
class OutboundCall:
    node: ast.Call
    api: OutboundApi
    timeout: Optional[ast.expr]  # the expression that sets the timeout, if any
    source: str  # FROM_CALL / FROM_CONSTRUCTOR / FROM_DEFAULT / HIDDEN
    default_timeout: Optional[float]  # what the library does when nothing is passed

    @property
    def display_name(self) -> str:
        return self.api.qualname


def _hides_arguments(call: ast.Call) -> bool:
    return any(kw.arg is None for kw in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args)


def classify_call(call: ast.Call, scope: Scope, resolver: Resolver, catalog: Catalog) -> Optional[OutboundCall]:
    """An OutboundCall for calls the catalog knows; None for everything else."""
    func = call.func
    qualname = resolver.qualified_name(func, scope)
    instance = None
    if qualname is None and isinstance(func, ast.Attribute):
        instance = resolver.instance(func.value, scope)
        if instance is not None:
            qualname = f"{instance.qualname}.{func.attr}"
    if qualname is None:
        return None
    api = catalog.apis.get(qualname)
    if api is None:
        return None
    timeout = argument_at(call, api.position, api.keyword) if api.keyword else None
    if timeout is not None:
        return OutboundCall(call, api, timeout, FROM_CALL, api.default_timeout)
    if _hides_arguments(call):
        return OutboundCall(call, api, None, HIDDEN, api.default_timeout)
    if instance is not None:
        client = catalog.classes[instance.qualname]
        if client.constructor_keyword or client.constructor_position is not None:
            if instance.constructor is None:
                # Built elsewhere (a parameter, several assignments): maybe with a timeout.
                return OutboundCall(call, api, None, HIDDEN, api.default_timeout)
            ctor_timeout = argument_at(instance.constructor, client.constructor_position, client.constructor_keyword)
            if ctor_timeout is not None:
                return OutboundCall(call, api, ctor_timeout, FROM_CONSTRUCTOR, api.default_timeout)
            if _hides_arguments(instance.constructor):
                return OutboundCall(call, api, None, HIDDEN, api.default_timeout)
    return OutboundCall(call, api, None, FROM_DEFAULT, api.default_timeout)


def is_unbounded(expr: ast.expr, scope: Scope, resolver: Resolver) -> bool:
    """`None`, `float("inf")`, `math.inf`, or a (connect, read) tuple with an unbounded part."""
    if isinstance(expr, ast.Constant):
        return expr.value is None or expr.value == float("inf")
    if isinstance(expr, ast.Tuple):
        return any(is_unbounded(element, scope, resolver) for element in expr.elts)
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
        if resolver.qualified_name(expr.func, scope) == "float":
            argument = expr.args[0]
            return (
                isinstance(argument, ast.Constant)
                and isinstance(argument.value, str)
                and argument.value.strip().lower().lstrip("+") in ("inf", "infinity")
            )
        return False
    if isinstance(expr, ast.Attribute):
        return resolver.qualified_name(expr, scope) in ("math.inf", "numpy.inf", "sys.maxsize")
    return False
