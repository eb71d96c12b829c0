"""Helpers shared by the retry rules: what their prefilter needs, where a policy is reported, the budget in
scope, and dropping one class from a tuple (DL301's fix)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, ClassVar, FrozenSet, Optional, Sequence, Set, Tuple

from deadline_lint.catalog import Catalog
from deadline_lint.catalog.retry import RetryCatalog
from deadline_lint.engine.requires import Project, Scoped, Text, Words, in_file, on_visits
from deadline_lint.engine.rule import Rule
from deadline_lint.families.retry.analysis.retry import RetryAnalysis
from deadline_lint.families.retry.analysis.retry_helpers import parameter_filter_need
from deadline_lint.families.retry.analysis.retry_policy import RetryPolicy
from deadline_lint.families.shared.budget.budget import Budget, budget_in_scope
from deadline_lint.families.shared.errors.handling import Span
from deadline_lint.families.shared.lifecycle import Lifecycle
from deadline_lint.families.shared.project_lifecycle import ProjectLifecycle
from deadline_lint.semantics.scan import line_import_pattern
from deadline_lint.settings.profile import Profile
from deadline_lint.support.diagnostics import Edit
from deadline_lint.support.source import SourceFile

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def library_words(rule: "RetryRule") -> FrozenSet[str]:
    return policy_words(rule.catalog.retry, rule.profile)


def library_imports(rule: "RetryRule") -> Callable[[str], bool]:
    return policy_text_filter(rule.catalog, rule.profile)


# A file using a retry library spells its module and imports it (or names a profile decorator),
# or it uses a project decorator or helper whose retry filter is a parameter (defined in it, or
# in a project module it imports: `analysis/retry_facts.py`).
PROJECT_HELPERS = Project(parameter_filter_need)
USES_A_RETRY_LIBRARY = Words.of(library_words) & Text(library_imports) | PROJECT_HELPERS


class RetryRule(Rule):
    """Base of the retry family: by default it needs a retry library imported (or a profile
    decorator named); rules with another case to judge declare what that case needs."""

    needs: ClassVar[Tuple[Scoped, ...]] = (in_file(USES_A_RETRY_LIBRARY),)
    # Policy objects (`Retrying(...)`) need a retry library imported, whichever rule judges
    # them: calls are visited only then (a file let in by an `except Timeout` has loops to
    # look at, not calls).
    POLICY_CALLS: ClassVar[Scoped] = on_visits(Text(library_imports) | PROJECT_HELPERS, ast.Call)


def _import_prefix(qualname: str) -> str:
    """The module a name is imported from, as far as a prefilter needs: `tenacity` for
    `tenacity.retry`, `google.api_core` for `google.api_core.retry.Retry`."""
    parts = qualname.split(".")
    return ".".join(parts[: max(1, len(parts) - 2)])


def _policy_names(retry: RetryCatalog) -> Tuple[str, ...]:
    return (*retry.policies, *retry.predicates, *retry.stop_builders)


def _import_prefixes(retry: RetryCatalog) -> FrozenSet[str]:
    """The modules a policy is imported from: its library's, and the module of each other
    spelling of a policy object (`from requests.adapters import Retry`, `from urllib3 import Retry`)."""
    prefixes = {_import_prefix(name) for name in _policy_names(retry)}
    prefixes.update(alias.rpartition(".")[0] for alias, target in retry.aliases.items() if target in retry.policies)
    return frozenset(p for p in prefixes if p)


def policy_words(retry: RetryCatalog, profile: Profile) -> FrozenSet[str]:
    """A file using a retry library spells its module (its last part: `api_core`), or the
    name of one of the profile's retry decorators."""
    modules = {prefix.rpartition(".")[2] for prefix in _import_prefixes(retry)}
    return frozenset(modules) | frozenset(name.rpartition(".")[2] for name in profile.retry_decorators)


def policy_text_filter(catalog: Catalog, profile: Profile) -> Callable[[str], bool]:
    return catalog.cached(PolicyImports, lambda: PolicyImports(catalog.retry, profile), tuple(profile.retry_decorators))


