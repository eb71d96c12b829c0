"""The outbound family's project facts, declared to the semantics layer: which project symbols
are or give a client of a listed class, and which functions forward their timeout parameter
(or `**kwargs`) to an outbound call. Both are read from one module's tree with that module's
own name resolution (`Resolver` without a project: in-module typing and wrapper summaries,
as for the file being checked), memoised by content hash and stored with the other facts.

- `IsClient`: a top-level value (`SESSION = requests.Session()`), a function or method that
  returns a client (by annotation, or every `return` agreeing), a class deriving from a
  client class, and a class attribute or property typed as one (`self.session = ...`,
  `session: aiohttp.ClientSession`). A value, function or class whose client comes from an
  imported project name (`SESSION = make_session()`) holds the fact through that name
  (`via`); a class's project bases in other modules are followed by the file that asks.
- `ForwardsTimeout`: a function whose parameter (by name, or `**kwargs` spread untouched)
  reaches an outbound call's timeout, composed through the module's own functions.

A module's names imported from the project that re-export a listed module or object
(`from shop.compat import http`, where compat does `import requests as http`) resolve while
its facts are computed; they are part of the memo's key (`Fact.salt`), so a changed re-export
is never answered from a stale entry.
"""
from __future__ import annotations

import ast
import dataclasses
import hashlib
from typing import Callable, ClassVar, Dict, FrozenSet, List, Optional, Tuple

from deadline_lint.catalog import Catalog
from deadline_lint.families.outbound.analysis.catalog_imports import catalog_imports
from deadline_lint.families.outbound.analysis.client_types import Instance, client_types
from deadline_lint.families.outbound.analysis.outbound_calls import built_without_timeout, first_built_without_timeout
from deadline_lint.families.outbound.analysis.wrapper_chains import forwarding_payload
from deadline_lint.families.outbound.analysis.wrappers import WrapperSummary
from deadline_lint.semantics.facts import Fact, Local
from deadline_lint.semantics.local.declared import FUNCTION_DEFS, is_property
from deadline_lint.semantics.local.resolve import Definition, Resolver
from deadline_lint.semantics.local.scopes import ANNOTATED, ASSIGN, Binding, Scope
from deadline_lint.semantics.modules import ModuleSource, absolute_name, project_of
from deadline_lint.semantics.scan import import_table
from deadline_lint.semantics.session import current
from deadline_lint.semantics.summary import FUNCTION, VALUE, ModuleTree, Names, class_members, own_returns

ATTRIBUTE, CALL = "attr", "call"  # the symbol holds the client / calling it gives the client


class ReexportNames:
    """`ProjectTypes` for a module read for a fact: its project imports that re-export
    something from outside the project resolve; nothing else is typed across modules."""

    def __init__(self, names: Names, module: ModuleSource) -> None:
        self.names = names
        self.module = module

    def absolute(self, qualname: str) -> str:
        return absolute_name(self.module.name, self.module.is_package, qualname)

    def is_project_name(self, resolver: Resolver, qualname: str) -> bool:
        return self.names.is_project_name(self.absolute(qualname))

    def external_name(self, resolver: Resolver, qualname: str) -> Optional[str]:
        found = self.names.reexport(self.absolute(qualname))
        return found.qualname if found is not None else None

    def value_instance(self, resolver: Resolver, qualname: str) -> Optional[Instance]:
        return None

    def called_instance(self, resolver: Resolver, func: ast.expr, scope: Scope) -> Optional[Instance]:
        return None

    def attribute_instance(self, resolver: Resolver, value: ast.expr, attr: str, scope: Scope) -> Optional[Instance]:
        return None

    def base_instance(self, resolver: Resolver, class_def: Definition) -> Optional[Instance]:
        return None

    def passed_instance(self, binding: Binding) -> Optional[Instance]:
        return None  # a fact is the module's text alone: what callers pass is not


class ReexportSalts:
    """The run's memo of `reexport_salt`, by project (its modules, kept with the memo so that
    its id is not reused) and content: the salt depends on other modules' texts, so a new
    project index (files changed) computes it again."""


