"""The client class of an instance, the outbound family's typing: what `expr` evaluates to
(`requests.Session()`, a factory, a project function returning a client, an attribute a
method assigns, a project subclass of a client). Name resolution (`resolve.py`) knows no
client; the family asks through `client_types(resolver)`, one per resolver (so per file and
per project module), and names from other project modules are typed through the
`ProjectClients` the family registers as the resolver's project view. Anything we cannot
prove is None, and rules stay quiet."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Literal, Optional, Protocol, Set, Tuple, TypeGuard, Union, cast

from deadline_lint.semantics.local.declared import (
    FUNCTION_DEFS,
    defined_names,
    is_none,
    is_property,
    keeps_return_value,
    returned_values,
)
from deadline_lint.semantics.local.resolve import _MAX_DEPTH, Definition, ProjectTypes, Resolver
from deadline_lint.semantics.local.scopes import ANNOTATED, ASSIGN, IMPORT, OTHER, PARAM, WITH, Binding, Scope


@dataclass(frozen=True)
class Instance:
    """An object whose class we know; `constructor` is the call that built it, when known."""

    qualname: str
    constructor: Optional[ast.Call]
    called: Optional[str] = None  # what the constructor call names: the class or a factory
    # A project class deriving from the client: the names its own bodies define, which are
    # its methods, not the library's.
    overridden: FrozenSet[str] = frozenset()
    # With no one constructor: the clients built right here among the values it may hold
    # (`session or aiohttp.ClientSession()`, or one of several assignments); the others
    # (a parameter, a name) were built who knows how.
    built: Tuple[ast.Call, ...] = ()
    # A parameter every project caller passes a client built without a timeout
    # (`passed_clients.Passed`): its calls are that client's.
    passed: Optional[object] = None


class ProjectClients(ProjectTypes, Protocol):
    """What a file's names imported from its project stand for as clients (built per file
    from the semantics layer's facts; None outside a project)."""

    def value_instance(self, resolver: Resolver, qualname: str) -> Optional[Instance]: ...

    def called_instance(self, resolver: Resolver, func: ast.expr, scope: Scope) -> Optional[Instance]: ...

    def attribute_instance(
        self, resolver: Resolver, value: ast.expr, attr: str, scope: Scope
    ) -> Optional[Instance]: ...

    def base_instance(self, resolver: Resolver, class_def: Definition) -> Optional[Instance]: ...

    def passed_instance(self, binding: Binding) -> Optional[Instance]: ...


def client_types(resolver: Resolver) -> "ClientTypes":
    """The resolver's client typing. Its answers are kept in the resolver's memo, not the
    typing object: a resolver holding an object that holds it back would be a cycle, left
    for the collector with every tree it points into."""
    return ClientTypes(resolver)


