"""Scopes and bindings: our own light import/binding table.

libcst's ScopeProvider/QualifiedNameProvider cost several times a parse; this table is built
lazily, per scope, only when a rule asks about a name in it.
"""
from __future__ import annotations

import ast
import builtins
import weakref
from typing import Any, Collection, Dict, List, Optional

from deadline_lint.semantics.local.children import push_children
from deadline_lint.semantics.local.children import walk as walk_nodes

MODULE, FUNCTION, CLASS = "module", "function", "class"

IMPORT = "import"  # value: qualified name (str)
ASSIGN = "assign"  # value: the assigned expression
PARAM = "param"  # value: the ast.arg
WITH = "with"  # value: the context expression
ANNOTATED = "annotated"  # value: the annotation of a bare `x: T`
GLOBAL = "global"  # `global x` / `nonlocal x`: look further out
OTHER = "other"  # anything we do not model: makes the name unknown

_BUILTIN_NAMES = frozenset(dir(builtins))
_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class Binding:
    """`scope` is held weakly: the scope's table holds its bindings, and a strong reference
    back would make every scope that computed its bindings a cycle, and with it the whole
    tree its node belongs to, freed only when the cyclic collector walks every node of it."""

    __slots__ = ("kind", "value", "_scope", "annotation")

    def __init__(self, kind: str, value: object, scope: "Scope", annotation: Optional[ast.expr] = None):
        self.kind = kind
        self.value = value
        self._scope = weakref.ref(scope)
        self.annotation = annotation

    @property
    def scope(self) -> "Scope":
        scope = self._scope()
        assert scope is not None, "a binding outlived the scope table it was read from"
        return scope


class Scope:
    """A module, function (or lambda) or class body."""

    __slots__ = ("node", "parent", "kind", "_bindings", "facts", "__weakref__")

    def __init__(self, node: ast.AST, parent: Optional["Scope"]):
        self.node = node
        self.parent = parent
        if isinstance(node, ast.ClassDef):
            self.kind = CLASS
        elif isinstance(node, _FUNCTION_NODES):
            self.kind = FUNCTION
        else:
            self.kind = MODULE
        self._bindings: Optional[Dict[str, List[Binding]]] = None
        self.facts: Dict[str, Any] = {}  # per-scope caches, each key owned by one analysis

    def clear_caches(self) -> None:
        """Forget the bindings and facts computed so far (they are rebuilt when asked again)."""
        self._bindings = None
        self.facts = {}

    @property
    def module(self) -> "Scope":
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    @property
    def enclosing_class(self) -> Optional["Scope"]:
        """For a method: the class scope it is defined directly in."""
        return self.parent if self.kind == FUNCTION and self.parent and self.parent.kind == CLASS else None

    def bindings(self) -> Dict[str, List[Binding]]:
        if self._bindings is None:
            self._bindings = _collect(self)
        return self._bindings

    def lookup(self, name: str) -> Optional[List[Binding]]:
        """LEGB lookup; class bodies are invisible to the functions nested in them."""
        scope: Optional[Scope] = self
        while scope is not None:
            if scope.kind != CLASS or scope is self:
                found = scope.bindings().get(name)
                if found:
                    if any(b.kind == GLOBAL for b in found):
                        scope = scope.module if scope.parent else None
                        if scope is None:
                            return None
                        found = scope.bindings().get(name)
                        return found or None
                    return found
            scope = scope.parent
        return None

    def function_params(self) -> List[ast.arg]:
        node = self.node
        if not isinstance(node, _FUNCTION_NODES):
            return []
        args = node.args
        params = [*args.posonlyargs, *args.args]
        if args.vararg:
            params.append(args.vararg)
        params.extend(args.kwonlyargs)
        if args.kwarg:
            params.append(args.kwarg)
        return params


def _add(table: Dict[str, List[Binding]], name: str, binding: Binding) -> None:
    table.setdefault(name, []).append(binding)


def _bind_target(table: Dict[str, List[Binding]], target: ast.expr, value: Optional[ast.expr], scope: Scope) -> None:
    if isinstance(target, ast.Name):
        _add(table, target.id, Binding(ASSIGN, value, scope) if value is not None else Binding(OTHER, None, scope))
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            _bind_target(table, element, None, scope)
    elif isinstance(target, ast.Starred):
        _bind_target(table, target.value, None, scope)


