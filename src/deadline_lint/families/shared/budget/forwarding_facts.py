"""The forwarding family's project fact: a module-level function that accepts a budget (a
parameter named or annotated like one, with a default), so a budgeted caller in another
module that does not pass it drops the budget (DL503), and `fix --thread-budget` can forward
to it (thread_budget.py).

Only module-level defs undecorated or decorated with the catalog's retry policies count
(another decorator may change the signature), and a method may be overridden in a subclass
that lacks the parameter. Which names and types make a budget
parameter is the profile's and the catalog's, so the fact is one per vocabulary."""
from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, Optional, Tuple

from deadline_lint.catalog.names import canonical_name
from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.families.shared.budget.budget import OBJECT, SECONDS
from deadline_lint.semantics.facts import Fact, Local
from deadline_lint.semantics.file import FactUse, FileSemantics
from deadline_lint.semantics.local.resolve import dotted_parts
from deadline_lint.semantics.local.scopes import IMPORT, Scope
from deadline_lint.semantics.session import current
from deadline_lint.semantics.summary import FUNCTION, FUNCTIONS, VALUE, ModuleTree, Symbol, class_members

if TYPE_CHECKING:
    from deadline_lint.families.shared.budget.budget import BudgetAnalysis
    from deadline_lint.semantics.file_view import FileView

Kind = Callable[[ast.arg], Optional[str]]


@dataclass(frozen=True)
class BudgetParameter:
    callee: str  # how a message names the callee (`load_profile`)
    name: str
    kind: str  # OBJECT or SECONDS
    position: Optional[int]  # index among the call's positional arguments; None: keyword-only
    on_self: bool = False  # a method of the caller's class called on `self`: overridable


class Vocabulary:
    """What makes a parameter a budget parameter: its annotation names a budget type of kind
    OBJECT, or its name is a profile budget parameter (OBJECT) or seconds parameter."""

    def __init__(
        self,
        types: Dict[str, str],
        parameters: FrozenSet[str],
        seconds: FrozenSet[str],
        retries: FrozenSet[str] = frozenset(),
        aliases: Tuple[Tuple[str, str], ...] = (),
    ) -> None:
        self.types = types
        self.parameters = parameters
        self.seconds = seconds
        self.retries = retries  # the catalog's retry policies: decorators that keep the signature
        self.aliases = aliases

    @classmethod
    def of(cls, budgets: "BudgetAnalysis") -> "Vocabulary":
        retry = budgets.retry_catalog
        retries = frozenset(name for name, api in retry.policies.items() if api.source == "catalog")
        return cls(budgets.types, budgets.parameters, budgets.seconds_parameters, retries,
                   tuple(sorted(retry.aliases.items())))

    def keeps_signature(self, module: ModuleTree, function: ast.AST) -> bool:
        """Undecorated, or decorated only with retry policies of the catalog (`@tenacity.retry`,
        `@backoff.on_exception(...)`): they call the def again with the arguments given."""
        aliases = dict(self.aliases)
        for decorator in getattr(function, "decorator_list", ()):
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            qualname = module.qualname_of(target)
            if qualname is None or canonical_name(aliases, qualname) not in self.retries:
                return False
        return True

    def kind(self, param: ast.arg) -> Optional[str]:
        if param.annotation is not None:
            parts = dotted_parts(param.annotation)
            if parts is None and isinstance(param.annotation, ast.Subscript):
                parts = dotted_parts(param.annotation.slice)
            if parts:
                kind = self.types.get(".".join(parts)) or self.types.get(parts[-1])
                if kind == OBJECT:
                    return OBJECT
                if kind is not None:
                    return None  # a gRPC context is not forwarded, it is read
        if param.arg in self.parameters:
            return OBJECT
        if param.arg in self.seconds:
            return SECONDS
        return None

    def key(self) -> str:
        text = repr((sorted(self.types.items()), sorted(self.parameters), sorted(self.seconds), sorted(self.retries),
                     self.aliases))
        return hashlib.sha1(text.encode()).hexdigest()[:12]

    def words(self) -> Tuple[str, ...]:
        names = {*self.parameters, *self.seconds, *(t.rpartition(".")[2] for t, k in self.types.items() if k == OBJECT)}
        return tuple(sorted(name for name in names if name))


def budget_parameters(
    function: Function, kind: Kind, bound: bool = False, callee: str = ""
) -> List[BudgetParameter]:
    """Parameters that hold a budget object or budget seconds and have a default (a required
    positional one that is missing would make the call fail: something else is going on), or
    are keyword-only (`fix --thread-budget` writes `*, budget_s: float` with no default, so its
    callers in other modules are found and forwarded to); `bound`: the call passes `self` first."""
    args = function.args
    name = callee or function.name
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    found: List[BudgetParameter] = []
    offset = 1 if bound else 0
    for index, (param, default) in enumerate(zip(positional, defaults)):
        param_kind = kind(param)
        if param_kind is not None and default is not None and index >= offset and index >= len(args.posonlyargs):
            found.append(BudgetParameter(name, param.arg, param_kind, index - offset))
    for param in args.kwonlyargs:
        param_kind = kind(param)
        if param_kind is not None:
            found.append(BudgetParameter(name, param.arg, param_kind, None))
    return found


