"""Helpers shared by the outbound rules: which calls carry a timeout, what bounds them from
outside, and what a timeout expression is made of."""
from __future__ import annotations

import ast
import re
from typing import (
    TYPE_CHECKING,
    Callable,
    Dict,
    FrozenSet,
    Iterator,
    Optional,
    Set,
    Tuple,
)

from deadline_lint.analysis.budget import Budget
from deadline_lint.analysis.budget_hops import hop_keywords, hop_text_filter
from deadline_lint.analysis.cancel_scopes import bounded_by_cancel_scope, is_awaited
from deadline_lint.analysis.outbound import (
    imports_outbound_project_name,
    FROM_CALL,
    HIDDEN,
    STDLIB_MODULES,
    OutboundCall,
    OutboundSites,
    is_unbounded,
    may_build_timeout_object,
    outbound_sites,
    mention_word,
    timeout_fields,
    timeout_object,
)
from deadline_lint.analysis.project import use_module_filter
from deadline_lint.analysis.scopes import ASSIGN, IMPORT, Scope
from deadline_lint.catalog import WAIT, Catalog
from deadline_lint.profile import TIMEOUT_FLOOR_S
from deadline_lint.rules.base import Rule

if TYPE_CHECKING:
    from deadline_lint.context import FileContext

_MAX_FOLLOW = 4  # how many `name = value` links a helper follows before giving up


# -- the text prefilter ----------------------------------------------------------
def outbound_words(catalog: Catalog) -> FrozenSet[str]:
    """A file that names none of these cannot contain a call the outbound rules know."""
    names = [*catalog.apis, *catalog.classes, *catalog.factories, *catalog.timeout_objects]
    words = {mention_word(name) for name in names if not _is_method(name, catalog)}
    # An alias is another path to a listed object, whose own name the file then still spells
    # (`from asyncio.tasks import wait_for`); a third-party alias needs its module imported.
    words.update(alias.split(".")[0] for alias in catalog.aliases if alias.split(".")[0] not in STDLIB_MODULES)
    words.update(pattern.module_suffix for pattern in catalog.stubs)
    return frozenset(words)


def outbound_text_filter(catalog: Catalog) -> Callable[[str], bool]:
    """The second look at a file that passed the trigger words (one shared callable per
    catalog, so the engine runs it once for all the outbound rules)."""
    return catalog.cached("outbound.text_filter", lambda: ImportTextFilter(catalog))


class ImportTextFilter:
    """True when the text imports something the catalog lists (and, for the standard library,
    also spells one of the listed names: `import asyncio` alone is everywhere). Code that
    uses a listed API has to import it: `import os, requests`, `from requests.api import get`
    and `from redis import asyncio` count; `from requests.exceptions import Timeout` does not,
    since nothing it binds leads to a listed name. Generated gRPC stub modules are recognised
    by their suffix. Anything unusual (a backslash continuation) counts, to stay safe."""

    def __init__(self, catalog: Catalog) -> None:
        self._canonical = catalog.canonical
        self._leads_somewhere = _prefixes([*catalog.apis, *catalog.classes, *catalog.factories,
                                           *catalog.timeout_objects, *catalog.aliases])
        needs: Dict[str, Set[Optional[str]]] = {}
        names = [*catalog.apis, *catalog.classes, *catalog.factories, *catalog.timeout_objects]
        for qualname in names:
            if not _is_method(qualname, catalog):
                module = qualname.split(".")[0]
                needs.setdefault(module, set()).add(qualname.rpartition(".")[2] if module in STDLIB_MODULES else None)
        for alias in catalog.aliases:
            module = alias.split(".")[0]
            if module not in STDLIB_MODULES:
                needs.setdefault(module, set()).add(None)
        self._needs = tuple((module, frozenset(n for n in wanted if n)) for module, wanted in sorted(needs.items()))
        self._anywhere = frozenset(module for module, wanted in needs.items() if None in wanted)
        self._suffixes = tuple(pattern.module_suffix for pattern in catalog.stubs)
        self._patterns: Dict[str, Tuple["re.Pattern[str]", "re.Pattern[str]"]] = {}
        # DL104/DL105's filter asks again right after the engine did (see BudgetValueRule).
        self._last: Tuple[Optional[str], bool] = (None, False)

    def __call__(self, text: str) -> bool:
        if text is self._last[0]:
            return self._last[1]
        answer = self._answer(text)
        self._last = (text, answer)
        return answer

    def _answer(self, text: str) -> bool:
        if any(suffix in text for suffix in self._suffixes):
            return True
        for module, names in self._needs:
            if module not in text:
                continue
            if module not in self._anywhere and not any(name in text for name in names):
                continue
            if self._imports(module, text):
                return True
        return False

    def _imports(self, module: str, text: str) -> bool:
        patterns = self._patterns.get(module)
        if patterns is None:
            name = re.escape(module)
            patterns = self._patterns[module] = (
                re.compile(rf"import[ \t]+(?:[\w.]+(?:[ \t]+as[ \t]+\w+)?[ \t]*,[ \t]*)*{name}\b"),
                re.compile(rf"from[ \t]+({name}(?:\.\w+)*)[ \t]+import[ \t]*(\([^)]*\)|[^\n;#]*)"),
            )
        plain, from_import = patterns
        if plain.search(text):
            return True  # `import redis` binds the module: anything in it can follow
        for match in from_import.finditer(text):
            source, names = match.group(1), match.group(2)
            if "\\" in names or "*" in names:
                return True
            for item in re.sub(r"#[^\n]*", "", names).strip("() \t\r\n").split(","):
                imported = item.split(" as ")[0].strip()
                if imported and self._canonical(f"{source}.{imported}") in self._leads_somewhere:
                    return True
        return False


