"""Facts families declare about a project's symbols, and their composition across modules.

A `Fact` says, for one module, what each of its functions, methods and top-level values is
(`Local`): either the fact holds there directly (`Local(payload, step)`: `spawn` returns
`loop.create_task(...)`), or it holds when it holds for other symbols the module names
(`Local(None, step, via=("pkg.tasks.spawn",))`). Local values depend on the module's text
alone, so they are memoised by its content hash and fact version (an unchanged module is never
looked at twice, whichever file asks). `ProjectFacts.answer` follows the `via` names through
the project, at most `MAX_HOPS` deep, and returns the payload with the chain of steps a message
names (`create_background_task` -> `loop.create_task`). A cycle, a name that resolves to nothing
and a chain too long answer None: the rule stays quiet.
"""
from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Generic, NamedTuple, Optional, Tuple, TypeVar

from deadline_lint.semantics import store
from deadline_lint.semantics.callers import forget_callers
from deadline_lint.semantics.modules import ModuleSource, absolute_name
from deadline_lint.semantics.receivers import forget_attribute_tables
from deadline_lint.semantics.scan import import_table
from deadline_lint.semantics.session import current
from deadline_lint.semantics.summary import (
    FUNCTION,
    FUNCTIONS,
    ModuleTree,
    Names,
    Symbol,
    class_members,
    content_key,
    forget_summaries,
    tree_of,
)

P = TypeVar("P")
MAX_HOPS = 4  # project symbols between a use and where the fact holds, at most


class Local(NamedTuple):
    """What one module says about one of its symbols for a fact."""

    payload: object  # the fact's value where it holds directly; None when it holds via others
    step: str  # how a message names this symbol (`create_background_task`)
    via: Tuple[str, ...] = ()  # absolute names: the fact holds here when it holds for one of them


class Answer(NamedTuple, Generic[P]):
    payload: P
    chain: Tuple[str, ...]  # from the symbol asked about to where the fact holds

    def names(self) -> str:
        return " -> ".join(f"`{step}`" for step in self.chain)


class Fact(Generic[P]):
    """A family's question about project symbols. Subclasses set `name` and `version` (bump it
    when `locals` changes, so values stored for an unchanged module are not reused) and say
    what a module's own functions, methods (`"C.m"`) and values (`"ERRORS"`) are."""

    name = "fact"
    version = 1
    # Modules or objects from outside the project whose re-export through a project module
    # matters to the family (by the name the project module binds: `from x.metrics import time`).
    reexported: FrozenSet[str] = frozenset()
    # The fact may hold for a def through what it returns (`return spawn(coro)`): a module whose
    # text fails `may_hold` is still read when a `return` calls a name imported from one that
    # passes. False for facts that hold only where they are written.
    through_returns = True
    # Facts asked about the same modules (a family's): computed from one parse of a module
    # whenever one of them is (see `_companion`).
    companions: Tuple["Fact", ...] = ()

    def locals(self, module: ModuleTree) -> Dict[str, Local]:
        found: Dict[str, Local] = {}
        for name, node in module.defs.items():
            if isinstance(node, FUNCTIONS):
                value = self.function(module, node, None)
                if value is not None:
                    found[name] = value
            elif isinstance(node, ast.ClassDef):
                for member, member_node in class_members(node).items():
                    if isinstance(member_node, FUNCTIONS):
                        value = self.function(module, member_node, node)
                        if value is not None:
                            found[f"{name}.{member}"] = value
        for name, expr in module.values.items():
            value = self.value(module, name, expr)
            if value is not None:
                found[name] = value
        return found

    def salt(self, module: ModuleSource) -> str:
        """What the module's local values depend on besides its text (a digest of what its
        project imports re-export, say): part of their memo key; "" for text alone."""
        return ""

    def may_hold(self, text: str) -> bool:
        """A module whose text fails this holds the fact nowhere by itself (only through a
        module it imports): a cheap look that spares most modules a parse."""
        return True

    def terminal(self, payload: P) -> Optional[str]:
        """How a message names where the fact holds, after the symbol's own step, if at all."""
        return None

    def function(self, module: ModuleTree, node: ast.AST, klass: Optional[ast.ClassDef]) -> Optional[Local]:
        return None

    def value(self, module: ModuleTree, name: str, expr: ast.expr) -> Optional[Local]:
        return None


