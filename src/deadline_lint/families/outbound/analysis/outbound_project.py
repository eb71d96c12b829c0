"""What the names a file imports from its project bring the outbound family, answered from the
semantics layer's facts (`outbound_facts`): the `ProjectTypes` of the file's `Resolver`
(clients through project modules, classes and their attributes, bases in other modules) and
the wrappers in other modules a call reaches. Built per file on first need; a file outside
any project gets none.

An instance typed in another module keeps its class, never its constructor: its arguments
are that module's to judge, and a fix never edits another file."""
from __future__ import annotations

import ast
import os
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Dict, FrozenSet, Optional, Sequence, Set, Tuple, cast

from deadline_lint.catalog import OutboundApi
from deadline_lint.families.outbound.analysis.client_types import Instance
from deadline_lint.families.outbound.analysis.passed_clients import Passed, passed_client
from deadline_lint.families.outbound.analysis.outbound_facts import (
    ATTRIBUTE,
    CALL,
    ReexportNames,
    decode_built,
    decode_client,
    facts_for,
)
from deadline_lint.families.outbound.analysis.project_prefilter import leads_to_a_client
from deadline_lint.families.outbound.analysis.wrapper_chains import NOT_NONE, VIA, composed
from deadline_lint.families.outbound.analysis.wrappers import WrapperSummary
from deadline_lint.semantics.callers import is_test_path
from deadline_lint.semantics.facts import MAX_HOPS, locals_of, text_may_hold
from deadline_lint.semantics.file import FileSemantics
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.declared import defined_names
from deadline_lint.semantics.local.resolve import Definition, Resolver
from deadline_lint.semantics.local.scopes import IMPORT, Binding, Scope
from deadline_lint.semantics.modules import ModuleSource, project_of
from deadline_lint.semantics.summary import CLASS, FUNCTION, VALUE, Symbol, summary_of

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

Client = Tuple[str, str, FrozenSet[str]]  # kind (ATTRIBUTE or CALL), client class, overridden names


