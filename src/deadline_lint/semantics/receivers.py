"""The project class of a receiver: `self` in a method, `self.app` (an attribute every method
that assigns it agrees on, or that the class annotates), a local built by `App()` or a
parameter annotated `app: App`. Anything else is unknown (None): a rule stays quiet."""
from __future__ import annotations

import ast
from typing import Dict, List, NamedTuple, Optional, Tuple

from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.resolve import unwrap_optional
from deadline_lint.semantics.local.scopes import ASSIGN, PARAM, Scope
from deadline_lint.semantics.session import current
from deadline_lint.semantics.summary import CLASS, FUNCTIONS, ModuleTree, Names, Symbol, content_key, tree_of

_MAX_DEPTH = 4


class Receivers:
    def __init__(self, names: Names) -> None:
        self.names = names
        self._attributes: Dict[Tuple[str, str], Optional[Symbol]] = {}

    # -- in the checked file (scopes from the walk) ------------------------------------
    def class_of(self, expr: ast.expr, scope: Scope, summary: ModuleTree, depth: int = 0) -> Optional[Symbol]:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name):
            own = self_class(expr.id, scope, summary)
            if own is not None:
                return own
            bindings = scope.lookup(expr.id)
            if not bindings or len(bindings) != 1:
                return None
            binding = bindings[0]
            if binding.kind == PARAM and binding.annotation is not None:
                return self.annotated(binding.annotation, summary)
            if binding.kind == ASSIGN and isinstance(binding.value, ast.expr):
                if binding.annotation is not None:
                    return self.annotated(binding.annotation, summary)
                return self.built(binding.value, summary)
            return None
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            owner = self_class(expr.value.id, scope, summary)
            if owner is not None:
                return self.attribute(owner, expr.attr)
        if isinstance(expr, ast.Call):
            return self.built(expr, summary)
        return None

    def annotated(self, annotation: ast.expr, summary: ModuleTree) -> Optional[Symbol]:
        qualname = summary.qualname_of(unwrap_optional(annotation))
        found = self.names.symbol(qualname) if qualname is not None else None
        return found if found is not None and found.is_class else None

    def built(self, value: ast.expr, summary: ModuleTree) -> Optional[Symbol]:
        """`App(...)`: an instance of a project class."""
        if not isinstance(value, ast.Call):
            return None
        qualname = summary.qualname_of(value.func)
        found = self.names.symbol(qualname) if qualname is not None else None
        return found if found is not None and found.is_class else None

    # -- attributes of project classes, in whichever module --------------------------------
    def attribute(self, klass: Symbol, attr: str) -> Optional[Symbol]:
        """The project class `self.<attr>` holds: every assignment in the class and its project
        bases agrees (or the class annotates it); otherwise unknown."""
        key = (f"{klass.module.digest}:{klass.qualname}", attr)
        if key in self._attributes:
            return self._attributes[key]
        self._attributes[key] = None  # a cycle ends here
        found: Optional[Symbol] = None
        for owner in self.names.mro(klass):
            table = attribute_table(owner)
            if table is None:
                break
            answer = self._own_attribute(table, attr)
            if answer is not False:
                found = answer
                break
        self._attributes[key] = found
        return found

    def _own_attribute(self, table: "AttributeTable", attr: str):
        """The class `attr` holds as the class itself declares it; False when it says nothing."""
        declared = table.declared.get(attr)
        if declared is not None:
            return self._class_named(declared[1]) if declared[0] == _ANNOTATED else None
        events = table.assigned.get(attr)
        if not events:
            return False
        classes: List[Optional[Symbol]] = []
        for kind, qualname in events:
            if kind == _ANNOTATED:
                return self._class_named(qualname)
            classes.append(self._class_named(qualname))
        first = classes[0]
        if first is None or any(c is None or c.module is not first.module or c.path != first.path for c in classes):
            return None  # assignments disagree, or one we cannot type: unknown
        return first

    def _class_named(self, qualname: Optional[str]) -> Optional[Symbol]:
        found = self.names.symbol(qualname) if qualname is not None else None
        return found if found is not None and found.is_class else None


# What a class says about its attributes, as absolute names (so it depends on its module's
# text alone and is read from one walk of the class, whichever file or attribute asks):
# `declared` by its body (an annotation, or a def: a property's return annotation, else None
# for a plain method); `assigned` in its methods, in walk order: (_ANNOTATED, name) for an
# annotated `self.x: T = ...`, (_BUILT, name) for `self.x = value` (the class `value` builds,
# or a parameter's annotation; None when neither).
_ANNOTATED, _BUILT, _METHOD = "annotated", "built", "method"
Event = Tuple[str, Optional[str]]


class AttributeTable(NamedTuple):
    declared: Dict[str, Event]
    assigned: Dict[str, List[Event]]


