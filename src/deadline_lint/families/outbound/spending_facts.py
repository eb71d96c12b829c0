"""DL107's project fact: a function or method of another module that makes outbound calls,
itself or through functions it calls (of its module, imported from the project, or methods
of its module's classes on `self` or on a module-level instance). A caller that runs it to
completion has spent time, so a remainder read before the call is stale after it.

Read from the module's own tree with its own name resolution, as the outbound family's other
facts are (`outbound_facts.module_resolver`). A method with a decorator (a property, a static
or class method) holds nothing, as in `project_spending`. A module-level instance of one of
the module's classes (`REPO = Repo()`) gets its methods' entries under its own name
(`REPO.fetch`), so that a caller importing the instance is answered without typing it."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, List, Optional

from deadline_lint.catalog import Catalog
from deadline_lint.families.outbound.analysis.outbound_calls import classify_call, file_methods
from deadline_lint.families.outbound.analysis.outbound_facts import (
    ReexportNames,
    catalog_fingerprint,
    module_resolver,
    reexport_salt,
)
from deadline_lint.semantics.facts import Answer, Fact, Local
from deadline_lint.semantics.file import FileSemantics
from deadline_lint.semantics.local.function_body import function_body
from deadline_lint.semantics.local.resolve import Resolver
from deadline_lint.semantics.local.scopes import Scope
from deadline_lint.semantics.modules import ModuleSource
from deadline_lint.semantics.session import current
from deadline_lint.semantics.summary import FUNCTION, FUNCTIONS, VALUE, ModuleTree, Symbol, class_members

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

HOPS = "hops"  # the payload where the fact holds directly


class MakesHops(Fact[str]):
    """Payload `hops`; a function holds it through the project names it calls (`via`)."""

    version = 1

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.name = f"outbound.makes_hops[{catalog_fingerprint(catalog)}]"

    def salt(self, module: ModuleSource) -> str:
        return reexport_salt(module)

    def locals(self, module: ModuleTree) -> Dict[str, Local]:
        resolver = module_resolver(module, self.catalog)
        try:
            return self._locals(module, resolver)
        finally:
            resolver.release()

    def _locals(self, module: ModuleTree, resolver: Resolver) -> Dict[str, Local]:
        methods = file_methods(self.catalog, module.module.text)
        stubs = any(p.module_suffix in module.module.text for p in self.catalog.stubs)
        found: Dict[str, Local] = {}
        classes: Dict[str, ast.ClassDef] = {}
        for name, node in module.defs.items():
            if isinstance(node, FUNCTIONS):
                scope = resolver.scope_of(node, module.scope)
                found.update(self._function(module, resolver, name, scope, None, methods, stubs))
            elif isinstance(node, ast.ClassDef):
                classes[name] = node
                class_scope = resolver.scope_of(node, module.scope)
                for member, member_node in class_members(node).items():
                    if isinstance(member_node, FUNCTIONS) and not member_node.decorator_list:
                        scope = resolver.scope_of(member_node, class_scope)
                        found.update(self._function(module, resolver, f"{name}.{member}", scope, name, methods, stubs))
        for name, expr in module.values.items():
            klass = _instance_of(expr, classes)
            if klass is None:
                continue
            for path, local in list(found.items()):
                owner, _, member = path.partition(".")
                if owner == klass and member:
                    found[f"{name}.{member}"] = Local(local.payload, f"{name}.{member}", local.via)
        return found

    def _function(
        self, module: ModuleTree, resolver: Resolver, path: str, scope: Scope, klass: Optional[str],
        methods: frozenset, stubs: bool,
    ) -> Dict[str, Local]:
        calls = function_body(scope).nodes(ast.Call)
        for call in calls:
            if classify_call(call, scope, resolver, self.catalog, stubs, methods) is not None:
                return {path: Local(HOPS, path)}
        via: List[str] = []
        for call in calls:
            target = self._callee(module, resolver, call.func, scope, klass)
            if target is not None and target not in via:
                via.append(target)
        return {path: Local(None, path, tuple(via))} if via else {}

    def _callee(
        self, module: ModuleTree, resolver: Resolver, func: ast.expr, scope: Scope, klass: Optional[str]
    ) -> Optional[str]:
        """The absolute name of the project function or method a call names, if it is one the
        fact can follow: a name, `self.m` in a method, `INSTANCE.m` of a class of this module."""
        own = module.module.name
        if not own:
            return None
        if isinstance(func, ast.Name) and isinstance(module.defs.get(func.id), FUNCTIONS):
            return f"{own}.{func.id}" if _bound_once(scope, func.id) else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            head = func.value.id
            if head == "self" and klass is not None:
                return f"{own}.{klass}.{func.attr}"
            value = module.values.get(head)
            instance_class = _instance_of(value, {n: c for n, c in module.defs.items() if isinstance(c, ast.ClassDef)})
            if instance_class is not None and _bound_once(scope, head):
                return f"{own}.{instance_class}.{func.attr}"
        if not isinstance(func, (ast.Name, ast.Attribute)):
            return None
        qualname = resolver.qualified_name(func, scope)
        project = resolver.project
        if qualname is None or not isinstance(project, ReexportNames):
            return None
        if not project.is_project_name(resolver, qualname):
            return None
        return project.absolute(qualname)


def _instance_of(expr: Optional[ast.expr], classes: Dict[str, ast.ClassDef]) -> Optional[str]:
    """`Repo()`: the name of the module's class a top-level value is an instance of."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in classes:
        return expr.func.id
    return None


def _bound_once(scope: Scope, name: str) -> bool:
    bindings = scope.lookup(name)
    return bindings is not None and len(bindings) == 1 and bindings[0].scope.parent is None


class ProjectSpending:
    """Per file (`ctx.analysis(ProjectSpending)`): whether a call runs a function of another
    project module that makes outbound calls."""

    def __init__(self, ctx: "FileView") -> None:
        self.ctx = ctx
        memo: Dict[int, MakesHops] = current().memo(MakesHops, lasting=True)  # by catalog
        found = memo.get(id(ctx.catalog))
        if found is None or found.catalog is not ctx.catalog:
            found = memo[id(ctx.catalog)] = MakesHops(ctx.catalog)
        self.fact = found

    def makes_hops(self, call: ast.Call, scope: Scope) -> Optional[Answer[str]]:
        semantics = self.ctx.analysis(FileSemantics)
        func = call.func
        answer = semantics.fact_at(self.fact, func, scope)
        if answer is not None or not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
            return answer
        # `REPO.fetch()` with `REPO` imported from the module that builds it (`REPO = Repo()`).
        if not _bound_once(scope, func.value.id):
            return None
        qualname = semantics.summary.qualname_of(func.value)
        value = semantics.names.symbol(qualname) if qualname is not None else None
        if value is None or value.kind != VALUE or value.module is semantics.own:
            return None
        return semantics.facts.about(self.fact, Symbol(value.module, (*value.path, func.attr), FUNCTION))