def _prefixes(qualnames) -> FrozenSet[str]:
    """Every dotted prefix of every name: `redis.asyncio` leads to `redis.asyncio.Redis`."""
    found = set()
    for qualname in qualnames:
        parts = qualname.split(".")
        found.update(".".join(parts[:cut]) for cut in range(1, len(parts) + 1))
    return frozenset(found)


def _is_method(qualname: str, catalog: Catalog) -> bool:
    # A method is reached through an instance, whose class or factory already gave a word.
    return qualname.rpartition(".")[0] in catalog.classes


def describe_default(default_timeout) -> str:
    if default_timeout is None:
        return "never times out by default"
    return f"waits {default_timeout:g} s by default"


# -- calls -----------------------------------------------------------------------
def bounded_externally(node: ast.Call, ctx: "FileContext") -> bool:
    """Awaited inside a cancel scope, or handed to a bounded `asyncio.wait_for`."""
    if bounded_by_cancel_scope(ctx, node):
        return True
    parent = ctx.parent
    if not isinstance(parent, ast.Call) or not any(a is node for a in parent.args):
        return False
    wrapper = ctx.analysis(OutboundSites).call(parent)
    if wrapper is None or wrapper.api.kind != WAIT or wrapper.api.wraps is None:
        return False
    index = next(i for i, a in enumerate(parent.args) if a is node)
    if index != wrapper.api.wraps:
        return False
    if wrapper.source == HIDDEN:
        return True  # cannot tell: stay quiet
    if wrapper.source != FROM_CALL:
        return False
    return not is_unbounded(wrapper.timeout, ctx.scope, ctx.resolver)  # type: ignore[arg-type]


def is_sequential(node: ast.Call, call: OutboundCall, ctx: "FileContext") -> bool:
    """The call runs to completion before the function goes on: awaited in async code, or a
    blocking call in sync code. A coroutine handed to `gather` or a grpc `.future()` is not."""
    if not call.blocking:
        return False
    function = ctx.scope.node
    if isinstance(function, ast.AsyncFunctionDef):
        return is_awaited(ctx, node)
    return isinstance(function, ast.FunctionDef)


def budget_expression(ctx: "FileContext", budget: Budget) -> Optional[str]:
    """The seconds expression a fix derives from the budget in scope (None: no template)."""
    return budget.timeout_expression(ctx.profile)


def format_seconds(value: float) -> str:
    return repr(round(value, 6))


# -- what a timeout expression is made of ---------------------------------------------
def single_assignment(name: str, scope: Scope):
    """The one `name = value` binding `name` has where it is looked up, or None."""
    bindings = scope.lookup(name)
    if not bindings or len(bindings) != 1 or bindings[0].kind != ASSIGN or bindings[0].value is None:
        return None
    return bindings[0]


