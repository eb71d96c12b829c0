"""Which methods a call runs, for `--thread-budget` (thread_budget.py): `self.m(...)` inside a
method of a class of this module, and `INSTANCE.m(...)` where `INSTANCE = Klass()` is bound
once at module level.

A keyword added to such a call must be accepted by every method the call can run, so a call
is given one only together with its *family*: the method it names and every override of it
in the module's subclasses of that class, each of which gets the parameter (with a default).

- `INSTANCE.m(...)`: the instance's class is the one its constructor names, so the call runs
  exactly `Klass.m` (or the one inherited through a single chain of this module's classes):
  the family is that one method.
- `self.m(...)`: `self` may be an instance of any subclass, so the family is the method and
  every override in this module. A subclass in *another* module that overrides `m` without
  the parameter cannot be seen from here: the keyword would be a `TypeError` there. That is
  why forwarding on `self` is an unsafe fix (`--unsafe-fixes`), and the docs say so.

An abstract base or a `Protocol` (a base so named, or any metaclass) is not a target: it is
there to be implemented where the project may not look, so its methods keep their signature
(thread_index.threadable) and so does every method of their names (thread_callers.py).

Prove or bail: a class that is decorated, has a metaclass or other class keywords, defines
`__getattr__`/`__getattribute__` (or `__new__`, for an instance), is bound more than once or
under a second name (`Alias = Klass`, so a subclass may name it differently), and a method
name that is ever assigned as an attribute (`obj.m = ...`, an instance attribute would shadow
the method) or rebound through `global`/`setattr` anywhere in the module make the call unknown.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.scopes import ASSIGN, OTHER, PARAM, Scope

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_HIDDEN_LOOKUP = frozenset({"__getattr__", "__getattribute__"})
_INTERFACES = frozenset({"ABC", "Protocol"})


@dataclass(frozen=True)
class Family:
    members: Tuple[Function, ...]  # the method the call names first, then its overrides
    on_self: bool  # `self.m()`: a subclass elsewhere may override it unseen (an unsafe fix)


class MethodTargets:
    """The module's plain classes, their in-module subclasses and methods, built once."""

    def __init__(self, tree: ast.Module, module_scope: Scope) -> None:
        self.module_scope = module_scope
        self.classes: Dict[str, ast.ClassDef] = {}
        bindings = module_scope.bindings()
        for statement in tree.body:
            if (
                isinstance(statement, ast.ClassDef) and len(bindings.get(statement.name, [])) == 1
                and _plain_class(statement)
            ):
                self.classes[statement.name] = statement
        self.shadowed: Set[str] = set()  # attribute names assigned anywhere ("*": setattr)
        self.rebound: Set[str] = set()  # names some function rebinds with `global`
        aliased: Set[str] = set()
        for node in walk_nodes(tree):
            if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                self.shadowed.add(node.attr)
            elif isinstance(node, ast.Global):
                self.rebound.update(node.names)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                "setattr", "delattr",
            ):
                self.shadowed.add("*")  # any attribute: give up on every method of the module
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
                value = node.value
                if isinstance(value, ast.Name) and value.id in self.classes:
                    aliased.add(value.id)
        for name in aliased:
            del self.classes[name]
        self.bases: Dict[str, List[str]] = {
            name: [b.id for b in node.bases if isinstance(b, ast.Name) and b.id in self.classes]
            for name, node in self.classes.items()
        }

    # -- what a call runs ------------------------------------------------------------
    def family(self, call: ast.Call, scope: Scope) -> Optional[Family]:
        """Every method `call` can run, when it is one of the two shapes above; else None."""
        func = call.func
        if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
            return None
        if "*" in self.shadowed or func.attr in self.shadowed:
            return None
        on_self = True
        klass = self._self_class(func.value.id, scope)
        if klass is None:
            on_self = False
            klass = self._instance_class(func.value.id, scope)
        owner = self._defining_class(klass, func.attr) if klass is not None else None
        if owner is None:
            return None
        members = [self._method(owner, func.attr)]
        if on_self:
            members += self._overrides(owner, func.attr)
        known = [m for m in members if m is not None]
        return Family(tuple(known), on_self) if len(known) == len(members) else None

    def _self_class(self, name: str, scope: Scope) -> Optional[str]:
        """The class whose plain method `scope` is, when `name` is its first parameter."""
        class_scope = scope.enclosing_class
        function = scope.node
        if class_scope is None or not isinstance(function, _DEFS) or function.decorator_list:
            return None
        klass = class_scope.node
        if not isinstance(klass, ast.ClassDef) or self.classes.get(klass.name) is not klass:
            return None
        positional = [*function.args.posonlyargs, *function.args.args]
        if not positional or positional[0].arg != name:
            return None
        own = scope.bindings().get(name, [])
        if len(own) != 1 or own[0].kind != PARAM:
            return None  # `self` rebound in the method
        return klass.name

    def _instance_class(self, name: str, scope: Scope) -> Optional[str]:
        """The class of a module-level `NAME = Klass()` bound once."""
        found = scope.lookup(name)
        if name in self.rebound or not found or len(found) != 1:
            return None
        if found[0].kind != ASSIGN or found[0].scope is not self.module_scope:
            return None
        value = found[0].value
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
            return None
        klass = self.classes.get(value.func.id)
        if klass is None or _defines(klass, "__new__"):
            return None
        binding = self.module_scope.bindings().get(value.func.id, [])
        if len(binding) != 1 or binding[0].kind != OTHER or binding[0].value is not klass:
            return None
        return klass.name

    def _defining_class(self, name: str, method: str) -> Optional[str]:
        """Where `method` is found from `name`: itself, else a single chain of this
        module's bases (any other base might define it first)."""
        seen: Set[str] = set()
        current: Optional[str] = name
        while current is not None and current not in seen:
            seen.add(current)
            node = self.classes[current]
            if _defines(node, method):
                return current if self._method(current, method) is not None else None
            bases = node.bases
            if len(bases) != 1 or not isinstance(bases[0], ast.Name) or bases[0].id not in self.classes:
                return None
            current = bases[0].id
        return None

    def _method(self, klass: str, name: str) -> Optional[Function]:
        defs = [n for n in self.classes[klass].body if isinstance(n, _DEFS) and n.name == name]
        binds = [n for n in self.classes[klass].body if _binds(n, name)]
        return defs[0] if len(defs) == 1 and len(binds) == 1 else None

    def _overrides(self, klass: str, name: str) -> List[Optional[Function]]:
        """`name` in every class of this module that inherits from `klass`, at any depth."""
        found: List[Optional[Function]] = []
        for other in self.classes:
            if other != klass and self._inherits(other, klass) and _defines(self.classes[other], name):
                found.append(self._method(other, name))  # None (unknown) spoils the family
        return found

    def _inherits(self, name: str, ancestor: str, depth: int = 0) -> bool:
        if depth > 50:
            return False
        return any(b == ancestor or self._inherits(b, ancestor, depth + 1) for b in self.bases.get(name, ()))


def interface_class(node: ast.ClassDef) -> bool:
    """An abstract base or a `Protocol` (by the name of a base, however imported): it declares
    methods for implementations the project may not hold (a structural one names no base)."""
    for base in node.bases:
        if isinstance(base, ast.Subscript):
            base = base.value  # `Protocol[T]`
        name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
        if name in _INTERFACES:
            return True
    return any(k.arg == "metaclass" for k in node.keywords)


def _plain_class(node: ast.ClassDef) -> bool:
    if node.decorator_list or node.keywords or interface_class(node):
        return False
    return not any(_defines(node, name) for name in _HIDDEN_LOOKUP)


def _defines(node: ast.ClassDef, name: str) -> bool:
    return any(_binds(statement, name) for statement in node.body)


def _binds(statement: ast.stmt, name: str) -> bool:
    """`statement` in a class body binds `name` (a def, an assignment, anything else)."""
    if isinstance(statement, (*_DEFS, ast.ClassDef)):
        return statement.name == name
    targets: List[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        targets = [statement.target]
    elif isinstance(statement, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
        return any(_binds(inner, name) for inner in walk_nodes(statement) if isinstance(inner, ast.stmt)
                   and inner is not statement)
    return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in walk_nodes(t))