def _collect(scope: Scope) -> Dict[str, List[Binding]]:
    table: Dict[str, List[Binding]] = {}
    node = scope.node
    for param in scope.function_params():
        _add(table, param.arg, Binding(PARAM, param, scope, param.annotation))
    if isinstance(node, ast.Lambda):
        return table
    stack: List[ast.AST] = list(reversed(getattr(node, "body", [])))
    # A walrus may sit in any statement's expression (`ok = (left := remaining()) > 0.1`,
    # `return f(timeout=r) if (r := remaining()) > 0 else None`): searched unless the file's
    # text has no `:=` at all (what the engine tells the module scope, `note_text`), as a walk
    # of every expression of every scope would be a second walk of the tree.
    search = not scope.module.facts.get(_WALRUS_FREE)
    while stack:
        stmt = stack.pop()
        if type(stmt) in _BINDS_NOTHING:
            if search and isinstance(stmt, _WALRUS_HOLDERS):
                _bind_walrus(table, getattr(stmt, "test", None) or getattr(stmt, "value", None), scope)
            continue  # most statements: a cheap exit before the chain below
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    _add(table, alias.asname, Binding(IMPORT, alias.name, scope))
                else:
                    top = alias.name.split(".")[0]
                    _add(table, top, Binding(IMPORT, top, scope))
        elif isinstance(stmt, ast.ImportFrom):
            module = "." * stmt.level + (stmt.module or "")
            for alias in stmt.names:
                if alias.name == "*":
                    continue
                qualname = f"{module}.{alias.name}" if module else alias.name
                _add(table, alias.asname or alias.name, Binding(IMPORT, qualname, scope))
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                _bind_target(table, target, stmt.value, scope)
            if search:
                _bind_walrus(table, stmt.value, scope)
        elif isinstance(stmt, ast.AnnAssign):
            if search:
                _bind_walrus(table, stmt.value, scope)
            if isinstance(stmt.target, ast.Name):
                kind = ASSIGN if stmt.value is not None else ANNOTATED
                value = stmt.value if stmt.value is not None else stmt.annotation
                _add(table, stmt.target.id, Binding(kind, value, scope, stmt.annotation))
        elif isinstance(stmt, ast.AugAssign):
            _bind_target(table, stmt.target, None, scope)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            _add(table, stmt.name, Binding(OTHER, stmt, scope))
            continue  # its body is its own scope
        elif isinstance(stmt, (ast.Global, ast.Nonlocal)):
            for name in stmt.names:
                _add(table, name, Binding(GLOBAL, None, scope))
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            _bind_target(table, stmt.target, None, scope)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if isinstance(item.optional_vars, ast.Name):
                    _add(table, item.optional_vars.id, Binding(WITH, item.context_expr, scope))
                elif item.optional_vars is not None:
                    _bind_target(table, item.optional_vars, None, scope)
        elif isinstance(stmt, (ast.Try, ast.TryStar)):
            for handler in stmt.handlers:
                if handler.name:
                    _add(table, handler.name, Binding(OTHER, None, scope))
                stack.extend(reversed(handler.body))
        elif isinstance(stmt, (ast.If, ast.While)):
            # `if (left := context.time_remaining()) > 0.1:` binds `left` in this scope. Only the
            # tests of `if`/`while` are searched, where the idiom lives: every expression of
            # every scope would cost a second walk of the tree.
            _bind_walrus(table, stmt.test, scope)
        elif isinstance(stmt, ast.Match):
            for case in stmt.cases:
                for sub in walk_nodes(case.pattern):
                    captured = getattr(sub, "name", None)
                    if isinstance(captured, str):
                        _add(table, captured, Binding(OTHER, None, scope))
                stack.extend(reversed(case.body))
        for child_field in _NESTED_BODIES.get(type(stmt), ()):
            stack.extend(reversed(getattr(stmt, child_field)))
    return table


def note_text(module_scope: Scope, text: str) -> None:
    """Tell the module's scopes what its text rules out: no `:=`, no walrus to search for."""
    if ":=" not in text:
        module_scope.facts[_WALRUS_FREE] = True


def _bind_walrus(table: Dict[str, List[Binding]], expr: Optional[ast.expr], scope: Scope) -> None:
    if expr is not None:
        for sub in _walrus_targets(expr):
            _add(table, sub.target.id, Binding(ASSIGN, sub.value, scope))


def _walrus_targets(expr: ast.expr) -> List[ast.NamedExpr]:
    found: List[ast.NamedExpr] = []
    pending: List[ast.AST] = [expr]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Lambda):
            continue  # a walrus in a lambda binds in the lambda
        if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            found.append(node)
        push_children(pending, node)
    return found


# Statements that bind no name (but by a walrus inside) and hold no nested statements.
_BINDS_NOTHING = frozenset({ast.Expr, ast.Return, ast.Raise, ast.Assert, ast.Delete, ast.Pass, ast.Break, ast.Continue})
_WALRUS_HOLDERS = (ast.Expr, ast.Return, ast.Assert)
_WALRUS_FREE = "walrus_free"  # a module scope's fact: its text has no `:=`
# Where statements nest: bodies, branches, handlers and match cases.
NESTED_STATEMENTS = {
    ast.FunctionDef: ("body",),
    ast.AsyncFunctionDef: ("body",),
    ast.ClassDef: ("body",),
    ast.If: ("body", "orelse"),
    ast.For: ("body", "orelse"),
    ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"),
    ast.With: ("body",),
    ast.AsyncWith: ("body",),
    ast.Try: ("body", "handlers", "orelse", "finalbody"),
    ast.ExceptHandler: ("body",),
    ast.TryStar: ("body", "handlers", "orelse", "finalbody"),
    ast.Match: ("cases",),
    ast.match_case: ("body",),
}
# The same, for collecting one scope's bindings: function and class bodies are scopes of their
# own, and handlers and match cases are walked where they bind names.
_OWN_BINDING_SITES = (ast.ExceptHandler, ast.Match, ast.match_case)
_NESTED_BODIES = {
    node_type: tuple(f for f in fields if f not in ("handlers", "cases"))
    for node_type, fields in NESTED_STATEMENTS.items()
    if node_type not in _SCOPE_NODES and node_type not in _OWN_BINDING_SITES
}


def is_builtin(name: str) -> bool:
    return name in _BUILTIN_NAMES


def import_qualname(bindings: List[Binding]) -> Optional[str]:
    """The one module/object every binding imports, or None when any binding is not that import."""
    first = bindings[0]
    if first.kind != IMPORT:
        return None
    if all(b.kind == IMPORT and b.value == first.value for b in bindings):
        return first.value if isinstance(first.value, str) else None
    return None


def imports_any(module_scope: Scope, modules: Collection[str]) -> bool:
    """The module imports something from one of these top-level packages (`flask`, `fastapi`)."""
    return any(
        binding.kind == IMPORT and str(binding.value).split(".")[0] in modules
        for bindings in module_scope.bindings().values()
        for binding in bindings
    )