def is_number_constant(expr: ast.expr) -> bool:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)


def is_non_positive_constant(expr: ast.expr) -> bool:
    if not is_number_constant(expr):
        return False
    value = ast.literal_eval(expr)
    return value <= 0


def is_clamp_floor(expr: ast.expr) -> bool:
    """The constant of a clamp such as `max(0.0, x)` or the fixes' own `max(0.001, x)`: at
    most TIMEOUT_FLOOR_S, so it only keeps a spent budget from becoming an invalid timeout."""
    return is_number_constant(expr) and ast.literal_eval(expr) <= TIMEOUT_FLOOR_S


def proven_number(expr: ast.expr, scope: Scope, depth: int = 0) -> bool:
    """A plain number: a literal, or a name bound once to one, or arithmetic on those. Only
    these may be wrapped in `min(...)` by a fix (a tuple or a Timeout object may not)."""
    # A work list, not recursion: `1 + 1 + ... + 1` nests as deep as it is long.
    pending = [(expr, scope, depth)]
    while pending:
        value, where, follows = pending.pop()
        if is_number_constant(value):
            continue
        if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            pending.extend(((value.left, where, follows), (value.right, where, follows)))
            continue
        if isinstance(value, ast.Name) and follows < _MAX_FOLLOW:
            binding = single_assignment(value.id, where)
            if binding is not None:
                pending.append((binding.value, binding.scope, follows + 1))
                continue
        return False
    return True


def is_fixed_timeout(expr: ast.expr, scope: Scope, ctx: "FileContext", depth: int = 0) -> bool:
    """A timeout set by configuration, not computed per request: a literal, a constant (a name
    bound once to a fixed value, or imported), an attribute (`settings.HTTP_TIMEOUT`; `self.x`
    when every value the class assigns to it is fixed), a tuple or timeout object of those.
    Attributes named like a remainder (`self.remaining`, `deadline_left`), parameters, call
    results and anything else: we cannot tell, so False."""
    pending = [(expr, scope, depth)]  # a work list: every part must be fixed
    while pending:
        value, where, follows = pending.pop()
        if is_number_constant(value):
            continue
        if isinstance(value, ast.Attribute):
            assigned = _self_attribute_values(value, where, ctx)
            if assigned is None:  # not `self.x` or never assigned in the class: configuration
                if _REMAINDER_WORDS.search(value.attr):
                    return False  # `self.remaining`, `req.deadline_left`: taken from a budget
                continue
            if follows >= _MAX_FOLLOW or any(v is None for v, _ in assigned):
                return False
            pending.extend((v, s, follows + 1) for v, s in assigned)  # type: ignore[misc]
            continue
        if isinstance(value, ast.Tuple) and value.elts:
            pending.extend((e, where, follows) for e in value.elts)
            continue
        if isinstance(value, ast.BinOp):
            pending.extend(((value.left, where, follows), (value.right, where, follows)))
            continue
        if isinstance(value, ast.Name) and follows < _MAX_FOLLOW:
            bindings = where.lookup(value.id)
            if bindings and all(b.kind == IMPORT for b in bindings):
                continue  # `from settings import TIMEOUT`
            binding = single_assignment(value.id, where)
            if binding is not None:
                pending.append((binding.value, binding.scope, follows + 1))
                continue
            return False
        if isinstance(value, ast.Call):
            spec = timeout_object(value, where, ctx.resolver, ctx.catalog)
            if spec is not None:
                pending.extend((v, where, follows) for _, v in timeout_fields(value, spec))
                continue
        return False
    return True


_REMAINDER_WORDS = re.compile(r"remain|budget|deadline|left", re.I)


def _self_attribute_values(expr: ast.Attribute, scope: Scope, ctx: "FileContext"):
    """For `self.x`: each value the class assigns to it (None for one it cannot see, such as
    `self.x += 1`) with its scope; None when `expr` is not such an attribute or is never assigned."""
    method = scope
    while method is not None and method.enclosing_class is None:
        if method.kind == "class" or method.parent is None:
            return None
        method = method.parent  # a closure inside a method still sees `self`
    params = method.function_params() if method is not None else []
    if not params or not isinstance(expr.value, ast.Name) or expr.value.id != params[0].arg:
        return None
    bindings = ctx.resolver.attribute_bindings(method.enclosing_class).get(expr.attr)  # type: ignore[union-attr,arg-type]
    if not bindings:
        return None
    return [(b.value if b.kind == ASSIGN else None, b.scope) for b in bindings]


