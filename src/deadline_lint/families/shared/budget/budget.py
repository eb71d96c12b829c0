"""Budget in scope: which names inside a function carry the request's remaining time.

Sources: budget parameters (by name or by an annotation naming a budget type,
`budget_types.py`), the `context` of a gRPC servicer method or of an AWS Lambda
`handler(event, context)`, the parameterless sources of `budget_sources.py` (request state,
`flask.g`, context variables, a budget type's constructor), `self.<attr>` where the class
stores only budgets, names assigned from budget accessors, a seconds accessor called inline
(named by the call's text, `remaining_seconds()`, which `mentions_any` matches and a fix's
template renders as a fresh read), and names derived from any of
those by assignment, annotated assignment, `with ... as`, or walrus (a fixpoint over the
function body). A name whose bindings disagree (one from the budget, one not) is no budget.
Attribute-shaped sources are named by their dotted text (`request.state.budget`), which
`mentions_any` matches. Nested functions see their enclosing function's budget unless they
rebind the name: a stack of scopes, not a flag.

Where each part lives: `scope_budget.py` (the `Budget` a scope has), `attribute_budgets.py`
(sources read from attributes, budgets kept on `self`), `budget_methods.py` (what a budget's
methods do), `given_timeouts.py` (DL102's given timeout), `budget_parameters.py`; this module
finds a function's budget and answers what rules ask.
"""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Dict, List, Optional, Protocol, Sequence, Tuple, Type, TypeVar, runtime_checkable

from deadline_lint.families.shared.budget.attribute_budgets import AttributeBudgets
from deadline_lint.families.shared.budget.budget_methods import BudgetMethods
from deadline_lint.families.shared.budget.budget_parameters import optional_parameters
from deadline_lint.families.shared.budget.budget_sources import BudgetSources, inline_accessors
from deadline_lint.families.shared.budget.budget_types import (
    GRPC_CONTEXT,
    LAMBDA_CONTEXT,
    OBJECT,
    BudgetType,
    BudgetTypes,
)
from deadline_lint.families.shared.budget.given_timeouts import given_timeout as _given_timeout
from deadline_lint.families.shared.budget.scope_budget import (
    DERIVED,
    INSTANT,
    OBJECT_KINDS,
    SECONDS,
    Budget,
    assignments,
    receiver_text,
)
from deadline_lint.families.shared.time.time_values import DEADLINE, REMAINING, TimeValues
from deadline_lint.semantics.file import FileSemantics
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.declared import is_none
from deadline_lint.semantics.local.expressions import mentions_any
from deadline_lint.semantics.local.resolve import dotted_parts
from deadline_lint.semantics.local.scopes import ASSIGN, FUNCTION, MODULE, WITH, Binding, Scope

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import AnalysisInputs, FileView

__all__ = [
    "OBJECT", "GRPC_CONTEXT", "LAMBDA_CONTEXT", "SECONDS", "INSTANT", "DERIVED", "Budget", "BudgetAnalysis",
    "budget_in_scope", "given_timeout", "given_timeout_polls", "timeout_expression", "mentions_any",
]

_A = TypeVar("_A")


@runtime_checkable
class _AsksAnalyses(Protocol):
    """A file being checked (the engine's context): its other analyses, its project's too."""

    def analysis(self, kind: Type[_A]) -> _A: ...