def reexport_salt(module: ModuleSource) -> str:
    """What a module's facts depend on besides its text: the listed modules and objects its
    project imports re-export (by bound name), as a short digest; "" for most modules."""
    project = project_of(module.path)
    if project is None:
        return ""
    salts: Dict[int, Tuple[object, Dict[str, str]]] = current().memo(ReexportSalts)
    held = salts.get(id(project[0]))
    if held is None or held[0] is not project[0]:
        held = salts[id(project[0])] = (project[0], {})
    memo = held[1]
    key = f"{module.digest}-{module.name}-{int(module.is_package)}"
    found = memo.get(key)
    if found is None:
        pairs: List[str] = []
        names = Names(project[0], module)
        for bound, target in sorted(import_table(module.text).items()):
            target = absolute_name(module.name, module.is_package, target)
            if names.is_project_name(target):
                outside = names.reexport(target)
                if outside is not None:
                    pairs.append(f"{bound}={outside.qualname}")
        digest = hashlib.blake2b("\n".join(pairs).encode(), digest_size=6).hexdigest()
        found = memo[key] = f"#{digest}" if pairs else ""
    return found


# Kept in `Resolver.memo` of a project module's resolver (a checked file's has none): the
# text, from which `wrapper_sites._module_reach` reads the clients the module can reach.
MODULE_TEXT = "outbound.module_text"


def module_resolver(tree: ModuleTree, catalog: Catalog) -> Resolver:
    """The module's own name resolution, as a fact reads it."""
    resolver = Resolver(catalog, {id(tree.tree): tree.scope})
    resolver.memo[MODULE_TEXT] = tree.module.text
    project = project_of(tree.module.path)
    resolver.project = ReexportNames(Names(project[0], tree.module), tree.module) if project is not None else None
    return resolver


def catalog_fingerprint(catalog: Catalog) -> str:
    """What the facts' values derive from besides the modules: the catalog's entries, named
    by what the catalog was built from when it says (canonicalising the built entries was
    0.03-0.05 CPU s of every run, a one-changed-file run's included)."""
    if catalog.inputs:
        return catalog.inputs[:16]
    return catalog.derived(_entries_digest)


def _entries_digest(catalog: Catalog) -> str:
    parts = (catalog.apis, catalog.classes, catalog.factories, catalog.timeout_objects, catalog.aliases, catalog.stubs)
    return hashlib.blake2b(_canonical(parts).encode(), digest_size=8).hexdigest()


