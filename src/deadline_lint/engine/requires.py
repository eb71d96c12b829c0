"""The prefilter's vocabulary: what a file's text must hold for a rule to fire there, declared by
the rule as scoped needs (`Rule.needs`) and per-node first looks (`Rule.first_looks`), and
bound once per `Checker`, which answers per file (and per function or class body) which rules
may fire. No rule looks at its own file's text.

    needs = (
        in_file(Words.of(outbound_words) & Text(outbound_imports) | Project(leads_to_a_client)),
        in_body(Names.of(outbound_words) | Aliases()),
    )

Where a need is asked is its scope (`Scope`): `in_file(need)`, the whole text, or the file is
not parsed for the rule; `on_visits(need, ast.Call)`, the whole text again, or the rule is not
visited on those node types in the file; `in_body(need)`, a function's or class's text
(decorators, signature and body), or its subtree is not walked for the rule. A rule declares
each scope at most once (per node type for visits).

- `Words("a", "b")`: the text contains one of them (substring tests, as flake8-async's and
  ruff's prefilters); `Words.of(derive)` takes them from the rule's catalog and profile,
  `Words.each(derive)` needs a word of every group `derive` gives.
- `Names(...)` / `Names.of(derive)`: one of them as a whole identifier (`time` in
  `time.time()`, not in `timeout`); `Aliases()`: a name some `as` in the file binds (`from
  time import time as now`), for a body whose calls may use one. Both are meant for bodies.
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
import enum
from typing import (
    Callable,
    Dict,
    FrozenSet,
    Hashable,
    Iterable,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Type,
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


class Scope(enum.Enum):
    """Where a need is asked."""

    FILE = "file"  # the whole text: the file is parsed for the rule only if it holds
    VISIT = "visit"  # the whole text, for visits of some node types only
    BODY = "body"  # a function's or class's text: its subtree is walked for the rule only if it holds


class Scoped(NamedTuple):
    """A need and where it is asked (`node_types`: the visits a `Scope.VISIT` need gates)."""

    scope: Scope
    need: Need
    node_types: Tuple[Type[ast.AST], ...] = ()


def in_file(need: Need) -> Scoped:
    return Scoped(Scope.FILE, need)


def in_body(need: Need) -> Scoped:
    return Scoped(Scope.BODY, need)


def on_visits(need: Need, *node_types: Type[ast.AST]) -> Scoped:
    return Scoped(Scope.VISIT, need, node_types)


class BoundScopes(NamedTuple):
    """A rule's scoped needs bound to its catalog and profile, one per scope (None: none asked
    there)."""

    file: Optional[Need]
    visits: Tuple[Tuple[Type[ast.AST], Need], ...]
    body: Optional[Need]


def bind_scoped(needs: Iterable[Scoped], rule: object) -> BoundScopes:
    """`needs` bound to `rule`; a scope (or a visited node type) declared twice is an error, so
    a rule's prefilter reads in one place."""
    file: Optional[Need] = None
    body: Optional[Need] = None
    visits: Dict[Type[ast.AST], Need] = {}
    for scoped in needs:
        bound = scoped.need.bind(rule)
        if scoped.scope is Scope.FILE:
            if file is not None:
                raise TypeError(f"{type(rule).__name__} declares two file needs")
            file = bound
        elif scoped.scope is Scope.BODY:
            if body is not None:
                raise TypeError(f"{type(rule).__name__} declares two body needs")
            body = bound
        else:
            for node_type in scoped.node_types:
                if node_type in visits:
                    raise TypeError(f"{type(rule).__name__} declares two needs for {node_type.__name__} visits")
                visits[node_type] = bound
    return BoundScopes(file, tuple(visits.items()), body)


# -- evaluation ----------------------------------------------------------------------------
def _key(leaf: Need) -> Hashable:
    if isinstance(leaf, Names):
        return ("names", leaf.words)
    if isinstance(leaf, Aliases):
        return ("aliases",)
    if isinstance(leaf, Words):
        return ("words", leaf.words)
    return (type(leaf).__name__, id(getattr(leaf, "test", None)))


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
    "Need", "Words", "Names", "Aliases", "Text", "Project", "Look", "AnyOf", "AllOf", "signature",
    "describe", "Scope", "Scoped", "in_file", "in_body", "on_visits", "BoundScopes", "bind_scoped",
]
