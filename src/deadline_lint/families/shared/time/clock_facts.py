"""The clock family's project fact: a project function whose every `return` reads the wall clock
(`def utcnow(): return datetime.datetime.now(timezone.utc)`), directly or through another such
function, so its callers read the wall clock too. Declared to the semantics layer; answered
across modules, with the chain a message names (`utils.utcnow` -> `datetime.datetime.now`).

A function that does anything with the reading before returning it (adds an offset, rounds it,
formats it) is not one: what it returns is no longer the clock's instant."""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Mapping, Optional, Tuple

from deadline_lint.families.shared.time.clock_catalog import WALL, ClockCatalog, clock_catalog
from deadline_lint.semantics.facts import Fact, Local
from deadline_lint.semantics.file import FactUse, FileSemantics
from deadline_lint.semantics.imported import imports_fact_holder, project_imports, reexports_from
from deadline_lint.semantics.local.scopes import IMPORT, Scope
from deadline_lint.semantics.session import current
from deadline_lint.semantics.summary import External, ModuleTree, Names, content_key, own_returns, tree_of

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView
    from deadline_lint.semantics.modules import ModuleSource


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
    or a clock module or function through a project module (`from project.metrics import time`,
    `from .compat import now` where `compat` binds `now = time.time`)."""
    if imports_fact_holder(fact, text, path) or reexports_from(text, path, CLOCK_PACKAGES):
        return True
    found = project_imports(text, path)
    if found is None:
        return False
    names, targets = found
    return any(_wall_alias(names, target, fact.wall) for target in targets)


def clock_alias(names: Names, target: str, functions: Mapping[str, Any], depth: int = 0) -> Optional[str]:
    """The clock function a project name stands for, when its module binds it to one: a
    re-export (`from time import time as now`) or a top-level alias (`now = time.time`,
    `_utcnow = datetime.datetime.utcnow`), bound once; or an alias of such a name, in its
    module or imported there (`now = _now`)."""
    if depth > _MAX_ALIASES:
        return None
    found = names.defining(target)
    if found is None:  # what the name stands for is outside the project: a re-export, perhaps
        outside = names.reexport(target)
        return outside.qualname if outside is not None and outside.qualname in functions else None
    if len(found[1]) != 1:
        return None
    module, (name,) = found
    if not _may_alias(names, module, name, functions, depth):
        return None  # most names: the module is not parsed to learn it
    memo: Dict[Tuple[str, str], Optional[str]] = current().memo(ClockAliases)
    key = (content_key(module), name)
    if key not in memo:
        memo[key] = _module_alias(module, name, functions)
    value = memo[key]
    if value is not None and value.startswith("="):  # `name = other`: what `other` is there
        return clock_alias(names, ".".join(p for p in (module.name, value[1:]) if p), functions, depth + 1)
    return value


class ClockAliases:
    """The memo of `clock_alias` by module content and name."""


def _module_alias(module: "ModuleSource", name: str, functions: Mapping[str, Any]) -> Optional[str]:
    """The clock function the module's top-level `name = dotted.clock` names, when that is
    the name's one binding; `=other` for `name = other`, a name to follow."""
    tree = tree_of(module)
    if tree is None:
        return None
    value = tree.values.get(name)
    qualname = tree.qualname_of(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
    if qualname in functions:
        return qualname
    return f"={value.id}" if isinstance(value, ast.Name) else None


def _may_alias(names: Names, module: "ModuleSource", name: str, functions: Mapping[str, Any], depth: int) -> bool:
    """Some line is `name = <dotted name ending in a clock function's name>` (annotated or
    not): the only text a top-level alias is, and most modules a name comes from have none.
    `name = other` counts when `other` passes the same test, here or in the project module
    it is imported from (import lines only: no module is parsed to learn it)."""
    finals = {qualname.rpartition(".")[2] for qualname in functions}
    for value in _alias_values(module.text, name):
        if value.rpartition(".")[2] in finals:
            return True
        if "." in value or depth >= _MAX_ALIASES:
            continue
        found = names.defining(".".join(p for p in (module.name, value) if p))
        if found is None:
            if names.reexport(".".join(p for p in (module.name, value) if p)) is not None:
                return True  # `from time import time as _t; now = _t`
        elif len(found[1]) == 1 and _may_alias(names, found[0], found[1][0], functions, depth + 1):
            return True
    return False


def _alias_values(text: str, name: str) -> List[str]:
    """The values of the module's top-level `name = <dotted name>` lines."""
    starts = [0] if text.startswith(name) else []
    at = text.find(f"\n{name}")
    while at != -1:
        starts.append(at + 1)
        at = text.find(f"\n{name}", at + 1)
    found = []
    for start in starts:
        value = _ALIAS_VALUE.match(text, start + len(name))
        if value is not None:
            found.append(value.group(1))
    return found


_MAX_ALIASES = 3  # aliases of aliases followed before a name is left unknown
_ALIAS_VALUE = re.compile(r"[ \t]*(?::[^=\n]*)?=[ \t]*([\w.]+)[ \t]*(?:#[^\n]*)?$", re.MULTILINE)


def _wall_alias(names: Names, target: str, wall: Mapping[str, str]) -> bool:
    return clock_alias(names, target, wall) is not None


class ProjectClocks(FactUse):
    """Per file (`ctx.analysis(ProjectClocks)`): wall-clock reads that pass through the
    project, looked for only at calls of the names that can reach one (most files: none)."""

    fact: ReadsWallClock

    def __init__(self, ctx: "FileView") -> None:
        self.clocks = clock_catalog(ctx.catalog)
        super().__init__(ctx, reads_wall_clock(self.clocks))
        self._aliases: Dict[str, Optional[str]] = {}
        self._imports: Optional[Mapping[str, str]] = None

    def _target(self, func: ast.expr) -> Optional[str]:
        """The project name a callee spells through this file's imports (`now` after `from
        .compat import now`, `compat.now`), or None."""
        if type(func) is ast.Name:
            head, tail = func.id, ""
        elif type(func) is ast.Attribute and type(func.value) is ast.Name:
            head, tail = func.value.id, "." + func.attr  # type: ignore[attr-defined]
        else:
            return None
        if self._imports is None:
            self._imports = self.ctx.analysis(FileSemantics).summary.summary.imports
        bound = self._imports.get(head)
        return bound + tail if bound is not None else None

    def _alias(self, func: ast.expr) -> Optional[str]:
        """The wall-clock function a project module's alias names (`clock_alias`)."""
        target = self._target(func)
        if target is None:
            return None
        if target not in self._aliases:
            names = self.ctx.analysis(FileSemantics).names
            wall = self.fact.wall
            self._aliases[target] = clock_alias(names, target, wall) if names.is_project_name(target) else None
        return self._aliases[target]

    def alias_of(self, name: ast.Name) -> Optional[str]:
        """The wall-clock function an imported project name is an alias of (`clock_alias`)."""
        return self._alias(name)

    def _bound_at_top(self, func: ast.expr, scope: Scope) -> bool:
        """The callee's head is the module's import, not a local name of the same spelling."""
        head = func
        while isinstance(head, ast.Attribute):
            head = head.value
        bindings = scope.lookup(head.id) if isinstance(head, ast.Name) else None
        return bool(bindings) and all(b.kind == IMPORT for b in bindings or ())

    def may_reach(self, func: ast.expr) -> bool:
        names = self.names
        if names.may_reach(func) or self._alias(func) is not None:
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
        alias = self._alias(call.func)
        if alias is not None and self._bound_at_top(call.func, scope):
            return alias, self.fact.wall[alias], f"`{self._target(call.func)}` is `{alias}`"
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