class PolicyImports:
    """True when the text imports a retry library (`import tenacity`, `from google.api_core
    import retry`, `import os, backoff`) or names one of the profile's retry decorators."""

    def __init__(self, retry: RetryCatalog, profile: Profile) -> None:
        prefixes = sorted(_import_prefixes(retry))
        self._words = tuple(sorted({p.rpartition(".")[2] for p in prefixes}))
        self._imports = line_import_pattern(prefixes)
        self._own = tuple(name.rpartition(".")[2] for name in profile.retry_decorators)

    def __call__(self, text: str) -> bool:
        return any(name in text for name in self._own) or (
            any(word in text for word in self._words) and self._imports.search(text) is not None
        )


def except_clause(handler: ast.ExceptHandler) -> Span:
    end = handler.type
    if end is None:
        return Span(handler.lineno, handler.col_offset, handler.lineno, handler.col_offset + len("except"))
    return Span(handler.lineno, handler.col_offset, end.end_lineno or end.lineno, end.end_col_offset or 0)


def policy_head(policy: RetryPolicy) -> ast.AST:
    """The decorator's first line: the callable's name (`backoff.on_exception`), not its
    arguments."""
    return policy.call.func if policy.call is not None else policy.node


def budget_of(ctx: "FileView") -> Optional[Budget]:
    """The budget in the scope being visited."""
    return budget_in_scope(ctx)


def decorated_policies(ctx: "FileView", node: ast.AST) -> Tuple[RetryPolicy, ...]:
    """The retry decorators of a def that retry at all (not `stop_after_attempt(1)`)."""
    return tuple(p for p in ctx.analysis(RetryAnalysis).decorators(node) if p.retries)


def called_policy(ctx: "FileView", call: ast.Call) -> Optional[RetryPolicy]:
    """The retrying policy `call` builds (`Retrying(...)`, `Retry(...)`), unless it decorates
    a def (those are seen from the def) or makes one attempt only."""
    policy = ctx.analysis(RetryAnalysis).policy_call(call, ctx.scope)
    if policy is None or not policy.retries or is_decorator(ctx, call):
        return None
    return policy


def is_decorator(ctx: "FileView", call: ast.AST) -> bool:
    parent = ctx.parent
    return isinstance(parent, (*_FUNCTIONS, ast.ClassDef)) and any(d is call for d in parent.decorator_list)


def enclosing_function(ctx: "FileView") -> Optional[ast.AST]:
    for parent in reversed(ctx.parents):
        if isinstance(parent, _FUNCTIONS):
            return parent
        if isinstance(parent, (ast.Lambda, ast.ClassDef)):
            return None
    return None


def outside_requests(ctx: "FileView", function: Optional[ast.AST] = None, callers: bool = False) -> bool:
    """The retry runs where no request waits (start-up, shutdown, a probe, a background job,
    a script: `analysis/lifecycle.py`): `function` is the decorated def, or by default the
    def the walk is in. With `callers`, also a def whose every caller in the project runs
    there (`ProjectLifecycle`)."""
    function = function if function is not None else enclosing_function(ctx)
    if callers:
        return ctx.analysis(ProjectLifecycle).outside(function)
    return ctx.analysis(Lifecycle).outside(function)


def shown(ctx: "FileView", node: ast.AST) -> str:
    return " ".join(ctx.source.segment(node).split())


def drop_element(
    source: SourceFile, siblings: Sequence[ast.expr], index: int, tuple_left: bool = False
) -> Optional[Edit]:
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


def reported_once(rule: Rule, ctx: "FileView", node: object) -> bool:
    """True the first time `rule` reports `node` in this file, whatever the message (a tuple
    bound to a name and used by several policies is reported once, for the first of them)."""
    seen: Set[int] = ctx.state(rule, set, ctx.module_scope)
    if id(node) in seen:
        return False
    seen.add(id(node))
    return True
