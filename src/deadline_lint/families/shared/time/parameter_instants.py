"""Wall-clock instants that reach a function through a parameter.

`def run_listener(ack, started_at, ack_timeout)` compares `time.time() - started_at` with a
limit; whether that is a timer on the wall clock depends on what callers pass. A parameter
is a wall-clock instant here when every call of its function in the project passes one
(`run_listener(ack, time.time(), 5)`, `wait_for(time.time() + 5)`, `int(time.time() * 1000)`),
all in the same role and unit, and no call can be missed: the function is a module-level def
(called by its name) or a method (called on `self` in its module), every use of its name in
this module is such a call giving the parameter (no `*args`, no `**kwargs`, no default taken,
no reference handed on), and every caller the project's index finds (`semantics/callers`)
is one of those or, in another module, a call resolved to this def whose argument reads the
wall clock there (`passed_instants`). A parameter with no caller, a caller that passes
something else, or one that cannot be told stays unknown, and the rules stay quiet.

The instant keeps the callers' clock reads, each with no monotonic equivalent, so a finding
can name the line (and, for another module, the file) that started the timer and no fix
crosses into the caller.
"""
from __future__ import annotations

import ast
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from deadline_lint.families.shared.time.clock_catalog import WALL
from deadline_lint.families.shared.time.passed_instants import passed_elsewhere
from deadline_lint.semantics.arguments import parameter_place
from deadline_lint.semantics.local.scopes import CLASS, FUNCTION, MODULE, Scope

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)

if TYPE_CHECKING:
    from deadline_lint.semantics.local.resolve import Resolver


