"""Hops the catalog does not know: a call whose callee we cannot type, given a value derived
from the budget in scope at one of the catalog's `budget.hop_keywords` (`timeout=`). Passing
the budget there shows the author treats the call as a hop, so the rules that judge a
forwarded budget value (DL104, DL105) judge it there too.

A call is *not* such a hop when the catalog already classifies it (it is an outbound call),
or when we know what the callee is and it is not outbound: a builtin or standard-library
callable (the catalog lists the stdlib's outbound ones), a project function or class we can
read (it wraps no listed call, else it would be outbound), a method of a listed client that
the catalog does not list, a method of a literal, of `super()` or of a receiver built by the
standard library (`q = queue.Queue()`), or a catalog `budget.local_waits` method
(`event.wait(timeout=)`, `thread.join(timeout=)`: waiting on this process, not on another
service). Only a keyword counts: a positional argument's meaning depends on a signature we
cannot see.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, FrozenSet, Optional

from deadline_lint.catalog import Catalog
from deadline_lint.families.outbound.analysis.catalog_imports import STDLIB_MODULES
from deadline_lint.families.outbound.analysis.client_types import client_types
from deadline_lint.families.outbound.analysis.outbound import outbound_sites
from deadline_lint.families.shared.budget.budget import BudgetAnalysis, budget_in_scope
from deadline_lint.families.shared.budget.budget_text import budget_words
from deadline_lint.families.shared.instances import self_attribute_bindings
from deadline_lint.families.shared.time.clock_catalog import clock_catalog
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.expressions import mentions_any
from deadline_lint.semantics.local.scopes import ASSIGN, WITH, Scope, is_builtin
from deadline_lint.settings.profile import Profile

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


@dataclass(frozen=True)
class BudgetHop:
    node: ast.Call
    timeout: ast.expr  # the budget-derived value passed at a hop keyword
    display_name: str  # the callee as the code spells it


def hop_keywords(catalog: Catalog) -> FrozenSet[str]:
    return catalog.derived(_budget_names, "hop_keywords")


def local_waits(catalog: Catalog) -> FrozenSet[str]:
    return catalog.derived(_budget_names, "local_waits")


def _budget_names(catalog: Catalog, key: str) -> FrozenSet[str]:
    return frozenset(getattr(catalog.budget, key))


def budget_hop(ctx: "FileView", call: ast.Call) -> Optional[BudgetHop]:
    """The call as a hop of unknown type given a budget-derived timeout, or None."""
    if not call.keywords:
        return None  # most calls: asked of every call by two rules
    keywords = hop_keywords(ctx.catalog)
    value = next((kw.value for kw in call.keywords if kw.arg in keywords), None)
    if value is None or isinstance(value, ast.Constant) or outbound_sites(ctx, call):
        return None  # most calls stop here; a listed call is judged as the outbound call it is
    if not ctx.analysis(BudgetPossible).possible:
        return None  # no budget word and no clock call in the file: no budget anywhere in it
    if not _from_budget(value, ctx) or _known_callee(call.func, ctx):
        return None
    return BudgetHop(call, value, " ".join(ctx.source.segment(call.func).split()))


class BudgetPossible:
    """Per file: whether any function in it can have a budget (the prefilter's second half)."""

    def __init__(self, ctx: "FileView") -> None:
        self.possible = hop_text_filter(ctx.catalog, ctx.profile).budget_possible(ctx.source.text)


def _from_budget(value: ast.expr, ctx: "FileView") -> bool:
    """The value mentions a name carrying the budget in scope, or calls a budget accessor."""
    budget = budget_in_scope(ctx)
    if budget is not None and mentions_any(value, budget.names):
        return True
    accessors = ctx.analysis(BudgetAnalysis).accessors
    return any(
        isinstance(node, ast.Call) and ctx.resolver.qualified_name(node.func, ctx.scope) in accessors
        for node in walk_nodes(value)
    )


def _known_callee(func: ast.expr, ctx: "FileView") -> bool:
    resolver, scope = ctx.resolver, ctx.scope
    if _standard(resolver.qualified_name(func, scope)) or resolver.definition(func, scope) is not None:
        return True
    if isinstance(func, ast.Attribute):
        if func.attr in local_waits(ctx.catalog):
            return True
        if client_types(resolver).instance(func.value, scope) is not None:
            return True  # a listed client's method the catalog does not list
        return _built_by_standard_library(func.value, ctx)
    return False


def _standard(qualname: Optional[str]) -> bool:
    """A builtin or standard-library name (the catalog lists the stdlib's outbound calls)."""
    return qualname is not None and (is_builtin(qualname.split(".")[0]) or qualname.split(".")[0] in STDLIB_MODULES)


_LITERALS = (ast.Constant, ast.JoinedStr, ast.Dict, ast.List, ast.Set, ast.Tuple,
             ast.DictComp, ast.ListComp, ast.SetComp)


def _built_by_standard_library(receiver: ast.expr, ctx: "FileView") -> bool:
    """`q = queue.Queue()` then `q.get(timeout=...)`, `options = {}` then
    `options.update(timeout=...)`, `"{timeout}".format(timeout=...)`, `super().__init__(...)`:
    the receiver is a literal or `super()`, or every binding of it (a local, or `self.x` in a
    method, `with selectors.DefaultSelector() as sel`) is a literal or a standard-library or
    builtin call."""
    if isinstance(receiver, _LITERALS) or _is_super(receiver, ctx):
        return True
    if isinstance(receiver, ast.Name):
        bindings = ctx.scope.lookup(receiver.id) or []
    elif isinstance(receiver, ast.Attribute):
        bindings = self_attribute_bindings(ctx.resolver, receiver, ctx.scope)
    else:
        return False
    return bool(bindings) and all(b.kind in (ASSIGN, WITH) and _standard_value(b.value, b.scope, ctx) for b in bindings)


def _standard_value(value: object, scope: Scope, ctx: "FileView") -> bool:
    if isinstance(value, _LITERALS):
        return True
    return isinstance(value, ast.Call) and _standard(ctx.resolver.qualified_name(value.func, scope))


def _is_super(receiver: ast.expr, ctx: "FileView") -> bool:
    """`super()`: the class's base, a constructor or method it overrides, not a new hop."""
    return isinstance(receiver, ast.Call) and ctx.resolver.qualified_name(receiver.func, ctx.scope) == "super"


# -- the text prefilter ----------------------------------------------------------------
def hop_text_filter(catalog: Catalog, profile: Profile) -> "_HopText":
    """A file can hold such a hop only if it passes a hop keyword (`timeout=`) and spells a
    budget word or calls a clock function (a local deadline needs a clock read)."""
    words = budget_words(profile, catalog)
    clocks = clock_catalog(catalog).final_names
    keywords = hop_keywords(catalog)
    return catalog.cached(_HopText, lambda: _HopText(keywords, words, clocks), keywords, words, clocks)


class _HopText:
    """Plain substring tests only (a regular expression over every file cost ten times more):
    a hop keyword followed by `=` (not `==`), and a budget word or a clock function called
    (`monotonic(`, `time (`)."""

    def __init__(self, keywords: FrozenSet[str], words: FrozenSet[str], clocks: FrozenSet[str]) -> None:
        self._keywords = tuple(sorted(keywords))
        self._words = tuple(sorted(words))
        self._clock_calls = tuple(sorted(f"{clock}{space}(" for clock in clocks for space in ("", " ")))

    def __call__(self, text: str) -> bool:
        if not any(_passed_as_keyword(text, keyword) for keyword in self._keywords):
            return False
        return self.budget_possible(text)

    def budget_possible(self, text: str) -> bool:
        return any(word in text for word in self._words) or any(call in text for call in self._clock_calls)


def _passed_as_keyword(text: str, keyword: str) -> bool:
    """`keyword=` or `keyword =` somewhere, as a whole word, and not `keyword ==`."""
    at = text.find(keyword)
    while at != -1:
        end = at + len(keyword)
        rest = text[end:end + 8].lstrip(" \t")
        before = text[at - 1] if at else " "
        if rest[:1] == "=" and rest[1:2] != "=" and not (before.isalnum() or before == "_"):
            return True
        at = text.find(keyword, end)
    return False