def attribute_table(owner: Symbol) -> Optional[AttributeTable]:
    """The table of a project class (None: its module does not parse, or the name is no class)."""
    key = (content_key(owner.module), owner.path)
    tables: Dict[Tuple[str, Tuple[str, ...]], Optional[AttributeTable]] = current().memo(AttributeTable)
    if key in tables:
        return tables[key]
    tree = tree_of(owner.module)
    node = tree.node(owner.path) if tree is not None else None
    found = tables[key] = _table(node, tree) if isinstance(node, ast.ClassDef) and tree is not None else None
    return found


def kept_class_name(owner: Symbol, attr: str) -> Optional[str]:
    """The absolute name of the class `self.<attr>` holds as `owner`'s own text says it (its
    body's annotation, else every assignment in its methods agreeing), with no other module
    read: what a module's facts may depend on. None when it says nothing or disagrees."""
    table = attribute_table(owner)
    if table is None:
        return None
    declared = table.declared.get(attr)
    if declared is not None:
        return declared[1] if declared[0] == _ANNOTATED else None
    names = {qualname for _, qualname in table.assigned.get(attr, ())}
    return names.pop() if len(names) == 1 else None


def forget_attribute_tables() -> None:
    current().forget(AttributeTable)


def _table(node: ast.ClassDef, summary: ModuleTree) -> AttributeTable:
    def named(annotation: Optional[ast.expr]) -> Optional[str]:
        return summary.qualname_of(unwrap_optional(annotation)) if annotation is not None else None

    declared: Dict[str, Event] = {}
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            declared.setdefault(stmt.target.id, (_ANNOTATED, named(stmt.annotation)))
        elif isinstance(stmt, FUNCTIONS):
            # `@property def app(self) -> App`: what the annotation says; any other def
            # of that name is a method, not an attribute holding an instance.
            if stmt.returns is not None and any(_is_property(d) for d in stmt.decorator_list):
                declared.setdefault(stmt.name, (_ANNOTATED, named(stmt.returns)))
            else:
                declared.setdefault(stmt.name, (_METHOD, None))
    assigned: Dict[str, List[Event]] = {}
    for method in node.body:
        if not isinstance(method, FUNCTIONS) or not method.args.args:
            continue
        this = method.args.args[0].arg
        params = {a.arg: a.annotation for a in (*method.args.args, *method.args.kwonlyargs)}
        for sub in walk_nodes(method):
            if isinstance(sub, ast.AnnAssign):
                attr = _self_attribute(sub.target, this)
                if attr is not None:
                    assigned.setdefault(attr, []).append((_ANNOTATED, named(sub.annotation)))
            elif isinstance(sub, ast.Assign):
                attrs = {a for a in (_self_attribute(t, this) for t in sub.targets) if a is not None}
                if attrs:
                    event = (_BUILT, _value_class(sub.value, params, summary))
                    for attr in attrs:
                        assigned.setdefault(attr, []).append(event)
    return AttributeTable(declared, assigned)


def _value_class(value: ast.expr, params: Dict[str, Optional[ast.expr]], summary: ModuleTree) -> Optional[str]:
    """The absolute name of the class `self.x = value` may hold: a parameter's annotation, or
    the callee of `App(...)`."""
    if isinstance(value, ast.Name):
        annotation = params.get(value.id)
        return summary.qualname_of(unwrap_optional(annotation)) if annotation is not None else None
    return summary.qualname_of(value.func) if isinstance(value, ast.Call) else None


def self_class(name: str, scope: Scope, summary: ModuleTree) -> Optional[Symbol]:
    """The top-level class of the checked module whose method binds `name` as its first
    parameter (`self`), for a plain method (not a staticmethod or classmethod)."""
    function: Optional[Scope] = scope
    while function is not None and function.kind != "function":
        function = function.parent
    if function is None or function.enclosing_class is None:
        return None
    node = function.node
    if not isinstance(node, FUNCTIONS) or not node.args.args or node.args.args[0].arg != name:
        return None
    if any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in node.decorator_list):
        return None
    bound = scope.lookup(name)
    if function is not scope and bound is not None and bound[0].scope is not function:
        return None  # rebound in a nested function
    klass = function.enclosing_class.node
    if not isinstance(klass, ast.ClassDef) or summary.defs.get(klass.name) is not klass:
        return None  # a nested class: not reachable by name
    return Symbol(summary.module, (klass.name,), CLASS)


def _is_property(decorator: ast.expr) -> bool:
    name = decorator.attr if isinstance(decorator, ast.Attribute) else getattr(decorator, "id", "")
    return name in ("property", "cached_property")


def _self_attribute(target: ast.expr, this: str) -> Optional[str]:
    """`x` for a target `this.x` (`self.x`), else None."""
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == this:
        return target.attr
    return None
