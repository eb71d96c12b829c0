"""The clock family's project fact: a project function whose every `return` reads the wall clock
(`def utcnow(): return datetime.datetime.now(timezone.utc)`), directly or through another such
function, so its callers read the wall clock too. Declared to the semantics layer; answered
across modules, with the chain a message names (`utils.utcnow` -> `datetime.datetime.now`).

A function that does anything with the reading before returning it (adds an offset, rounds it,
formats it) is not one: what it returns is no longer the clock's instant."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, FrozenSet, Optional, Tuple

from deadline_lint.families.shared.time.clock_catalog import WALL, ClockCatalog, clock_catalog
from deadline_lint.semantics.facts import Fact, Local
from deadline_lint.semantics.file import FactUse, FileSemantics
from deadline_lint.semantics.imported import imports_fact_holder, reexports_from
from deadline_lint.semantics.local.scopes import Scope
from deadline_lint.semantics.session import current
from deadline_lint.semantics.summary import External, ModuleTree, own_returns

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


class ReadsWallClock(Fact[Tuple[str, str]]):
    """Payload: (the clock function's qualified name, its unit: s, ns or datetime)."""

    version = 1
    reexported = frozenset({"time", "datetime"})

    def __init__(self, clocks: ClockCatalog) -> None:
        self.wall = {name: clock.unit for name, clock in clocks.functions.items() if clock.clock == WALL}
        self.name = "clock.reads_wall[" + ",".join(sorted(self.wall)) + "]"
        finals = sorted({name.rpartition(".")[2] for name in self.wall})
        self._finals = tuple(finals)

    def may_hold(self, text: str) -> bool:
        """Some `return` line calls a clock function by its last name (`return time.time()`)."""
        if not any(f"{name}(" in text for name in self._finals):
            return False  # most modules: substring tests only
        at = text.find("return")
        while at != -1:
            end = text.find("\n", at)
            line = text[at:end if end != -1 else len(text)]
            if any(f"{name}(" in line for name in self._finals):
                return True
            at = text.find("return", at + 6)
        return False

    def terminal(self, payload: Tuple[str, str]) -> Optional[str]:
        return payload[0]

    def function(self, summary: ModuleTree, node: ast.AST, klass: Optional[ast.ClassDef]) -> Optional[Local]:
        if not isinstance(node, ast.FunctionDef) or klass is not None:
            return None  # methods are left out: `self.now()` may be overridden by a fake clock
        returns = own_returns(node)
        if not returns:
            return None
        shadowed = tuple(Scope(node, summary.scope).bindings())
        payload: Optional[Tuple[str, str]] = None
        via = []
        for value in returns:
            if not isinstance(value, ast.Call):
                return None
            qualname = summary.qualname_of(value.func, shadowed)
            if qualname is None:
                return None
            unit = self.wall.get(qualname)
            if unit is not None:
                if payload is not None and payload[1] != unit:
                    return None  # two units: unknown
                payload = (qualname, unit)
            else:
                via.append(qualname)
        if payload is not None and via:
            return None
        return Local(payload, node.name, tuple(via))


def reads_wall_clock(clocks: ClockCatalog) -> ReadsWallClock:
    key = frozenset(clocks.functions)
    facts: Dict[FrozenSet[str], ReadsWallClock] = current().memo(ReadsWallClock, lasting=True)  # by clocks
    found = facts.get(key)
    if found is None:
        found = facts[key] = ReadsWallClock(clocks)
    return found


CLOCK_PACKAGES = frozenset({"time", "datetime"})


def reaches_wall_clock(fact: ReadsWallClock, text: str, path: str) -> bool:
    """DL201's project need: the file imports a project function that reads the wall clock,
    or a clock module or function through a project module (`from project.metrics import time`)."""
    return imports_fact_holder(fact, text, path) or reexports_from(text, path, CLOCK_PACKAGES)


class ProjectClocks(FactUse):
    """Per file (`ctx.analysis(ProjectClocks)`): wall-clock reads that pass through the
    project, looked for only at calls of the names that can reach one (most files: none)."""

    def __init__(self, ctx: "FileView") -> None:
        self.clocks = clock_catalog(ctx.catalog)
        super().__init__(ctx, reads_wall_clock(self.clocks))

    def may_reach(self, func: ast.expr) -> bool:
        names = self.names
        if names.may_reach(func):
            return True
        head = func
        while isinstance(head, ast.Attribute):
            head = head.value
        if not isinstance(head, ast.Name) or head is func:
            return False
        return names.reexports.get(head.id, "").split(".")[0] in CLOCK_PACKAGES  # `time.time()` via a project module

    def read(self, call: ast.Call, scope: Scope) -> Optional[Tuple[str, str, str]]:
        """(clock function, unit, the chain a message names) for a call that reads the wall
        clock through the project, else None (asked only where `may_reach` said yes)."""
        semantics = self.ctx.analysis(FileSemantics)
        qualname = self.ctx.resolver.qualified_name(call.func, scope)
        if qualname is not None and semantics.names.is_project_name(qualname):
            target = semantics.names.resolve(qualname)
            if isinstance(target, External):
                clock = self.clocks.functions.get(target.qualname)
                if clock is not None and clock.clock == WALL:
                    return clock.qualname, clock.unit, f"`{qualname}` is `{clock.qualname}`"
                return None
        answer = semantics.fact_at(self.fact, call.func, scope)
        if answer is None:
            return None
        function, unit = answer.payload
        return function, unit, answer.names()
