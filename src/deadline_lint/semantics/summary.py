"""What one module binds at its top level and in its classes, and what a dotted project name
stands for across modules (a re-export, a def, a class, a method through the class's project
bases, a top-level value). A name bound more than once (`try: import a / except: b = None`)
stands for nothing: precision first.

A `ModuleSummary` holds only names (strings), so it is small, kept for the whole run and keyed
by the module's content hash; a `ModuleTree` adds the parsed tree for the facts that read
bodies, and only the most recently used trees are kept."""
from __future__ import annotations

import ast
from collections import OrderedDict
from typing import Dict, List, NamedTuple, Optional, Tuple, Union

from deadline_lint.semantics import store
from deadline_lint.semantics.local.definitions import FUNCTIONS, class_members, own_returns  # noqa: F401  (re-exported)
from deadline_lint.semantics.local.scopes import ASSIGN, IMPORT, OTHER, Scope
from deadline_lint.semantics.modules import ModuleSource, ProjectModules, absolute_name, longest_prefix
from deadline_lint.semantics.scan import import_table
from deadline_lint.semantics.session import current

MAX_CHAIN = 8  # re-exports and bases followed before a name is left unknown
FUNCTION, CLASS, VALUE = "function", "class", "value"


class Symbol(NamedTuple):
    """A def, class, method or top-level value of a project module: `path` is ("f",), ("C",)
    or ("C", "m")."""

    module: ModuleSource
    path: Tuple[str, ...]
    kind: str

    @property
    def qualname(self) -> str:
        return ".".join(p for p in (self.module.name, *self.path) if p)

    @property
    def is_class(self) -> bool:
        return self.kind == CLASS

    @property
    def is_function(self) -> bool:
        return self.kind == FUNCTION


class External(NamedTuple):
    """A module or object outside the project that a project name re-exports."""

    qualname: str


Target = Union[Symbol, External, ModuleSource]


class ClassTable(NamedTuple):
    bases: Tuple[Optional[str], ...]  # each base's absolute name, None when it is no plain name
    members: Dict[str, str]  # name -> FUNCTION, CLASS or VALUE, for names bound once


class ModuleSummary:
    """One module's top-level names, each bound exactly once: imports (absolute dotted
    targets), defs and classes (with their bases and members), and values."""

    def __init__(self, module: ModuleSource, scope: Scope) -> None:
        self.name = module.name
        self.imports: Dict[str, str] = {}
        self.kinds: Dict[str, str] = {}
        self.classes: Dict[str, ClassTable] = {}
        for name, bindings in scope.bindings().items():
            if len(bindings) != 1:
                continue
            binding = bindings[0]
            if binding.kind == IMPORT:
                self.imports[name] = absolute_name(module.name, module.is_package, str(binding.value))
            elif binding.kind == OTHER and isinstance(binding.value, FUNCTIONS):
                self.kinds[name] = FUNCTION
            elif binding.kind == OTHER and isinstance(binding.value, ast.ClassDef):
                self.kinds[name] = CLASS
                members = {n: _kind(v) for n, v in class_members(binding.value).items()}
                bases = tuple(self.qualname_of(base) for base in binding.value.bases)
                self.classes[name] = ClassTable(bases, members)
            elif binding.kind == ASSIGN:
                self.kinds[name] = VALUE

    def to_data(self) -> Dict[str, object]:
        classes = {name: [list(table.bases), table.members] for name, table in self.classes.items()}
        return {"imports": self.imports, "kinds": self.kinds, "classes": classes}

    @classmethod
    def from_data(cls, name: str, data: object) -> Optional["ModuleSummary"]:
        """A summary read back from the store; None when the data has the wrong shape."""
        try:
            summary = cls.__new__(cls)
            summary.name = name
            summary.imports = {str(k): str(v) for k, v in data["imports"].items()}  # type: ignore[index]
            summary.kinds = {str(k): str(v) for k, v in data["kinds"].items()}  # type: ignore[index]
            summary.classes = {
                str(k): ClassTable(
                    tuple(None if b is None else str(b) for b in v[0]), {str(m): str(t) for m, t in v[1].items()}
                )
                for k, v in data["classes"].items()  # type: ignore[index]
            }
            return summary
        except (KeyError, TypeError, AttributeError, IndexError):
            return None

    def qualname_of(self, expr: ast.expr, shadowed: Tuple[str, ...] = ()) -> Optional[str]:
        """The absolute dotted name `expr` spells at module level (`mod.f`, `f`, `C.m`), or
        None when its head is not bound once here or is `shadowed` by a local binding."""
        parts: List[str] = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name) or expr.id in shadowed:
            return None
        parts.reverse()
        head = expr.id
        if head in self.imports:
            return ".".join((self.imports[head], *parts))
        if head in self.kinds:
            return ".".join(p for p in (self.name, head, *parts) if p)
        return None


def _kind(node: ast.AST) -> str:
    if isinstance(node, FUNCTIONS):
        return FUNCTION
    return CLASS if isinstance(node, ast.ClassDef) else VALUE


