"""Budget in scope: which names inside a function carry the request's remaining time.

Sources: budget parameters (by name or annotation, from the profile and catalog), the
`context` of a gRPC servicer method, names assigned from budget accessors, and names derived
from any of those by assignment (a fixpoint over the function body). Nested functions see
their enclosing function's budget unless they rebind the name: a stack of scopes, not a flag.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Tuple

from deadline_lint.analysis.expressions import mentions_any
from deadline_lint.analysis.resolve import dotted_parts
from deadline_lint.analysis.scopes import FUNCTION, Scope
from deadline_lint.analysis.time_values import DEADLINE, REMAINING, TimeValues
from deadline_lint.profile import Profile

if TYPE_CHECKING:
    from deadline_lint.file_view import AnalysisInputs, FileView

OBJECT, GRPC_CONTEXT, SECONDS, INSTANT, DERIVED = "object", "grpc_context", "seconds", "instant", "derived"

_TEMPLATE_FOR_KIND = {
    OBJECT: "budget_expression",
    GRPC_CONTEXT: "grpc_context_expression",
    SECONDS: "seconds_expression",
}


@dataclass(frozen=True)
class BudgetSource:
    name: str
    kind: str


@dataclass(frozen=True)
class Budget:
    names: FrozenSet[str]  # every name that carries or derives from the budget
    kinds: Tuple[Tuple[str, str], ...]  # (name, kind) for the direct sources, in priority order
    optional: FrozenSet[str] = frozenset()  # parameters that default to None (or are Optional)

    @property
    def primary(self) -> Optional[BudgetSource]:
        """The source a fix derives a timeout from: one with a template, first found."""
        for name, kind in self.kinds:
            if kind in _TEMPLATE_FOR_KIND:
                return BudgetSource(name, kind)
        return None

    def timeout_expression(self, profile: Profile) -> Optional[str]:
        source = self.primary
        if source is None:
            return None
        expression = profile.render(_TEMPLATE_FOR_KIND[source.kind], source.name)
        if source.name in self.optional:
            # `budget=None` callers exist: the edge default stands in for a missing budget.
            edge = profile.render("edge_expression")
            return f"({expression} if {source.name} is not None else {edge})"
        return expression

    def kind_of(self, name: str) -> Optional[str]:
        for source, kind in self.kinds:
            if source == name:
                return kind
        return DERIVED if name in self.names else None


class BudgetAnalysis:
    """Per file: the budget of every scope. Built from anything with the file's `resolver`,
    `catalog` and `profile` (the engine's context, or the thread-budget module index)."""

    def __init__(self, ctx: "AnalysisInputs"):
        resolver, catalog, profile = ctx.resolver, ctx.catalog, ctx.profile
        self.resolver = resolver
        data = catalog.data.get("budget", {}) or {}
        self.types: Dict[str, str] = dict(data.get("types", {}) or {})
        for type_name in profile.budget.types:
            self.types.setdefault(type_name, OBJECT)
        self.parameters = frozenset(profile.budget.parameters)
        self.seconds_parameters = frozenset(profile.budget.seconds_parameters)
        self.timeout_parameters = frozenset(profile.budget.timeout_parameters)
        self.context_methods = frozenset(data.get("context_methods", []) or [])
        self.accessors: Dict[str, str] = dict(data.get("accessors", {}) or {})
        for accessor in profile.budget.accessors:
            self.accessors.setdefault(accessor, SECONDS)
        self.servicer_suffix = data.get("servicer_base_suffix", "Servicer")
        # Deadlines a function computes itself (`deadline = time.monotonic() + t`).
        self.times = ctx.analysis(TimeValues) if hasattr(ctx, "analysis") else TimeValues(ctx)  # type: ignore[attr-defined]
        self._source = getattr(ctx, "source", None)
        clock_names = "|".join(sorted(map(re.escape, self.times.clocks.final_names)))
        self._clock_call = re.compile(rf"\b(?:{clock_names})\s*\(")

    # -- per function --------------------------------------------------------
    def budget_of(self, scope: Scope) -> Optional[Budget]:
        """The budget visible in `scope` (None when there is none). Cached per scope."""
        if "budget" in scope.facts:
            return scope.facts["budget"]  # type: ignore[return-value]
        # Outermost first, so each scope finds its enclosing one's budget cached: a loop, not
        # one recursion per nested function (a thousand nested lambdas are valid Python).
        pending = []
        current: Optional[Scope] = scope
        while current is not None and "budget" not in current.facts:
            pending.append(current)
            current = current.parent
        for each in reversed(pending):
            each.facts["budget"] = self._compute(each) if each.kind == FUNCTION else None
        return scope.facts["budget"]  # type: ignore[return-value]

    def _compute(self, scope: Scope) -> Optional[Budget]:
        kinds: List[Tuple[str, str]] = []
        optional = set(_optional_parameters(scope.node))
        for index, param in enumerate(scope.function_params()):
            kind = self._param_kind(param, index, scope)
            if kind is not None:
                kinds.append((param.arg, kind))
        own = scope.bindings()
        outer = self._enclosing_budget(scope)
        if outer is not None:
            kinds.extend((n, k) for n, k in outer.kinds if n not in own)
            optional.update(n for n in outer.optional if n not in own)
        kinds.extend((name, INSTANT) for name in self._local_deadlines(scope, {n for n, _ in kinds}))
        names = {name for name, _ in kinds}
        if outer is not None:
            names.update(n for n in outer.names if n not in own)
        assignments = self._assignments(scope)
        for target, value in assignments:
            kind = self._accessor_kind(value, names, scope)
            if kind is not None and target not in names:
                kinds.append((target, kind))
                names.add(target)
        changed = True
        while changed:  # derived names: a fixpoint over `x = f(budget_name)`
            changed = False
            for target, value in assignments:
                if target not in names and mentions_any(value, names):
                    names.add(target)
                    changed = True
        if not names:
            return None
        return Budget(names=frozenset(names), kinds=tuple(kinds), optional=frozenset(optional & names))

    def given_timeout(self, scope: Scope) -> Optional[Budget]:
        """The time a function's caller gave it, when no budget is in scope: a numeric
        parameter named in the opt-in `budget.timeout_parameters` (a number default, or
        annotated `float` / `int`), of this function or an enclosing one that this one does
        not rebind, with the names derived from it. Only DL102 asks: a function given
        `timeout=10` that calls downstream with a fixed 30 s ignores what it was given."""
        if not self.timeout_parameters or scope.kind != FUNCTION:
            return None
        if "given_timeout" in scope.facts:
            return scope.facts["given_timeout"]  # type: ignore[return-value]
        found: Optional[Budget] = None
        own = scope.bindings()
        numeric = [p.arg for p in _numeric_parameters(scope.node) if p.arg in self.timeout_parameters]
        if numeric:
            names = set(numeric)
        else:
            outer = self._enclosing_function(scope)
            given = self.given_timeout(outer) if outer is not None else None
            names = {n for n in given.names if n not in own} if given is not None else set()
            numeric = [n for n, _ in given.kinds if n in names] if given is not None else []
        if numeric:
            assignments = self._assignments(scope)
            changed = True
            while changed:  # derived names, as for a budget
                changed = False
                for target, value in assignments:
                    if target not in names and mentions_any(value, names):
                        names.add(target)
                        changed = True
            found = Budget(names=frozenset(names), kinds=tuple((n, SECONDS) for n in numeric))
        scope.facts["given_timeout"] = found
        return found

    @staticmethod
    def _enclosing_function(scope: Scope) -> Optional[Scope]:
        parent = scope.parent
        while parent is not None and parent.kind != FUNCTION:
            parent = parent.parent
        return parent

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
            if any(isinstance(n, ast.Name) and n.id == name for node in remaining for n in ast.walk(node)):
                found.append(name)
        return found

    def _enclosing_budget(self, scope: Scope) -> Optional[Budget]:
        parent = scope.parent
        while parent is not None and parent.kind != FUNCTION:
            parent = parent.parent
        return self.budget_of(parent) if parent is not None else None

    def _param_kind(self, param: ast.arg, index: int, scope: Scope) -> Optional[str]:
        annotation = self.resolver.annotation_class(param.annotation, scope) if param.annotation else None
        if annotation is None and param.annotation is not None:
            # A class defined in this module, or not imported: its bare name still counts.
            parts = dotted_parts(param.annotation)
            annotation = parts[-1] if parts else None
        if annotation is not None:
            kind = self.types.get(annotation) or self.types.get(annotation.rsplit(".", 1)[-1])
            if kind is not None:
                return kind
        if param.arg in self.parameters:
            return OBJECT
        if param.arg in self.seconds_parameters:
            return SECONDS
        if index == 2 and self._is_servicer_method(scope):
            return GRPC_CONTEXT
        return None

    def _is_servicer_method(self, scope: Scope) -> bool:
        class_scope = scope.enclosing_class
        if class_scope is None:
            return False
        for base in class_scope.node.bases:  # type: ignore[attr-defined]
            parts = dotted_parts(base)
            if parts and parts[-1].endswith(self.servicer_suffix):
                return True
        return False

    def _accessor_kind(self, value: ast.expr, budget_names: set, scope: Scope) -> Optional[str]:
        for node in ast.walk(value):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in self.context_methods
                and isinstance(func.value, ast.Name)
                and func.value.id in budget_names
            ):
                return SECONDS if node is value else DERIVED
            qualname = self.resolver.qualified_name(func, scope)
            if qualname is not None and qualname in self.accessors:
                return self.accessors[qualname] if node is value else DERIVED
        return None

    @staticmethod
    def _assignments(scope: Scope) -> List[Tuple[str, ast.expr]]:
        pairs: List[Tuple[str, ast.expr]] = []
        for name, bindings in scope.bindings().items():
            for binding in bindings:
                if binding.kind == "assign" and binding.value is not None:
                    pairs.append((name, binding.value))  # type: ignore[arg-type]
        pairs.sort(key=lambda pair: (getattr(pair[1], "lineno", 0), getattr(pair[1], "col_offset", 0)))
        return pairs


