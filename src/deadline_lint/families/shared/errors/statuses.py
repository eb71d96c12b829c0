"""Which status a call, raise, return or assignment produces, what that status means under
the profile (quota, expired, cancelled), and how to write another status in the same spelling.

Knowledge of the frameworks is the catalog's (statuses.yaml): status constants
(`HTTPStatus.TOO_MANY_REQUESTS`, `status.HTTP_429_TOO_MANY_REQUESTS`,
`grpc.StatusCode.RESOURCE_EXHAUSTED`), classes that are a status (`web.HTTPTooManyRequests`),
calls and methods that take one (`HTTPException(429)`, `abort(429)`, `context.set_code(...)`),
`status=` / `status_code=` keywords and attributes, and `return body, 429` in Flask views.
A bare number is a status only in one of those places; a named constant wherever it is
passed, returned or assigned.

    statuses = ctx.analysis(StatusAnalysis)
    for produced in statuses.produced(node):        # a Call, Raise, Return or Assign
        statuses.meanings(produced.status)          # {QUOTA, EXPIRED, CANCELLED, REFUSED} subset
        statuses.respell(produced, target)          # (text, imports) or None
"""
from __future__ import annotations

from types import MappingProxyType
import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Tuple

from deadline_lint.families.shared.errors.status_catalog import CLASS, CONSTANT, NamedStatus, Status, status_vocabulary
from deadline_lint.semantics.local.expressions import argument_at, last_name
from deadline_lint.semantics.local.scopes import IMPORT, Scope, imports_any

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

QUOTA, EXPIRED, CANCELLED, REFUSED = "quota", "expired", "cancelled", "refused"
_PROFILE_KEYS = MappingProxyType({EXPIRED: ("expired", "grpc_expired"), CANCELLED: ("cancelled", "grpc_cancelled"),
                 REFUSED: ("refused", "grpc_refused")})


@dataclass(frozen=True)
class ProducedStatus:
    status: Status
    value: ast.expr  # the expression that names the status: what a fix rewrites
    named: Optional[NamedStatus]  # None for a bare number
    imported_name: bool = False  # the value is a bare name bound by `from x import NAME`


