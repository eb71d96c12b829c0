"""Wall-clock instants that cross a function boundary inside one module.

A function reads the wall clock and keeps the instant (or a deadline built from it) where
another function finds it: on `self.<attr>` (read by the class's methods), on another
object's attribute (`request.state.deadline = time.time() + t`, `lease.expires = ...`), as a
keyword of a constructor call (`Lease(expires=time.time() + ttl)`), or as the return value of
a module-level function (`def deadline_in(t): return time.time() + t`). A later read of that
attribute or call is then a wall-clock instant for time_values.py, so comparing it with
`time.time()` there is DL201 (and sending it is DL202), and the read that made it is DL201
too when some other function of the module compares it with the wall clock.

Every store of the attribute must agree (a wall-clock instant read in the storing function,
or `None`): one store from elsewhere (a payload's field, a parsed header, a row) makes it
an instant of unknown origin, and the rules stay quiet. Fixes never span two functions: the
instants carry a stand-in read with no monotonic equivalent, so no fix is offered.
"""
from __future__ import annotations

import ast
import re
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Set, Tuple, cast

from deadline_lint.families.shared.time.clock_catalog import WALL
from deadline_lint.families.shared.time.clock_reads import ClockRead
from deadline_lint.families.shared.time.time_value import is_placeholder
from deadline_lint.families.shared.time.inherited_instants import InheritedInstants, inherited_instants, stores_under
from deadline_lint.families.shared.time.kept_places import on_a_module, self_class
from deadline_lint.families.shared.time.typed_instants import declared_class, declared_class_instant
from deadline_lint.semantics.local.function_body import function_body
from deadline_lint.semantics.local.scopes import FUNCTION, MODULE, Scope

if TYPE_CHECKING:
    from deadline_lint.support.source import SourceFile

