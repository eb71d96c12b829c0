"""Clock reads: which calls read a clock, which one, and what a fix may swap them for.

`time.time()`, `time.time_ns()`, `datetime.now()/utcnow()/today()` read the WALL clock in any
import spelling (`import time as t`, `from time import time as now`, `import datetime as dt`);
`time.monotonic()`, `perf_counter` and their `_ns` variants and `<event loop>.time()` read a
MONOTONIC one; `datetime.now().timestamp()` is one read in seconds. Everything is catalog data
(`clock.yaml`, typed in `catalog/clock.py`). `TimeValues` (time_values.py) builds on this.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, FrozenSet, Optional, Set, Tuple

from deadline_lint.families.shared.time.clock_catalog import MONOTONIC, WALL, ClockCatalog, clock_catalog
from deadline_lint.families.shared.time.clock_facts import ProjectClocks
from deadline_lint.semantics.local.scopes import ASSIGN, IMPORT, NESTED_STATEMENTS, Scope

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import AnalysisInputs

_MAX_FOLLOW = 4  # `loop = other_loop` links followed before giving up

__all__ = ["ClockRead", "ClockReads", "WALL", "MONOTONIC"]


@dataclass(frozen=True, eq=False)
class ClockRead:
    """One reading of a clock: `node` is the call to replace when swapping clocks."""

    node: ast.Call
    clock: str
    unit: str
    qualname: str  # the clock function (`time.time`), or the method (`datetime.timestamp`)
    monotonic: Optional[str]  # the monotonic function reading the same unit, if a clean one exists
    through: str = ""  # a read through project code: the chain a message names
    elsewhere: str = ""  # a read another module made and passed in: its `path:line`
    shown: str = ""  # a read another module made: its text there (`datetime.now()`)



class ClockReads:
    """Per file: which calls read which clock (each call judged once)."""

    def __init__(self, ctx: "AnalysisInputs") -> None:
        self.ctx = ctx
        self.resolver = ctx.resolver
        self.clocks: ClockCatalog = clock_catalog(ctx.catalog)
        self._final_names = self.clocks.final_names | frozenset(self.clocks.instant_methods)
        self._reads: Dict[int, Tuple[ast.Call, Optional[ClockRead]]] = {}
        self._from_imports: Optional[FrozenSet[str]] = None
        self._project: Optional[ProjectClocks] = None

    def may_read_clock(self, call: ast.Call, scope: Scope) -> bool:
        """A cheap first look: `x.<clock name>(...)`, or a name imported from a clock module
        (`from time import time as now`). Most calls stop here."""
        func = call.func
        if type(func) is ast.Attribute:
            return func.attr in self._final_names or self._through_project(func)
        if type(func) is ast.Name:
            if self._from_imports is None:
                self._from_imports = self._names_from_clock_modules(scope)
            return func.id in self._from_imports or self._through_project(func)
        return False

    def _through_project(self, func: ast.expr) -> bool:
        """The callee may read the wall clock through project code (clock_facts.py)."""
        if self._project is None:
            analysis = getattr(self.ctx, "analysis", None)
            if analysis is None:
                return False  # built outside a check (the budget threader's own index): the file alone
            self._project = analysis(ProjectClocks)
        return self._project.may_reach(func)

    def _names_from_clock_modules(self, scope: Scope) -> FrozenSet[str]:
        modules = {q.split(".")[0] for q in self.clocks.functions}
        names: Set[str] = set()
        imported: Set[str] = set()
        renamed: Dict[str, str] = {}
        stack = list(getattr(scope.module.node, "body", []))
        while stack:
            stmt = stack.pop()
            nested = NESTED_STATEMENTS.get(type(stmt))
            if nested is not None:
                for field in nested:
                    stack.extend(getattr(stmt, field))
            elif isinstance(stmt, ast.ImportFrom) and (stmt.module or "").split(".")[0] in modules:
                names.update(alias.asname or alias.name for alias in stmt.names)
            elif isinstance(stmt, ast.ImportFrom):
                imported.update(alias.asname or alias.name for alias in stmt.names)
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                value = stmt.value
                last = value.attr if isinstance(value, ast.Attribute) else getattr(value, "id", None)
                if last in self._final_names:
                    names.add(stmt.targets[0].id)  # `_now = datetime.datetime.now`: judged by `_alias_read`
                elif isinstance(value, ast.Name):
                    renamed[stmt.targets[0].id] = value.id
        # An alias of an alias (`now = _now`), or of a name imported from elsewhere (a project
        # module's alias, perhaps): `_alias_read` follows it.
        for _ in range(_MAX_FOLLOW):
            grown = {alias for alias, value in renamed.items() if value in names or value in imported}
            if grown <= names:
                break
            names.update(grown)
        return frozenset(names)

    def _alias_read(self, call: ast.Call, func: ast.Name, scope: Scope) -> Optional[ClockRead]:
        """`_now()` where the module binds `_now = datetime.datetime.now` once, at its top
        level, or an alias of such an alias (`now = _now`, `now = compat_now` imported from a
        project module that binds it): the clock it names. No fix: tests often swap such an
        alias for a fake clock, and the alias itself is what to change."""
        name = func
        for _ in range(_MAX_FOLLOW):
            bindings = (scope if name is func else scope.module).lookup(name.id) or []
            if len(bindings) != 1 or bindings[0].scope is not scope.module:
                return None
            binding = bindings[0]
            if binding.kind == IMPORT and name is not func:
                alias = self._project_alias(name)
                if alias is None:
                    return None
                named = self.clocks.functions[alias]
                return ClockRead(call, named.clock, named.unit, named.qualname, None, f"`{func.id}` is `{alias}`")
            value = binding.value
            if binding.kind != ASSIGN or not isinstance(value, (ast.Attribute, ast.Name)):
                return None
            qualname = self.resolver.qualified_name(value, scope.module)
            clock = self.clocks.functions.get(qualname) if qualname else None
            if clock is not None:
                shown = f"`{func.id}` is `{clock.qualname}`"
                return ClockRead(call, clock.clock, clock.unit, clock.qualname, None, shown)
            if not isinstance(value, ast.Name):
                return None
            name = value
        return None

    def _project_alias(self, name: ast.Name) -> Optional[str]:
        """The wall-clock function a name imported from a project module stands for."""
        if not self._through_project(name) or self._project is None:
            return None
        return self._project.alias_of(name)

    def clock_read(self, call: ast.AST, scope: Scope) -> Optional[ClockRead]:
        if not isinstance(call, ast.Call) or not self.may_read_clock(call, scope):
            return None
        known = self._reads.get(id(call))
        if known is not None:
            return known[1]
        found = self._clock_read(call, scope)
        self._reads[id(call)] = (call, found)
        return found

    def _clock_read(self, call: ast.Call, scope: Scope) -> Optional[ClockRead]:
        found = self._library_read(call, scope)
        if found is None and self._through_project(call.func) and self._project is not None:
            through = self._project.read(call, scope)
            if through is not None:
                function, unit, chain = through
                return ClockRead(call, WALL, unit, function, None, chain)  # no fix: the clock is elsewhere
        return found

    def _library_read(self, call: ast.Call, scope: Scope) -> Optional[ClockRead]:
        func = call.func
        if isinstance(func, ast.Attribute):
            if func.attr not in self._final_names:
                return None
            method = self.clocks.instant_methods.get(func.attr)
            if method is not None and not call.args and not call.keywords:
                inner = self.clock_read(func.value, scope)
                if inner is not None and inner.unit == "datetime":
                    return ClockRead(call, inner.clock, method.unit, f"datetime.{method.name}", method.monotonic)
                return None
            if func.attr == self.clocks.loop_time_method and not call.args and self._is_loop(func.value, scope):
                return ClockRead(call, MONOTONIC, "s", "loop.time", None)
        elif not isinstance(func, ast.Name):
            return None
        qualname = self.resolver.qualified_name(func, scope)
        clock = self.clocks.functions.get(qualname) if qualname else None
        if clock is None:
            if qualname is None and isinstance(func, ast.Name):
                return self._alias_read(call, func, scope)
            return None
        return ClockRead(call, clock.clock, clock.unit, clock.qualname, clock.monotonic)

    def _is_loop(self, receiver: ast.expr, scope: Scope, depth: int = 0) -> bool:
        if depth > _MAX_FOLLOW:
            return False
        if isinstance(receiver, ast.Call):
            return self.resolver.qualified_name(receiver.func, scope) in self.clocks.loop_factories
        if isinstance(receiver, ast.Attribute):
            return receiver.attr in self.clocks.loop_names
        if isinstance(receiver, ast.Name):
            if receiver.id in self.clocks.loop_names:
                return True
            bindings = scope.lookup(receiver.id) or []
            return (
                len(bindings) == 1
                and bindings[0].kind == ASSIGN
                and isinstance(bindings[0].value, ast.expr)
                and self._is_loop(bindings[0].value, scope, depth + 1)
            )
        return False

    def is_duration_call(self, call: ast.Call, scope: Scope) -> bool:
        return self.resolver.qualified_name(call.func, scope) in self.clocks.durations

    def is_sleep(self, call: ast.Call, scope: Scope) -> bool:
        return self.resolver.qualified_name(call.func, scope) in self.clocks.sleeps