class ModuleTree:
    """A module's summary with its parsed tree: the defs and classes by name, for facts that
    read bodies."""

    def __init__(self, module: ModuleSource, summary: ModuleSummary, tree: ast.Module, scope: Optional[Scope] = None):
        self.module = module
        self.summary = summary
        self.tree = tree
        self.scope = scope or Scope(tree, None)  # the summary's scope when built together
        self.defs: Dict[str, ast.AST] = {}
        self.values: Dict[str, ast.expr] = {}
        for name, bindings in self.scope.bindings().items():
            if name in summary.kinds:
                value = bindings[0].value
                if summary.kinds[name] == VALUE and isinstance(value, ast.expr):
                    self.values[name] = value
                elif isinstance(value, (*FUNCTIONS, ast.ClassDef)):
                    self.defs[name] = value

    def node(self, path: Tuple[str, ...]) -> Optional[ast.AST]:
        found: Optional[ast.AST] = self.defs.get(path[0]) or self.values.get(path[0])
        for part in path[1:]:
            if not isinstance(found, ast.ClassDef):
                return None
            found = class_members(found).get(part)
        return found

    def qualname_of(self, expr: ast.expr, shadowed: Tuple[str, ...] = ()) -> Optional[str]:
        return self.summary.qualname_of(expr, shadowed)


# Summaries are the run's memo of ModuleSummary, by content hash and module name.


class HeldTrees(OrderedDict):  # type: ignore[type-arg]
    """Trees weigh some 40 bytes per byte of source: only the most recently used are kept
    (by id of their module), and a module asked about again is parsed again (its answers
    derive from its text alone)."""


KEEP_TREES = 1  # held trees make every pass of the cyclic collector longer


class OwnTree:
    """The view of the file being checked, while it is checked."""

    def __init__(self) -> None:
        self.held: Optional[Tuple[ModuleSource, Optional[ModuleTree]]] = None


def content_key(module: ModuleSource) -> str:
    """What a module's summary and facts derive from: its text, name and package-ness."""
    return f"{module.digest}-{module.name}-{int(module.is_package)}"


def summary_of(module: ModuleSource) -> Optional[ModuleSummary]:
    """The module's summary (None when it does not parse), once per content and name: from
    the store when an earlier run left it there."""
    key = content_key(module)
    summaries: Dict[str, Optional[ModuleSummary]] = current().memo(ModuleSummary)
    if key in summaries:
        return summaries[key]
    stored = store.entry(key)
    if stored is not None and "summary" in stored:
        found = ModuleSummary.from_data(module.name, stored["summary"]) if stored["summary"] is not None else None
        if found is not None or stored["summary"] is None:
            summaries[key] = found
            return found
    tree = module.tree
    scope = Scope(tree, None) if tree is not None else None
    found = summaries[key] = ModuleSummary(module, scope) if scope is not None else None
    store.put(key, "summary", found.to_data() if found is not None else None)
    if found is not None and tree is not None and module.rereadable:
        _hold(module, ModuleTree(module, found, tree, scope))
    return found


def tree_of(module: ModuleSource) -> Optional[ModuleTree]:
    if not module.rereadable:
        # The file being checked: its tree is the walk's, and lives as long as the check (a
        # tree held past it would make every later pass of the cyclic collector walk it).
        state = current().state(OwnTree)
        own = state.held
        if own is None or own[0] is not module:
            summary = summary_of(module)
            tree = module.tree
            view = ModuleTree(module, summary, tree) if summary is not None and tree is not None else None
            own = state.held = (module, view)
        return own[1]
    held: "OrderedDict[int, Tuple[ModuleSource, Optional[ModuleTree]]]" = current().state(HeldTrees)
    known = held.get(id(module))
    if known is not None and known[0] is module:
        held.move_to_end(id(module))
        return known[1]
    summary = summary_of(module)
    known = held.get(id(module))
    if known is not None and known[0] is module:
        return known[1]
    tree = module.tree
    found = ModuleTree(module, summary, tree) if summary is not None and tree is not None else None
    _hold(module, found)
    return found


def _hold(module: ModuleSource, found: Optional[ModuleTree]) -> None:
    held: "OrderedDict[int, Tuple[ModuleSource, Optional[ModuleTree]]]" = current().state(HeldTrees)
    held[id(module)] = (module, found)
    while len(held) > KEEP_TREES:
        _, (old, view) = held.popitem(last=False)
        old.forget_tree()
        if view is not None:
            view.scope.clear_caches()  # its bindings point back at it: free the tree now


class ImportLines:
    """The run's memo of what each import line of a module binds, by content."""


def _import_table_of(module: ModuleSource) -> Dict[str, str]:
    key = content_key(module)
    memo: Dict[str, Dict[str, str]] = current().memo(ImportLines)
    found = memo.get(key)
    if found is None:
        found = memo[key] = dict(import_table(module.text))
    return found