def _locals() -> Dict[Tuple[str, str, int], Dict[str, Local]]:
    """Facts' local values, by content, fact and version."""
    return current().memo(Local)


def locals_of(fact: Fact, module: ModuleSource) -> Dict[str, Local]:
    """The fact's local values for a module, computed once per content hash (and name: a
    module's own names are part of what it says)."""
    content = content_key(module)
    salt = fact.salt(module)
    key = (content, fact.name + salt, fact.version)
    memo = _locals()
    found = memo.get(key)
    if found is not None:
        return found
    field = f"{fact.name}{salt}@{fact.version}"
    stored = store.entry(content)
    if stored is not None and field in stored:
        found = _decoded(stored[field])
    if found is None:
        tree = tree_of(module)
        found = _computed(fact, content, field, tree)
        if tree is not None:
            for other in fact.companions:
                _companion(other, module, content, tree)
    memo[key] = found
    return found


def _computed(fact: Fact, content: str, field: str, tree: Optional[ModuleTree]) -> Dict[str, Local]:
    found = fact.locals(tree) if tree is not None else {}
    store.put(content, field, {path: [_plain(v.payload), v.step, list(v.via)] for path, v in found.items()})
    return found


def _companion(fact: Fact, module: ModuleSource, content: str, tree: ModuleTree) -> None:
    """A companion's values from the tree in hand, when its text look lets the module hold it
    and neither the memo nor the store has them: it is asked about the same modules, and by
    then their trees would have been dropped (only one is held) and parsed again."""
    if not fact.may_hold(module.text):
        return
    salt = fact.salt(module)
    key = (content, fact.name + salt, fact.version)
    field = f"{fact.name}{salt}@{fact.version}"
    stored = store.entry(content)
    memo = _locals()
    if key in memo or (stored is not None and field in stored):
        return
    memo[key] = _computed(fact, content, field, tree)


def _plain(payload: object) -> object:
    return list(payload) if isinstance(payload, tuple) else payload


def _decoded(data: object) -> Optional[Dict[str, Local]]:
    """Local values read back from the store (tuples come back as tuples); None when the
    data has the wrong shape."""
    try:
        return {
            str(path): Local(tuple(v[0]) if isinstance(v[0], list) else v[0], str(v[1]), tuple(str(n) for n in v[2]))
            for path, v in data.items()  # type: ignore[attr-defined]
        }
    except (TypeError, IndexError, AttributeError):
        return None


def forget_facts() -> None:
    forget_callers()
    forget_attribute_tables()
    current().forget(Local, MayHold, ReturnedImports, HoldsIn)
    forget_summaries()


class MayHold:
    """The run's memo of `text_may_hold`, by content, fact and depth."""


class ReturnedImports:
    """The run's memo of `_returned_imports`, by content."""


def _returned_imports(module: ModuleSource) -> Tuple[Tuple[str, str], ...]:
    """(bound name, target) of the module's imports whose name some `return` calls."""
    key = content_key(module)
    memo: Dict[str, Tuple[Tuple[str, str], ...]] = current().memo(ReturnedImports)
    found = memo.get(key)
    if found is None:
        text = module.text
        returned = set()
        at = text.find("return ")
        while at != -1:
            start = at + 7
            end = start
            while end < len(text) and (text[end].isalnum() or text[end] == "_"):
                end += 1
            if end > start:
                returned.add(text[start:end])
            at = text.find("return ", start)
        found = memo[key] = tuple(sorted((b, t) for b, t in import_table(text).items() if b in returned))
    return found


