"""Shared by the status rules: which handlings a node opens, and the text prefilter, whose
words come from the vocabularies (never a list of names kept here)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, FrozenSet, Iterable, Optional, Tuple

from deadline_lint.analysis.handling import Handling, HandlingAnalysis, Outcome
from deadline_lint.catalog.exceptions import profile_types
from deadline_lint.catalog.statuses import Status, status_vocabulary
from deadline_lint.rules.base import Rule

if TYPE_CHECKING:
    from deadline_lint.context import FileContext


class WordFilter:
    """True when the text holds a word of every group (`groups`: tuples of alternatives)."""

    def __init__(self, *groups: Iterable[str]) -> None:
        # The smallest group first: a text lacking it is dismissed after the fewest searches.
        self.groups = tuple(sorted((tuple(sorted(set(group))) for group in groups), key=len))

    def __call__(self, text: str) -> bool:
        return all(any(word in text for word in group) for group in self.groups)


class GatedRule(Rule):
    """A rule whose own second look (`text_filter`) is asked once per file before it does any
    work there: with the prefilter off, or when another rule's words let a file in, most files
    have nothing for it."""

    # The text the answer was computed for, compared by identity (held rather than the
    # context, which would keep the last file's tree alive).
    _text: object = None
    _applies = False

    def text_filter(self) -> Callable[[str], bool]:
        raise NotImplementedError

    def applies(self, ctx: "FileContext") -> bool:
        text = ctx.source.text
        if text is not self._text:
            self._text = text
            self._applies = bool(self.text_filter()(text))
        return self._applies


class HandlingRule(GatedRule):
    """A rule judging what `except` clauses and `isinstance` / status-code branches produce."""

    node_types = (ast.ExceptHandler, ast.If)

    def handlings(self, node: ast.AST, ctx: "FileContext") -> Tuple[Handling, ...]:
        if not self.applies(ctx):
            return ()
        return ctx.analysis(HandlingAnalysis).at(node)

    def word_groups(self) -> Tuple[FrozenSet[str], ...]:
        """A file this rule can fire in spells a word of each group (e.g. a quota status and
        an expiry error)."""
        raise NotImplementedError

    def trigger_words(self) -> FrozenSet[str]:
        return self.word_groups()[0]

    def text_filter(self) -> Callable[[str], bool]:
        return self.catalog.cached(f"text_filter.{self.code}", lambda: WordFilter(*self.word_groups()))


def kind_words(rule: Rule, kind: str) -> FrozenSet[str]:
    """Words any code naming an error of `kind` spells: the last part of every type of that
    kind (catalog and profile) and the naming conventions for it."""
    vocabulary = rule.catalog.exceptions
    own = profile_types(rule.profile.exceptions)
    names = {t.short_name for t in [*vocabulary.types.values(), *own] if t.kind == kind}
    names.update(vocabulary.conventions.get(kind, ()))
    return frozenset(names)


def status_words(rule: Rule, statuses: Iterable[Status]) -> FrozenSet[str]:
    """Words code producing one of `statuses` spells: the number or gRPC name, and the last
    part of every listed name for it (`TOO_MANY_REQUESTS`, `HTTPTooManyRequests`)."""
    wanted = set(statuses)
    vocabulary = status_vocabulary(rule.catalog)
    words = {str(status) for status in wanted}
    words.update(name.rpartition(".")[2] for name, named in vocabulary.names.items() if named.status in wanted)
    return frozenset(words)


def profile_statuses(rule: Rule, *keys: str) -> Tuple[Status, ...]:
    return tuple(Status.of(getattr(rule.profile.statuses, key)) for key in keys)


def first_per_statement(outcomes: Iterable[Outcome]) -> Iterable[Outcome]:
    """One finding per statement, even when it says the same thing twice
    (`raise DeadlineExceeded(...)` is an expiry error and a 504)."""
    seen = set()
    for outcome in outcomes:
        if id(outcome.statement) not in seen:
            seen.add(id(outcome.statement))
            yield outcome


def shown(ctx: "FileContext", node: Optional[ast.AST], limit: int = 60) -> str:
    text = " ".join(ctx.source.segment(node).split()) if node is not None else ""
    return text if len(text) <= limit else text[: limit - 3] + "..."