class OutboundProject(ReexportNames):
    def __init__(self, ctx: "FileView") -> None:
        # The file's resolver holds this view: a strong reference back to the context would
        # make a cycle that keeps the file's tree until the cyclic collector runs.
        self.ctx = weakref.proxy(ctx)
        self.semantics = ctx.analysis(FileSemantics)
        super().__init__(self.semantics.names, self.semantics.own)
        self.is_client, self.forwards = facts_for(ctx.catalog)
        self._clients: Dict[Tuple[str, Tuple[str, ...]], Optional[Client]] = {}
        self._brings: Optional[bool] = None
        self._wrapper_names: Optional[FrozenSet[str]] = None
        self.apis: Dict[Tuple[str, Tuple[str, ...]], OutboundApi] = {}  # a wrapper's, by symbol
        self._stored: Dict[int, Tuple[ast.AST, FrozenSet[str]]] = {}  # by class node
        self._passed: Dict[int, Optional[Instance]] = {}  # by parameter node (the tree is held by ctx)

    # -- ProjectTypes ----------------------------------------------------------------
    def passed_instance(self, binding: Binding) -> Optional[Instance]:
        """A parameter of this module's own defs that every project caller passes a client
        built without a timeout (`passed_clients`), once per parameter."""
        parameter = binding.value
        if binding.scope.module.node is not self.module.tree or not isinstance(parameter, ast.arg):
            return None
        key = id(parameter)
        if key not in self._passed:
            found = passed_client(binding, self.names, self.module, self.ctx.catalog)
            self._passed[key] = (
                Instance(found.qualname, None, found.called, passed=found) if found is not None else None
            )
        return self._passed[key]

    def value_instance(self, resolver: Resolver, qualname: str) -> Optional[Instance]:
        target = self.names.resolve(self.absolute(qualname))
        if not isinstance(target, Symbol) or target.module is self.module:
            return None
        return _instance(self.client(target), ATTRIBUTE)

    def called_instance(self, resolver: Resolver, func: ast.expr, scope: Scope) -> Optional[Instance]:
        found = self.callee(func, scope)
        if found is None or found[0].module is self.module:
            return None  # this module's own definitions are typed where they are
        return _instance(self.client(found[0]), CALL)

    def attribute_instance(self, resolver: Resolver, value: ast.expr, attr: str, scope: Scope) -> Optional[Instance]:
        semantics = self.semantics
        klass = semantics.receivers.class_of(value, scope, semantics.summary)
        if klass is None:
            return None
        chain = self.names.mro(klass)
        if all(owner.module is self.module for owner in chain):
            return None  # this module's own classes are typed where they are
        for owner in chain:
            if owner.module is self.module:
                node = semantics.summary.node(owner.path)
                if node is None or attr in self._stored_names(node):
                    return None  # the class itself says what it is: typed here, or unknown
                continue
            found = self.client(Symbol(owner.module, (*owner.path, attr), VALUE))
            if found is not None:
                instance = _instance(found, ATTRIBUTE)
                built = self._built(owner, attr) if instance is not None else None
                return replace(instance, passed=built) if instance is not None and built is not None else instance
            summary = summary_of(owner.module)
            table = summary.classes.get(owner.path[0]) if summary is not None else None
            if table is None or attr in table.members:
                return None
        return None

    def _built(self, owner: Symbol, attr: str) -> Optional[Passed]:
        """The client a base class in another module builds without a timeout and keeps on
        the attribute, with where it is built (its calls are reported through a subclass)."""
        local = locals_of(self.is_client, owner.module).get(".".join((*owner.path, attr)))
        built = decode_built(cast(str, local.payload)) if local is not None and local.payload else None
        project = self.names.modules
        if built is None or project is None or is_test_path(owner.module.path or ""):
            return None
        line, called, shown = built
        where = os.path.relpath(owner.module.path, project.root).replace(os.sep, "/") if owner.module.path else "?"
        qualname = decode_client(cast(str, local.payload))[1]  # type: ignore[union-attr]
        return Passed(qualname, called, (f"{where}:{line}",), shown, f"`{owner.path[-1]}` builds")

    def base_instance(self, resolver: Resolver, class_def: Definition) -> Optional[Instance]:
        node = class_def.node
        summary = self.semantics.summary
        if not isinstance(node, ast.ClassDef) or class_def.resolver is not resolver:
            return None  # another module's
        if summary.defs.get(node.name) is not node:
            return None  # a nested class
        chain = self.names.mro(Symbol(self.module, (node.name,), CLASS))
        for owner in chain[1:]:
            if owner.module is self.module:
                continue
            found = self.client(owner)
            if found is not None and found[0] == CALL:
                own = frozenset(defined_names(node))
                return Instance(found[1], None, overridden=found[2] | own | _members(chain))
        return None

    def _stored_names(self, node: ast.AST) -> FrozenSet[str]:
        """The names a class of this module binds in its body or stores as attributes in its
        methods (one walk per class)."""
        known = self._stored.get(id(node))
        if known is None:
            known = self._stored[id(node)] = (node, _stored_names(node))
        return known[1]

    # -- what a project symbol is ---------------------------------------------------------
    def client(self, symbol: Symbol, hops: int = 0) -> Optional[Client]:
        """The client a project symbol is (ATTRIBUTE) or gives when called (CALL), through
        the project at most MAX_HOPS deep; None when it is none or we cannot tell."""
        key = (f"{symbol.module.digest}:{symbol.module.name}", symbol.path)
        if key in self._clients:
            return self._clients[key]
        self._clients[key] = None  # a cycle ends here: unknown
        found: Optional[Client] = None
        if symbol.is_class:
            # A class deriving from a client class, here or through its project bases in
            # other modules (each base's own module says whether it derives from one).
            chain = self.names.mro(symbol)
            for owner in chain:
                own = self._local(owner, 0)
                if own is not None and own[0] == CALL:
                    found = (CALL, own[1], own[2] | _members(chain))
                    break
        else:
            found = self._local(symbol, hops)
        self._clients[key] = found
        return found

    def _local(self, symbol: Symbol, hops: int) -> Optional[Client]:
        """What the symbol's own module says of it, following `via` names for a value or a
        function (`SESSION = make_session()`, `return make_session()`)."""
        if hops > MAX_HOPS or not text_may_hold(self.is_client, symbol.module, self.names):
            return None
        local = locals_of(self.is_client, symbol.module).get(".".join(symbol.path))
        if local is None:
            return None
        if local.payload is not None:
            return decode_client(cast(str, local.payload))  # `IsClient` payloads: `encode_client`
        if symbol.is_class:
            return None  # its bases are followed by the caller, through the MRO
        for name in local.via:
            target = self.names.resolve(name)
            if isinstance(target, Symbol) and target.kind in (FUNCTION, CLASS):
                deeper = self.client(target, hops + 1)
                if deeper is not None and deeper[0] == CALL:
                    return (ATTRIBUTE if symbol.kind == VALUE else CALL, deeper[1], deeper[2])
        return None

    def callee(self, func: ast.expr, scope: Scope) -> Optional[Tuple[Symbol, bool]]:
        """The project function, method or class a call names, and whether it is called on
        an instance (a method through a receiver of a known project class)."""
        head = func
        while isinstance(head, ast.Attribute):
            head = head.value
        if isinstance(head, ast.Name):
            bindings = scope.lookup(head.id)
            if bindings and len(bindings) == 1 and bindings[0].kind == IMPORT and bindings[0].scope.parent is None:
                qualname = self.semantics.summary.qualname_of(func)
                target = self.names.resolve(qualname) if qualname is not None else None
                return (target, False) if isinstance(target, Symbol) and not target.kind == VALUE else None
        if not isinstance(func, ast.Attribute):
            return None
        semantics = self.semantics
        klass = semantics.receivers.class_of(func.value, scope, semantics.summary)
        member = self.names.member(klass, func.attr) if klass is not None else None
        return (member, True) if member is not None else None

    # -- wrappers in other modules -----------------------------------------------------
    def wrapper_at(self, func: ast.expr, scope: Scope) -> Optional[Tuple[WrapperSummary, Tuple[str, Tuple[str, ...]]]]:
        """The summary of the wrapper in another project module that a call reaches, and
        its key (for the caller's cache of its OutboundApi)."""
        found = self.callee(func, scope)
        if found is None:
            return None
        symbol, on_instance = found
        if symbol.module is self.module or not symbol.is_function:
            return None
        summary = self._wrapper_summary(symbol, 0)
        if summary is None:
            return None
        if summary.is_method and not on_instance:
            return None  # not called on an instance (`Class.method(obj, ...)`): stay quiet
        return summary, (f"{symbol.module.digest}:{symbol.module.name}", symbol.path)

    def _wrapper_summary(self, symbol: Symbol, depth: int) -> Optional[WrapperSummary]:
        """A project function's summary from its module's fact, a `via` payload composed with
        its callee's (`wrapper_chains.py`)."""
        if depth > MAX_HOPS or not symbol.is_function or not text_may_hold(self.forwards, symbol.module, self.names):
            return None
        local = locals_of(self.forwards, symbol.module).get(".".join(symbol.path))
        if local is None or local.payload is None:
            return None
        payload = cast(tuple, local.payload)  # `ForwardsTimeout` payloads are tuples
        if payload[0] == VIA:
            return composed(payload, self._summary_named, depth)
        return _summary(payload)

    def _summary_named(self, qualname: str, depth: int) -> Optional[WrapperSummary]:
        target = self.names.resolve(qualname)
        return self._wrapper_summary(target, depth) if isinstance(target, Symbol) else None

    def wrapper_names(self) -> FrozenSet[str]:
        """The last names of the wrappers in the modules this file's project imports (and
        their classes' bases) define: a call spelling none of them reaches none."""
        if self._wrapper_names is None:
            found: Set[str] = set()
            seen: Set[str] = set()
            own = self.semantics.summary.summary

            def add(module: Optional[ModuleSource]) -> None:
                if module is None or module.path in seen or module is self.module:
                    return
                seen.add(module.path)
                if text_may_hold(self.forwards, module, self.names):
                    found.update(path.rpartition(".")[2] for path in locals_of(self.forwards, module))

            classes = [Symbol(self.module, (name,), CLASS) for name, table in own.classes.items() if table.bases]
            for target in own.imports.values():
                if not self.names.is_project_name(target):
                    continue
                add(self.names.defining_module(target))
                resolved = self.names.resolve(target)
                if isinstance(resolved, Symbol) and resolved.is_class:
                    classes.append(resolved)
            for klass in classes:
                for owner in self.names.mro(klass):
                    add(owner.module)
            self._wrapper_names = frozenset(found)
        return self._wrapper_names

    def brings_clients(self) -> bool:
        """The prefilter's answer for this file (see `leads_to_a_client`)."""
        if self._brings is None:
            self._brings = leads_to_a_client(self.ctx.source.path, self.ctx.source.text, self.ctx.catalog)
        return self._brings


