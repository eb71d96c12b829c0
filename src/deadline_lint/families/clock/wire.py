"""Headers and gRPC metadata: where a function reads an entry (an inbound budget, a `Date`
header) and where it writes one (a deadline sent on), and which local names derive from a read.

The vocabulary is data (catalog `clock.yaml`, section `wire`): a container is a name or
attribute whose last part contains `header`, `metadata` or `meta` (`request.headers`,
`metadata`, Django's `request.META`, WSGI's `environ`), or inbound gRPC metadata turned into a dict
(`dict(context.invocation_metadata())`, also through a local name). Keys are compared
normalised (`normalise_key`: lower case, `_` as `-`, no WSGI `HTTP_` prefix).

API (`wire = ctx.analysis(WireValues)`):
- `wire.header_read(expr, scope) -> str | None`: the normalised key `expr` reads
  (`h["X-Deadline"]`, `h.get("x-deadline", d)`, `h.getheader(...)`, `md.get(...)`).
- `wire.header_writes(node, scope) -> [(key, key node, value)]`: entries a `headers=` /
  `metadata=` argument, an assignment to a headers-like name or item, or a
  `headers.update(...)` / `metadata.append(...)` call puts on the wire.
- `wire.is_budget_key(key)`: the profile's `budget_header`, `grpc-timeout`, or a key naming a
  deadline or timeout, or a budget with a time unit (`x-budget-ms`: `max_budget` alone is
  as often money).
- `wire.derived_names(scope, read)`: local names whose value comes from that read, through
  simple assignments (a fixpoint).
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, FrozenSet, List, Optional, Tuple

from deadline_lint.families.shared.time.clock_catalog import WireVocabulary, clock_catalog, normalise_key
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.expressions import mentions_any
from deadline_lint.semantics.local.scopes import ASSIGN, Scope

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import AnalysisInputs

_GETTERS = frozenset({"get", "getheader", "get_all", "getlist", "getone", "get_header"})
_MAX_FOLLOW = 4


def literal_key_read(expr: ast.AST) -> Optional[ast.expr]:
    """The string literal `expr` looks up, for a cheap first look: `x["k"]`, `x.get("k")`
    and the other getters. None for anything else."""
    if type(expr) is ast.Subscript:
        key = expr.slice  # type: ignore[attr-defined]
    elif type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.args:  # type: ignore[attr-defined]
        if expr.func.attr not in _GETTERS:  # type: ignore[attr-defined]
            return None
        key = expr.args[0]  # type: ignore[attr-defined]
    else:
        return None
    return key if type(key) is ast.Constant and isinstance(key.value, (str, bytes)) else None


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
        self.profile_key = normalise_key(str(ctx.profile.budget_header))

    # -- keys --------------------------------------------------------------------
    def is_budget_key(self, key: str) -> bool:
        if key == self.profile_key or key in self.vocabulary.budget_keys:
            return True
        return any(word in key for word in self.vocabulary.deadline_words)

    def may_be_money(self, key: str) -> bool:
        """A budget key that names no time: only an ambiguous word (`budget`) and no unit
        (`max_budget` is dollars in litellm; `x-budget-ms` is time)."""
        vocabulary = self.vocabulary
        if key == self.profile_key or key in vocabulary.budget_keys:
            return False
        named = [word for word in vocabulary.deadline_words if word in key]
        return (
            bool(named) and all(word in vocabulary.unit_needed for word in named)
            and frozenset(key.split("-")).isdisjoint(vocabulary.units)
        )

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

    def carrier(self, scope: Scope, read: ast.AST) -> Callable[[ast.AST], bool]:
        """Whether an expression carries the value `read` produced: it holds the read itself
        or names a local derived from it (`derived_names`)."""
        derived = self.derived_names(scope, read)
        return lambda expr: _contains(expr, read) or mentions_any(expr, derived)

    # -- writes --------------------------------------------------------------------
    def header_writes(self, node: ast.AST, scope: Scope) -> List[Tuple[str, ast.expr, ast.expr]]:
        """(key, key node, value) entries that `node` puts into headers or metadata: a
        `headers=`/`metadata=` argument, `headers = {...}` or `metadata = [(k, v)]`,
        `headers[k] = v`, `headers.update({...})`, `metadata.append((k, v))`."""
        if isinstance(node, ast.keyword):
            return self._entries(node.value) if node.arg in self.vocabulary.keywords else []
        if isinstance(node, ast.Assign):
            found: List[Tuple[str, ast.expr, ast.expr]] = []
            for target in node.targets:
                if isinstance(target, ast.Subscript):
                    key = _key_of(target.slice)  # type: ignore[arg-type]
                    if key is not None and self.is_container(target.value, scope):
                        found.append((key, target.slice, node.value))  # type: ignore[arg-type]
                elif isinstance(target, (ast.Name, ast.Attribute)) and isinstance(
                    node.value, (ast.Dict, ast.List, ast.Tuple)
                ) and self.is_container(target, scope):
                    found.extend(self._entries(node.value))
            return found
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and len(node.args) == 1:
            if node.func.attr in ("update", "append") and self.is_container(node.func.value, scope):
                argument = node.args[0]
                return self._entries(ast.List(elts=[argument]) if node.func.attr == "append" else argument)
        return []

    def _entries(self, expr: ast.expr) -> List[Tuple[str, ast.expr, ast.expr]]:
        """`{"x-deadline": value}`, or `[("x-deadline", value), ...]` / a tuple of such pairs."""
        found: List[Tuple[str, ast.expr, ast.expr]] = []
        if isinstance(expr, ast.Dict):
            for key_node, value in zip(expr.keys, expr.values):
                key = _key_of(key_node)
                if key is not None:
                    found.append((key, key_node, value))  # type: ignore[arg-type]
        elif isinstance(expr, (ast.List, ast.Tuple)):
            for element in expr.elts:
                if isinstance(element, ast.Tuple) and len(element.elts) == 2:
                    key = _key_of(element.elts[0])
                    if key is not None:
                        found.append((key, element.elts[0], element.elts[1]))
        return found


def _contains(expr: ast.AST, node: ast.AST) -> bool:
    return any(sub is node for sub in walk_nodes(expr))


__all__ = ["WireValues", "literal_key_read", "normalise_key"]
