"""Budget in scope: which names inside a function carry the request's remaining time.

Sources: budget parameters (by name or by an annotation naming a budget type,
`budget_types.py`), the `context` of a gRPC servicer method or of an AWS Lambda
`handler(event, context)`, the parameterless sources of `budget_sources.py` (request state,
`flask.g`, context variables, a budget type's constructor), `self.<attr>` where the class
stores only budgets, names assigned from budget accessors, and names derived from any of
those by assignment, annotated assignment, `with ... as`, or walrus (a fixpoint over the
function body). A name whose bindings disagree (one from the budget, one not) is no budget.
Attribute-shaped sources are named by their dotted text (`request.state.budget`), which
`mentions_any` matches. Nested functions see their enclosing function's budget unless they
rebind the name: a stack of scopes, not a flag.
"""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Tuple

from deadline_lint.families.shared.budget.budget_sources import BudgetSources
from deadline_lint.families.shared.budget.budget_text import budget_words
from deadline_lint.families.shared.budget.budget_types import (
    CHECK_ROLES,
    GRPC_CONTEXT,
    HOP_TIMEOUT,
    LAMBDA_CONTEXT,
    OBJECT,
    RAW_REMAINDER,
    RAW_REMAINDER_MS,
    REFUSE_CHECK,
    BudgetType,
    BudgetTypes,
)
from deadline_lint.families.shared.time.time_values import DEADLINE, REMAINING, TimeValues
from deadline_lint.semantics.file import FileSemantics
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.declared import is_none
from deadline_lint.semantics.local.expressions import dotted_text, mentions_any
from deadline_lint.semantics.local.function_body import function_body
from deadline_lint.semantics.local.resolve import dotted_parts
from deadline_lint.semantics.local.scopes import ASSIGN, FUNCTION, MODULE, PARAM, WITH, Scope
from deadline_lint.settings.profile import Profile
from deadline_lint.support.records import dataclass

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import AnalysisInputs, FileView

SECONDS, INSTANT, DERIVED = "seconds", "instant", "derived"
__all__ = ["OBJECT", "GRPC_CONTEXT", "LAMBDA_CONTEXT", "SECONDS", "INSTANT", "DERIVED", "Budget", "BudgetAnalysis"]

_TEMPLATE_FOR_KIND = {
    OBJECT: "budget_expression",
    GRPC_CONTEXT: "grpc_context_expression",
    LAMBDA_CONTEXT: "lambda_context_expression",
    SECONDS: "seconds_expression",
}
_OBJECT_KINDS = frozenset({OBJECT, GRPC_CONTEXT, LAMBDA_CONTEXT})


@dataclass(frozen=True)
class BudgetSource:
    name: str
    kind: str


