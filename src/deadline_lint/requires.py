"""The prefilter's vocabulary: what a file's text must hold for a rule to fire there, declared by
the rule (`Rule.requires`, `Rule.visit_requires`, `Rule.body_requires`, `Rule.first_looks`) and
compiled once per `Checker` into one `Matcher`, which answers per file (and per function or
class body) which rules may fire. No rule looks at its own file's text.

    requires = Words.of(outbound_words) & Text(outbound_imports) | Project(leads_to_a_client)

- `Words("a", "b")`: the text contains one of them (substring tests, as flake8-async's and
  ruff's prefilters); `Words.of(derive)` takes them from the rule's catalog and profile,
  `Words.each(derive)` needs a word of every group `derive` gives.
- `Names(...)` / `Names.of(derive)`: one of them as a whole identifier (`time` in
  `time.time()`, not in `timeout`); `Aliases()`: a name some `as` in the file binds (`from
  time import time as now`), for a body whose calls may use one. Both are meant for bodies.
- `Reaches.of(derive, imports)`: for bodies of rules whose subject may be bound outside the
  body (a client built at module level, a wrapper defined beside it): the body spells one of
  the words, or names as a whole identifier something the module binds at top level in a
  statement that spells one of them or a name so reached (followed to a fixpoint). At file
  level it passes.
- `Text(derive)`: a finer look at the whole text (an import line of a listed module, a header
  key in a literal): `derive(rule)` returns a shared predicate `text -> bool`. In a body it
  cannot tell, so it passes there.
- `Project(derive)`: the file's project (`(text, path) -> bool`, or None when the rule does not
  look beyond the text), asked only where the text alone says no.
- `a | b`, `a & b`: either, both (evaluated left to right, each leaf asked once per file).
- `Look(test)` / `Look.of(derive)`: not a text need but a per-node first look, `(node, ctx)
  -> truthy`, that every node the rule can report on passes; rules offering the same test are
  visited behind one call of it per node.

Leaves are compared by value (words) or by the identity of their predicate, so rules that
declare the same need share one answer.
"""
from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from typing import (
    Callable,
    Dict,
    FrozenSet,
    Hashable,
    Iterable,
    List,
    Optional,
    Sequence,
    Tuple,
)

TextTest = Callable[[str], bool]
PathTest = Callable[[str, str], bool]
NodeTest = Callable[..., object]  # (node, ctx) -> truthy, for the node types it is declared for


class Need:
    """A condition on a file's text; combine with `|` and `&`."""

    def __or__(self, other: "Need") -> "Need":
        return AnyOf((self, other))

    def __and__(self, other: "Need") -> "Need":
        return AllOf((self, other))

    def bind(self, rule: object) -> "Need":
        """This need with everything taken from `rule`'s catalog and profile resolved."""
        return self

    def leaves(self) -> Iterable["Need"]:
        yield self


class Words(Need):
    """The text contains one of `words`."""

    def __init__(self, *words: str) -> None:
        self.words: FrozenSet[str] = frozenset(words)
        self._derive: Optional[Callable[[object], Iterable[str]]] = None

    @classmethod
    def of(cls, derive: Callable[..., Iterable[str]]) -> "Words":
        """Words taken from the rule: `derive(rule)`."""
        need = cls()
        need._derive = derive
        return need

    @classmethod
    def each(cls, derive: Callable[..., Iterable[Iterable[str]]]) -> Need:
        """A word of every group `derive(rule)` gives (e.g. a quota status and an expiry error)."""
        return _EachGroup(derive)

    def bind(self, rule: object) -> Need:
        return self if self._derive is None else Words(*self._derive(rule))

    def __repr__(self) -> str:
        if self._derive is None:
            return f"Words({', '.join(sorted(self.words))})"
        return f"Words.of({self._derive.__name__})"


class Names(Words):
    """One of `words` as a whole identifier."""

    def bind(self, rule: object) -> Need:
        return self if self._derive is None else Names(*self._derive(rule))

    def __repr__(self) -> str:
        return "Names(...)"


