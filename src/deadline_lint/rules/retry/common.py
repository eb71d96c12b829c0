"""Helpers shared by the retry rules: trigger words, where a policy is reported, the budget in
scope, and dropping one class from a tuple (DL301's fix)."""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Callable, FrozenSet, Optional, Sequence, Tuple

from deadline_lint.analysis.budget import Budget, budget_in_scope
from deadline_lint.analysis.handling import Span
from deadline_lint.analysis.retry import RetryAnalysis, RetryPolicy
from deadline_lint.catalog import Catalog
from deadline_lint.catalog.retry import RetryCatalog
from deadline_lint.diagnostics import Edit
from deadline_lint.profile import Profile
from deadline_lint.rules.base import Rule
from deadline_lint.source import SourceFile

if TYPE_CHECKING:
    from deadline_lint.context import FileContext

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class RetryRule(Rule):
    """Base of the retry family. The prefilter: trigger words (`trigger_words`) from the retry
    catalog and the profile, then a second look (`text_filter`) that the file imports a retry
    library (or names a profile decorator), or has what a rule's other case needs."""

    def policy_words(self) -> FrozenSet[str]:
        return policy_words(self.catalog.retry, self.profile)

    def trigger_words(self) -> Optional[FrozenSet[str]]:
        return self.policy_words()

    def text_filter(self) -> Callable[[str], bool]:
        return policy_text_filter(self.catalog, self.profile)

    # The text of the file `_applies` was computed for: held, so that no later file's text can
    # reuse its identity (holding the context instead would keep the last tree alive).
    _text: object = None
    _applies = False
    _policies = False
    _filter: Optional[Callable[[str], bool]] = None
    _policy_filter: Optional[Callable[[str], bool]] = None

    def first_look(self, node_type):
        # Policy objects (`Retrying(...)`) need a retry library imported, whichever rule
        # judges them: one look per call at the file's answer for the rules that judge calls.
        if node_type is ast.Call and self.judges_policy_calls:
            return policy_call_first_look(self.catalog, self.profile)
        return None

    # Whether `visit` judges a call only as a policy object: it returns at once unless the
    # file imports a retry library (or names a profile decorator).
    judges_policy_calls = False

    def applies(self, ctx: "FileContext") -> bool:
        """The rule's own second look at this file, once per file: with the prefilter off, or
        when another rule's words let the file in, most files have nothing for it. Visits
        read the cached answer inline (`self._applies if ctx.source.text is self._text else
        self.applies(ctx)`): they run for every call in every file, a method call each adds up."""
        text = ctx.source.text
        if text is not self._text:
            self._text = text
            if self._filter is None:
                self._filter = self.text_filter()
                self._policy_filter = policy_text_filter(self.catalog, self.profile)
            self._applies = bool(self._filter(text))
            # Policy objects (`Retrying(...)`) need a retry library imported: calls are judged
            # only then (a file let in by an `except Timeout` has loops to look at, not calls).
            self._policies = self._applies and bool(self._policy_filter(text))  # type: ignore[misc]
        return self._applies


def _import_prefix(qualname: str) -> str:
    """The module a name is imported from, as far as a prefilter needs: `tenacity` for
    `tenacity.retry`, `google.api_core` for `google.api_core.retry.Retry`."""
    parts = qualname.split(".")
    return ".".join(parts[: max(1, len(parts) - 2)])


def _policy_names(retry: RetryCatalog) -> Tuple[str, ...]:
    return (*retry.policies, *retry.predicates, *retry.stop_builders)


def policy_words(retry: RetryCatalog, profile: Profile) -> FrozenSet[str]:
    """A file using a retry library spells its module (its last part: `api_core`), or the
    name of one of the profile's retry decorators."""
    modules = {_import_prefix(name).rpartition(".")[2] for name in _policy_names(retry)}
    return frozenset(modules) | frozenset(name.rpartition(".")[2] for name in profile.retry_decorators)


def policy_text_filter(catalog: Catalog, profile: Profile) -> Callable[[str], bool]:
    key = ("retry.text_filter", tuple(profile.retry_decorators))
    return catalog.cached(key, lambda: PolicyImports(catalog.retry, profile))


def policy_call_first_look(catalog: Catalog, profile: Profile) -> Callable[[ast.AST, "FileContext"], bool]:
    text_filter = policy_text_filter(catalog, profile)
    key = ("retry.first_look", tuple(profile.retry_decorators))
    return catalog.cached(key, lambda: lambda node, ctx: text_filter(ctx.source.text))


