from __future__ import annotations

import ast
from typing import Optional

from deadline_lint.catalog import CALL
from deadline_lint.engine.rule import register
from deadline_lint.families.outbound.analysis.outbound import outbound_call
from deadline_lint.families.outbound.common import OutboundRule
from deadline_lint.families.shared.budget.budget import budget_in_scope
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.expressions import argument_at
from deadline_lint.semantics.local.scopes import ASSIGN

_UNKNOWN = None  # the headers' keys cannot be listed: stay quiet


@register
class BudgetHeaderNotForwarded(OutboundRule):
    """
    ## What it does
    Opt-in. Flags an HTTP call, made where a budget is in scope, that sends headers
    (`headers={...}`) but not the profile's budget header (`budget_header`, by default
    `X-Request-Budget-Ms`). Only headers whose keys can all be read are judged: a dict
    literal, or a name bound once to one (later `headers["..."] = ...` assignments count);
    `**spread`, computed keys and headers built elsewhere stay quiet.

    ## Why is this bad?
    The timeout bounds how long this hop waits, but the service on the other side only learns
    how much time is left from the header. Without it, that service falls back to its edge
    default and its own downstream calls get more time than the whole request has.

    ## Example
    ```python
    import requests

    def fetch(url, budget, token):
        return requests.get(url, headers={"Authorization": token}, timeout=budget.timeout())
    ```

    ## Use instead
    ```python
    import requests

    def fetch(url, budget, token):
        headers = {"Authorization": token, "X-Request-Budget-Ms": str(budget.remaining_ms())}
        return requests.get(url, headers=headers, timeout=budget.timeout())
    ```

    ## Fix safety
    No fix: how the remaining milliseconds are read from your budget object is yours to say.

    ## Options
    - Opt-in: select `DL108` by its exact code (`--extend-select DL108`).
    - `budget_header`: the header (HTTP) that carries the remaining duration, compared
      case-insensitively.
    """

    code = "DL108"
    name = "budget-header-not-forwarded"
    summary = "an HTTP call in a budgeted function sends headers without the budget header"
    default_enabled = False
    def visit(self, node, ctx):
        call = outbound_call(ctx, node)
        if call is None or call.api.kind != CALL or call.api.headers_keyword is None:
            return
        headers = argument_at(node, call.api.headers_position, call.api.headers_keyword)
        if headers is None or budget_in_scope(ctx) is None:
            return
        keys = _header_keys(headers, ctx)
        wanted = self.profile.budget_header.lower()
        if keys is _UNKNOWN or wanted in keys:
            return
        message = (
            f"`{call.display_name}` sends headers without `{self.profile.budget_header}`: "
            f"forward the remaining budget (in ms) so the next hop inherits it"
        )
        ctx.report(self, headers, message)


def _header_keys(headers: ast.expr, ctx) -> Optional[set]:
    if isinstance(headers, ast.Dict):
        return _literal_keys(headers)
    if not isinstance(headers, ast.Name):
        return _UNKNOWN
    bindings = ctx.scope.bindings().get(headers.id)
    if not bindings or len(bindings) != 1 or bindings[0].kind != ASSIGN:
        return _UNKNOWN
    value = bindings[0].value
    if not isinstance(value, ast.Dict):
        return _UNKNOWN
    keys = _literal_keys(value)
    if keys is _UNKNOWN:
        return _UNKNOWN
    added = _keys_added_later(headers.id, ctx.scope.node)
    return _UNKNOWN if added is _UNKNOWN else keys | added


def _literal_keys(mapping: ast.Dict) -> Optional[set]:
    keys = set()
    for key in mapping.keys:
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return _UNKNOWN  # `**other` (key None) or a computed key
        keys.add(key.value.lower())
    return keys


def _keys_added_later(name: str, function: ast.AST) -> Optional[set]:
    """`headers["X"] = ...` adds a known key; any other use that may change the dict
    (`headers.update(...)`, passing it to a helper) makes the keys unknown."""
    keys = set()
    for node in walk_nodes(function):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name:
            if isinstance(node.ctx, ast.Store):
                key = node.slice
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    return _UNKNOWN
                keys.add(key.value.lower())
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
            return _UNKNOWN  # headers.update(...), headers.setdefault(...)
        elif isinstance(node, ast.Call):
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                if isinstance(argument, ast.Name) and argument.id == name and not _is_headers_argument(node, argument):
                    return _UNKNOWN
    return keys


def _is_headers_argument(call: ast.Call, argument: ast.Name) -> bool:
    return any(k.value is argument and k.arg == "headers" for k in call.keywords)