class Aliases(Need):
    """A name bound by an `as` anywhere in the file (a superset of the import aliases)."""

    def __repr__(self) -> str:
        return "Aliases()"


class Reaches(Need):
    """A body that spells one of `words`, or, as a whole identifier, a name the module binds
    at its top level (an import, a def or class, an assignment's target, a `global` inside a
    function) in a statement that spells one of `words` or a name already reached; with
    `imports`, every name an import binds is reached (the project index may lead it anywhere).

    Sound for a rule whose subject at a call is typed only through names: what a call's
    receiver or callee stands for is then spelled in the body, or bound by a module-level
    statement that spells it in turn (a name bound by a star import reaches everything)."""

    def __init__(self, *words: str, leads: Optional[TextTest] = None, imports: bool = False) -> None:
        self.words: FrozenSet[str] = frozenset(words)
        self.leads = leads  # an imported dotted name -> whether it can stand for a subject
        self.imports = imports
        self._derive: Optional[Callable[..., Tuple[Iterable[str], Optional[TextTest], bool]]] = None

    @classmethod
    def of(cls, derive: Callable[..., Tuple[Iterable[str], Optional[TextTest], bool]]) -> "Reaches":
        """`derive(rule)` gives the words, the import test (None: an import reaches when its
        text spells a word) and whether every import reaches."""
        need = cls()
        need._derive = derive
        return need

    def bind(self, rule: object) -> Need:
        if self._derive is None:
            return self
        words, leads, imports = self._derive(rule)
        return Reaches(*words, leads=leads, imports=imports)

    def __repr__(self) -> str:
        return "Reaches(...)"


class _EachGroup(Need):
    def __init__(self, derive: Callable[..., Iterable[Iterable[str]]]) -> None:
        self._derive = derive

    def bind(self, rule: object) -> Need:
        # The smallest group first: a text lacking it is dismissed after the fewest searches.
        groups = sorted((frozenset(group) for group in self._derive(rule)), key=len)
        return AllOf([Words(*group) for group in groups])


class Text(Need):
    """A finer look at the whole text: `derive(rule)` gives a shared `text -> bool`."""

    def __init__(self, derive: Callable[..., TextTest], test: Optional[TextTest] = None) -> None:
        self._derive = derive
        self.test = test

    def bind(self, rule: object) -> Need:
        return self if self.test is not None else Text(self._derive, self._derive(rule))

    def __repr__(self) -> str:
        return f"Text({getattr(self._derive, '__name__', '?')})"


class Project(Need):
    """The file's project: `derive(rule)` gives a shared `(text, path) -> bool`, or None."""

    def __init__(self, derive: Callable[..., Optional[PathTest]], test: Optional[PathTest] = None) -> None:
        self._derive = derive
        self.test = test
        self._bound = test is not None

    def bind(self, rule: object) -> Need:
        if self._bound:
            return self
        bound = Project(self._derive, self._derive(rule))
        bound._bound = True
        return bound

    def __repr__(self) -> str:
        return f"Project({getattr(self._derive, '__name__', '?')})"


class _Combined(Need):
    """Parts joined by `symbol`: AnyOf (`|`) and AllOf (`&`) differ only in how they are asked."""

    symbol = ""

    def __init__(self, parts: Sequence[Need]) -> None:
        self.parts = tuple(parts)

    def bind(self, rule: object) -> Need:
        return type(self)([p.bind(rule) for p in self.parts])

    def leaves(self) -> Iterable[Need]:
        for part in self.parts:
            yield from part.leaves()

    def __repr__(self) -> str:
        return "(" + f" {self.symbol} ".join(map(repr, self.parts)) + ")"


class AnyOf(_Combined):
    symbol = "|"


class AllOf(_Combined):
    symbol = "&"


class Look:
    """A per-node first look, `(node, ctx) -> truthy`, shared by the rules offering the same test."""

    def __init__(self, test: Optional[NodeTest] = None, derive: Optional[Callable[..., NodeTest]] = None) -> None:
        self.test = test
        self._derive = derive

    @classmethod
    def of(cls, derive: Callable[..., NodeTest]) -> "Look":
        return cls(derive=derive)

    def bind(self, rule: object) -> NodeTest:
        test = self.test if self._derive is None else self._derive(rule)
        assert test is not None
        return test