class ClientTypes:
    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self.catalog = resolver.catalog
        # What project definitions give, by node: (node kept alive, answer).
        self._definitions = cast(
            Dict[Tuple[str, int], Tuple[ast.AST, Optional[Instance]]], resolver.memo.setdefault("client_types", {})
        )

    @property
    def _project(self) -> Optional[ProjectClients]:
        return cast(Optional[ProjectClients], self.resolver.project)

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
        if isinstance(expr, ast.Attribute):
            owner = self.resolver.project_class_of(expr.value, scope, depth + 1)
            found = self.class_attribute(owner, expr.attr, depth + 1) if owner is not None else None
            project = self._project
            if found is None and project is not None:
                qualname = self.resolver.qualified_name(expr, scope)
                if qualname is not None and project.is_project_name(self.resolver, qualname):
                    return project.value_instance(self.resolver, qualname)  # `http.SESSION`
                return project.attribute_instance(self.resolver, expr.value, expr.attr, scope)
            return found
        if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.Or):
            return self._alternatives(expr.values, scope, depth)  # `session or aiohttp.ClientSession()`
        if isinstance(expr, ast.IfExp):
            return self._alternatives([expr.body, expr.orelse], scope, depth)
        return None

    def _alternatives(self, values: List[ast.expr], scope: Scope, depth: int) -> Optional[Instance]:
        """One of several values: the client class the known ones agree on, the names and
        attributes we cannot type taken to be the same (a fallback names the type its
        alternatives are expected to have); None when none is known, two known ones differ,
        or a value built right there is no client."""
        found = [self.instance(value, scope, depth + 1) for value in values]
        if any(f is None and not isinstance(v, (ast.Name, ast.Attribute)) for f, v in zip(found, values)):
            return None  # a value built here that is no client (`Holder()`, a literal)
        known = [f for f in found if f is not None]
        if not known or len({(f.qualname, f.overridden) for f in known}) != 1:
            return None
        if len(values) == 1:
            return known[0]
        return Instance(known[0].qualname, None, overridden=known[0].overridden, built=_built(known))

    def _constructed(self, call: ast.Call, scope: Scope, depth: int) -> Optional[Instance]:
        """`httpx.Client(...)`, a factory (`asyncpg.connect(...)`), a generated gRPC stub
        (`pb2_grpc.GreeterStub(channel)`), a method that hands out a client
        (`pool.acquire()`, `session.client("s3")`), or a project function, method or class
        that returns or is one."""
        func = call.func
        qualname = self.resolver.qualified_name(func, scope)
        if qualname is not None:
            client = self.catalog.constructed_class(qualname)
            if client is not None:
                return Instance(client.qualname, call, qualname)
        definition = self.resolver.definition(func, scope, depth + 1)
        if definition is not None:
            if definition.is_class:
                return client_types(definition.resolver).client_base(definition, depth + 1)
            return client_types(definition.resolver).returned_instance(definition, depth + 1)
        project = self._project
        if project is not None:
            found = project.called_instance(self.resolver, func, scope)  # a project function or class
            if found is not None:
                return found
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

    def known_class(self, qualname: Optional[str]) -> TypeGuard[str]:
        return qualname is not None and self.catalog.client_class(qualname) is not None

    def client_base(self, class_def: Definition, depth: int) -> Optional[Instance]:
        """A project class deriving from a client class (`class Api(requests.Session)`): its
        instances are that client, except for the names the project classes define."""
        key = ("client_base", id(class_def.node))
        cached = self._definitions.get(key)
        if cached is not None:
            return cached[1]
        self._definitions[key] = (class_def.node, None)  # a cycle ends here
        found: Optional[Instance] = None
        chain = self.resolver.project_mro(class_def, depth)
        for klass in chain:
            for base in _bases(klass):
                qualname = klass.resolver.qualified_name(base, klass.scope)
                client = self.catalog.client_class(qualname) if qualname is not None else None
                if client is not None and found is None:
                    overridden = frozenset().union(
                        *(defined_names(k.node) for k in chain if isinstance(k.node, ast.ClassDef))
                    )
                    found = Instance(client.qualname, None, overridden=overridden)
        project = self._project
        if found is None and project is not None:
            found = project.base_instance(self.resolver, class_def)  # a base in another project module
        self._definitions[key] = (class_def.node, found)
        return found

    def returned_instance(self, function: Definition, depth: int) -> Optional[Instance]:
        """What calling a project function gives: its return annotation's client class, or the
        client every `return` in its body agrees on (`s = requests.Session(); return s`)."""
        key = ("returns", id(function.node))
        cached = self._definitions.get(key)
        if cached is not None:
            return cached[1]
        self._definitions[key] = (function.node, None)  # recursion ends here: unknown
        found: Optional[Instance] = None
        node = function.node
        if isinstance(node, FUNCTION_DEFS) and keeps_return_value(node):
            own = function.own_scope
            declared: Optional[str] = None
            if node.returns is not None:
                qualname = self.resolver.annotation_class(node.returns, function.scope)
                if self.known_class(qualname):
                    declared = qualname
            if depth <= _MAX_DEPTH:
                values = returned_values(node)
                if values:
                    results = [self.instance(value, own, depth + 1) for value in values]
                    known = [r for r in results if r is not None]
                    if len(known) == len(results) and len({r.qualname for r in known}) == 1:
                        found = known[0] if len(known) == 1 else Instance(known[0].qualname, None)
            # The annotation names the class; the returns, when they agree with it, also say
            # how it was built (`-> aiohttp.ClientSession` returning `self._session`, which a
            # method built without a timeout).
            if declared is not None and (found is None or found.qualname != declared):
                found = Instance(declared, None)
        self._definitions[key] = (node, found)
        return found

    def _from_binding(self, binding: Binding, depth: int) -> Optional[Instance]:
        if binding.kind == IMPORT:
            project = self._project
            if project is None or binding.scope.parent is not None:
                return None
            imported = str(binding.value)
            if not project.is_project_name(self.resolver, imported):
                return None
            return project.value_instance(self.resolver, imported)
        if binding.kind in (ASSIGN, WITH):
            value = binding.value  # what was assigned, or the `with` item's context expression
            found = self.instance(value, binding.scope, depth + 1) if isinstance(value, ast.expr) else None
            if found is None and binding.annotation is not None:
                # `self.client: httpx.Client = make_client()`: the annotation names the class,
                # though not how it was built.
                qualname = self.resolver.annotation_class(binding.annotation, binding.scope)
                if self.known_class(qualname):
                    return Instance(qualname, None)
            return found
        if binding.kind in (PARAM, ANNOTATED):
            qualname = self.resolver.annotation_class(binding.annotation, binding.scope)
            if self.known_class(qualname):
                # How the callers built it, asked only of a parameter declared a client: asked
                # of every parameter a client's method name is called on (`d.get(k)`), the
                # callers' modules parsed cost a fifth of a cold run and found nothing more.
                passed = self._passed(binding) if binding.kind == PARAM else None
                return passed if passed is not None and passed.qualname == qualname else Instance(qualname, None)
            if binding.kind == PARAM:
                owner = self.resolver.binding_class(binding, depth + 1)  # `self` in a client subclass
                if owner is not None:
                    return client_types(owner.resolver).client_base(owner, depth + 1)
        return None

    def _passed(self, binding: Binding) -> Optional[Instance]:
        project = self._project
        return project.passed_instance(binding) if project is not None else None

    def _from_bindings(self, bindings: List[Binding], depth: int) -> Optional[Instance]:
        """Every binding must agree on the class; constructors are kept only when there is one."""
        answers = [self._from_binding(b, depth) for b in bindings]
        found = [f for f in answers if f is not None]
        if not found or len(found) < len(answers):
            return None
        classes = {(f.qualname, f.overridden) for f in found}
        if len(classes) != 1:
            return None
        if len(found) == 1:
            return found[0]
        return Instance(found[0].qualname, None, overridden=found[0].overridden, built=_built(found))

    def class_attribute(self, owner: Definition, attr: str, depth: int) -> Optional[Instance]:
        """`obj.attr` on an instance of a project class: what its methods assign to
        `self.attr`, what its body annotates (`session: aiohttp.ClientSession`, dataclass,
        attrs and pydantic fields), or what a property of that name returns. A declared
        annotation is the type unless an assignment proves another class; without one,
        every assignment must agree."""
        chain = self.resolver.project_mro(owner, depth)
        for klass in chain:
            found = self._own_attribute(klass, attr, depth)
            if found is not False:
                return found
        for klass in chain:  # a framework base that hands its users a client (locust)
            for base in _bases(klass):
                qualname = klass.resolver.qualified_name(base, klass.scope)
                client = self.catalog.client_class(qualname) if qualname is not None else None
                if client is not None and attr in client.attributes:
                    return Instance(self.catalog.canonical(client.attributes[attr]), None)
        return None

    def _own_attribute(self, klass: Definition, attr: str, depth: int) -> Union[Instance, None, Literal[False]]:
        """The attribute's type as one class declares it; False when it says nothing of it."""
        class_scope = klass.own_scope
        assigned = list(klass.resolver.attribute_bindings(class_scope).get(attr, []))
        body = class_scope.bindings().get(attr, [])
        properties = [b.value for b in body if b.kind == OTHER and isinstance(b.value, FUNCTION_DEFS)]
        if any(b.kind == OTHER and not isinstance(b.value, FUNCTION_DEFS) for b in body) or any(
            not is_property(p) for p in properties
        ):
            return None  # a nested class, or a plain method: not an attribute we can type
        assigned.extend(b for b in body if b.kind in (ASSIGN, ANNOTATED))
        if not assigned and not properties:
            return False
        built = [b for b in assigned if not _placeholder(b)]
        if built and len(built) < len(assigned):
            # `self._session = None` until a method builds it: whenever a method is called on
            # the attribute it holds what was built (None has no methods to call).
            assigned = built
        declared: Set[str] = set()
        for binding in assigned:
            if binding.annotation is not None:
                qualname = self.resolver.annotation_class(binding.annotation, binding.scope)
                if not self.known_class(qualname):
                    return None  # declared as something else
                declared.add(qualname)
        results = [self._from_binding(b, depth + 1) for b in assigned if b.kind != ANNOTATED]
        results.extend(self.returned_instance(Definition(p, class_scope, self.resolver), depth + 1) for p in properties)
        known = [r for r in results if r is not None]
        classes = {r.qualname for r in known} | declared
        if len(classes) != 1:
            return None
        if not declared and len(known) != len(results):
            return None  # an assignment we cannot type, and nothing declares the type
        if len(results) == 1 and known and not declared:
            return known[0]
        if len(results) == 1 and known and known[0].constructor is not None:
            return known[0]
        return Instance(classes.pop(), None, built=_built(known) if len(known) == len(results) else ())


def _built(found: List[Instance]) -> Tuple[ast.Call, ...]:
    """The constructors among several instances of one class (and those they carry)."""
    calls: List[ast.Call] = []
    for instance in found:
        if instance.constructor is not None and instance.called == instance.qualname:
            calls.append(instance.constructor)
        calls.extend(instance.built)
    return tuple(dict.fromkeys(calls))


def _bases(klass: Definition) -> List[ast.expr]:
    """The bases a class of a project MRO names."""
    return klass.node.bases if isinstance(klass.node, ast.ClassDef) else []


def _placeholder(binding: Binding) -> bool:
    """`self.x = None` with no annotation: nothing built yet."""
    return binding.kind == ASSIGN and binding.annotation is None and isinstance(binding.value, ast.expr) and is_none(
        binding.value
    )




__all__ = ["ClientTypes", "Instance", "ProjectClients", "client_types"]