def timeout_values(expr: ast.expr, ctx: "FileContext") -> Iterator[ast.expr]:
    """The parts of a timeout expression that each become a limit, seeing through tuples,
    timeout objects, `min(...)`, `float(...)` and clamps such as `max(0.0, x)`."""
    stack = [expr]
    while stack:
        value = stack.pop()
        if isinstance(value, ast.Tuple):
            stack.extend(value.elts)
            continue
        if isinstance(value, ast.Call) and not any(isinstance(a, ast.Starred) for a in value.args):
            spec = timeout_object(value, ctx.scope, ctx.resolver, ctx.catalog)
            if spec is not None:
                stack.extend(v for _, v in timeout_fields(value, spec))
                continue
            name = ctx.resolver.qualified_name(value.func, ctx.scope)
            if name == "min" or (name in ("float", "int") and len(value.args) == 1):
                stack.extend(value.args)
                continue
            if name == "max":
                kept = [a for a in value.args if not is_clamp_floor(a)]
                if len(kept) == 1:  # a clamp at zero: the value itself is the limit
                    stack.extend(kept)
                    continue
        yield value


def name_occurrences(expr: ast.expr, names) -> Iterator[ast.Name]:
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and node.id in names:
            yield node


def first_report(ctx: "FileContext", key: str, node: ast.AST) -> bool:
    """True the first time a rule reports `node` in this scope (a shared assignment reached
    from several calls is reported once)."""
    seen: Set[int] = ctx.scope.facts.setdefault(key, set())  # type: ignore[assignment]
    if id(node) in seen:
        return False
    seen.add(id(node))
    return True


def outbound_first_look(node: ast.Call, ctx: "FileContext") -> bool:
    """The outbound rules' first look at a call: does it take a timeout at all, or may it
    build a timeout object (`aiohttp.ClientTimeout(...)`, which DL103 judges)?"""
    return bool(outbound_sites(ctx, node)) or may_build_timeout_object(node, ctx.scope, ctx.resolver, ctx.catalog)


class OutboundRule(Rule):
    """Base of the outbound rules: they look at calls, in files that import a catalog module."""

    node_types = (ast.Call,)

    def __init__(self, profile, catalog) -> None:
        super().__init__(profile, catalog)
        # The project index judges its modules with the same import filter as the rules.
        use_module_filter(catalog, outbound_text_filter(catalog))

    def first_look(self, node_type):
        # Every outbound rule starts from the call's outbound views (DL103 also from the
        # timeout object it may build): one look at them for all.
        return outbound_first_look if node_type is ast.Call else None

    def trigger_words(self):
        return outbound_words(self.catalog)

    def text_filter(self):
        return outbound_text_filter(self.catalog)

    def path_filter(self):
        if not self.profile.project_index:
            return None  # without the index a file is judged by its own text alone
        catalog = self.catalog
        return catalog.cached(
            "outbound.path_filter", lambda: lambda text, path: imports_outbound_project_name(path, text, catalog)
        )


class BudgetValueRule(OutboundRule):
    """Outbound rules that judge a budget value passed on as a timeout: they also judge it at
    calls of unknown type that the budget itself shows are hops (`analysis/budget_hops.py`),
    so their prefilter also lets in files that pass a budget at a hop keyword."""

    def first_look(self, node_type):
        return None  # a call of unknown type may be a hop: no shared first look covers it yet

    def trigger_words(self):
        return outbound_words(self.catalog) | hop_keywords(self.catalog)

    def text_filter(self):
        outbound, hops = outbound_text_filter(self.catalog), hop_text_filter(self.catalog, self.profile)
        return self.catalog.cached(("budget_value.text_filter", hops), lambda: _Either(outbound, hops))


class _Either:
    def __init__(self, first: Callable[[str], bool], second: Callable[[str], bool]) -> None:
        self.first, self.second = first, second

    def __call__(self, text: str) -> bool:
        return self.first(text) or self.second(text)