def text_may_hold(fact: Fact, module: ModuleSource, names: Names, depth: int = 0) -> bool:
    """The fact can hold in the module: its text passes `fact.may_hold`, or it imports (by
    its import lines) a project module of which that is true, at most MAX_HOPS deep. Judged
    from texts alone, so most modules are never parsed for a fact. Remembered per module and
    depth, so the answer never depends on which file asked first, and each module's imports
    are looked at once per depth."""
    key = (content_key(module), fact.name, depth)
    memo: Dict[Tuple[str, str, int], bool] = current().memo(MayHold)
    known = memo.get(key)
    if known is not None:
        return known
    memo[key] = False  # an import cycle ends here
    text = module.text
    found = fact.may_hold(text)
    if not found and depth < MAX_HOPS and fact.through_returns:
        # Through another module only where a `return` hands back a call of a name imported
        # from it (`return spawn(coro)`, `return tasks.spawn(coro)`): a module merely importing
        # one that holds the fact holds nothing itself.
        for _, target in _returned_imports(module):
            target = absolute_name(module.name, module.is_package, target)
            if not names.is_project_name(target):
                continue
            split = names.split(target)
            if split is not None and split[0] is not module and text_may_hold(fact, split[0], names, depth + 1):
                found = True
                break
    memo[key] = found
    return found


class ProjectFacts:
    """Answers about project symbols for the file being checked (one per file)."""

    def __init__(self, names: Names) -> None:
        self.names = names
        self._answers: Dict[Tuple[str, str], Optional[Answer]] = {}
        self._active: set = set()

    def answer(self, fact: Fact[P], qualname: str) -> Optional[Answer[P]]:
        symbol = self.names.symbol(qualname)
        return self.about(fact, symbol) if symbol is not None else None

    def about(self, fact: Fact[P], symbol: Symbol, hops: int = 0) -> Optional[Answer[P]]:
        key = (fact.name, f"{symbol.module.digest}:{'.'.join(symbol.path)}")
        if key in self._answers:
            return self._answers[key]
        if key in self._active or hops > MAX_HOPS:
            return None  # a cycle or a chain too long: unknown
        if not text_may_hold(fact, symbol.module, self.names):
            return None
        local = locals_of(fact, symbol.module).get(".".join(symbol.path))
        found: Optional[Answer] = None
        if local is not None:
            if local.payload is not None:
                last = fact.terminal(local.payload)  # type: ignore[arg-type]
                found = Answer(local.payload, (local.step, last) if last else (local.step,))
            else:
                self._active.add(key)
                try:
                    for name in local.via:
                        target = self.names.symbol(name)
                        deeper = self.about(fact, target, hops + 1) if target is not None else None
                        if deeper is not None:
                            found = Answer(deeper.payload, (local.step, *deeper.chain))
                            break
                finally:
                    self._active.discard(key)
        if hops == 0 or found is not None or local is None:
            self._answers[key] = found  # a partial answer under an open cycle is not kept
        return found


def holds_in(fact: Fact, module: ModuleSource, names: Names) -> bool:
    """The fact holds for some symbol of the module (directly, or through the project).
    Answered once per project, module content and fact: every file importing the module
    asks it, and the answer depends on the project's modules only, unless it read the file
    being checked (whose text may not be the file's on disk): that answer is not kept."""
    if not text_may_hold(fact, module, names):
        return False
    key = (id(names.modules), content_key(module), fact.name, fact.version)
    memo: Dict[Tuple[int, str, str, int], Tuple[object, bool]] = current().memo(HoldsIn)
    known = memo.get(key)
    if known is not None and known[0] is names.modules:
        return known[1]
    watched = _Watched(names.modules, names.own)
    found = _holds_in(fact, module, watched)
    if not watched.read_own and module is not names.own:
        memo[key] = (names.modules, found)
    return found


class HoldsIn:
    """The run's memo of `holds_in`, by project, module content and fact."""


class _Watched(Names):
    """Names that notice a look at the file being checked."""

    read_own = False

    def module(self, name: str) -> Optional[ModuleSource]:
        if name == self.own.name:
            self.read_own = True
        return super().module(name)


def _holds_in(fact: Fact, module: ModuleSource, names: Names) -> bool:
    local = locals_of(fact, module)
    if any(value.payload is not None for value in local.values()):
        return True
    facts = ProjectFacts(names)
    for path in local:
        parts = tuple(path.split("."))
        if facts.about(fact, Symbol(module, parts, FUNCTION)) is not None:
            return True
    return False
