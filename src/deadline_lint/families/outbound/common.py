"""Helpers shared by the outbound rules: which calls carry a timeout, what bounds them from
outside, and what a timeout expression is made of."""
from __future__ import annotations

import ast
import re
from typing import (
    TYPE_CHECKING,
    Callable,
    ClassVar,
    Collection,
    FrozenSet,
    Iterator,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Tuple,
    Type,
)

from deadline_lint.catalog import WAIT, Catalog
from deadline_lint.engine.requires import Look, Project, Scoped, Text, Words, in_file
from deadline_lint.engine.rule import Rule
from deadline_lint.families.outbound.analysis.budget_hops import BudgetHop, budget_hop, hop_keywords, hop_text_filter
from deadline_lint.families.outbound.analysis.catalog_imports import STDLIB_MODULES, catalog_imports, is_method
from deadline_lint.families.outbound.analysis.outbound import OutboundSites, outbound_sites
from deadline_lint.families.outbound.analysis.outbound_calls import FROM_CALL, HIDDEN, OutboundCall, mention_word
from deadline_lint.families.outbound.analysis.project_prefilter import leads_to_a_client
from deadline_lint.families.outbound.analysis.timeout_objects import (
    timeout_fields,
    timeout_object,
)
from deadline_lint.families.shared.budget.budget import Budget, budget_in_scope, timeout_expression
from deadline_lint.families.shared.budget.forwarding import local_alias
from deadline_lint.families.shared.errors.cancel_scopes import bounded_by_cancel_scope, is_awaited
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.declared import is_number
from deadline_lint.semantics.local.expressions import is_unbounded
from deadline_lint.semantics.local.scopes import ASSIGN, IMPORT, Scope
from deadline_lint.settings.profile import TIMEOUT_FLOOR_S

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_MAX_FOLLOW = 4  # how many `name = value` links a helper follows before giving up


# -- the text prefilter ----------------------------------------------------------
def outbound_words(catalog: Catalog) -> FrozenSet[str]:
    """A file that names none of these cannot contain a call the outbound rules know."""
    names = [*catalog.apis, *catalog.classes, *catalog.factories, *catalog.timeout_objects]
    words = {mention_word(name) for name in names if not is_method(name, catalog)}
    # An alias is another path to a listed object, whose own name the file then still spells
    # (`from asyncio.tasks import wait_for`); a third-party alias needs its module imported.
    words.update(alias.split(".")[0] for alias in catalog.aliases if alias.split(".")[0] not in STDLIB_MODULES)
    words.update(pattern.module_suffix for pattern in catalog.stubs)
    return frozenset(words)


def describe_default(default_timeout: Optional[float]) -> str:
    if default_timeout is None:
        return "never times out by default"
    return f"waits {default_timeout:g} s by default"


# -- calls -----------------------------------------------------------------------
def bounded_externally(node: ast.Call, ctx: "FileView") -> bool:
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
    if wrapper.source != FROM_CALL or wrapper.timeout is None:
        return False
    return not is_unbounded(wrapper.timeout, ctx.scope, ctx.resolver)


def timeouts_passed_on(ctx: "FileView", node: ast.Call) -> List[BudgetHop]:
    """The timeouts the call passes on: those it gives as an outbound call, else a value
    derived from the budget at a hop keyword of a call of unknown type (`budget_hop`)."""
    passed = [
        BudgetHop(call.node, call.timeout, call.display_name)
        for call in outbound_sites(ctx, node)
        if call.source == FROM_CALL and call.timeout is not None
    ]
    if passed:
        return passed
    hop = budget_hop(ctx, node)
    return [hop] if hop is not None else []


def is_statement(ctx: "FileView") -> bool:
    """The call being visited is a statement of its own (its value unused). In async code that
    runs a plain function to completion: a coroutine made there would never run."""
    return isinstance(ctx.parent, ast.Expr)