# time_values.py (which asks this module) hands in its TimeValues, FunctionTimes and
# TimeValue objects: typed `Any` here, as importing their module back would be a cycle.
Key = Tuple[object, str]  # (class node id or "*" or "return", attribute or function name)
_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class KeptDeadlines:
    """Per file, per key, on demand: a key is worked out only when a time value asks about
    its name, and only the functions whose text spells the name are walked."""

    def __init__(self, times: Any, module: Scope, source: Optional["SourceFile"]) -> None:
        self.times = weakref.proxy(times)  # it holds this object: no cycle to outlive the file
        self.module = module
        self._source = source
        self._text = source.text if source is not None else None
        self._possible = self._text is None or bool(_STORE_TEXT.search(self._text))
        self._kept: Dict[Key, Optional[Any]] = {}
        self._used: Dict[Key, Optional[str]] = {}
        self._functions: List[Scope] = []
        self._named: Dict[Tuple[bool, str], bool] = {}
        self._patterns: Dict[str, "re.Pattern[str]"] = {}
        self._classes: Dict[int, ast.ClassDef] = {}  # by id: the classes keys were made for
        self._elsewhere: Any = False  # InheritedInstants once asked (None: no project)
        self._from_bases: Set[Key] = set()  # keys some base in another module stores
        self._stored: Dict[Key, bool] = {}  # keys some function of the module stores under

    # -- what time_values asks -----------------------------------------------------------
    def value(self, expr: ast.AST, scope: Scope) -> Optional[Any]:
        """The kept instant `expr` reads (`self.deadline`, `deadline_in(5)`), or None."""
        if not self._possible and not isinstance(expr, ast.Attribute):
            return None
        key = self._key_of_read(expr, scope)
        if key is None:
            return None
        if key[0] == "*" and isinstance(expr, ast.Attribute):
            # `nw.timeout`, `nw: NewsWrapper`: what that class keeps there, unless this module
            # stores the name on other objects too (then read as any such object's)
            declared = declared_class_instant(self._inherited(), expr, scope, _may_keep)
            klass = self._module_class(declared_class(expr, scope)) if declared is None else None
            typed = declared is not None or klass is not None
            elsewhere = typed and self._possible and self._may_store(key) and self._stored_anywhere(key)
            if klass is not None and not elsewhere:
                own_key = (id(klass), expr.attr)  # a class of this module: its own stores
                return self._kept_for(own_key) if self._possible and self._may_store(own_key) else None
            if declared is not None and not elsewhere:
                return declared
        if self._possible and self._may_store(key):
            return self._kept_for(key)
        if not self._imports_base(key):
            return None
        found = self._kept_for(key)  # only for what a base elsewhere keeps: the gates above hold here
        return found if key in self._from_bases else None

    def store_use(self, read: ClockRead, times: Any) -> Optional[str]:
        """For a clock read stored for another function: the name of a function that
        compares it with the wall clock (None: not stored, or nobody does)."""
        if not self._possible:
            return None
        key = self._key_of_store(read.node, times)
        if key is None or not self._may_store(key):
            return None
        kept = self._kept_for(key)
        if kept is None or not any(r.node is read.node for r in kept.reads):
            return None
        if key not in self._used:
            self._used[key] = None  # asked again while looking: nobody yet
            self._used[key] = self._first_user(key, kept)
        return self._used[key]

    # -- keys --------------------------------------------------------------------------
    def _key_of_read(self, expr: ast.AST, scope: Scope) -> Optional[Key]:
        if isinstance(expr, ast.Attribute):
            return self._store_key(expr, scope)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
            bindings = scope.lookup(expr.func.id) or []
            if len(bindings) == 1 and bindings[0].scope is self.module:
                return ("return", expr.func.id)
        return None

    def _key_of_store(self, node: ast.AST, times: Any) -> Optional[Key]:
        """Where the statement around a clock read keeps its value: an attribute it assigns,
        a keyword of a module class's constructor, or the module-level function's return."""
        scope = times.scope
        child, parent = node, times.parent_of(node)
        while parent is not None and not isinstance(parent, ast.stmt):
            if isinstance(parent, ast.keyword) and parent.arg is not None:
                call = times.parent_of(parent)
                if isinstance(call, ast.Call) and self._constructs_module_class(call, scope):
                    return ("*", parent.arg)
            child, parent = parent, times.parent_of(parent)
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and child is parent.value:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            for target in targets:
                if isinstance(target, ast.Attribute):
                    return self._store_key(target, scope)
        if isinstance(parent, ast.Return) and scope.parent is self.module:
            return ("return", getattr(scope.node, "name", ""))
        return None

    def _may_store(self, key: Key) -> bool:
        """The text stores something under the key's name (`.deadline =`, `expires=`, a
        `def` with a `return` of a clock call): most names asked about never are."""
        if self._text is None:
            return True
        returned = key[0] == "return"
        name = key[1]
        found = self._named.get((returned, name))
        if found is None:
            if returned:
                defined = re.search(rf"\bdef {re.escape(name)}\b", self._text)
                found = bool(defined) and bool(_RETURN_TEXT.search(self._text))
            else:
                found = stores_under(self._text, name)
            self._named[(returned, name)] = found
        return found

    def _spells(self, scope: Scope, name: str) -> bool:
        return self._source is None or name in self._source.segment(scope.node)

    def _stores_here(self, scope: Scope, key: Key) -> bool:
        """The function's text stores under the key's name (`.name =`, `name=`, or it is the
        returning function itself)."""
        if key[0] == "return":
            return scope.parent is self.module and getattr(scope.node, "name", None) == key[1]
        if self._source is None:
            return True
        text = self._source.segment(scope.node)
        if key[1] not in text:
            return False
        pattern = self._patterns.get(key[1])
        if pattern is None:
            escaped = re.escape(key[1])
            pattern = self._patterns[key[1]] = re.compile(rf"\.{escaped}\s*(?::[^=\n]*)?=(?!=)|[(,]\s*{escaped}=")
        return bool(pattern.search(text))

    # -- one key -------------------------------------------------------------------------
    def _kept_for(self, key: Key) -> Optional[Any]:
        if key in self._kept:
            return self._kept[key]
        self._kept[key] = None  # a store whose value asks about its own key sees none
        elsewhere: List[Optional[Any]] = []
        keys = self._family_keys(key, elsewhere)
        own: List[int] = []
        stored = self.stored_values(keys, key, own) + elsewhere
        inherited = bool(elsewhere) or len(stored) > len(own)
        if elsewhere:
            self._from_bases.add(key)
        if inherited and keys[key] is None:
            stored.append(None)  # a base outside the module's classes may store it too
        agreed = [v for v in stored if v is not None]
        result: Optional[Any] = None
        if agreed and len(agreed) == len(stored):
            first = agreed[0]
            if all((v.role, v.unit) == (first.role, first.unit) for v in agreed):
                reads = tuple(replace(r, monotonic=None) for v in agreed for r in v.reads)
                result = type(first)(first.role, WALL, first.unit, reads, True)
        self._kept[key] = result
        return result

    def stored_values(
        self, keys: Dict[Key, Optional[bool]], key: Optional[Key] = None, own: Optional[List[int]] = None
    ) -> List[Optional[Any]]:
        """Every store of one of `keys` in this module, as a kept instant (None: a store
        that cannot count); the stores under `key` itself are counted in `own`."""
        first = next(iter(keys))
        stored: List[Optional[Any]] = []
        for scope in self._function_scopes():
            if not self._stores_here(scope, first):
                continue
            times = self.times.function(scope)
            if times is None:
                continue
            for found_key, value in self._stores_of(scope):
                if found_key in keys:
                    if found_key == key and own is not None:
                        own.append(1)
                    stored.append(times.kept_instant(value) if value is not None else None)
        return stored

    def _stored_anywhere(self, key: Key) -> bool:
        """Some function stores under the key (values unread: one may read the key again)."""
        if key not in self._stored:
            self._stored[key] = any(
                found == key for scope in self._function_scopes() if self._stores_here(scope, key)
                for found, _ in self._stores_of(scope)
            )
        return self._stored[key]

    def _family_keys(self, key: Key, elsewhere: List[Optional[Any]]) -> Dict[Key, Optional[bool]]:
        """The key and the same attribute of the class's bases in this module, which a method
        of the class reads too (`self._t0` set in `Base.start`, read in `Child.poll`); what
        bases in other project modules store goes to `elsewhere`. The value at `key` is None
        when some base is none of them nor `object`: what it stores is unknown."""
        klass = self._classes.get(key[0]) if isinstance(key[0], int) else None
        if klass is None:
            return {key: True}
        keys: Dict[Key, Optional[bool]] = {key: True}
        pending, seen = [klass], {id(klass)}
        while pending:
            for base in pending.pop().bases:
                found = self._module_class(base)
                if found is None:
                    if not (isinstance(base, ast.Name) and base.id in _NEUTRAL_BASES):
                        stores = self._inherited_stores(base, key[1])
                        if stores is None:
                            keys[key] = None
                        else:
                            elsewhere.extend(stores)
                    continue
                if id(found) not in seen:
                    seen.add(id(found))
                    keys[(id(found), key[1])] = True
                    pending.append(found)
        return keys

    def _imports_base(self, key: Key) -> bool:
        """The key's class has a base that is no class of this module nor a neutral one."""
        klass = self._classes.get(key[0]) if isinstance(key[0], int) else None
        return klass is not None and any(
            self._module_class(b) is None and not (isinstance(b, ast.Name) and b.id in _NEUTRAL_BASES)
            for b in klass.bases
        )

    def _inherited(self) -> Optional[InheritedInstants]:
        if self._elsewhere is False:
            self._elsewhere = inherited_instants(self.times)
        return None if self._text is None else cast(Optional[InheritedInstants], self._elsewhere)

    def _inherited_stores(self, base: ast.expr, name: str) -> Optional[List[Optional[Any]]]:
        elsewhere = self._inherited()
        return elsewhere.base_stores(base, name, _may_keep) if elsewhere is not None else None

    def _module_class(self, base: Optional[ast.expr]) -> Optional[ast.ClassDef]:
        if not isinstance(base, ast.Name):
            return None
        bindings = self.module.bindings().get(base.id) or []
        if len(bindings) != 1 or not isinstance(bindings[0].value, ast.ClassDef):
            return None
        found = bindings[0].value
        self._classes.setdefault(id(found), found)
        return found

    def _stores_of(self, scope: Scope) -> Iterator[Tuple[Key, Optional[ast.expr]]]:
        """Each store of a key with its value (None: a store whose value cannot count, which
        still makes the key's stores disagree)."""
        body = function_body(scope)
        targets: List[Tuple[ast.Attribute, ast.expr]] = []
        for node in body.nodes(ast.Assign):
            targets.extend((target, node.value) for target in node.targets if isinstance(target, ast.Attribute))
        for annotated in body.nodes(ast.AnnAssign):
            if isinstance(annotated.target, ast.Attribute) and annotated.value is not None:
                targets.append((annotated.target, annotated.value))
        for target, value in targets:
            if is_placeholder(value):
                continue  # `self.deadline = None`, `self.last = 0.0`: not set yet
            key = self._store_key(target, scope)
            if key is not None:
                yield key, value if key[0] != "*" or self._kept_object(target.value, scope) else None
        for call in body.nodes(ast.Call):
            if call.keywords and self._constructs_module_class(call, scope):
                for keyword in call.keywords:
                    if keyword.arg is not None and not is_placeholder(keyword.value):
                        yield ("*", keyword.arg), keyword.value
        if scope.parent is self.module and isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for returned in body.nodes(ast.Return):
                if returned.value is not None:
                    yield ("return", scope.node.name), returned.value

    def _store_key(self, target: ast.Attribute, scope: Scope) -> Optional[Key]:
        owner = self_class(target.value, scope)
        if owner is not None:
            if isinstance(owner.node, ast.ClassDef):
                self._classes.setdefault(id(owner.node), owner.node)
            return (id(owner.node), target.attr)
        if on_a_module(target.value, scope):
            return None  # a module's global (`settings.LAST_CHECK`): first set who knows where
        return ("*", target.attr)

    def _kept_object(self, receiver: ast.expr, scope: Scope) -> bool:
        """Another object's attribute counts as a place to keep an instant when the object is
        request state (`request.state`) or one this module's class built (`lease =
        Lease(...)`): an ORM row's `updated_at` is persisted, and read by others."""
        if isinstance(receiver, ast.Attribute) and receiver.attr == "state":
            return True
        if not isinstance(receiver, ast.Name):
            return False
        bindings = scope.lookup(receiver.id) or []
        return bool(bindings) and all(
            isinstance(b.value, ast.Call) and self._constructs_module_class(b.value, b.scope) for b in bindings
        )

    def _constructs_module_class(self, call: ast.Call, scope: Scope) -> bool:
        if not isinstance(call.func, ast.Name):
            return False
        bindings = scope.lookup(call.func.id) or []
        return len(bindings) == 1 and isinstance(bindings[0].value, ast.ClassDef) and bindings[0].scope is self.module

    def _function_scopes(self) -> List[Scope]:
        if self._functions:
            return self._functions
        resolver = self.times.resolver
        pending: List[Tuple[ast.AST, Scope]] = [(child, self.module) for child in _children(self.module.node)]
        while pending:
            node, parent = pending.pop()
            scope = resolver.scope_of(node, parent)
            if scope.kind == FUNCTION:
                self._functions.append(scope)
            pending.extend((child, scope) for child in _children(node))
        return self._functions

    def _first_user(self, key: Key, kept: Any) -> Optional[str]:
        """A function whose deadline uses compare the kept value with a wall-clock read of
        its own."""
        kept_reads = {id(r.node) for r in kept.reads}
        for scope in self._function_scopes():
            if not self._spells(scope, key[1]):
                continue
            times = self.times.function(scope)
            if times is None:
                continue
            for use in times.deadline_uses:
                if use.clock == WALL and use.local and any(id(r.node) in kept_reads for r in use.reads):
                    if any(id(r.node) not in kept_reads for r in use.reads):
                        return getattr(scope.node, "name", "<lambda>")
        return None


