"""Shared by the status rules: which handlings a node opens, and the words their prefilter
needs, which come from the vocabularies (never a list of names kept here)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, ClassVar, FrozenSet, Iterable, Optional, Set, Tuple

from deadline_lint.catalog.exceptions import profile_types
from deadline_lint.engine.requires import Scoped, Words, in_file
from deadline_lint.engine.rule import Rule
from deadline_lint.families.shared.errors.handling import Handling, HandlingAnalysis, Outcome
from deadline_lint.families.shared.errors.status_catalog import Status, status_vocabulary

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


class HandlingRule(Rule):
    """A rule judging what `except` clauses and `isinstance` / status-code branches produce."""

    node_types = (ast.ExceptHandler, ast.If, ast.FunctionDef, ast.AsyncFunctionDef)  # and registered handlers

    needs: ClassVar[Tuple[Scoped, ...]] = (in_file(Words.each(lambda rule: rule.word_groups())),)

    def visit_ExceptHandler(self, node: ast.ExceptHandler, ctx: "FileView") -> None:
        self.judge(self.handlings(node, ctx), ctx)

    def visit_If(self, node: ast.If, ctx: "FileView") -> None:
        self.judge(self.handlings(node, ctx), ctx)

    def visit_FunctionDef(self, node: ast.FunctionDef, ctx: "FileView") -> None:
        self.judge(self.handlings(node, ctx), ctx)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef, ctx: "FileView") -> None:
        self.judge(self.handlings(node, ctx), ctx)

    def handlings(self, node: ast.AST, ctx: "FileView") -> Tuple[Handling, ...]:
        return ctx.analysis(HandlingAnalysis).at(node)

    def judge(self, found: Tuple[Handling, ...], ctx: "FileView") -> None:
        """Report what the handlings opened at the node being visited produce."""
        raise NotImplementedError

    def word_groups(self) -> Tuple[FrozenSet[str], ...]:
        """A file this rule can fire in spells a word of each group (e.g. a quota status and
        an expiry error)."""
        raise NotImplementedError


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
    seen: Set[int] = set()
    for outcome in outcomes:
        if id(outcome.statement) not in seen:
            seen.add(id(outcome.statement))
            yield outcome


def shown(ctx: "FileView", node: Optional[ast.AST], limit: int = 60) -> str:
    text = " ".join(ctx.source.segment(node).split()) if node is not None else ""
    return text if len(text) <= limit else text[: limit - 3] + "..."