class PolicyImports:
    """True when the text imports a retry library (`import tenacity`, `from google.api_core
    import retry`, `import os, backoff`) or names one of the profile's retry decorators."""

    def __init__(self, retry: RetryCatalog, profile: Profile) -> None:
        prefixes = sorted({_import_prefix(name) for name in _policy_names(retry)})
        self._words = tuple(sorted({p.rpartition(".")[2] for p in prefixes}))
        alternatives = "|".join(re.escape(p) for p in prefixes)
        self._imports = re.compile(
            rf"(?m)^[ \t]*(?:from[ \t]+(?:{alternatives})\b|import[ \t]+(?:[\w.]+(?:[ \t]+as[ \t]+\w+)?[ \t]*,[ \t]*)*(?:{alternatives})\b)"
        )
        self._own = tuple(name.rpartition(".")[2] for name in profile.retry_decorators)
        self._last: Tuple[Optional[str], bool] = (None, False)

    def __call__(self, text: str) -> bool:
        # The engine's prefilter and each rule's `applies` ask about the same text in turn.
        if text is self._last[0]:
            return self._last[1]
        found = any(name in text for name in self._own) or (
            any(word in text for word in self._words) and self._imports.search(text) is not None
        )
        self._last = (text, found)
        return found


class AnyWord:
    """A second look that passes when the text contains any of `words`, or `first` passes;
    with `needs`, only if the text also contains one of those."""

    def __init__(self, first: Callable[[str], bool], words: FrozenSet[str], needs: FrozenSet[str] = frozenset()):
        self._first = first
        self._words = tuple(sorted(words))
        self._needs = tuple(sorted(needs))
        self._last: Tuple[Optional[str], bool] = (None, False)

    def __call__(self, text: str) -> bool:
        if text is self._last[0]:
            return self._last[1]
        if self._needs and not any(word in text for word in self._needs):
            found = False
        else:
            # `first` (the policy imports) remembers its answer for this text: ask it first.
            found = self._first(text) or any(word in text for word in self._words)
        self._last = (text, found)
        return found


class AnyPattern:
    """A second look that passes when `first` does, or when some match of `pattern` has one of
    `words` in the group it matched (a plain regex with the words inside would backtrack)."""

    def __init__(self, first: Callable[[str], bool], pattern: "re.Pattern[str]", words: FrozenSet[str]) -> None:
        self._first = first
        self._pattern = pattern
        self._words = tuple(sorted(words))
        self._last: Tuple[Optional[str], bool] = (None, False)

    def __call__(self, text: str) -> bool:
        if text is self._last[0]:
            return self._last[1]
        found = self._first(text) or self._matches(text)
        self._last = (text, found)
        return found

    def _matches(self, text: str) -> bool:
        words = self._words
        if any(word in text for word in words):
            for match in self._pattern.finditer(text):
                group = match.group(match.lastindex or 0)
                if any(word in group for word in words):
                    return True
        return False


def pattern_filter(ctx_key: str, catalog: Catalog, profile: Profile, pattern: str, words: FrozenSet[str]):
    """One shared AnyPattern per rule and profile."""
    key = (ctx_key, tuple(profile.retry_decorators), pattern, words)
    return catalog.cached(key, lambda: AnyPattern(policy_text_filter(catalog, profile), re.compile(pattern), words))


class BothWords:
    """A second look that passes when `first` does, or the text has one word of each set."""

    def __init__(self, first: Callable[[str], bool], one: FrozenSet[str], other: FrozenSet[str]) -> None:
        self._first = first
        self._one = tuple(sorted(one))
        self._other = tuple(sorted(other))
        self._last: Tuple[Optional[str], bool] = (None, False)

    def __call__(self, text: str) -> bool:
        if text is self._last[0]:
            return self._last[1]
        found = self._first(text) or (any(w in text for w in self._one) and any(w in text for w in self._other))
        self._last = (text, found)
        return found


def both_words_filter(ctx_key: str, catalog: Catalog, profile: Profile, one: FrozenSet[str], other: FrozenSet[str]):
    key = (ctx_key, tuple(profile.retry_decorators), one, other)
    return catalog.cached(key, lambda: BothWords(policy_text_filter(catalog, profile), one, other))


def word_filter(ctx_key: str, catalog: Catalog, profile: Profile, words: FrozenSet[str], needs: FrozenSet[str] = frozenset()):
    """One shared AnyWord per rule and profile (the engine runs each distinct filter once)."""
    key = (ctx_key, tuple(profile.retry_decorators), words, needs)
    return catalog.cached(key, lambda: AnyWord(policy_text_filter(catalog, profile), words, needs))