# -- evaluation ----------------------------------------------------------------------------
def _key(leaf: Need) -> Hashable:
    if isinstance(leaf, Reaches):
        return ("reaches", leaf.words, id(leaf.leads), leaf.imports)
    if isinstance(leaf, Names):
        return ("names", leaf.words)
    if isinstance(leaf, Aliases):
        return ("aliases",)
    if isinstance(leaf, Words):
        return ("words", leaf.words)
    return (type(leaf).__name__, id(getattr(leaf, "test", None)))


class FileAnswers:
    """One file's answers, each leaf asked at most once: `holds(need)` at file level, and
    `in_span(need, start, end)` for a body (words found between two character offsets; a
    `Text` or `Project` leaf cannot tell there and passes)."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self._words: Dict[str, bool] = {}
        self._tests: Dict[int, bool] = {}
        self._positions: Dict[object, List[int]] = {}
        self._alias_names: Optional[FrozenSet[str]] = None
        self._reach: Dict[Hashable, Optional[FrozenSet[str]]] = {}
        self._spans: Dict[Tuple[int, int], FrozenSet[str]] = {}
        self._present: Dict[FrozenSet[str], Tuple[str, ...]] = {}
        self._classes: Optional[List[Tuple[int, int, ast.ClassDef]]] = None
        # The parsed module, for `Reaches` (set by the engine before the walk; None: passes).
        self.tree: Optional[ast.Module] = None
        self.line_starts: Sequence[int] = ()

    def word(self, word: str) -> bool:
        found = self._words.get(word)
        if found is None:
            found = self._words[word] = word in self.text
        return found

    def holds(self, need: Optional[Need]) -> bool:
        if need is None or isinstance(need, (Aliases, Reaches)):
            return True
        if isinstance(need, Names):
            return bool(self._identifier_positions(need.words))
        if isinstance(need, Words):
            return any(self.word(w) for w in need.words)
        if isinstance(need, AllOf):
            return all(self.holds(p) for p in need.parts)
        if isinstance(need, AnyOf):
            return any(self.holds(p) for p in need.parts)
        if isinstance(need, Text):
            return self._asked(need.test, lambda: need.test(self.text))  # type: ignore[misc]
        if isinstance(need, Project):
            if need.test is None:
                return False
            return self._asked(need.test, lambda: need.test(self.text, self.path))  # type: ignore[misc]
        raise TypeError(f"not a need: {need!r}")

    def _asked(self, test: object, answer: Callable[[], bool]) -> bool:
        found = self._tests.get(id(test))
        if found is None:
            found = self._tests[id(test)] = bool(answer())
        return found

    def in_span(self, need: Optional[Need], start: int, end: int) -> bool:
        if need is None or isinstance(need, (Text, Project)):
            return True
        if isinstance(need, Names):
            return _between(self._identifier_positions(need.words), start, end)
        if isinstance(need, Aliases):
            return _between(self._identifier_positions(self._aliases()), start, end)
        if isinstance(need, Reaches):
            if any(self._word_between(w, start, end) for w in self.present(need.words)):
                return True
            if need.imports and self._word_between("import", start, end):
                return True  # a local import the project index may lead anywhere
            reached = self._reached(need)
            if reached is None:
                return True
            spelled = self.identifiers(start, end)
            if not spelled.isdisjoint(reached):
                return True
            members = self._class_members(need, start, end)
            return members is None or not spelled.isdisjoint(members)
        if isinstance(need, Words):
            return any(self._word_between(w, start, end) for w in need.words)
        if isinstance(need, AllOf):
            return all(self.in_span(p, start, end) for p in need.parts)
        if isinstance(need, AnyOf):
            return any(self.in_span(p, start, end) for p in need.parts)
        raise TypeError(f"not a need: {need!r}")

    def _word_between(self, word: str, start: int, end: int) -> bool:
        if not self.word(word):
            return False
        positions = self._positions.get(word)
        if positions is None:
            positions = self._positions[word] = _occurrences(self.text, word)
        index = bisect_left(positions, start)
        return index < len(positions) and positions[index] + len(word) <= end


    def _identifier_positions(self, names: FrozenSet[str]) -> List[int]:
        """Where any of `names` stands as a whole identifier, in order (one regex pass)."""
        positions = self._positions.get(names)
        if positions is None:
            present = sorted(n for n in names if self.word(n))
            if not present:
                positions = []
            else:
                pattern = re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, present)))
                positions = [match.start() for match in pattern.finditer(self.text)]
            self._positions[names] = positions
        return positions

    def _reached(self, need: Reaches) -> Optional[FrozenSet[str]]:
        """The names `need` reaches in this module (None: any name may, or no tree to tell)."""
        key = _key(need)
        if key in self._reach:
            return self._reach[key]
        found = None if self.tree is None else _reached_names(self, need)
        self._reach[key] = found
        return found

    def narrows_inside(self, need: Need, node: ast.AST) -> bool:
        """Whether `need`, holding for the class `node`, is asked again of its methods: only a
        `Reaches` (alone or beside words), and only where the class's header (decorators,
        bases, keywords) spells neither a word nor a reached name: a method of a class deriving
        from a client may call it through `self` alone."""
        parts = need.parts if isinstance(need, AnyOf) else (need,)
        reaches = [p for p in parts if isinstance(p, Reaches)]
        if not reaches or any(type(p) is not Words and not isinstance(p, Reaches) for p in parts):
            return False
        body = getattr(node, "body", None)
        if not body or self.tree is None:
            return False
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])  # type: ignore[attr-defined]
        start = self.line_starts[first - 1]
        end = self.line_starts[max(body[0].lineno - 1, node.lineno)]  # type: ignore[attr-defined]
        for part in reaches:
            if any(self._word_between(w, start, end) for w in self.present(part.words)):
                return False
            reached = self._reached(part)
            if reached is None:
                return False
            spelled = set(_IDENTIFIER.findall(self.text, start, end)) - {node.name}  # type: ignore[attr-defined]
            if not spelled.isdisjoint(reached):  # its own name is no base
                return False
        return True

    def _class_members(self, need: Reaches, start: int, end: int) -> Optional[FrozenSet[str]]:
        """Inside a top-level class: the names its members bind (methods, class attributes,
        attributes assigned anywhere in it) reached from a member spelling a word or a name the
        module reaches; empty outside a class."""
        if self._classes is None:
            starts = self.line_starts
            self._classes = [
                (starts[min([c.lineno, *(d.lineno for d in c.decorator_list)]) - 1], starts[c.end_lineno], c)  # type: ignore[index]
                for c in (self.tree.body if self.tree is not None else ()) if isinstance(c, ast.ClassDef)
            ]
        index = bisect_right(self._classes, start, key=lambda entry: entry[0])
        if index == 0:
            return frozenset()
        first, last, klass = self._classes[index - 1]
        if first == start or end > last:
            return frozenset()  # the class itself (top-level classes never nest), or none
        key = (_key(need), first)
        if key not in self._reach:
            self._reach[key] = _members_reached(self, need, klass)
        return self._reach[key]

    def present(self, words: FrozenSet[str]) -> Tuple[str, ...]:
        """Those of `words` the file's text holds at all (asked once per set of words)."""
        found = self._present.get(words)
        if found is None:
            found = self._present[words] = tuple(w for w in words if self.word(w))
        return found

    def identifiers(self, start: int, end: int) -> FrozenSet[str]:
        """The identifiers spelled between two offsets (each span read once per file)."""
        found = self._spans.get((start, end))
        if found is None:
            found = self._spans[(start, end)] = frozenset(_IDENTIFIER.findall(self.text, start, end))
        return found

    def _aliases(self) -> FrozenSet[str]:
        if self._alias_names is None:
            self._alias_names = frozenset(_AS_NAME.findall(self.text))
        return self._alias_names