class ParameterInstants:
    """Per file, on demand: asked by `TimeValues` about a parameter of a function."""

    def __init__(self, times: Any, module: Scope, resolver: "Resolver", ctx: object) -> None:
        # Weakly, like kept_deadlines: `times` holds this object, and the context holds `times`.
        self.times = weakref.proxy(times)
        self.module = module
        self.resolver = resolver
        self._ctx = weakref.ref(ctx) if ctx is not None else None
        self._answers: Dict[Tuple[int, str], Optional[Any]] = {}
        self._calls: Optional[List[Tuple[ast.AST, Scope]]] = None  # (node, scope it is in)

    def value(self, name: str, scope: Scope) -> Optional[Any]:
        key = (id(scope.node), name)
        if key in self._answers:
            return self._answers[key]
        self._answers[key] = None  # a caller passing its own parameter back meets None
        found = self._value(name, scope)
        self._answers[key] = found
        return found

    def _value(self, name: str, scope: Scope) -> Optional[Any]:
        node = scope.node
        if not isinstance(node, _FUNCTIONS):
            return None
        owner = scope.parent
        if owner is None or (owner.kind == CLASS and (owner.parent is None or owner.parent.kind != MODULE)):
            return None
        if owner.kind not in (MODULE, CLASS) or node.name.startswith("__"):
            return None
        method = owner.kind == CLASS
        place = parameter_place(node, name, method)
        if place is None:
            return None
        setter = method and _is_setter(node)
        if setter:
            given = self._assigned_through(node.name, owner) if place[0] == 0 else None
            if not given:
                return None
        else:
            calls = self._calls_of(node.name, method, owner)
            if calls is None:
                return None
            given = [(_argument(call, place), where) for call, where in calls]
        values = []
        for argument, where in given:
            caller = self.times.function(where) if argument is not None else None
            found = caller.kept_instant(argument) if caller is not None else None
            if found is None:
                return None
            values.append(found)
        if not setter:  # a property's stores are attribute assignments, which no caller index sees
            elsewhere = self._passed_elsewhere(node.name, owner, place, method, bool(given))
            if elsewhere is None:
                return None
            values.extend(elsewhere)
        if not values:
            return None
        first = values[0]
        if any((v.role, v.unit) != (first.role, first.unit) for v in values):
            return None
        reads = tuple(sorted(
            (replace(r, monotonic=None) for v in values for r in v.reads),
            key=lambda r: (r.node.lineno, r.node.col_offset),
        ))  # the message names the first line
        return type(first)(first.role, WALL, first.unit, reads, True)

    def _calls_of(self, name: str, method: bool, owner: Scope) -> Optional[List[Tuple[ast.Call, Scope]]]:
        """Every call of the function in this module, with the function scope it sits in;
        None when some use of the name is not such a call (a reference handed on, a call at
        module level or from a class body, a method called on another receiver)."""
        found: List[Tuple[ast.Call, Scope]] = []
        for node, where in self._uses():
            call: ast.expr
            if method:
                if not isinstance(node, ast.Attribute) or node.attr != name:
                    continue
                call = node
                known = self._receiver_class(node.value, where)
                if known is not owner.node:
                    if known is not None and _defines(known, name):
                        continue  # another class's own method of the same name
                    return None
            else:
                if not isinstance(node, ast.Name) or node.id != name or isinstance(node.ctx, ast.Store):
                    continue
                bindings = where.lookup(name) or []
                if bindings and all(b.scope is not owner for b in bindings):
                    continue  # another binding of the same name
                if len(bindings) != 1:
                    return None
                call = node
            parent = self._parents.get(id(call))
            if not isinstance(parent, ast.Call) or parent.func is not call or where.kind != FUNCTION:
                return None
            found.append((parent, where))
        return found

    def _assigned_through(self, name: str, owner: Scope) -> Optional[List[Tuple[Optional[ast.expr], Scope]]]:
        """What each `<instance>.<name> = value` of the module hands a property's setter, with
        the function it is in; None when some store cannot be told (another receiver, a
        store at module level, `+=`, a tuple target)."""
        found: List[Tuple[Optional[ast.expr], Scope]] = []
        for node, where in self._uses():
            if not isinstance(node, ast.Attribute) or node.attr != name or isinstance(node.ctx, ast.Load):
                continue
            parent = self._parents.get(id(node))
            if not isinstance(parent, (ast.Assign, ast.AnnAssign)) or where.kind != FUNCTION:
                return None
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            if targets != [node]:
                return None
            known = self._receiver_class(node.value, where)
            if known is not owner.node:
                if known is not None and _defines(known, name):
                    continue  # another class's own property of the same name
                return None
            found.append((parent.value, where))
        return found

    def _receiver_class(self, receiver: ast.expr, where: Scope) -> Optional[ast.AST]:
        """The class of `self` in a method, or of a local name every binding of which is a
        call of one module-level class (`lease = Lease()`): an instance of exactly that class."""
        if _self_receiver(receiver, where):
            klass = where.enclosing_class
            return klass.node if klass is not None else None
        if not isinstance(receiver, ast.Name):
            return None
        bindings = where.lookup(receiver.id) or []
        if not bindings or any(b.scope is not where for b in bindings):
            return None
        found: Optional[ast.AST] = None
        for binding in bindings:
            value = binding.value
            if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
                return None
            classes = where.lookup(value.func.id) or []
            if len(classes) != 1 or classes[0].scope is not self.module:
                return None
            if not isinstance(classes[0].value, ast.ClassDef):
                return None
            if found is not None and classes[0].value is not found:
                return None
            found = classes[0].value
        return found

    def _uses(self) -> List[Tuple[ast.AST, Scope]]:
        """Every name and attribute load of the module, with the scope it is in (once)."""
        if self._calls is None:
            self._parents: Dict[int, ast.AST] = {}
            uses: List[Tuple[ast.AST, Scope]] = []
            pending: List[Tuple[ast.AST, Scope]] = [(self.module.node, self.module)]
            while pending:
                node, scope = pending.pop()
                for child in ast.iter_child_nodes(node):
                    self._parents[id(child)] = node
                    inner = scope
                    if isinstance(child, _SCOPES):
                        inner = self.resolver.scope_of(child, scope)
                    if isinstance(child, (ast.Name, ast.Attribute)):
                        uses.append((child, scope))
                    pending.append((child, inner))
            self._calls = uses
        return self._calls

    def _passed_elsewhere(
        self, name: str, owner: Scope, place: Tuple[Optional[int], str], method: bool, here: bool
    ) -> Optional[List[Any]]:
        """The instants callers in other modules pass (none when every caller is here);
        None when the project's callers cannot be known, there is none, a caller here hands
        the def on, or a caller elsewhere passes something else."""
        ctx = self._ctx() if self._ctx is not None else None
        analysis = getattr(ctx, "analysis", None)
        if analysis is None:
            return None
        from deadline_lint.semantics.callers import Callers, is_test_path
        from deadline_lint.semantics.file import FileSemantics
        from deadline_lint.semantics.summary import FUNCTION as DEF
        from deadline_lint.semantics.summary import Symbol

        semantics = analysis(FileSemantics)
        if not here and is_test_path(semantics.own.path):
            return None  # the index leaves test modules out: a def there is called from ones it cannot see
        path = (name,) if owner.kind == MODULE else (getattr(owner.node, "name", ""), name)
        clocks = self.times.clocks
        words = {q.split(".")[0] for q, f in clocks.functions.items() if f.clock == WALL}
        found = Callers(semantics.names).of(
            Symbol(semantics.own, path, DEF), lambda text: any(w in text for w in words)
        )
        project = semantics.names.modules
        if not found or project is None:
            return None  # no project, or no caller in it: nothing to follow
        if not all(caller.site.called for caller in found if caller.module is semantics.own):
            return None
        return passed_elsewhere(found, semantics.own, place, method, project.root, clocks)


def _defines(klass: ast.AST, name: str) -> bool:
    return any(isinstance(s, _FUNCTIONS) and s.name == name for s in getattr(klass, "body", ()))


def _is_setter(node: ast.AST) -> bool:
    """`@<name>.setter`: a property's setter, given its value by assignments."""
    name = getattr(node, "name", None)
    return any(
        isinstance(d, ast.Attribute) and d.attr == "setter" and isinstance(d.value, ast.Name) and d.value.id == name
        for d in getattr(node, "decorator_list", ())
    )


def _argument(call: ast.Call, place: Tuple[Optional[int], str]) -> Optional[ast.expr]:
    """The expression a call gives the parameter; None when it gives none or it cannot be
    told (`*args`, `**kwargs`)."""
    index, name = place
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if index is not None and index < len(call.args):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == name), None)


def _self_receiver(receiver: ast.expr, scope: Scope) -> bool:
    """`self` (the first parameter) of the method the use is in."""
    method = scope if scope.kind == FUNCTION and scope.enclosing_class is not None else None
    if method is None or not isinstance(receiver, ast.Name):
        return False
    params = [*method.node.args.posonlyargs, *method.node.args.args]  # type: ignore[attr-defined]
    return bool(params) and receiver.id == params[0].arg
