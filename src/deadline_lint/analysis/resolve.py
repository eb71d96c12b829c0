"""What an expression refers to: qualified names of modules and functions, and the client
class of an instance. Anything we cannot prove resolves to None, and rules stay quiet."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Tuple

from deadline_lint.analysis.scopes import (
    ANNOTATED,
    ASSIGN,
    CLASS,
    IMPORT,
    NESTED_STATEMENTS,
    PARAM,
    WITH,
    Binding,
    Scope,
    import_qualname,
    is_builtin,
)
from deadline_lint.catalog import Catalog

_MAX_DEPTH = 8  # chains of `a = b` longer than this are left unknown


@dataclass(frozen=True)
class Instance:
    """An object whose class we know; `constructor` is the call that built it, when known."""

    qualname: str
    constructor: Optional[ast.Call]
    called: Optional[str] = None  # what the constructor call names: the class or a factory


def dotted_parts(expr: ast.expr) -> Optional[List[str]]:
    """`a.b.c` -> ["a", "b", "c"]; None for anything but names and attributes."""
    parts: List[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    parts.reverse()
    return parts


class Resolver:
    def __init__(self, catalog: Catalog, scopes_by_node: Dict[int, Scope]):
        self.catalog = catalog
        self._scopes = scopes_by_node  # shared with the walker so each def has one Scope
        # Several rules ask about the same call: an expression always resolves in the scope
        # it sits in, so its answer is remembered by node for the file's lifetime.
        # The node is kept alive with its answer so that its id cannot be reused.
        self._qualnames: Dict[int, Tuple[ast.AST, Optional[str]]] = {}
        self._imported_names: Optional[FrozenSet[str]] = None  # one Resolver per file
        self._catalog_imports: Optional[FrozenSet[str]] = None

    def scope_of(self, node: ast.AST, parent: Scope) -> Scope:
        scope = self._scopes.get(id(node))
        if scope is None:
            scope = self._scopes[id(node)] = Scope(node, parent)
        return scope

    # -- qualified names ---------------------------------------------------
    def qualified_name(self, expr: ast.expr, scope: Scope) -> Optional[str]:
        """`requests.get` -> "requests.get"; `from requests import get as g; g` -> "requests.get"."""
        known = self._qualnames.get(id(expr))
        if known is not None:
            return known[1]
        found = self._qualified_name(expr, scope)
        self._qualnames[id(expr)] = (expr, found)
        return found

    def _qualified_name(self, expr: ast.expr, scope: Scope) -> Optional[str]:
        parts = dotted_parts(expr)
        if parts is None:
            return None
        head = parts[0]
        if head not in self.imported_names(scope) and not is_builtin(head):
            return None  # only an import can make a name stand for a module or its objects
        bindings = scope.lookup(head)
        if bindings is None:
            if not is_builtin(head):
                return None
            base = head
        else:
            base = import_qualname(bindings)
            if base is None:
                return None
        return self.catalog.canonical(".".join([base, *parts[1:]]))

    def imported_names(self, scope: Scope) -> FrozenSet[str]:
        """Every name any import statement in the file binds, found by visiting statements
        only (imports cannot hide in expressions): most names are not among them, and need
        no scope lookup at all."""
        if self._imported_names is None:
            self._collect_imports(scope)
        return self._imported_names  # type: ignore[return-value]

    def catalog_imports(self, scope: Scope) -> FrozenSet[str]:
        """The imported names that can stand for something in the catalog: imported from one
        of its modules, or from a generated gRPC stub module."""
        if self._catalog_imports is None:
            self._collect_imports(scope)
        return self._catalog_imports  # type: ignore[return-value]

    def _collect_imports(self, scope: Scope) -> None:
        modules = self.catalog.outbound_modules
        suffixes = tuple(p.module_suffix for p in self.catalog.stubs)
        every, relevant = set(), set()
        stack = list(getattr(scope.module.node, "body", []))
        while stack:
            stmt = stack.pop()
            nested = NESTED_STATEMENTS.get(type(stmt))
            if nested is not None:
                for field in nested:
                    stack.extend(getattr(stmt, field))
                continue
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                source = stmt.module or "" if isinstance(stmt, ast.ImportFrom) else ""
                for alias in stmt.names:
                    name = alias.asname or alias.name.split(".")[0]
                    every.add(name)
                    target = f"{source}.{alias.name}" if source else alias.name
                    if target.split(".")[0] in modules or (suffixes and any(s in target for s in suffixes)):
                        relevant.add(name)
        self._imported_names, self._catalog_imports = frozenset(every), frozenset(relevant)

    def annotation_class(self, annotation: Optional[ast.expr], scope: Scope) -> Optional[str]:
        """The class an annotation names, seeing through Optional[X], X | None and strings."""
        if annotation is None:
            return None
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            sides = [s for s in (annotation.left, annotation.right) if not _is_none(s)]
            return self.annotation_class(sides[0], scope) if len(sides) == 1 else None
        if isinstance(annotation, ast.Subscript):
            outer = self.qualified_name(annotation.value, scope)
            if outer in ("typing.Optional", "Optional"):
                return self.annotation_class(annotation.slice, scope)  # type: ignore[arg-type]
            return None
        return self.qualified_name(annotation, scope)

    # -- instances -----------------------------------------------------------
    def instance(self, expr: ast.expr, scope: Scope, depth: int = 0) -> Optional[Instance]:
        """The known client class `expr` evaluates to an instance of, or None."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Await):  # `conn = await asyncpg.connect(...)`
            expr = expr.value
        if isinstance(expr, ast.Call):
            return self._constructed(expr, scope, depth)
        if isinstance(expr, ast.Name):
            bindings = scope.lookup(expr.id)
            return self._from_bindings(bindings, depth) if bindings else None
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            return self._self_attribute(expr, scope, depth)
        return None

    def _constructed(self, call: ast.Call, scope: Scope, depth: int) -> Optional[Instance]:
        """`httpx.Client(...)`, a factory (`asyncpg.connect(...)`), a generated gRPC stub
        (`pb2_grpc.GreeterStub(channel)`), or a method that hands out a client
        (`pool.acquire()`, `session.client("s3")`)."""
        func = call.func
        qualname = self.qualified_name(func, scope)
        if qualname is not None:
            client = self.catalog.constructed_class(qualname)
            return Instance(client.qualname, call, qualname) if client is not None else None
        if not isinstance(func, ast.Attribute) or func.attr not in self.catalog.returning_methods:
            return None
        receiver = self.instance(func.value, scope, depth + 1)
        if receiver is None:
            return None
        client = self.catalog.client_class(receiver.qualname)
        returned = client.returns.get(func.attr) if client is not None else None
        if returned is None:
            return None
        class_name, inherits = returned
        # A pooled connection keeps the pool's settings: its "constructor" is the pool's.
        if inherits:
            return Instance(class_name, receiver.constructor, receiver.called)
        return Instance(class_name, call, f"{receiver.qualname}.{func.attr}")

    def known_class(self, qualname: Optional[str]) -> bool:
        return qualname is not None and self.catalog.client_class(qualname) is not None

    def _from_binding(self, binding: Binding, depth: int) -> Optional[Instance]:
        if binding.kind in (ASSIGN, WITH):
            found = self.instance(binding.value, binding.scope, depth + 1)  # type: ignore[arg-type]
            if found is None and binding.annotation is not None:
                # `self.client: httpx.Client = make_client()`: the annotation names the class,
                # though not how it was built.
                qualname = self.annotation_class(binding.annotation, binding.scope)
                if self.known_class(qualname):
                    return Instance(qualname, None)  # type: ignore[arg-type]
            return found
        if binding.kind in (PARAM, ANNOTATED):
            qualname = self.annotation_class(binding.annotation, binding.scope)
            if self.known_class(qualname):
                return Instance(qualname, None)  # type: ignore[arg-type]
        return None

    def _from_bindings(self, bindings: List[Binding], depth: int) -> Optional[Instance]:
        """Every binding must agree on the class; constructors are kept only when there is one."""
        found = [self._from_binding(b, depth) for b in bindings]
        if not found or any(f is None for f in found):
            return None
        classes = {f.qualname for f in found}  # type: ignore[union-attr]
        if len(classes) != 1:
            return None
        return found[0] if len(found) == 1 else Instance(classes.pop(), None)

    def _self_attribute(self, expr: ast.Attribute, scope: Scope, depth: int) -> Optional[Instance]:
        """`self.client` where the class assigns `self.client = httpx.Client(...)` somewhere,
        or annotates `client: httpx.Client` in its body."""
        method = scope
        while method is not None and method.enclosing_class is None:
            if method.kind == CLASS or method.parent is None:
                return None
            method = method.parent  # a closure inside a method still sees `self`
        params = method.function_params() if method is not None else []
        if not params or not isinstance(expr.value, ast.Name) or expr.value.id != params[0].arg:
            return None
        class_scope = method.enclosing_class
        assert class_scope is not None
        bindings = list(self.attribute_bindings(class_scope).get(expr.attr, []))
        bindings.extend(
            b for b in class_scope.bindings().get(expr.attr, []) if b.kind in (ASSIGN, ANNOTATED)
        )
        return self._from_bindings(bindings, depth) if bindings else None

    def attribute_bindings(self, class_scope: Scope) -> Dict[str, List[Binding]]:
        """`self.x = value` in every method of the class, each resolved in its method's scope."""
        cached = class_scope.facts.get("self_attributes")
        if cached is not None:
            return cached  # type: ignore[return-value]
        table: Dict[str, List[Binding]] = {}
        for stmt in class_scope.node.body:  # type: ignore[attr-defined]
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            method = self.scope_of(stmt, class_scope)
            params = method.function_params()
            if not params:
                continue
            self_name = params[0].arg
            for node in _statements(stmt):
                if isinstance(node, ast.Assign):
                    pairs = [(t, node.value, None) for t in node.targets]
                elif isinstance(node, ast.AnnAssign):
                    pairs = [(node.target, node.value, node.annotation)]
                elif isinstance(node, ast.AugAssign):
                    pairs = [(node.target, None, None)]
                else:
                    continue
                for target, value, annotation in pairs:
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == self_name
                    ):
                        kind = ASSIGN if value is not None else ANNOTATED
                        binding = Binding(kind, value if value is not None else annotation, method, annotation)
                        if value is None and annotation is None:
                            binding = Binding("other", None, method)
                        table.setdefault(target.attr, []).append(binding)
        class_scope.facts["self_attributes"] = table
        return table

    def call_target(self, call: ast.Call, scope: Scope) -> Optional[str]:
        """The qualified name a call goes to: module functions, or `Class.method` on a known instance."""
        func = call.func
        qualname = self.qualified_name(func, scope)
        if qualname is not None:
            return qualname
        if isinstance(func, ast.Attribute):
            instance = self.instance(func.value, scope)
            if instance is not None:
                return f"{instance.qualname}.{func.attr}"
        return None


def _statements(function: ast.AST):
    """Every statement inside `function`, nested ones included (`self.x = ...` is a
    statement, so expressions need not be visited)."""
    stack = list(getattr(function, "body", []))
    while stack:
        stmt = stack.pop()
        yield stmt
        nested = NESTED_STATEMENTS.get(type(stmt))
        if nested is not None:
            for field in nested:
                stack.extend(getattr(stmt, field))


def _is_none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


__all__ = ["Instance", "Resolver", "dotted_parts", "IMPORT"]