def _optional_parameters(function: ast.AST):
    """Parameters a caller may leave as None: `budget=None`, `budget: Optional[Budget]`,
    `budget: Budget | None`."""
    args = getattr(function, "args", None)
    if args is None:
        return
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = [*zip(positional, defaults), *zip(args.kwonlyargs, args.kw_defaults)]
    for param, default in pairs:
        if _is_none(default) or _annotation_admits_none(param.annotation):
            yield param.arg


def _numeric_parameters(function: ast.AST):
    """Parameters that hold a number whenever the function runs: a number default (not a
    bool) and no annotation admitting None, or annotated `float` / `int` with no None default."""
    args = getattr(function, "args", None)
    if args is None:
        return
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for param, default in [*zip(positional, defaults), *zip(args.kwonlyargs, args.kw_defaults)]:
        if _is_none(default) or _annotation_admits_none(param.annotation):
            continue
        annotated = isinstance(param.annotation, ast.Name) and param.annotation.id in ("float", "int")
        if annotated or _is_number(default):
            yield param


def _is_number(node) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _annotation_admits_none(annotation) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value.replace(" ", "")
        return text.startswith("Optional[") or "|None" in text or "None|" in text
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _is_none(annotation.left) or _is_none(annotation.right)
    if isinstance(annotation, ast.Subscript):
        parts = dotted_parts(annotation.value)
        return parts is not None and bool(parts) and parts[-1] == "Optional"
    return False


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
            if any(isinstance(n, ast.Compare) and mentions_any(n, given.names) for n in ast.walk(node)):
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
