"""What an expression refers to: qualified names of modules and functions, and the project
definitions and classes names stand for. No family's types live here (the outbound family's
client typing is `client_types.py`). Anything we cannot prove resolves to None, and rules
stay quiet."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, ClassVar, Dict, FrozenSet, List, Optional, Protocol, Tuple

from deadline_lint.catalog import Catalog
from deadline_lint.semantics.local.declared import (
    FUNCTION_DEFS,
    defined_names,
    is_none,
    is_plain_method,
)
from deadline_lint.semantics.local.scopes import (
    ANNOTATED,
    ASSIGN,
    IMPORT,
    NESTED_STATEMENTS,
    OTHER,
    PARAM,
    Binding,
    Scope,
    import_qualname,
    is_builtin,
)

_MAX_DEPTH = 8  # chains of `a = b` longer than this are left unknown


@dataclass(frozen=True)
class Definition:
    """A `def` or `class` of the module a name refers to, with the scope it is defined in and
    the module's resolver (names from other project modules are typed through `ProjectTypes`)."""

    node: ast.AST
    scope: Scope  # the scope the definition sits in
    resolver: "Resolver"

    @property
    def own_scope(self) -> Scope:
        return self.resolver.scope_of(self.node, self.scope)

    @property
    def is_class(self) -> bool:
        return isinstance(self.node, ast.ClassDef)

    @property
    def is_function(self) -> bool:
        return isinstance(self.node, FUNCTION_DEFS)


