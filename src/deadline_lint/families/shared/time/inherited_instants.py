"""Wall-clock instants a base class in another project module keeps on `self` (issue 32).

`kept_deadlines` follows a class's bases within its module; a base imported from another
project module (`from pkg.base import Timer`, `class Export(Timer)`) is followed here: the
base's module is read as a summary, and only a module whose text stores the attribute
(`.name =`) and calls a clock is parsed, its methods' stores judged as in that module alone.
Precision first: a base that is no project class (a library, a dynamic expression), a base in
a test module, a nested class or a chain too long makes what the bases store unknown.

The reads come back as stand-ins that name where they were made (`pkg/base.py:12`), since
the other module's tree is not kept; no fix is offered for them.
"""
from __future__ import annotations

import ast
import os
import re
from types import SimpleNamespace
from typing import Any, Dict, List, Optional, Set, Tuple

from deadline_lint.families.shared.time.clock_catalog import WALL
from deadline_lint.families.shared.time.clock_reads import ClockRead
from deadline_lint.semantics.callers import is_test_path
from deadline_lint.semantics.file import FileSemantics
from deadline_lint.semantics.local.resolve import Resolver
from deadline_lint.semantics.summary import MAX_CHAIN, External, Names, Symbol, summary_of, tree_of
from deadline_lint.support.source import SourceFile

# Bases that keep no attribute of a subclass, by the name a summary resolves them to.
NEUTRAL = frozenset({
    "object", "builtins.object", "abc.ABC", "typing.Generic", "typing.Protocol", "typing_extensions.Protocol",
})
Stores = Optional[List[Optional[Any]]]  # each store's TimeValue (None: one that cannot count); None: unknown


class InheritedInstants:
    """Per checked file: what the bases in other project modules store under an attribute."""

    def __init__(self, names: Names, root: str, catalog: Any, profile: Any, times_type: Any) -> None:
        self.names = names
        self.root = root
        self.catalog = catalog
        self.profile = profile
        self.times_type = times_type  # TimeValues, handed in: importing it here would be a cycle
        self._answers: Dict[Tuple[str, str], Stores] = {}

    def base_stores(self, base: ast.expr, attr: str, may_store: Any) -> Stores:
        """What the base a class of the checked module spells stores (None: unknown)."""
        summary = summary_of(self.names.own)
        qualname = summary.qualname_of(base) if summary is not None and self.names.own.name else None
        return self.stores(qualname, attr, may_store) if qualname is not None else None

    def stores(self, qualname: str, attr: str, may_store: Any) -> Stores:
        """The stores of `self.<attr>` in the project class `qualname` names and its bases;
        None when one of them cannot be followed. `may_store(text, attr)` is the word test a
        module's text passes before it is parsed."""
        key = (qualname, attr)
        if key not in self._answers:
            self._answers[key] = self._stores(qualname, attr, may_store)
        return self._answers[key]

    def _stores(self, qualname: str, attr: str, may_store: Any) -> Stores:
        found: List[Optional[Any]] = []
        pending: List[str] = [qualname]
        seen: Set[Tuple[Optional[str], str]] = set()
        while pending:
            name = pending.pop()
            if name in NEUTRAL:
                continue
            if len(seen) > MAX_CHAIN:
                return None
            target = self.names.resolve(name)
            if isinstance(target, External) and target.qualname in NEUTRAL:
                continue
            if not isinstance(target, Symbol) or not target.is_class or len(target.path) != 1:
                return None
            if target.module is self.names.own or is_test_path(target.module.path or ""):
                return None  # the checked module's own classes are followed where they are
            place = (target.module.path, target.path[0])
            if place in seen:
                continue
            seen.add(place)
            bases = self.names.bases_of(target)
            stores = may_store(target.module.text, attr)
            if stores or None in bases:
                module_stores = self._module_stores(target, attr, stores, pending)
                if module_stores is None:
                    return None
                found.extend(module_stores)
            else:
                pending.extend(b for b in bases if b is not None)
        return found

    def _module_stores(self, target: Symbol, attr: str, stores: bool, pending: List[str]) -> Stores:
        """The class's own stores of the attribute, read from its module's tree; its bases go
        on `pending` (a base no plain name spells must be a neutral one)."""
        tree = tree_of(target.module)
        node = tree.defs.get(target.path[0]) if tree is not None else None
        if tree is None or not isinstance(node, ast.ClassDef):
            return None
        for base in node.bases:
            spelled = tree.qualname_of(base)
            if spelled is not None:
                pending.append(spelled)
            elif not (isinstance(base, ast.Name) and base.id in NEUTRAL):
                return None
        if not stores:
            return []
        resolver = Resolver(self.catalog, {id(tree.tree): tree.scope})
        try:
            source = SourceFile(target.module.text, target.module.path or "")
            times = self.times_type(SimpleNamespace(resolver=resolver, catalog=self.catalog, profile=self.profile,
                                                    source=source))
            values = times.kept(tree.scope).stored_values({(id(node), attr): True})
            where = os.path.relpath(target.module.path, self.root).replace(os.sep, "/") if target.module.path else "?"
            return [_carried(value, where, source) if value is not None else None for value in values]
        finally:
            resolver.release()


def inherited_instants(times: Any) -> Optional[InheritedInstants]:
    """The checked file's reader of bases elsewhere; None outside a check or a project (a
    project module read for a check has no project of its own: no chain goes on from it)."""
    ctx: Any = getattr(times, "ctx", None)
    analysis = getattr(ctx, "analysis", None)
    if ctx is None or analysis is None:
        return None
    semantics = analysis(FileSemantics)
    project = semantics.names.modules
    if project is None:
        return None
    return InheritedInstants(semantics.names, project.root, ctx.catalog, ctx.profile, times.__class__)


def _carried(value: Any, where: str, source: SourceFile) -> Optional[Any]:
    """The value with each read a stand-in naming where it was made."""
    if value.clock != WALL:
        return None
    reads = []
    for read in value.reads:
        node = ast.Call(func=ast.Name(id=read.qualname, ctx=ast.Load()), args=[], keywords=[])
        node.lineno = node.end_lineno = read.node.lineno
        node.col_offset = node.end_col_offset = 0
        shown = source.segment(read.node)
        reads.append(ClockRead(node, WALL, read.unit, read.qualname, None, elsewhere=f"{where}:{read.node.lineno}",
                               shown=shown))
    return type(value)(value.role, WALL, value.unit, tuple(reads), True)


_ANNOTATED_ASSIGNMENT = re.compile(r"\s*(?::[^=\n]*)?=(?!=)")


def stores_under(text: str, name: str) -> bool:
    """The text has `.name =` (`.name: T =`) or `name=` after `(` or `,`: what the regex
    `\\.name\\s*(?::[^=\\n]*)?=(?!=)|[(,]\\s*name=(?!=)` finds, found from the name's
    occurrences instead; that regex starts with no literal, so it was tried at every
    character of the file, once per name asked (4% of a cold check of the services corpus)."""
    size = len(name)
    at = text.find(name)
    while at >= 0:
        end = at + size
        if at and text[at - 1] == "." and _ANNOTATED_ASSIGNMENT.match(text, end):
            return True
        if text.startswith("=", end) and not text.startswith("==", end):
            before = at - 1
            while before >= 0 and text[before].isspace():  # what the regex's `\s` matches
                before -= 1
            if before >= 0 and text[before] in "(,":
                return True
        at = text.find(name, at + 1)
    return False