@dataclass(frozen=True)
class Budget:
    names: FrozenSet[str]  # every name that carries or derives from the budget
    kinds: Tuple[Tuple[str, str], ...]  # (name, kind) for the direct sources, in priority order
    optional: FrozenSet[str] = frozenset()  # parameters that default to None (or are Optional)
    typed: Tuple[Tuple[str, BudgetType], ...] = ()  # (name, budget type) for budget objects

    @property
    def primary(self) -> Optional[BudgetSource]:
        """The source a fix derives a timeout from: one with a template, first found."""
        for name, kind in self.kinds:
            if kind in _TEMPLATE_FOR_KIND:
                return BudgetSource(name, kind)
        return None

    def timeout_expression(self, profile: Profile, spelled: Optional[str] = None) -> Optional[str]:
        """The primary source's timeout (`budget.timeout()`), the source spelled `spelled`
        when the caller holds it under another name (a local it was read into)."""
        source = self.primary
        if source is None:
            return None
        expression = profile.render(_TEMPLATE_FOR_KIND[source.kind], spelled or source.name)
        if source.name in self.optional:
            # `budget=None` callers exist: the edge default stands in for a missing budget.
            edge = profile.render("edge_expression")
            return f"({expression} if {source.name} is not None else {edge})"
        return expression

    def type_of(self, name: str) -> Optional[BudgetType]:
        """The budget type of a budget object's name (None: not a budget object)."""
        for source, budget_type in self.typed:
            if source == name:
                return budget_type
        return None

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
        self.context_methods = frozenset(data.get("context_methods", []) or [])
        self.budget_types = BudgetTypes(catalog, profile)
        analysis = getattr(ctx, "analysis", None)  # a file being checked: its project counts
        if analysis is not None:
            self.budget_types.see_project(lambda: analysis(FileSemantics).names)
        self.types: Dict[str, str] = self.budget_types.kinds()
        self.sources = BudgetSources(resolver, catalog, profile, self.budget_types)
        self.lambda_handlers = frozenset(data.get("lambda_handlers", []) or [])
        self.refuse_methods = frozenset(data.get("refuse_methods", []) or [])
        self.parameters = frozenset(profile.budget.parameters)
        self.seconds_parameters = frozenset(profile.budget.seconds_parameters)
        self.timeout_parameters = frozenset(profile.budget.timeout_parameters)
        self.accessors: Dict[str, str] = dict(data.get("accessors", {}) or {})
        # Methods that read the raw remainder on some budget type (a name assigned from one
        # holds remaining seconds), and those that check or refuse (DL106).
        known = [self.budget_types.default, self.budget_types.grpc, self.budget_types.aws_lambda]
        known.extend(t for t in (self.budget_types.type_named(n) for n in self.budget_types.names) if t is not None)
        self.raw_methods = self.context_methods | frozenset(m for t in known for m in t.methods(RAW_REMAINDER))
        self.raw_ms_methods = frozenset(m for t in known for m in t.methods(RAW_REMAINDER_MS))
        self.check_methods = self.refuse_methods | frozenset(m for t in known for m in t.methods(*CHECK_ROLES))
        for accessor in profile.budget.accessors:
            self.accessors.setdefault(accessor, SECONDS)
        self.servicer_suffix = data.get("servicer_base_suffix", "Servicer")
        # Deadlines a function computes itself (`deadline = time.monotonic() + t`).
        self.times = ctx.analysis(TimeValues) if hasattr(ctx, "analysis") else TimeValues(ctx)  # type: ignore[attr-defined]
        self._source = getattr(ctx, "source", None)
        # Attribute sources are looked for only in files that spell one of their names.
        text = self._source.text if self._source is not None else ""
        self._state_words = tuple(sorted(self.sources.state_names))
        self._reads_sources = self._source is None or any(word in text for word in self._state_words)
        # A class keeps a budget on `self` only where some method has one: a budget word.
        self._words = tuple(sorted(budget_words(profile, catalog)))
        tails = {name.rpartition(".")[2] for name in [*self.accessors, *self.budget_types.names]}
        self._assignment_words = tuple(sorted(tails | self.sources.state_names))
        self._context_vars_in_file = self._source is None or "ContextVar" in text
        self._may_keep = self._source is None or any(word in text for word in self._words)
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

    def _compute(self, scope: Scope, attributes: bool = True) -> Optional[Budget]:
        kinds: List[Tuple[str, str]] = []
        typed: List[Tuple[str, BudgetType]] = []
        optional = set(_optional_parameters(scope.node))
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
        for text, found in self._attribute_sources(scope, attributes):
            kinds.append((text, found[0]))
            if found[0] in _OBJECT_KINDS:
                typed.append((text, found[1]))
        names = {name for name, _ in kinds}
        if outer is not None:
            names.update(n for n in outer.names if n not in own)
        if not names and not self._may_assign_a_budget(scope):
            return None  # most functions: no budget, and no word an assignment could make one from
        assignments = self._assignments(scope)
        targets = _by_target(assignments)
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
        if not names:
            return None
        return Budget(
            names=frozenset(names), kinds=tuple(kinds), optional=frozenset(optional & names), typed=tuple(typed),
        )

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
        return kind, (budget_type if kind in _OBJECT_KINDS else None)

    def _attribute_sources(self, scope: Scope, attributes: bool) -> List[Tuple[str, Tuple[str, BudgetType]]]:
        """The attribute-shaped budget sources the function reads itself, by dotted text:
        `request.state.budget`, `g.budget`, `request.budget`, and `self.<attr>` where the class
        keeps a budget object."""
        if not self._may_keep:
            return []  # no budget word in the file: no source, and nothing kept on `self`
        stored = self._stored_budgets(scope) if attributes else {}
        if not self._reads_sources and not stored:
            return []
        if self._source is not None:
            text = self._source.segment(scope.node)
            if not any(word in text for word in self._state_words) and not any(attr in text for attr in stored):
                return []
        found: Dict[str, Tuple[str, BudgetType]] = {}
        for node in function_body(scope).nodes(ast.Attribute):
            text = None
            source = self.sources.attribute_source(node, scope)
            if source is None and node.attr in stored and _is_self(node.value, scope):
                source = stored[node.attr]
            if source is not None:
                text = dotted_text(node)
            if text is not None:
                found.setdefault(text, source)  # type: ignore[arg-type]
        return sorted(found.items())

    def _stored_budgets(self, scope: Scope) -> Dict[str, Tuple[str, BudgetType]]:
        """For a method: the attributes its class stores only budget objects on
        (`self.budget = budget` in `__init__`), with their kind and type."""
        class_scope = scope.enclosing_class
        if class_scope is None:
            return {}
        cached = class_scope.facts.get("budget.stored")
        if cached is not None:
            return cached  # type: ignore[return-value]
        class_scope.facts["budget.stored"] = {}  # a method asking while this runs sees none
        if self._source is not None:
            text = self._source.segment(class_scope.node)
            if not any(word in text for word in self._words):
                return {}  # no method of the class can have a budget to keep
        stores: Dict[str, List[Optional[Tuple[str, BudgetType]]]] = {}
        for stmt in class_scope.node.body:  # type: ignore[attr-defined]
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            method = self.resolver.scope_of(stmt, class_scope)
            if not stmt.args.args:
                continue
            base = None
            for node in function_body(method).nodes(ast.Assign):
                for target in node.targets:
                    if not (isinstance(target, ast.Attribute) and _is_self(target.value, method)):
                        continue
                    if is_none(node.value):
                        continue
                    if base is None:
                        base = self._base_budget(method)
                    stores.setdefault(target.attr, []).append(self._stored_value(node.value, base, method))
        result = {
            attr: values[0] for attr, values in stores.items()
            if values and all(v is not None and v == values[0] for v in values)
        }
        class_scope.facts["budget.stored"] = result
        return result  # type: ignore[return-value]

    def _base_budget(self, method: Scope) -> Optional[Budget]:
        found = method.facts.get("budget.base")
        if found is None and "budget.base" not in method.facts:
            found = method.facts["budget.base"] = self._compute(method, attributes=False)
        return found  # type: ignore[return-value]

    def _stored_value(self, value: ast.expr, base: Optional[Budget], method: Scope):
        if isinstance(value, ast.Name) and base is not None:
            kind = base.kind_of(value.id)
            budget_type = base.type_of(value.id)
            if kind in _OBJECT_KINDS and budget_type is not None:
                return kind, budget_type
            return None
        source = self.sources.source(value, method)
        return source if source is not None and source[0] in _OBJECT_KINDS else None

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
        if class_scope is None:
            return False
        for base in class_scope.node.bases:  # type: ignore[attr-defined]
            parts = dotted_parts(base)
            if parts and parts[-1].endswith(self.servicer_suffix):
                return True
        return False

    def _accessor_kind(self, value: ast.expr, budget_names: set, scope: Scope) -> Optional[str]:
        whole = self._millis_operand(value) or value  # `ms / 1000` is the remainder in seconds
        for node in walk_nodes(value):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and (func.attr in self.raw_methods or func.attr in self.raw_ms_methods):
                if _receiver_text(func.value) in budget_names:
                    if func.attr in self.raw_methods or whole is not value:
                        return SECONDS if node is whole else DERIVED
                    return DERIVED  # milliseconds, unscaled
            qualname = self.resolver.qualified_name(func, scope)
            if qualname is not None and qualname in self.accessors:
                return self.accessors[qualname] if node is value else DERIVED
        return None

    def _millis_operand(self, value: ast.expr) -> Optional[ast.expr]:
        """`x.get_remaining_time_in_millis() / 1000` (or `/ 1000.0`): the call."""
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div):
            right = value.right
            if isinstance(right, ast.Constant) and right.value in (1000, 1000.0) and isinstance(value.left, ast.Call):
                func = value.left.func
                if isinstance(func, ast.Attribute) and func.attr in self.raw_ms_methods:
                    return value.left
        return None

    # -- what a budget's methods do -----------------------------------------------------
    def role(self, call: ast.AST, budget: Optional[Budget]) -> Optional[str]:
        """The role of `call` as a method of a budget object in scope (`budget.remaining()`:
        RAW_REMAINDER, `context.get_remaining_time_in_millis()`: RAW_REMAINDER_MS,
        `budget.check()`: REFUSE_CHECK, ...), from the receiver's budget type."""
        if budget is None or not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            return None
        text = _receiver_text(call.func.value)
        if text is None or text not in budget.names:
            return None
        method = call.func.attr
        budget_type = budget.type_of(text) or self._type_of_kind(budget.kind_of(text))
        found = budget_type.role_of(method) if budget_type is not None else None
        if found is None and method in self.context_methods:
            return RAW_REMAINDER
        if found is None and method in self.refuse_methods:
            return REFUSE_CHECK
        return found

    def hop_timeout_method(self, call: ast.AST, budget: Optional[Budget]) -> Optional[str]:
        """For a raw-remainder call (`budget.remaining()`), the method of the receiver's budget
        type in the hop-timeout role (`timeout`: the margin already off), if it has one."""
        if self.role(call, budget) != RAW_REMAINDER or budget is None:
            return None
        text = _receiver_text(call.func.value)  # type: ignore[attr-defined]
        budget_type = budget.type_of(text) or self._type_of_kind(budget.kind_of(text))  # type: ignore[arg-type]
        methods = sorted(budget_type.methods(HOP_TIMEOUT)) if budget_type is not None else []
        if not methods:
            return None
        return "timeout" if "timeout" in methods else methods[0]

    def _type_of_kind(self, kind: Optional[str]) -> Optional[BudgetType]:
        if kind == GRPC_CONTEXT:
            return self.budget_types.grpc
        if kind == LAMBDA_CONTEXT:
            return self.budget_types.aws_lambda
        if kind in (OBJECT, DERIVED):
            return self.budget_types.default
        return None

    def raw_remainder_call(self, value: ast.AST, budget: Optional[Budget]) -> bool:
        """`budget.remaining()`, `context.time_remaining()`, or a millisecond remainder
        scaled to seconds (`context.get_remaining_time_in_millis() / 1000`): no margin off."""
        if isinstance(value, ast.BinOp):
            inner = self._millis_operand(value)
            return inner is not None and self.role(inner, budget) == RAW_REMAINDER_MS
        if not isinstance(value, ast.Call) or value.args or value.keywords:
            return False
        return self.role(value, budget) == RAW_REMAINDER

    @staticmethod
    def _assignments(scope: Scope) -> List[Tuple[str, ast.expr]]:
        """Each name's assigned values (`x = v`, `x: T = v`, `(x := v)` in a test, `with v as
        x`), in source order."""
        pairs: List[Tuple[str, ast.expr]] = []
        for name, bindings in scope.bindings().items():
            for binding in bindings:
                if binding.kind in (ASSIGN, WITH) and binding.value is not None:
                    pairs.append((name, binding.value))  # type: ignore[arg-type]
        pairs.sort(key=lambda pair: (getattr(pair[1], "lineno", 0), getattr(pair[1], "col_offset", 0)))
        return pairs