def is_sequential(node: ast.Call, call: OutboundCall, ctx: "FileView") -> bool:
    """The call runs to completion before the function goes on: awaited in async code, or a
    blocking call in sync code. A coroutine handed to `gather` or a grpc `.future()` is not."""
    if not call.blocking:
        return False
    function = ctx.scope.node
    if isinstance(function, ast.AsyncFunctionDef):
        return is_awaited(ctx, node)
    return isinstance(function, ast.FunctionDef)


def budget_expression(ctx: "FileView", budget: Budget, at: Optional[ast.AST] = None) -> Optional[str]:
    """The seconds expression a fix derives from the budget in scope (None: no template). A
    source read into a local before `at` (`budget = request.state.budget`) is spelled by that
    local, as the reader wrote it."""
    source = budget.primary
    alias = local_alias(ctx.scope, source.name, at) if source is not None else None
    return budget.timeout_expression(ctx.profile, spelled=alias)


def fix_timeout(ctx: "FileView", at: Optional[ast.AST] = None) -> Tuple[str, bool]:
    """`analysis.budget.timeout_expression`, with the budget spelled as `budget_expression`
    spells it."""
    budget = budget_in_scope(ctx)
    if budget is not None:
        expression = budget_expression(ctx, budget, at)
        if expression is not None:
            return expression, True
    return timeout_expression(ctx)


# -- what a timeout expression is made of ---------------------------------------------
class Assignment(NamedTuple):
    value: ast.expr
    scope: Scope  # where the name is bound


def single_assignment(name: str, scope: Scope) -> Optional[Assignment]:
    """The one `name = value` binding `name` has where it is looked up, or None."""
    bindings = scope.lookup(name)
    if not bindings or len(bindings) != 1 or bindings[0].kind != ASSIGN:
        return None
    value = bindings[0].value  # an assignment's: an expression, or None when it has none
    return Assignment(value, bindings[0].scope) if isinstance(value, ast.expr) else None


def is_non_positive_constant(expr: ast.expr) -> bool:
    if not is_number(expr):
        return False
    value = ast.literal_eval(expr)
    return value <= 0


def is_clamp_floor(expr: ast.expr) -> bool:
    """The constant of a clamp such as `max(0.0, x)` or the fixes' own `max(0.001, x)`: at
    most TIMEOUT_FLOOR_S, so it only keeps a spent budget from becoming an invalid timeout."""
    return is_number(expr) and ast.literal_eval(expr) <= TIMEOUT_FLOOR_S


def proven_number(expr: ast.expr, scope: Scope, depth: int = 0) -> bool:
    """A plain number: a literal, or a name bound once to one, or arithmetic on those. Only
    these may be wrapped in `min(...)` by a fix (a tuple or a Timeout object may not)."""
    # A work list, not recursion: `1 + 1 + ... + 1` nests as deep as it is long.
    pending = [(expr, scope, depth)]
    while pending:
        value, where, follows = pending.pop()
        if is_number(value):
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


def is_fixed_timeout(expr: ast.expr, scope: Scope, ctx: "FileView", depth: int = 0) -> bool:
    """A timeout set by configuration, not computed per request: a literal, a constant (a name
    bound once to a fixed value, or imported), an attribute (`settings.HTTP_TIMEOUT`; `self.x`
    when every value the class assigns to it is fixed), a tuple or timeout object of those.
    Attributes named like a remainder (`self.remaining`, `deadline_left`), parameters, call
    results and anything else: we cannot tell, so False."""
    pending = [(expr, scope, depth)]  # a work list: every part must be fixed
    while pending:
        value, where, follows = pending.pop()
        if is_number(value):
            continue
        if isinstance(value, ast.Attribute):
            assigned = _self_attribute_values(value, where, ctx)
            if assigned is None:  # not `self.x` or never assigned in the class: configuration
                if _REMAINDER_WORDS.search(value.attr):
                    return False  # `self.remaining`, `req.deadline_left`: taken from a budget
                continue
            seen = [(v, s) for v, s in assigned if v is not None]
            if follows >= _MAX_FOLLOW or len(seen) < len(assigned):
                return False  # too deep, or a value it cannot see (`self.x += 1`)
            pending.extend((v, s, follows + 1) for v, s in seen)
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