_AS_NAME = re.compile(r"\bas\s+(\w+)")
_GLOBAL = re.compile(r"\bglobal\b")
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_OWN_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _reached_names(answers: FileAnswers, need: Reaches) -> Optional[FrozenSet[str]]:
    """`Reaches`: the module's top-level statements as units (their span and the names they
    bind; the statements of an `if` / `try` / `with` / loop at top level are units of their
    own), those spelling a word seeding the names reached, then every unit spelling a reached
    name reaching its own, until nothing changes. An import reaches the names it binds that
    `need.leads` (or, without one, its text's words) admits; every name with `need.imports`."""
    text, starts = answers.text, answers.line_starts
    units: List[Tuple[int, int, FrozenSet[str]]] = []
    reached: set = set()
    frontier: set = set()
    stack: List[ast.stmt] = list(reversed(answers.tree.body))  # type: ignore[union-attr]
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            leading = _imports_reaching(stmt, need, answers, starts)
            if leading is None:
                return None  # a star import: any name may stand for anything
            frontier.update(leading)
            continue
        nested = [child for field in _NESTED_BODIES for child in getattr(stmt, field, ()) or ()]
        if nested and not isinstance(stmt, _OWN_SCOPES):
            for handler in getattr(stmt, "handlers", ()) or ():
                nested.extend(handler.body)
            for case in getattr(stmt, "cases", ()) or ():
                nested.extend(case.body)
            stack.extend(reversed(nested))
            # The header (`with requests.Session() as s:`, `for x in ...:`) binds too.
            bound = _stored_names([node for field in _HEADERS for node in _as_list(getattr(stmt, field, None))])
            first, last = stmt.lineno, max(stmt.lineno, nested[0].lineno - 1)
        else:
            bound = _bound_at_top(stmt, text, starts)
            first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
            last = stmt.end_lineno  # type: ignore[assignment]
        if bound:
            units.append((starts[first - 1], starts[last], frozenset(bound)))  # type: ignore[index]
    waiting = []
    words = answers.present(need.words)
    for unit in units:
        if any(answers._word_between(w, unit[0], unit[1]) for w in words):
            frontier.update(unit[2])
        else:
            waiting.append(unit)
    return _fixpoint(answers, reached, frontier, waiting)