class AcceptsBudget(Fact[Tuple[str, ...]]):
    """Payload: the function's budget parameters, each `name:kind:position` (position `-`
    for a keyword-only one), in signature order."""

    version = 4  # 2: required keyword-only parameters count; 3: methods of module-level instances;
    # 4: defs decorated with the catalog's retry policies
    through_returns = False  # it holds where the def is written, never through a call

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary
        self.name = f"forwarding.accepts_budget[{vocabulary.key()}]"
        self._words = vocabulary.words()

    def may_hold(self, text: str) -> bool:
        return any(word in text for word in self._words)

    def function(self, module: ModuleTree, node: ast.AST, klass: Optional[ast.ClassDef]) -> Optional[Local]:
        if klass is not None or not isinstance(node, FUNCTIONS) or not self.vocabulary.keeps_signature(module, node):
            return None
        found = budget_parameters(node, self.vocabulary.kind)
        if not found:
            return None
        return Local(_encoded(found), node.name)

    def locals(self, module: ModuleTree) -> Dict[str, Local]:
        """Also a method of a module-level instance of one of the module's classes, under the
        instance's name (`REPO.load`): its class is the one built there, never a subclass, so
        the method called is the one read (an undecorated one)."""
        found = super().locals(module)
        for name, expr in module.values.items():
            if not isinstance(expr, ast.Call) or not isinstance(expr.func, ast.Name):
                continue
            klass = module.defs.get(expr.func.id)
            if not isinstance(klass, ast.ClassDef):
                continue
            for member, node in class_members(klass).items():
                if isinstance(node, FUNCTIONS) and self.vocabulary.keeps_signature(module, node):
                    parameters = budget_parameters(node, self.vocabulary.kind, bound=True)
                    if parameters:
                        found[f"{name}.{member}"] = Local(_encoded(parameters), f"{name}.{member}")
        return found


def _encoded(parameters: List[BudgetParameter]) -> Tuple[str, ...]:
    return tuple(f"{p.name}:{p.kind}:{'-' if p.position is None else p.position}" for p in parameters)


def decoded(callee: str, payload: Tuple[str, ...]) -> List[BudgetParameter]:
    found = []
    for item in payload:
        name, kind, position = item.split(":")
        found.append(BudgetParameter(callee, name, kind, None if position == "-" else int(position)))
    return found


def accepts_budget(vocabulary: Vocabulary) -> AcceptsBudget:
    key = vocabulary.key()
    facts: Dict[str, AcceptsBudget] = current().memo(AcceptsBudget, lasting=True)  # by vocabulary
    found = facts.get(key)
    if found is None:
        found = facts[key] = AcceptsBudget(vocabulary)
    return found


def parameters_reached(
    semantics: FileSemantics, fact: AcceptsBudget, call: ast.Call, scope: Scope,
) -> List[BudgetParameter]:
    """The budget parameters of the function of another project module that `call` certainly
    reaches (DL503's forwarding and `--thread-budget`'s plan ask alike); [] when none or unknown."""
    symbol = semantics.callee(call.func, scope)
    if symbol is None or symbol.module is semantics.own or len(symbol.path) != 1:
        return []
    answer = semantics.facts.about(fact, symbol)
    return decoded(answer.chain[0], answer.payload) if answer is not None else []


class ProjectBudgetReceivers(FactUse):
    """Per file (`ctx.analysis(ProjectBudgetReceivers)`): calls that reach a function of
    another project module that accepts a budget, and its budget parameters."""

    def __init__(self, ctx: "FileView") -> None:
        from deadline_lint.families.shared.budget.budget import BudgetAnalysis

        self.accepts = accepts_budget(Vocabulary.of(ctx.analysis(BudgetAnalysis)))
        super().__init__(ctx, self.accepts)

    def parameters(self, call: ast.Call, scope: Scope) -> List[BudgetParameter]:
        semantics = self.ctx.analysis(FileSemantics)
        found = parameters_reached(semantics, self.accepts, call, scope) if self.names.may_reach(call.func) else []
        return found or instance_parameters(semantics, self.accepts, call, scope)


def instance_parameters(
    semantics: FileSemantics, fact: AcceptsBudget, call: ast.Call, scope: Scope,
) -> List[BudgetParameter]:
    """`REPO.load(...)` with `REPO` imported from the module that builds it (`REPO = Repo()`):
    the budget parameters of that method (`AcceptsBudget.locals`)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
        return []
    bindings = scope.lookup(func.value.id)
    if not bindings or len(bindings) != 1 or bindings[0].kind != IMPORT or bindings[0].scope.parent is not None:
        return []
    qualname = semantics.summary.qualname_of(func.value)
    value = semantics.names.symbol(qualname) if qualname is not None else None
    if value is None or value.kind != VALUE or value.module is semantics.own:
        return []
    answer = semantics.facts.about(fact, Symbol(value.module, (*value.path, func.attr), FUNCTION))
    return decoded(answer.chain[0], answer.payload) if answer is not None else []