def _receiver_text(node: ast.expr) -> Optional[str]:
    return node.id if isinstance(node, ast.Name) else dotted_text(node) if isinstance(node, ast.Attribute) else None


def _by_target(assignments: List[Tuple[str, ast.expr]]) -> Dict[str, List[ast.expr]]:
    targets: Dict[str, List[ast.expr]] = {}
    for target, value in assignments:
        targets.setdefault(target, []).append(value)
    return targets


def _all_from(values: List[ast.expr], names: set, bindings) -> bool:
    """Every binding of a name derives from the budget (`None` placeholders aside): one
    binding from elsewhere makes it no budget."""
    if not names or any(b.kind not in (ASSIGN, WITH) for b in bindings):
        return False
    real = [v for v in values if not is_none(v)]
    return bool(real) and all(mentions_any(v, names) for v in real)


def _is_self(node: ast.expr, scope: Scope) -> bool:
    """The method's first parameter (`self`), not rebound."""
    method = scope
    while method.kind == FUNCTION and method.enclosing_class is None and method.parent is not None:
        method = method.parent  # a closure inside a method sees the method's `self`
    if method.kind != FUNCTION or method.enclosing_class is None:
        return False
    args = method.node.args  # type: ignore[attr-defined]
    positional = [*args.posonlyargs, *args.args]
    if not positional or not isinstance(node, ast.Name) or node.id != positional[0].arg:
        return False
    bindings = scope.lookup(node.id) or []
    return len(bindings) == 1 and bindings[0].kind == PARAM


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
        if is_none(default) or _annotation_admits_none(param.annotation):
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
        if is_none(default) or _annotation_admits_none(param.annotation):
            continue
        annotated = isinstance(param.annotation, ast.Name) and param.annotation.id in ("float", "int")
        if annotated or _is_number(default):
            yield param


def _is_number(node) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)




def _annotation_admits_none(annotation) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value.replace(" ", "")
        return text.startswith("Optional[") or "|None" in text or "None|" in text
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return is_none(annotation.left) or is_none(annotation.right)
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