def _fixpoint(answers: FileAnswers, reached: set, frontier: set, waiting: list) -> FrozenSet[str]:
    """Every unit waiting that spells a reached name reaches what it binds, until no more do."""
    while frontier:
        reached |= frontier
        still = []
        frontier = set()
        for unit in waiting:
            if answers.identifiers(unit[0], unit[1]).isdisjoint(reached):
                still.append(unit)
            else:
                frontier.update(unit[2] - reached)
        waiting = still
    return frozenset(reached)


_NESTED_BODIES = ("body", "orelse", "finalbody")
_HEADERS = ("test", "iter", "target", "items", "subject")


def _as_list(value: object) -> List[ast.AST]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]  # type: ignore[list-item]


def _imports_reaching(
    stmt: ast.stmt, need: Reaches, answers: FileAnswers, starts: Sequence[int]
) -> Optional[set]:
    """The names an import binds that may stand for a subject (None for a star import)."""
    names = stmt.names  # type: ignore[attr-defined]
    if any(alias.name == "*" for alias in names):
        return None
    def bound_name(alias: ast.alias) -> str:
        return alias.asname or (alias.name if isinstance(stmt, ast.ImportFrom) else alias.name.split(".")[0])

    bound = {bound_name(alias) for alias in names}
    if need.imports:
        return bound
    if need.leads is None:
        spelled = any(answers._word_between(w, starts[stmt.lineno - 1], starts[stmt.end_lineno]) for w in need.words)  # type: ignore[index]
        return bound if spelled else set()
    leading = set()
    for alias in names:
        if isinstance(stmt, ast.ImportFrom):
            # A relative import is of the project, which only the index follows.
            if not stmt.level and need.leads(f"{stmt.module}.{alias.name}"):
                leading.add(bound_name(alias))
        elif need.leads(alias.name if alias.asname else alias.name.split(".")[0]):
            leading.add(bound_name(alias))  # `import redis` binds the module: anything in it
    return leading