def _self_attribute_values(
    expr: ast.Attribute, scope: Scope, ctx: "FileView"
) -> Optional[List[Tuple[Optional[ast.expr], Scope]]]:
    """For `self.x`: each value the class assigns to it (None for one it cannot see, such as
    `self.x += 1`) with its scope; None when `expr` is not such an attribute or is never assigned."""
    method = scope
    while method is not None and method.enclosing_class is None:
        if method.kind == "class" or method.parent is None:
            return None
        method = method.parent  # a closure inside a method still sees `self`
    klass = method.enclosing_class if method is not None else None
    params = method.function_params() if method is not None else []
    if klass is None or not params or not isinstance(expr.value, ast.Name) or expr.value.id != params[0].arg:
        return None
    bindings = ctx.resolver.attribute_bindings(klass).get(expr.attr)
    if not bindings:
        return None
    # An assignment's value is an expression.
    return [(b.value if b.kind == ASSIGN and isinstance(b.value, ast.expr) else None, b.scope) for b in bindings]


def timeout_values(expr: ast.expr, ctx: "FileView") -> Iterator[ast.expr]:
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


def name_occurrences(expr: ast.expr, names: Collection[str]) -> Iterator[ast.Name]:
    for node in walk_nodes(expr):
        if isinstance(node, ast.Name) and node.id in names:
            yield node


def outbound_first_look(node: ast.Call, ctx: "FileView") -> bool:
    """The outbound rules' first look at a call: does it take a timeout at all, or may it
    build a timeout object (`aiohttp.ClientTimeout(...)`, which DL103 judges)?"""
    return ctx.analysis(OutboundSites).first_look(node)


def _outbound_words(rule: Rule) -> FrozenSet[str]:
    return outbound_words(rule.catalog)


def _catalog_imports(rule: Rule) -> Callable[[str], bool]:
    return catalog_imports(rule.catalog)


class LeadsToAClient:
    """The outbound rules' `Project` need, `(text, path) -> bool`: a file whose text imports
    nothing listed may still import a project name that leads to a client: one its project's
    facts say is, gives or holds one, or wraps an outbound call."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog

    def __call__(self, text: str, path: str) -> bool:
        return leads_to_a_client(path, text, self._catalog)


def _leads_to_a_client(rule: Rule) -> LeadsToAClient:
    return rule.catalog.derived(LeadsToAClient)


def _hop_keywords(rule: Rule) -> FrozenSet[str]:
    return outbound_words(rule.catalog) | hop_keywords(rule.catalog)


def _passes_a_budget_at_a_hop(rule: Rule) -> Callable[[str], bool]:
    return hop_text_filter(rule.catalog, rule.profile)


class OutboundRule(Rule):
    """Base of the outbound rules: they look at calls, in files that import a catalog module
    or a project name leading to one. Every outbound rule starts
    from the call's outbound views (DL103 also from the timeout object it may build): one
    first look at them for all."""

    node_types: ClassVar[Tuple[Type[ast.AST], ...]] = (ast.Call,)
    needs: ClassVar[Tuple[Scoped, ...]] = (
        in_file(Words.of(_outbound_words) & Text(_catalog_imports) | Project(_leads_to_a_client)),
    )
    first_looks: ClassVar[Mapping[Type[ast.AST], Look]] = {ast.Call: Look(outbound_first_look)}


class BudgetValueRule(OutboundRule):
    """Outbound rules that judge a budget value passed on as a timeout: they also judge it at
    calls of unknown type that the budget itself shows are hops (`analysis/budget_hops.py`),
    so their prefilter also lets in files that pass a budget at a hop keyword, and no shared
    first look covers their calls."""

    needs: ClassVar[Tuple[Scoped, ...]] = (
        in_file(
            Words.of(_hop_keywords) & (Text(_catalog_imports) | Text(_passes_a_budget_at_a_hop))
            | Project(_leads_to_a_client)
        ),
    )
    first_looks: ClassVar[Mapping[Type[ast.AST], Look]] = {}