def budget_words(catalog: Catalog, profile: Profile) -> FrozenSet[str]:
    """A budgeted function spells one of these: a budget parameter or type, a budget accessor,
    a gRPC servicer (its `context` carries the deadline)."""
    budget = profile.budget
    data = catalog.data.get("budget", {}) or {}
    words = {*budget.parameters, *budget.seconds_parameters}
    words.update(name.rpartition(".")[2] for name in [*budget.types, *budget.accessors])
    words.update(name.rpartition(".")[2] for name in [*(data.get("types") or {}), *(data.get("accessors") or {})])
    words.update(data.get("context_methods") or ())
    words.add(data.get("servicer_base_suffix") or "Servicer")
    return frozenset(w for w in words if w)


def except_clause(handler: ast.ExceptHandler) -> Span:
    end = handler.type if handler.type is not None else None
    if end is None:
        return Span(handler.lineno, handler.col_offset, handler.lineno, handler.col_offset + len("except"))
    return Span(handler.lineno, handler.col_offset, end.end_lineno or end.lineno, end.end_col_offset or 0)  # type: ignore[attr-defined]


def policy_head(policy: RetryPolicy) -> ast.AST:
    """The decorator's first line: the callable's name (`backoff.on_exception`), not its
    arguments."""
    return policy.call.func if policy.call is not None else policy.node


def budget_of(ctx: "FileContext") -> Optional[Budget]:
    """The budget in the scope being visited."""
    return budget_in_scope(ctx)


def decorated_policies(ctx: "FileContext", node: ast.AST) -> Tuple[RetryPolicy, ...]:
    """The retry decorators of a def that retry at all (not `stop_after_attempt(1)`)."""
    return tuple(p for p in ctx.analysis(RetryAnalysis).decorators(node) if p.retries)


def called_policy(ctx: "FileContext", call: ast.Call) -> Optional[RetryPolicy]:
    """The retrying policy `call` builds (`Retrying(...)`, `Retry(...)`), unless it decorates
    a def (those are seen from the def) or makes one attempt only."""
    policy = ctx.analysis(RetryAnalysis).policy_call(call, ctx.scope)
    if policy is None or not policy.retries or is_decorator(ctx, call):
        return None
    return policy


def is_decorator(ctx: "FileContext", call: ast.AST) -> bool:
    parent = ctx.parent
    return isinstance(parent, (*_FUNCTIONS, ast.ClassDef)) and any(d is call for d in parent.decorator_list)


def enclosing_function(ctx: "FileContext") -> Optional[ast.AST]:
    for parent in reversed(ctx.parents):
        if isinstance(parent, _FUNCTIONS):
            return parent
        if isinstance(parent, (ast.Lambda, ast.ClassDef)):
            return None
    return None


def shown(ctx: "FileContext", node: ast.AST) -> str:
    return " ".join(ctx.source.segment(node).split())


def drop_element(source: SourceFile, siblings: Sequence[ast.expr], index: int, tuple_left: bool = False) -> Optional[Edit]:
    """Remove `siblings[index]` with the comma that joins it to its neighbour, when the text
    between them is only a comma and spaces (no comment, no parenthesised element). With
    `tuple_left`, a tuple left with one element keeps its trailing comma: `(A,)`."""
    if len(siblings) < 2 or any(isinstance(s, ast.Starred) for s in siblings):
        return None
    text = source.text
    spans = [source.node_span(s) for s in siblings]
    start, end = spans[index]
    single = tuple_left and len(siblings) == 2
    if index + 1 < len(spans):
        next_start, next_end = spans[index + 1]
        if text[end:next_start].strip() != ",":
            return None
        if single and not text[next_end:].lstrip().startswith(","):
            return Edit(start, next_end, text[next_start:next_end] + ",")
        return Edit(start, next_start, "")
    previous_end = spans[index - 1][1]
    between = text[previous_end:start]
    if between.strip() != ",":
        return None
    if single and not text[end:].lstrip().startswith(","):
        return Edit(previous_end + between.index(",") + 1, end, "")  # `(A, B)` -> `(A,)`
    return Edit(previous_end, end, "")  # `(A, B, C)` -> `(A, B)`; `(A, B,)` -> `(A,)`


def elements_of(container: Optional[ast.AST]) -> Optional[Sequence[ast.expr]]:
    """The comma-separated classes written in place: a tuple/list literal's elements."""
    if isinstance(container, (ast.Tuple, ast.List)):
        return container.elts
    return None


def first_report(ctx: "FileContext", key: str, node: object) -> bool:
    """True the first time `node` is reported under `key` in this file (a tuple bound to a
    name and used by several policies is reported once)."""
    seen = ctx.module_scope.facts.setdefault(key, set())
    if id(node) in seen:  # type: ignore[operator]
        return False
    seen.add(id(node))  # type: ignore[union-attr]
    return True