def _stored_names(nodes: List[ast.AST]) -> set:
    bound = set()
    for top in nodes:
        for node in ast.walk(top):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                bound.add(node.id)
    return bound


def _members_reached(answers: FileAnswers, need: Reaches, klass: ast.ClassDef) -> Optional[FrozenSet[str]]:
    """`FileAnswers._class_members`, to a fixpoint like `_reached_names`."""
    starts = answers.line_starts
    module = answers._reached(need) or frozenset()
    units: List[Tuple[int, int, FrozenSet[str]]] = []
    for stmt in klass.body:
        first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
        units.append((starts[first - 1], starts[stmt.end_lineno], frozenset(_bound_in_class(stmt))))  # type: ignore[index]
    reached: set = set()
    frontier: set = set()
    waiting = []
    words = answers.present(need.words)
    for unit in units:
        start, end, bound = unit
        if any(answers._word_between(w, start, end) for w in words) or not answers.identifiers(
            start, end
        ).isdisjoint(module):
            frontier.update(bound)
        else:
            waiting.append(unit)
    return _fixpoint(answers, reached, frontier, waiting)


def _bound_in_class(stmt: ast.stmt) -> set:
    """What a member of a class binds there, over-approximated: its own name or targets, and
    every attribute assigned anywhere inside it (`self.session = ...`), with the names of the
    functions and classes nested in it. Only statements are walked: every store of an
    attribute is a statement's target (a walrus binds names only)."""
    bound = set()
    stack: List[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, _OWN_SCOPES):
            bound.add(node.name)
        targets: List[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
            targets = [node.target]
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and not isinstance(part.ctx, ast.Load):
                    bound.add(part.attr)
                elif isinstance(part, ast.Name) and not isinstance(part.ctx, ast.Load):
                    bound.add(part.id)
        for field in _NESTED_BODIES:
            stack.extend(getattr(node, field, ()) or ())
        for handler in getattr(node, "handlers", ()) or ():
            stack.extend(handler.body)
        for case in getattr(node, "cases", ()) or ():
            stack.extend(case.body)
    return bound


def _bound_at_top(stmt: ast.stmt, text: str, starts: Sequence[int]) -> set:
    """The names a simple top-level statement, def or class binds in the module: a def's or
    class's name and the names its functions declare `global`; for any other statement every
    name stored in it (the root name of an assigned attribute or item too)."""
    if isinstance(stmt, _OWN_SCOPES):
        bound = {stmt.name}
        if _GLOBAL.search(text, starts[stmt.lineno - 1], starts[stmt.end_lineno]):  # type: ignore[index]
            for node in ast.walk(stmt):
                if isinstance(node, ast.Global):
                    bound.update(node.names)
        return bound
    bound = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load):
            root = node.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name):
                bound.add(root.id)
    return bound


def _between(positions: List[int], start: int, end: int) -> bool:
    index = bisect_left(positions, start)
    return index < len(positions) and positions[index] < end


def _occurrences(text: str, word: str) -> List[int]:
    found = []
    at = text.find(word)
    while at >= 0:
        found.append(at)
        at = text.find(word, at + 1)
    return found


def signature(need: Optional[Need]) -> Hashable:
    """Equal for needs that always give the same answer (rules grouped behind one question)."""
    if need is None:
        return None
    if isinstance(need, (AnyOf, AllOf)):
        return (type(need).__name__, tuple(signature(p) for p in need.parts))
    return _key(need)


def describe(need: Optional[Need]) -> str:
    return "anywhere" if need is None else repr(need)


__all__ = [
    "Need", "Words", "Names", "Aliases", "Reaches", "Text", "Project", "Look", "AnyOf", "AllOf", "FileAnswers",
    "signature", "describe",
]