class StatusAnalysis:
    """Per file; answers for a node are computed once."""

    def __init__(self, ctx: "FileView") -> None:
        self.ctx = ctx
        self.vocabulary = status_vocabulary(ctx.catalog)
        statuses = ctx.profile.statuses
        self.meaning_of: Dict[Status, FrozenSet[str]] = {}
        table: Dict[Status, set] = {status: {QUOTA} for status in self.vocabulary.quota}
        for meaning, keys in _PROFILE_KEYS.items():
            for key in keys:
                table.setdefault(Status.of(getattr(statuses, key)), set()).add(meaning)
        self.meaning_of = {status: frozenset(found) for status, found in table.items()}
        self.expired = (Status.of(statuses.expired), Status.of(statuses.grpc_expired))
        self._tuple_returns: Optional[bool] = None

    # -- meanings ------------------------------------------------------------------------
    def meanings(self, status: Status) -> FrozenSet[str]:
        return self.meaning_of.get(status, frozenset())

    def expired_like(self, status: Status) -> Status:
        """The profile's expired status of the same protocol (HTTP or gRPC) as `status`."""
        return self.expired[0] if status.http is not None else self.expired[1]

    # -- production ------------------------------------------------------------------------
    def produced(self, node: ast.AST, scope: Optional[Scope] = None) -> Tuple[ProducedStatus, ...]:
        scope = scope or self.ctx.scope
        found: List[ProducedStatus] = []
        if isinstance(node, ast.Call):
            self._from_call(node, scope, found)
        elif isinstance(node, ast.Raise) and node.exc is not None and not isinstance(node.exc, ast.Call):
            self._add(self._class_status(node.exc, scope), found)
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) in (2, 3):
            if self._views_return_tuples():
                self._add(self.status_value(node.value.elts[1], scope, bare_numbers=True), found)
        elif isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Attribute) and t.attr in self.vocabulary.attributes for t in node.targets):
                self._add(self.status_value(node.value, scope, bare_numbers=True), found)
        return tuple(found)

    def _from_call(self, call: ast.Call, scope: Scope, found: List[ProducedStatus]) -> None:
        vocabulary = self.vocabulary
        func = call.func
        seen: set = set()
        qualname = self.ctx.resolver.qualified_name(func, scope) if last_name(func) in vocabulary.final_names else None
        if qualname is not None:
            named = vocabulary.named(qualname)
            if named is not None and named.role == CLASS:
                self._add(ProducedStatus(named.status, func, named, isinstance(func, ast.Name)), found)
                return
            spec = vocabulary.call_argument(qualname)
            if spec is not None:
                argument = argument_at(call, spec.position, spec.keyword)
                if argument is not None:
                    seen.add(id(argument))
                    self._add(self.status_value(argument, scope, bare_numbers=True), found)
        if isinstance(func, ast.Attribute) and func.attr in vocabulary.methods:
            argument = argument_at(call, vocabulary.methods[func.attr], None)
            if argument is not None and id(argument) not in seen:
                seen.add(id(argument))
                self._add(self.status_value(argument, scope, bare_numbers=True), found)
        for keyword in call.keywords:
            if id(keyword.value) in seen:
                continue
            bare = keyword.arg in vocabulary.keywords
            self._add(self.status_value(keyword.value, scope, bare_numbers=bare), found)
        for argument in call.args:
            if id(argument) not in seen:
                self._add(self.status_value(argument, scope, bare_numbers=False), found)

    @staticmethod
    def _add(produced: Optional[ProducedStatus], found: List[ProducedStatus]) -> None:
        if produced is not None:
            found.append(produced)

    def status_value(self, expr: ast.expr, scope: Scope, bare_numbers: bool) -> Optional[ProducedStatus]:
        """The status `expr` names: a listed constant, or (where a status is expected) a number."""
        if isinstance(expr, ast.Constant):
            value = expr.value
            if bare_numbers and type(value) is int and 100 <= value <= 599:
                return ProducedStatus(Status(http=value), expr, None)
            return None
        if last_name(expr) not in self.vocabulary.final_names:
            return None
        qualname = self.ctx.resolver.qualified_name(expr, scope)
        named = self.vocabulary.named(qualname) if qualname is not None else None
        if named is None or named.role != CONSTANT:
            return None
        return ProducedStatus(named.status, expr, named, isinstance(expr, ast.Name))

    def _class_status(self, expr: ast.expr, scope: Scope) -> Optional[ProducedStatus]:
        """`raise web.HTTPTooManyRequests` (the class, not called)."""
        if last_name(expr) not in self.vocabulary.final_names:
            return None
        qualname = self.ctx.resolver.qualified_name(expr, scope)
        named = self.vocabulary.named(qualname) if qualname is not None else None
        if named is None or named.role != CLASS:
            return None
        return ProducedStatus(named.status, expr, named, isinstance(expr, ast.Name))

    def _views_return_tuples(self) -> bool:
        """The file imports a framework whose views return `(body, status)`."""
        if self._tuple_returns is None:
            self._tuple_returns = imports_any(self.ctx.module_scope, self.vocabulary.tuple_returns)
        return self._tuple_returns

    # -- rewriting ---------------------------------------------------------------------------
    def respell(self, produced: ProducedStatus, target: Status) -> Optional[Tuple[str, Tuple[str, ...]]]:
        """The text that names `target` where `produced.value` is, in the same spelling, and
        the imports it needs; None when that spelling has no name for it."""
        if produced.named is None:
            return (str(target.http), ()) if target.http is not None else None
        family = produced.named.family
        member = self.vocabulary.spelling(family, target)
        if member is None:
            return None
        value = produced.value
        if isinstance(value, ast.Attribute):
            receiver = self.ctx.source.segment(value.value)
            return f"{receiver}.{member}", ()
        if isinstance(value, ast.Name) and produced.imported_name:
            module = self._import_source(value.id)
            if module is None:
                return None
            return member, (f"from {module} import {member}",)
        return None

    def _import_source(self, name: str) -> Optional[str]:
        """`from starlette.status import HTTP_429_...`: the module the name was imported from,
        as written (so the new name comes from the same place)."""
        bindings = self.ctx.module_scope.bindings().get(name) or []
        if len(bindings) != 1 or bindings[0].kind != IMPORT:
            return None
        module, _, imported = str(bindings[0].value).rpartition(".")
        return module if module and imported == name else None