def forget_summaries() -> None:
    current().forget(ImportLines, ModuleSummary, HeldTrees, OwnTree)


def release_own_tree() -> None:
    """The check of a file is over: let its tree go."""
    current().state(OwnTree).held = None


class Names:
    """What dotted project names stand for, within one project. `own` is the module being
    checked (its text as checked, which may differ from the file on disk)."""

    def __init__(self, modules: Optional[ProjectModules], own: ModuleSource) -> None:
        self.modules = modules
        self.own = own

    def module(self, name: str) -> Optional[ModuleSource]:
        if name == self.own.name:
            return self.own
        return self.modules.module(name) if self.modules is not None else None

    def split(self, qualname: str) -> Optional[Tuple[ModuleSource, List[str]]]:
        return longest_prefix(qualname, self.module)

    def is_project_name(self, qualname: str) -> bool:
        head = qualname.split(".")[0]
        if self.own.name and head == self.own.name.split(".")[0]:
            return True
        return self.modules is not None and self.modules.is_project_name(qualname)

    def resolve(self, qualname: str, depth: int = 0) -> Optional[Target]:
        if depth > MAX_CHAIN:
            return None
        found = self.split(qualname)
        if found is None:
            return None if self.is_project_name(qualname) else External(qualname)
        module, rest = found
        if not rest:
            return module
        summary = summary_of(module)
        if summary is None:
            return None
        head, tail = rest[0], rest[1:]
        if head in summary.imports:
            return self.resolve(".".join((summary.imports[head], *tail)), depth + 1)
        kind = summary.kinds.get(head)
        if kind is None or (kind != CLASS and tail):
            return None
        symbol = Symbol(module, (head,), kind)
        for attr in tail:
            member = self.member(symbol, attr, depth + 1) if symbol.is_class else None
            if member is None:
                return None
            symbol = member
        return symbol

    def reexport(self, qualname: str) -> Optional[External]:
        """What a project module re-exports from outside the project under this name, or None.
        Its import lines are scanned first: a name they do not bind is no re-export, and the
        module is not parsed to learn that."""
        split = self.split(qualname)
        if split is None or not split[1]:
            return None
        module, rest = split
        if rest[0] not in _import_table_of(module):
            return None
        found = self.resolve(qualname)
        return found if isinstance(found, External) else None

    def defining_module(self, qualname: str) -> Optional[ModuleSource]:
        """The module that defines what `qualname` names, following re-exports by import lines
        alone (`from pkg.runtime import spawn` in `pkg/__init__.py`): no parse."""
        found = self.defining(qualname)
        return found[0] if found is not None else None

    def defining(self, qualname: str) -> Optional[Tuple[ModuleSource, List[str]]]:
        """`defining_module`, with the name's parts within that module (`["TIMEOUT"]`)."""
        for _ in range(MAX_CHAIN):
            split = self.split(qualname)
            if split is None:
                return None
            module, rest = split
            if not rest:
                return module, rest
            table = _import_table_of(module)
            if rest[0] not in table:
                return module, rest
            qualname = ".".join((absolute_name(module.name, module.is_package, table[rest[0]]), *rest[1:]))
            if not self.is_project_name(qualname):
                return None
        return None

    def symbol(self, qualname: str) -> Optional[Symbol]:
        found = self.resolve(qualname)
        return found if isinstance(found, Symbol) else None

    def member(self, klass: Symbol, name: str, depth: int = 0) -> Optional[Symbol]:
        """`name` looked up in a project class and then its project bases (depth first:
        enough for single inheritance and the mixins services use). Only a method answers;
        a class attribute of that name, or a base we cannot follow, ends it unknown."""
        for owner in self.mro(klass, depth):
            table = self._table(owner)
            if table is None:
                return None
            kind = table.members.get(name)
            if kind is not None:
                return Symbol(owner.module, (*owner.path, name), kind) if kind == FUNCTION else None
        return None

    def mro(self, klass: Symbol, depth: int = 0) -> List[Symbol]:
        chain: List[Symbol] = []
        stack = [klass]
        while stack and len(chain) <= MAX_CHAIN and depth <= MAX_CHAIN:
            current = stack.pop()
            if any(c.module is current.module and c.path == current.path for c in chain):
                continue
            chain.append(current)
            table = self._table(current)
            if table is None:
                break
            bases: List[Symbol] = []
            for base in table.bases:
                target = self.resolve(base, depth + 1) if base is not None else None
                if isinstance(target, Symbol) and target.is_class:
                    bases.append(target)
            stack.extend(reversed(bases))
        return chain

    def bases_of(self, klass: Symbol) -> Tuple[Optional[str], ...]:
        """The absolute names of a project class's bases, as spelled (None: no plain name)."""
        table = self._table(klass)
        return table.bases if table is not None else ()

    def _table(self, klass: Symbol) -> Optional[ClassTable]:
        summary = summary_of(klass.module)
        if summary is None or len(klass.path) != 1:
            return None  # a nested class: not followed
        return summary.classes.get(klass.path[0])
