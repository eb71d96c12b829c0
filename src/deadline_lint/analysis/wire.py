"""Headers and gRPC metadata: where a function reads an entry (an inbound budget, a `Date`
header) and where it writes one (a deadline sent on), and which local names derive from a read.

The vocabulary is data (catalog `clock.yaml`, section `wire`): a container is a name or
attribute whose last part contains `header`, `metadata` or `meta` (`request.headers`,
`metadata`, Django's `request.META`), or inbound gRPC metadata turned into a dict
(`dict(context.invocation_metadata())`, also through a local name). Keys are compared
normalised (`normalise_key`: lower case, `_` as `-`, no WSGI `HTTP_` prefix).

API (`wire = ctx.analysis(WireValues)`):
- `wire.header_read(expr, scope) -> str | None`: the normalised key `expr` reads
  (`h["X-Deadline"]`, `h.get("x-deadline", d)`, `h.getheader(...)`, `md.get(...)`).
- `wire.header_writes(node, scope) -> [(key, key node, value)]`: entries a dict literal,
  a `container[key] = value` store or a `(key, value)` pair list passed as headers or
  metadata put on the wire.
- `wire.is_budget_key(key)`: the profile's `budget_header`, `grpc-timeout`, or a key naming a
  deadline, timeout or budget.
- `wire.derived_names(scope, read)`: local names whose value comes from that read, through
  simple assignments (a fixpoint).
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Tuple

from deadline_lint.analysis.expressions import mentions_any
from deadline_lint.analysis.scopes import ASSIGN, Scope
from deadline_lint.catalog.clock import WireVocabulary, clock_catalog, normalise_key

if TYPE_CHECKING:
    from deadline_lint.context import AnalysisInputs

_GETTERS = frozenset({"get", "getheader", "get_all", "getlist", "getone", "get_header"})
_MAX_FOLLOW = 4


def _key_of(expr: Optional[ast.expr]) -> Optional[str]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return normalise_key(expr.value)
    if isinstance(expr, ast.Constant) and isinstance(expr.value, bytes):
        try:
            return normalise_key(expr.value.decode("ascii"))
        except UnicodeDecodeError:
            return None
    return None


class WireValues:
    def __init__(self, ctx: "AnalysisInputs"):
        self.resolver = ctx.resolver
        self.clocks = clock_catalog(ctx.catalog)
        self.vocabulary: WireVocabulary = self.clocks.wire
        self.profile_key = normalise_key(str(ctx.profile["budget_header"]))

    # -- keys --------------------------------------------------------------------
    def is_budget_key(self, key: str) -> bool:
        if key == self.profile_key or key in self.vocabulary.budget_keys:
            return True
        return any(word in key for word in self.vocabulary.deadline_words)

    def is_date_key(self, key: str) -> bool:
        return key == self.vocabulary.date_key

    # -- containers --------------------------------------------------------------
    def is_container(self, expr: ast.expr, scope: Scope, depth: int = 0) -> bool:
        if isinstance(expr, ast.Attribute):
            return self._container_name(expr.attr)
        if isinstance(expr, ast.Name):
            if self._container_name(expr.id):
                return True
            bindings = scope.lookup(expr.id) or []
            return (
                depth < _MAX_FOLLOW
                and len(bindings) == 1
                and bindings[0].kind == ASSIGN
                and self._is_metadata_dict(bindings[0].value)  # type: ignore[arg-type]
            )
        return self._is_metadata_dict(expr)

    def _container_name(self, name: str) -> bool:
        lowered = name.lower()
        return any(part in lowered for part in self.vocabulary.containers)

    def _is_metadata_dict(self, expr: ast.expr) -> bool:
        """`dict(context.invocation_metadata())`."""
        if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "dict"):
            return False
        if len(expr.args) != 1 or not isinstance(expr.args[0], ast.Call):
            return False
        inner = expr.args[0].func
        return isinstance(inner, ast.Attribute) and inner.attr in self.vocabulary.metadata_methods

    # -- reads ---------------------------------------------------------------------
    def header_read(self, expr: ast.AST, scope: Scope) -> Optional[str]:
        if isinstance(expr, ast.Subscript) and isinstance(expr.ctx, ast.Load):
            key = _key_of(expr.slice)  # type: ignore[arg-type]
            return key if key is not None and self.is_container(expr.value, scope) else None
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _GETTERS:
            key = _key_of(expr.args[0]) if expr.args else None
            return key if key is not None and self.is_container(expr.func.value, scope) else None
        return None

    def derived_names(self, scope: Scope, read: ast.AST) -> FrozenSet[str]:
        """Names assigned (directly or through other such names) from an expression
        containing `read`."""
        pairs: List[Tuple[str, ast.expr]] = []
        for name, bindings in scope.bindings().items():
            for binding in bindings:
                if binding.kind == ASSIGN and binding.value is not None:
                    pairs.append((name, binding.value))  # type: ignore[arg-type]
        names = {name for name, value in pairs if _contains(value, read)}
        changed = True
        while changed:
            changed = False
            for name, value in pairs:
                if name not in names and mentions_any(value, names):
                    names.add(name)
                    changed = True
        return frozenset(names)

    # -- writes --------------------------------------------------------------------
    def header_writes(self, node: ast.AST, scope: Scope, parent: Optional[ast.AST]) -> List[Tuple[str, ast.expr, ast.expr]]:
        """(key, key node, value) entries that `node` puts into headers or metadata."""
        found: List[Tuple[str, ast.expr, ast.expr]] = []
        if isinstance(node, ast.Dict) and self._dict_goes_on_wire(node, scope, parent):
            for key_node, value in zip(node.keys, node.values):
                key = _key_of(key_node)
                if key is not None:
                    found.append((key, key_node, value))  # type: ignore[arg-type]
        elif isinstance(node, ast.Assign):
            if isinstance(node.value, (ast.List, ast.Tuple)) and any(
                isinstance(t, (ast.Name, ast.Attribute)) and self.is_container(t, scope) for t in node.targets
            ):
                found.extend(self._pairs(node.value))
            for target in node.targets:
                if isinstance(target, ast.Subscript) and self.is_container(target.value, scope):
                    key = _key_of(target.slice)  # type: ignore[arg-type]
                    if key is not None:
                        found.append((key, target.slice, node.value))  # type: ignore[arg-type]
        elif isinstance(node, ast.keyword) and node.arg in self.vocabulary.keywords:
            found.extend(self._pairs(node.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append":
            if self.is_container(node.func.value, scope) and len(node.args) == 1:
                found.extend(self._pairs(ast.List(elts=[node.args[0]])))
        return found

    def _pairs(self, expr: ast.expr) -> List[Tuple[str, ast.expr, ast.expr]]:
        """`[("x-deadline", value), ...]` or a tuple of such pairs."""
        found: List[Tuple[str, ast.expr, ast.expr]] = []
        if isinstance(expr, (ast.List, ast.Tuple)):
            for element in expr.elts:
                if isinstance(element, ast.Tuple) and len(element.elts) == 2:
                    key = _key_of(element.elts[0])
                    if key is not None:
                        found.append((key, element.elts[0], element.elts[1]))
        return found

    def _dict_goes_on_wire(self, node: ast.Dict, scope: Scope, parent: Optional[ast.AST]) -> bool:
        """Passed as headers/metadata, assigned to a headers-like name, or merged into one."""
        if isinstance(parent, ast.keyword):
            return parent.arg in self.vocabulary.keywords
        if isinstance(parent, (ast.Assign, ast.AnnAssign)):
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            return any(isinstance(t, (ast.Name, ast.Attribute)) and self.is_container(t, scope) for t in targets)
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and parent.func.attr == "update":
            return self.is_container(parent.func.value, scope)
        return False


def _contains(expr: ast.AST, node: ast.AST) -> bool:
    return any(sub is node for sub in ast.walk(expr))


__all__ = ["WireValues", "normalise_key"]