def project_types(file: object) -> Optional[OutboundProject]:
    ctx = cast("FileView", file)  # what every `Resolver` is built with
    return OutboundProject(ctx) if project_of(ctx.source.path) is not None else None


Resolver.project_factory = project_types


def _instance(found: Optional[Client], kind: str) -> Optional[Instance]:
    if found is None or found[0] != kind:
        return None
    return Instance(found[1], None, overridden=found[2])


def _members(chain: Sequence[Symbol]) -> FrozenSet[str]:
    """The names the project classes of an MRO bind in their bodies."""
    names: Set[str] = set()
    for owner in chain:
        summary = summary_of(owner.module)
        table = summary.classes.get(owner.path[0]) if summary is not None and len(owner.path) == 1 else None
        if table is not None:
            names.update(table.members)
    return frozenset(names)


def _stored_names(node: ast.AST) -> FrozenSet[str]:
    """Names a class binds in its body (defs included) or assigns to an attribute anywhere."""
    found: Set[str] = set()
    for sub in walk_nodes(node):
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and sub is not node:
            found.add(sub.name)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store):
            found.add(sub.attr)
    return frozenset(found)


def _summary(payload: tuple) -> WrapperSummary:
    (name, keyword, position, default_none, required, via_kwargs, is_method, inner, inner_default, library,
     template, imports) = payload
    return WrapperSummary(
        name=name, keyword=keyword, position=position,
        default=None if required or via_kwargs else (ast.Constant(None) if default_none else NOT_NONE),
        required=required, via_kwargs=via_kwargs, is_method=is_method, inner_qualname=inner,
        inner_default=inner_default, inner_library=library, timeout_template=template, imports=tuple(imports),
    )