def _canonical(value: object) -> str:
    """A text for `value` that is the same in every process (sets sorted: their order follows
    the per-process string hash)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return "(" + ",".join(f"{f.name}={_canonical(getattr(value, f.name))}" for f in dataclasses.fields(value)) + ")"
    if isinstance(value, dict):
        return "{" + ",".join(sorted(f"{_canonical(k)}:{_canonical(v)}" for k, v in value.items())) + "}"
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(_canonical(v) for v in value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_canonical(v) for v in value) + "]"
    return repr(value)


class _OutboundFact(Fact):
    def __init__(self, catalog: Catalog, kind: str, words: FrozenSet[str]) -> None:
        self.catalog = catalog
        self._imports = catalog_imports(catalog)
        self._words = tuple(sorted(words))
        self.name = f"outbound.{kind}[{catalog_fingerprint(catalog)}]"

    def may_hold(self, text: str) -> bool:
        # A module importing no listed module types no client and wraps no outbound call; one
        # that spells none of the fact's words neither (see `client_words`, `wrapper_words`).
        return any(word in text for word in self._words) and self._imports(text)

    def salt(self, module: ModuleSource) -> str:
        return reexport_salt(module)


def client_words(catalog: Catalog) -> FrozenSet[str]:
    """Every way to get a client spells one of these: a listed class's or factory's own name
    (built, annotated or subclassed), a method that hands one out (`session.client("s3")`),
    an attribute of a framework base that holds one."""
    names = {q.rpartition(".")[2] for q in (*catalog.classes, *catalog.factories)}
    names.update(catalog.returning_methods)
    for client in catalog.classes.values():
        names.update(client.attributes)
    names.update(p.module_suffix for p in catalog.stubs)  # a generated gRPC stub's module
    return frozenset(n for n in names if n)


def wrapper_words(catalog: Catalog) -> FrozenSet[str]:
    """A wrapper passes its parameter to a listed call's timeout keyword, or spreads its
    `**kwargs`, or passes it by position (then the call's own name is spelled)."""
    words = {f"{api.keyword}=" for api in catalog.apis.values() if api.keyword}
    words.update(api.qualname.rpartition(".")[2] for api in catalog.apis.values() if api.position is not None)
    words.add("**")
    return frozenset(words)


def encode_client(kind: str, found: Instance, built: str = "") -> str:
    parts = (kind, found.qualname, ",".join(sorted(found.overridden)))
    return "|".join((*parts, built) if built else parts)


def decode_client(payload: str) -> Tuple[str, str, frozenset]:
    kind, qualname, overridden = payload.split("|", 3)[:3]
    return kind, qualname, frozenset(filter(None, overridden.split(",")))


def decode_built(payload: str) -> Optional[Tuple[int, str, str]]:
    """(line, what was called, the constructor's text) of an attribute's client that its
    class built without a timeout, from an `IsClient` payload; None when it says nothing."""
    parts = payload.split("|", 3)
    if len(parts) < 4:
        return None
    line, called, shown = parts[3].split("|", 2)
    return int(line), called, shown


class IsClient(_OutboundFact):
    """Payload: `kind|client class|names the project classes override` (see `encode_client`)."""

    # 2: `self.x = None` placeholders do not hide the client a method builds; 3: an attribute's
    # client built without a timeout says where (a subclass in another module reports it);
    # 4: a method or property annotated as returning a client says how the client it
    # returns was built
    version = 4

    def __init__(self, catalog: Catalog) -> None:
        super().__init__(catalog, "is_client", client_words(catalog))

    def locals(self, module: ModuleTree) -> Dict[str, Local]:
        resolver = module_resolver(module, self.catalog)
        try:
            return self._locals(module, resolver)
        finally:
            resolver.release()

    def _locals(self, module: ModuleTree, resolver: Resolver) -> Dict[str, Local]:
        scope = module.scope
        summary = module.summary
        found: Dict[str, Local] = {}

        def imported(expr: ast.expr) -> Optional[str]:
            """The absolute name of an imported project name a call calls (`make()`)."""
            if not isinstance(expr, ast.Call):
                return None
            head = expr.func
            while isinstance(head, ast.Attribute):
                head = head.value
            if not isinstance(head, ast.Name) or head.id not in summary.imports:
                return None
            target = summary.qualname_of(expr.func)
            return target if target is not None and resolver.project is not None and resolver.project.is_project_name(
                resolver, target
            ) else None

        for name, node in module.defs.items():
            definition = Definition(node, scope, resolver)
            if isinstance(node, FUNCTION_DEFS):
                instance = client_types(resolver).returned_instance(definition, 0)
                if instance is not None:
                    found[name] = Local(encode_client(CALL, instance), name)
                    continue
                targets = {imported(value) for value in own_returns(node)}
                target = targets.pop() if len(targets) == 1 else None
                if target is not None:
                    found[name] = Local(None, name, (target,))
            elif isinstance(node, ast.ClassDef):
                # bases in other modules: see `OutboundProject.client`
                base = client_types(resolver).client_base(definition, 0)
                if base is not None:
                    found[name] = Local(encode_client(CALL, base), name)
                found.update(self._members(resolver, definition, node))
        for name, expr in module.values.items():
            instance = client_types(resolver).instance(expr, scope)
            if instance is not None:
                found[name] = Local(encode_client(ATTRIBUTE, instance), name)
            else:
                target = imported(expr)
                if target is not None:
                    found[name] = Local(None, name, (target,))
        return found

    def _members(self, resolver: Resolver, definition: Definition, node: ast.ClassDef) -> Dict[str, Local]:
        """`C.attr` for an attribute or property holding a client, `C.m` for a method
        returning one."""
        found: Dict[str, Local] = {}
        class_scope = definition.own_scope
        attributes = set(resolver.attribute_bindings(class_scope))
        for name, bindings in class_scope.bindings().items():
            if any(b.kind in (ASSIGN, ANNOTATED) for b in bindings):
                attributes.add(name)
        members = class_members(node)
        attributes.update(n for n, m in members.items() if isinstance(m, FUNCTION_DEFS) and is_property(m))
        for attr in sorted(attributes):
            instance = client_types(resolver).class_attribute(definition, attr, 0)
            if instance is not None:
                built = ""
                constructor = instance.constructor
                unbounded = constructor is not None and built_without_timeout(instance, resolver, self.catalog)
                if constructor is not None and instance.called and unbounded:
                    built = f"{constructor.lineno}|{instance.called}|{ast.unparse(constructor)[:120]}"
                elif constructor is None:
                    # One of several values (`self._s: ClientSession | None = None`, then built
                    # in a method, or a property returning it): the one built here without a
                    # timeout, when none built here sets one.
                    first = first_built_without_timeout(instance, self.catalog)
                    if first is not None:
                        built = f"{first.lineno}|{instance.qualname}|{ast.unparse(first)[:120]}"
                found[f"{node.name}.{attr}"] = Local(encode_client(ATTRIBUTE, instance, built), attr)
        for method, member in members.items():
            if isinstance(member, FUNCTION_DEFS) and not is_property(member):
                instance = client_types(resolver).returned_instance(Definition(member, class_scope, resolver), 0)
                if instance is not None:
                    found[f"{node.name}.{method}"] = Local(encode_client(CALL, instance), method)
        return found


# A wrapper's payload, as plain data (stored as JSON): see `WrapperSummary`.
WrapperPayload = Tuple[str, str, Optional[int], bool, bool, bool, bool, str, Optional[float], str, str, Tuple[str, ...]]


class ForwardsTimeout(_OutboundFact):
    """Payload: the wrapper summary's fields (`WrapperPayload`), the default reduced to
    whether it is `None`."""

    version = 3  # 2: `**kwargs` into a wrapper carries its parameter default; 3: `via` payloads

    def __init__(self, catalog: Catalog) -> None:
        super().__init__(catalog, "forwards_timeout", wrapper_words(catalog))
        # The listed calls' timeout keywords, which a spread `**kwargs` may carry on.
        self._keywords = frozenset(api.keyword for api in catalog.apis.values() if api.keyword)

    # `wrapper_sites.wrapper_summary`, which composes summaries with the call classification (set
    # by that module, which imports this one).
    summarize: ClassVar[Optional[Callable[[Definition, Catalog], Optional[WrapperSummary]]]] = None

    def function(self, module: ModuleTree, node: ast.AST, klass: Optional[ast.ClassDef]) -> Optional[Local]:
        summarize = ForwardsTimeout.summarize
        if summarize is None:
            return None
        resolver = self._resolver_of(module)
        scope = module.scope
        if klass is not None:
            scope = resolver.scope_of(klass, scope)
        definition = Definition(node, scope, resolver)
        found = summarize(definition, self.catalog)
        if found is None:
            via = forwarding_payload(
                definition, lambda func, where: self._project_function(resolver, func, where), self._keywords
            )
            return Local(via, via[2]) if via is not None else None
        default_none = isinstance(found.default, ast.Constant) and found.default.value is None
        payload = (
            found.name, found.keyword, found.position, default_none, found.required, found.via_kwargs,
            found.is_method, found.inner_qualname, found.inner_default, found.inner_library,
            found.timeout_template, tuple(found.imports),
        )
        return Local(payload, found.name)

    def _project_function(self, resolver: Resolver, func: ast.expr, scope: Scope) -> Optional[str]:
        """The absolute name of what `func` names in another project module."""
        project = resolver.project
        qualname = resolver.qualified_name(func, scope)
        if qualname is None or not isinstance(project, ReexportNames):
            return None
        if not project.is_project_name(resolver, qualname):
            return None
        return project.absolute(qualname)

    def locals(self, module: ModuleTree) -> Dict[str, Local]:
        self._resolver: Optional[Tuple[ModuleTree, Resolver]] = None
        try:
            return super().locals(module)
        finally:
            held = self._resolver
            if held is not None:
                held[1].release()
            self._resolver = None  # the tree goes with the module's view

    def _resolver_of(self, module: ModuleTree) -> Resolver:
        held = getattr(self, "_resolver", None)
        if held is None or held[0] is not module:
            held = self._resolver = (module, module_resolver(module, self.catalog))
        return held[1]


def facts_for(catalog: Catalog) -> Tuple[IsClient, ForwardsTimeout]:
    facts: Dict[int, Tuple[Catalog, IsClient, ForwardsTimeout]] = current().memo(IsClient, lasting=True)  # by catalog
    found = facts.get(id(catalog))
    if found is None or found[0] is not catalog:
        is_client, forwards = IsClient(catalog), ForwardsTimeout(catalog)
        is_client.companions, forwards.companions = (forwards,), (is_client,)
        found = facts[id(catalog)] = (catalog, is_client, forwards)
    return found[1], found[2]


__all__ = ["ATTRIBUTE", "CALL", "FUNCTION", "VALUE", "IsClient", "ForwardsTimeout", "facts_for"]