class BudgetAnalysis:
    """Per file: the budget of every scope. Built from anything with the file's `resolver`,
    `catalog` and `profile` (the engine's context, or the thread-budget module index)."""

    def __init__(self, ctx: "AnalysisInputs") -> None:
        resolver, catalog, profile = ctx.resolver, ctx.catalog, ctx.profile
        self.resolver = resolver
        self.budget_types = BudgetTypes(catalog, profile)
        checked = ctx if isinstance(ctx, _AsksAnalyses) else None  # a file being checked: its project counts
        if checked is not None:
            self.budget_types.see_project(lambda: checked.analysis(FileSemantics).names)
        self.types: Dict[str, str] = self.budget_types.kinds()
        self.sources = BudgetSources(resolver, catalog, profile, self.budget_types)
        self.methods = BudgetMethods(catalog, self.budget_types)
        self.check_methods = self.methods.check_methods
        self.lambda_handlers = catalog.budget.lambda_handlers
        self.parameters = frozenset(profile.budget.parameters)
        self.retry_catalog = catalog.retry  # retry decorators keep a callee's signature (forwarding)
        self.seconds_parameters = frozenset(profile.budget.seconds_parameters)
        self.timeout_parameters = frozenset(profile.budget.timeout_parameters)
        self.accessors: Dict[str, str] = dict(catalog.budget.accessors)
        for accessor in profile.budget.accessors:
            self.accessors.setdefault(accessor, SECONDS)
        self.servicer_suffix = catalog.budget.servicer_base_suffix
        # Deadlines a function computes itself (`deadline = time.monotonic() + t`).
        self.times = checked.analysis(TimeValues) if checked is not None else TimeValues(ctx)
        self._source = getattr(ctx, "source", None)
        self.attributes = AttributeBudgets(resolver, catalog, profile, self.sources, self._source)
        text = self._source.text if self._source is not None else ""
        tails = {name.rpartition(".")[2] for name in [*self.accessors, *self.budget_types.names]}
        self._assignment_words = tuple(sorted(tails | self.sources.state_names))
        self._context_vars_in_file = self._source is None or "ContextVar" in text
        clock_names = "|".join(sorted(map(re.escape, self.times.clocks.final_names)))
        self._clock_call = re.compile(rf"\b(?:{clock_names})\s*\(")

    # -- per function --------------------------------------------------------
    def budget_of(self, scope: Scope) -> Optional[Budget]:
        """The budget visible in `scope` (None when there is none). Cached per scope."""
        if "budget" not in scope.facts:
            # Outermost first, so each scope finds its enclosing one's budget cached: a loop, not
            # one recursion per nested function (a thousand nested lambdas are valid Python).
            pending = []
            current: Optional[Scope] = scope
            while current is not None and "budget" not in current.facts:
                pending.append(current)
                current = current.parent
            for each in reversed(pending):
                each.facts["budget"] = self._compute(each) if each.kind == FUNCTION else None
        found = scope.facts["budget"]  # stored here only: a Budget or None
        return found if isinstance(found, Budget) else None

    def _compute(self, scope: Scope, attributes: bool = True) -> Optional[Budget]:
        kinds: List[Tuple[str, str]] = []
        typed: List[Tuple[str, BudgetType]] = []
        optional = set(optional_parameters(scope.node))
        for index, param in enumerate(scope.function_params()):
            found = self._param_kind(param, index, scope)
            if found is not None:
                kinds.append((param.arg, found[0]))
                if found[1] is not None:
                    typed.append((param.arg, found[1]))
        own = scope.bindings()
        outer = self._enclosing_budget(scope)
        if outer is not None:
            kinds.extend((n, k) for n, k in outer.kinds if n not in own and "." not in n)
            typed.extend((n, t) for n, t in outer.typed if n not in own and "." not in n)
            optional.update(n for n in outer.optional if n not in own)
        kinds.extend((name, INSTANT) for name in self._local_deadlines(scope, {n for n, _ in kinds}))
        for text, found in self.attributes.sources_read(scope, self._own_budget if attributes else None):
            kinds.append((text, found[0]))
            if found[0] in OBJECT_KINDS:
                typed.append((text, found[1]))
        names = {name for name, _ in kinds}
        if outer is not None:
            names.update(n for n in outer.names if n not in own)
        if not names and not self._may_assign_a_budget(scope):
            return None  # most functions: no budget, and no word an assignment could make one from
        targets = _by_target(assignments(scope))
        for target, values in targets.items():
            if target in names:
                continue
            found = self._binding_kind(target, values, names, scope)
            if found is not None:
                kinds.append((target, found[0]))
                names.add(target)
                if found[1] is not None:
                    typed.append((target, found[1]))
        changed = True
        while changed:  # derived names: a fixpoint over `x = f(budget_name)`, every binding agreeing
            changed = False
            for target, values in targets.items():
                if target not in names and _all_from(values, names, own.get(target, ())):
                    names.add(target)
                    changed = True
        for text, kind in inline_accessors(scope, self._source, self.resolver, self.accessors):
            if text not in names:  # last: a parameter or a name read once keeps its priority
                kinds.append((text, kind))
                names.add(text)
        if not names:
            return None
        return Budget(
            names=frozenset(names), kinds=tuple(kinds), optional=frozenset(optional & names), typed=tuple(typed),
        )

    def _own_budget(self, method: Scope) -> Optional[Budget]:
        """The method's budget from everything but attributes (what it may store on `self`)."""
        return self._compute(method, attributes=False)

    def _may_assign_a_budget(self, scope: Scope) -> bool:
        """The function's text spells an accessor, a budget source's name, a budget type or
        (where the module makes a ContextVar) a `.get(`: else no assignment in it yields a
        budget when it has none to derive from."""
        if self._source is None:
            return True
        text = self._source.segment(scope.node)
        if any(word in text for word in self._assignment_words):
            return True
        return self._context_vars_in_file and ".get(" in text

    def _binding_kind(
        self, target: str, values: List[ast.expr], names: set, scope: Scope,
    ) -> Optional[Tuple[str, Optional[BudgetType]]]:
        """The kind every binding of `target` gives it (None when one disagrees): an accessor
        call, a budget source, or an annotation naming a budget type (`budget: Budget = ...`)."""
        bindings = scope.bindings().get(target, ())
        if any(b.kind not in (ASSIGN, WITH) for b in bindings):
            return None
        annotated = [b.annotation for b in bindings if b.annotation is not None]
        if annotated and len(annotated) == len(bindings):
            found_type = self.budget_types.of_annotation(annotated[0], scope, self.resolver)
            if found_type is not None and all(
                self.budget_types.of_annotation(a, scope, self.resolver) == found_type for a in annotated[1:]
            ):
                return found_type.kind, found_type
        results: List[Tuple[str, Optional[BudgetType]]] = []
        for value in values:
            if is_none(value):
                continue  # `budget = None` placeholders
            kind = self._accessor_kind(value, names, scope)
            if kind is not None:
                results.append((kind, None))
                continue
            source = self.sources.source(value, scope)
            if source is None:
                return None
            results.append(source)
        if not results or any(r[0] != results[0][0] for r in results):
            return None
        kind, budget_type = results[0]
        return kind, (budget_type if kind in OBJECT_KINDS else None)


    def given_timeout(self, scope: Scope) -> Optional[Budget]:
        """The time a function's caller gave it, when no budget is in scope (given_timeouts.py):
        only DL102 asks."""
        return _given_timeout(scope, self.timeout_parameters)

    def _local_deadlines(self, scope: Scope, known: set) -> List[str]:
        """Names this function assigns a deadline it computes from its own clock read
        (`deadline = time.monotonic() + timeout`) and takes the time left from
        (`deadline - time.monotonic()`): the function has a budget in scope."""
        if self._source is not None and not self._clock_call.search(self._source.segment(scope.node)):
            return []  # no clock call in its text: most functions stop here, before any walk
        times = self.times.function(scope)
        if times is None:
            return []
        try:
            named, uses = times.names, times.deadline_uses
        except RecursionError:  # absurdly deep expressions: no local deadline, the rest goes on
            return []
        own = scope.bindings()
        # Only a deadline the function also takes time left from: one that merely guards a
        # polling loop (`while time.monotonic() < deadline:` around short fixed attempts) is
        # not treated as the request's budget (on real code those attempts are deliberate).
        remaining = [use.node for use in uses if use.kind == REMAINING]
        found = []
        for name, value in sorted(named.items()):
            if value.role != DEADLINE or not value.local or name in known:
                continue
            if not any(b.kind == "assign" for b in own.get(name, ())):
                continue
            if any(isinstance(n, ast.Name) and n.id == name for node in remaining for n in walk_nodes(node)):
                found.append(name)
        return found

    def _enclosing_budget(self, scope: Scope) -> Optional[Budget]:
        parent = scope.parent
        while parent is not None and parent.kind != FUNCTION:
            parent = parent.parent
        return self.budget_of(parent) if parent is not None else None

    def _param_kind(self, param: ast.arg, index: int, scope: Scope) -> Optional[Tuple[str, Optional[BudgetType]]]:
        budget_type = self.budget_types.of_annotation(param.annotation, scope, self.resolver)
        if budget_type is not None:
            return budget_type.kind, budget_type
        if param.arg in self.parameters:
            return OBJECT, self.budget_types.default
        if param.arg in self.seconds_parameters:
            return SECONDS, None
        if index == 2 and self._is_servicer_method(scope):
            return GRPC_CONTEXT, self.budget_types.grpc
        if index == 1 and param.arg == "context" and self._is_lambda_handler(scope):
            return LAMBDA_CONTEXT, self.budget_types.aws_lambda
        return None

    def _is_lambda_handler(self, scope: Scope) -> bool:
        """A module-level `handler(event, context)` (or `<name>_handler`, or a name the
        catalog's `budget.lambda_handlers` lists)."""
        node = scope.node
        if scope.parent is None or scope.parent.kind != MODULE or not isinstance(node, ast.FunctionDef):
            return False
        args = node.args
        plain = [a.arg for a in args.args] == ["event", "context"] and not (args.posonlyargs or args.kwonlyargs)
        return plain and (node.name in self.lambda_handlers or node.name.endswith("_handler"))

    def _is_servicer_method(self, scope: Scope) -> bool:
        class_scope = scope.enclosing_class
        if class_scope is None or not isinstance(class_scope.node, ast.ClassDef):
            return False
        for base in class_scope.node.bases:
            parts = dotted_parts(base)
            if parts and parts[-1].endswith(self.servicer_suffix):
                return True
        return False

    def _accessor_kind(self, value: ast.expr, budget_names: set, scope: Scope) -> Optional[str]:
        whole = self.methods.millis_operand(value) or value  # `ms / 1000` is the remainder in seconds
        raw, raw_ms = self.methods.raw_methods, self.methods.raw_ms_methods
        for node in walk_nodes(value):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and (func.attr in raw or func.attr in raw_ms):
                if receiver_text(func.value) in budget_names:
                    if func.attr in raw or whole is not value:
                        return SECONDS if node is whole else DERIVED
                    return DERIVED  # milliseconds, unscaled
            qualname = self.resolver.qualified_name(func, scope)
            if qualname is not None and qualname in self.accessors:
                return self.accessors[qualname] if node is value else DERIVED
        return None


    # -- what a budget's methods do (budget_methods.py) ------------------------------------
    def role(self, call: ast.AST, budget: Optional[Budget]) -> Optional[str]:
        return self.methods.role(call, budget)

    def hop_timeout_method(self, call: ast.AST, budget: Optional[Budget]) -> Optional[str]:
        return self.methods.hop_timeout_method(call, budget)

    def raw_remainder_call(self, value: ast.AST, budget: Optional[Budget]) -> bool:
        return self.methods.raw_remainder_call(value, budget)

    def remainder_may_be_none(self, call: ast.AST, budget: Optional[Budget]) -> bool:
        return self.methods.remainder_may_be_none(call, budget)