# An attribute, keyword or return statement on a line that calls a wall clock, or a method
# given a clock read (`self.mark(time.time())`, a setter that keeps it): the only text a kept
# instant can come from (most files have none, and skip the walk).
_CLOCK_CALL = r"\b(?:time|now|utcnow|time_ns)\s*\("
_STORE_TEXT = re.compile(
    r"(?:\.\w+\s*(?::[^=\n]*)?=(?!=)|[(,]\s*\w+=(?!=)|\breturn\b|\.\w+\()[^\n]*" + _CLOCK_CALL
)
_RETURN_TEXT = re.compile(r"\breturn\b[^\n]*" + _CLOCK_CALL)
def _may_keep(text: str, name: str) -> bool:
    """Another module's word test: it stores under the name and calls a clock."""
    return stores_under(text, name) and bool(_STORE_TEXT.search(text))


_NEUTRAL_BASES = frozenset({"object", "ABC", "Generic", "Protocol"})  # store no attribute of a subclass


def _children(node: ast.AST) -> Iterator[ast.AST]:
    """The functions and classes defined directly in `node`'s body (at any statement depth)."""
    stack: List[ast.AST] = list(getattr(node, "body", []) or [])
    seen: Set[int] = set()
    while stack:
        child = stack.pop()
        if id(child) in seen:
            continue
        seen.add(id(child))
        if isinstance(child, _SCOPE_NODES):
            yield child
            continue
        if isinstance(child, (ast.expr, ast.Lambda)):
            continue
        for value in ast.iter_child_nodes(child):
            if isinstance(value, (ast.stmt, ast.excepthandler, ast.match_case)):
                stack.append(value)


__all__ = ["KeptDeadlines", "MODULE"]