class ProjectTypes(Protocol):
    """What a file's names imported from its project stand for (built per file by the family
    that registers `Resolver.project_factory`; None outside a project). Families that type
    more (`client_types.ProjectClients`) extend it."""

    def is_project_name(self, resolver: "Resolver", qualname: str) -> bool: ...

    def external_name(self, resolver: "Resolver", qualname: str) -> Optional[str]: ...




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
    # Builds a file's `ProjectTypes` from its view (`FileView`), on first need; registered by
    # the family that answers them, so that name resolution imports no family.
    project_factory: ClassVar[Optional[Callable[[object], Optional[ProjectTypes]]]] = None

    def __init__(self, catalog: Catalog, scopes_by_node: Dict[int, Scope], file: Optional[object] = None):
        self.catalog = catalog
        self._scopes = scopes_by_node  # shared with the walker so each def has one Scope
        # Several rules ask about the same call: an expression always resolves in the scope
        # it sits in, so its answer is remembered by node for the file's lifetime.
        # The node is kept alive with its answer so that its id cannot be reused.
        self._qualnames: Dict[int, Tuple[ast.AST, Optional[str]]] = {}
        self._imported_names: Optional[FrozenSet[str]] = None  # one Resolver per file
        self._catalog_imports: Optional[FrozenSet[str]] = None
        # What families work out about this file's names, kept with it (`client_types`).
        self.memo: Dict[str, object] = {}
        self._file = file  # the file's view: what its project names stand for is built from it
        self._project: Optional[ProjectTypes] = None
        self._project_pending = file is not None  # built on first use, from `file`

    @property
    def project(self) -> Optional[ProjectTypes]:
        if self._project_pending:
            self._project_pending = False
            factory = Resolver.project_factory
            self._project = factory(self._file) if factory is not None else None
        return self._project

    @project.setter
    def project(self, value: Optional[ProjectTypes]) -> None:
        self._project_pending = False
        self._project = value

    def release(self) -> None:
        """Forget the scopes built so far and what analyses kept on them (`Scope.facts`,
        which may point back at the scope), so that the tree they point into is freed by
        reference counting, not left for the cyclic collector (paused while a file is
        checked, when facts of other modules are computed)."""
        for scope in self._scopes.values():
            scope.clear_caches()
        self._scopes.clear()

    def detach(self) -> None:
        """Forget the file's view and what was worked out from it, once the file is done: the
        view holds this resolver, and the two as a cycle would keep the tree for the cyclic
        collector."""
        self._file = None
        self._project = None
        self._project_pending = False
        self._qualnames.clear()
        self.memo.clear()

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
        base: Optional[str]
        if bindings is None:
            if not is_builtin(head):
                return None
            base = head
        else:
            base = import_qualname(bindings)
            if base is None:
                return None
            if self.project is not None and self.project.is_project_name(self, base):
                # Imported from the project: what the project module re-exports, if anything.
                external = self.project.external_name(self, ".".join([base, *parts[1:]]))
                if external is not None:
                    return self.catalog.canonical(external)
        return self.catalog.canonical(".".join([base, *parts[1:]]))

    def imported_names(self, scope: Scope) -> FrozenSet[str]:
        """Every name any import statement in the file binds, found by visiting statements
        only (imports cannot hide in expressions): most names are not among them, and need
        no scope lookup at all."""
        if self._imported_names is None:
            self._collect_imports(scope)
        return self._imported_names or frozenset()

    def catalog_imports(self, scope: Scope) -> FrozenSet[str]:
        """The imported names that can stand for something in the catalog: imported from one
        of its modules, or from a generated gRPC stub module."""
        if self._catalog_imports is None:
            self._collect_imports(scope)
        return self._catalog_imports or frozenset()

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
                level = "." * stmt.level if isinstance(stmt, ast.ImportFrom) else ""
                for alias in stmt.names:
                    name = alias.asname or alias.name.split(".")[0]
                    every.add(name)
                    target = f"{source}.{alias.name}" if source else alias.name
                    if target.split(".")[0] in modules or (suffixes and any(s in target for s in suffixes)):
                        relevant.add(name)
                    elif self.project is not None and self._reexports_catalog(level + target, modules):
                        relevant.add(name)
        self._imported_names, self._catalog_imports = frozenset(every), frozenset(relevant)

    def _reexports_catalog(self, target: str, modules: FrozenSet[str]) -> bool:
        """A project name that stands for a catalog module or object (`from pkg.compat import
        http`, where compat does `import requests as http`)."""
        project = self.project
        if project is None or not project.is_project_name(self, target):
            return False
        external = project.external_name(self, target)
        return external is not None and self.catalog.canonical(external).split(".")[0] in modules

    def annotation_class(self, annotation: Optional[ast.expr], scope: Scope) -> Optional[str]:
        """The class an annotation names, seeing through Optional[X], X | None and strings."""
        if annotation is None:
            return None
        inner = unwrap_optional(annotation)
        if inner is not annotation:
            return self.annotation_class(inner, scope)
        if isinstance(inner, (ast.Constant, ast.BinOp, ast.Subscript)):
            return None  # an unparsable string, `X | Y`, `List[X]`: not one class
        return self.qualified_name(inner, scope)

    # -- definitions in the project ------------------------------------------------
    def definition(self, expr: ast.expr, scope: Scope, depth: int = 0) -> Optional[Definition]:
        """The `def` or `class` of this module that `expr` names; `obj.method` on an instance
        of one of its classes names that method. None when anything else could be meant
        (names from other project modules are typed through `ProjectTypes`)."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name):
            bindings = scope.lookup(expr.id)
            if not bindings or len(bindings) != 1:
                return None
            binding = bindings[0]
            if binding.kind == OTHER and isinstance(binding.value, (*FUNCTION_DEFS, ast.ClassDef)):
                return Definition(binding.value, binding.scope, self)
            return None  # an imported name: what it stands for is the project's to say (ProjectTypes)
        if isinstance(expr, ast.Attribute):
            owner = self.project_class_of(expr.value, scope, depth + 1)
            if owner is not None:
                return owner.resolver.member(owner, expr.attr, depth + 1)
        return None

    def member(self, class_def: Definition, name: str, depth: int) -> Optional[Definition]:
        """The method `name` of a project class, looked up in it and then its project bases."""
        for klass in self.project_mro(class_def, depth):
            node = klass.node
            if not isinstance(node, ast.ClassDef):
                continue  # the chain holds classes only
            for stmt in node.body:
                if isinstance(stmt, FUNCTION_DEFS) and stmt.name == name:
                    return Definition(stmt, klass.own_scope, klass.resolver)
            if name in defined_names(node):
                return None  # a class attribute, not a method
        return None

    def project_mro(self, class_def: Definition, depth: int) -> List[Definition]:
        """The class and its project bases, depth first (enough for single inheritance, and
        for the mixins services use); library bases end the chain."""
        chain: List[Definition] = []
        stack = [class_def]
        while stack and len(chain) <= _MAX_DEPTH:
            klass = stack.pop()
            if any(k.node is klass.node for k in chain):
                continue
            chain.append(klass)
            bases = []
            for base in klass.node.bases if isinstance(klass.node, ast.ClassDef) else ():
                found = klass.resolver.definition(base, klass.scope, depth + 1)
                if found is not None and found.is_class:
                    bases.append(found)
            stack.extend(reversed(bases))
        return chain

    def project_class_of(self, expr: ast.expr, scope: Scope, depth: int) -> Optional[Definition]:
        """The project class `expr` is an instance of: `self` in its methods, a name bound to
        `Holder(...)`, or a parameter annotated with it."""
        if depth > _MAX_DEPTH or not isinstance(expr, ast.Name):
            return None
        bindings = scope.lookup(expr.id)
        if not bindings:
            return None
        # Every binding must agree: the first that does not ends the look (a name rebound
        # many times would otherwise have each binding's class looked up, at every depth).
        first = self.binding_class(bindings[0], depth + 1)
        if first is None:
            return None
        for binding in bindings[1:]:
            found = self.binding_class(binding, depth + 1)
            if found is None or found.node is not first.node:
                return None
        return first

    def binding_class(self, binding: Binding, depth: int) -> Optional[Definition]:
        if binding.kind == PARAM:
            method = binding.scope
            params = method.function_params()
            class_scope = method.enclosing_class
            if (
                class_scope is not None
                and params
                and params[0] is binding.value
                and is_plain_method(method.node)
                and class_scope.parent is not None
            ):
                return Definition(class_scope.node, class_scope.parent, self)
            if binding.annotation is not None:
                annotated = self.definition(unwrap_optional(binding.annotation), binding.scope, depth)
                return annotated if annotated is not None and annotated.is_class else None
            return None
        if binding.kind == ASSIGN and isinstance(binding.value, ast.Call):
            called = self.definition(binding.value.func, binding.scope, depth)
            return called if called is not None and called.is_class else None
        return None

    def attribute_bindings(self, class_scope: Scope) -> Dict[str, List[Binding]]:
        """`self.x = value` in every method of the class, each resolved in its method's scope."""
        cached = class_scope.facts.get("self_attributes")
        if cached is not None:
            return cached
        table: Dict[str, List[Binding]] = {}
        class_node = class_scope.node
        for stmt in class_node.body if isinstance(class_node, ast.ClassDef) else ():
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            method = self.scope_of(stmt, class_scope)
            params = method.function_params()
            if not params or not is_plain_method(stmt):
                continue
            self_name = params[0].arg
            for node in _statements(stmt):
                pairs: List[Tuple[ast.expr, Optional[ast.expr], Optional[ast.expr]]]
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


def unwrap_optional(annotation: ast.expr) -> ast.expr:
    """`Optional[Holder]` / `Holder | None` / `"Holder"` -> `Holder` (else unchanged)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return annotation
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [s for s in (annotation.left, annotation.right) if not is_none(s)]
        return sides[0] if len(sides) == 1 else annotation
    if isinstance(annotation, ast.Subscript):
        parts = dotted_parts(annotation.value)
        if parts and parts[-1] == "Optional":
            return annotation.slice
    return annotation




__all__ = ["Definition", "ProjectTypes", "Resolver", "dotted_parts", "IMPORT"]