def _by_target(assignments: List[Tuple[str, ast.expr]]) -> Dict[str, List[ast.expr]]:
    targets: Dict[str, List[ast.expr]] = {}
    for target, value in assignments:
        targets.setdefault(target, []).append(value)
    return targets


def _all_from(values: List[ast.expr], names: set, bindings: Sequence[Binding]) -> bool:
    """Every binding of a name derives from the budget (`None` placeholders aside): one
    binding from elsewhere makes it no budget."""
    if not names or any(b.kind not in (ASSIGN, WITH) for b in bindings):
        return False
    real = [v for v in values if not is_none(v)]
    return bool(real) and all(mentions_any(v, names) for v in real)


# -- what rules ask ---------------------------------------------------------------
def budget_in_scope(ctx: "FileView") -> Optional[Budget]:
    """The budget visible where the walk is (None: no budget in scope)."""
    return ctx.analysis(BudgetAnalysis).budget_of(ctx.scope)


def given_timeout(ctx: "FileView") -> Optional[Budget]:
    """The time the caller gave the function where the walk is (opt-in, for DL102)."""
    return ctx.analysis(BudgetAnalysis).given_timeout(ctx.scope)


def given_timeout_polls(ctx: "FileView", given: Budget) -> bool:
    """The walk is inside a loop that compares the given timeout (`while time.time() - start <
    timeout:`, `if time.monotonic() >= deadline: raise`): the parameter bounds a polling loop,
    and each attempt's short fixed timeout is deliberate (as for local deadlines, measured)."""
    for node in ctx.parents:
        if isinstance(node, (ast.While, ast.For, ast.AsyncFor)):
            if any(isinstance(n, ast.Compare) and mentions_any(n, given.names) for n in walk_nodes(node)):
                return True
    return False


def timeout_expression(ctx: "FileView") -> Tuple[str, bool]:
    """The expression a fix inserts as a timeout where the walk is, and whether it comes from
    a budget (True) or is the profile's edge default (False)."""
    budget = budget_in_scope(ctx)
    if budget is not None:
        expression = budget.timeout_expression(ctx.profile)
        if expression is not None:
            return expression, True
    return ctx.profile.render("edge_expression"), False
