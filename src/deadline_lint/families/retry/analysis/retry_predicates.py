"""Reading a retry predicate: a function of the exception that decides whether it is retried
(tenacity's `retry_if_exception(f)`, retrying's `retry_on_exception=f`), written as a lambda,
a def of this file, or a def of another project module (through the `PredicateClasses`
fact, read from that module's tree).

A predicate is read when its body is a sequence of branches on the class of its one
parameter, each returning, and a final `return`:

    if isinstance(exc, (A, B)):        # or `type(exc) in (A, B)`, `... or isinstance(exc, C)`
        return exc.code in RETRYABLE   # neither True nor False: unknown for A and B
    if isinstance(exc, httpx.TimeoutException):
        return True                    # True for it
    return isinstance(exc, ValueError) # True for ValueError, False for the rest

Anything else in the body (a call, an assignment, a test of something but the class) leaves
the predicate unknown: the rules stay quiet. A class the predicate returns True for counts
only when no branch before it may decide an expiry or cancel error first (`if isinstance(e,
Exception): return False` ahead of it, or a class that cannot be resolved).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, List, Optional, Sequence, Tuple, Union

from deadline_lint.catalog.retry import ALL_BUT, TYPES
from deadline_lint.families.retry.analysis.retry_policy import UNKNOWN, FilterPart, is_docstring
from deadline_lint.families.shared.errors.exception_facts import class_name
from deadline_lint.families.shared.errors.exceptions import Admission, Element, ExceptionAnalysis
from deadline_lint.semantics.facts import Fact, Local
from deadline_lint.semantics.local.scopes import IMPORT, OTHER, Scope
from deadline_lint.semantics.summary import FUNCTIONS, ModuleTree

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

TRUE, FALSE, MAYBE = "true", "false", "maybe"
Predicate = Union[ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef]


@dataclass(frozen=True)
class Branch:
    """One test on the parameter's class and what the predicate returns when it passes."""

    classes: Tuple[ast.expr, ...]  # the class expressions tested (`A`, `(A, B)`)
    outcome: str  # TRUE, FALSE or MAYBE
    exact: bool = False  # `type(exc) in (...)`: a subclass does not pass


@dataclass(frozen=True)
class Reading:
    parameter: str
    branches: Tuple[Branch, ...]  # in the order they are tried
    rest: str  # what any other exception gets: TRUE, FALSE or MAYBE


def read_predicate(node: Predicate, is_builtin: Callable[[str], bool], state: bool = False) -> Optional[Reading]:
    """The branches of a lambda or def of one positional parameter; None when its body is
    anything but branches on that parameter's class. `is_builtin(name)`: the name is the
    builtin (`isinstance`, `type`) where the predicate is written. With `state`, the parameter
    is tenacity's retry state and the class tested is its outcome's exception's
    (`isinstance(rs.outcome.exception(), T)`: None, a result, passes no class test)."""
    args = node.args
    if len(args.posonlyargs) + len(args.args) != 1 or args.vararg or args.kwonlyargs or args.kwarg:
        return None
    parameter = [*args.posonlyargs, *args.args][0].arg
    if isinstance(node, ast.Lambda):
        statements: Sequence[ast.stmt] = [ast.Return(node.body)]
    else:
        statements = [s for s in node.body if not is_docstring(s)]
    tests = _Tests(parameter, is_builtin, state)
    branches: List[Branch] = []
    for index, statement in enumerate(statements):
        last = index == len(statements) - 1
        if last:
            if not isinstance(statement, ast.Return) or statement.value is None:
                return None
            rest = tests.final(statement.value, branches)
            return Reading(parameter, tuple(branches), rest) if rest is not None else None
        if not tests.branch(statement, branches):
            return None
    return None


class _Tests:
    def __init__(self, parameter: str, is_builtin: Callable[[str], bool], state: bool = False) -> None:
        self.parameter = parameter
        self.is_builtin = is_builtin
        self.state = state

    def branch(self, statement: ast.stmt, out: List[Branch]) -> bool:
        """`if <class test>: return <value>`, with `elif`s read as the ifs that follow."""
        if not isinstance(statement, ast.If) or len(statement.body) != 1:
            return False
        returned = statement.body[0]
        if not isinstance(returned, ast.Return) or returned.value is None:
            return False
        tested = self.tests(statement.test)
        if tested is None:
            return False
        outcome = _outcome(returned.value)
        for classes, exact, narrowed in tested:
            out.append(Branch(classes, MAYBE if narrowed else outcome, exact))
        if not statement.orelse:
            return True
        return len(statement.orelse) == 1 and self.branch(statement.orelse[0], out)

    def final(self, value: ast.expr, out: List[Branch]) -> Optional[str]:
        """The last `return`: a constant, a class test (`or`-ed), or its negation."""
        if isinstance(value, ast.Constant):
            return _outcome(value)
        negated = isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not)
        tested = self.tests(value.operand if isinstance(value, ast.UnaryOp) and negated else value)
        if tested is None:
            return None
        for classes, exact, narrowed in tested:
            out.append(Branch(classes, MAYBE if narrowed else FALSE if negated else TRUE, exact))
        if negated and any(narrowed for _, _, narrowed in tested):
            return MAYBE  # not (isinstance(e, A) and ...): not even the rest is known
        return TRUE if negated else FALSE

    def tests(self, test: ast.expr) -> Optional[List[Tuple[Tuple[ast.expr, ...], bool, bool]]]:
        """The class tests `or`-ed in `test`: (classes, exact, narrowed by an `and`)."""
        operands = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
        found = []
        for operand in operands:
            narrowed = False
            if isinstance(operand, ast.BoolOp) and isinstance(operand.op, ast.And):
                # `isinstance(e, A) and e.status == 502`: True for some A only
                operand, narrowed = operand.values[0], True
            one = self.test(operand)
            if one is None:
                return None
            found.append((one[0], one[1], narrowed))
        return found

    def test(self, test: ast.expr) -> Optional[Tuple[Tuple[ast.expr, ...], bool]]:
        if (
            isinstance(test, ast.Call) and self._builtin(test.func, "isinstance")
            and len(test.args) == 2 and not test.keywords and self._is_parameter(test.args[0])
        ):
            return (test.args[1],), False
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and self._type_of_parameter(test.left):
            op, right = test.ops[0], test.comparators[0]
            if isinstance(op, ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                return tuple(right.elts), True
            if isinstance(op, (ast.Is, ast.Eq)):
                return (right,), True
        return None

    def _type_of_parameter(self, expr: ast.expr) -> bool:
        return (
            isinstance(expr, ast.Call) and self._builtin(expr.func, "type")
            and len(expr.args) == 1 and not expr.keywords and self._is_parameter(expr.args[0])
        )

    def _builtin(self, func: ast.expr, name: str) -> bool:
        return isinstance(func, ast.Name) and func.id == name and self.is_builtin(name)

    def _is_parameter(self, expr: ast.expr) -> bool:
        if self.state:  # `rs.outcome.exception()`
            if not isinstance(expr, ast.Call) or expr.args or expr.keywords:
                return False
            method = expr.func
            if not isinstance(method, ast.Attribute) or method.attr != "exception":
                return False
            outcome = method.value
            if not isinstance(outcome, ast.Attribute) or outcome.attr != "outcome":
                return False
            expr = outcome.value
        return isinstance(expr, ast.Name) and expr.id == self.parameter


def _outcome(value: ast.expr) -> str:
    if isinstance(value, ast.Constant):
        if value.value is True:
            return TRUE
        if value.value is False or value.value is None:
            return FALSE
    return MAYBE


# -- what a reading retries -----------------------------------------------------------------
Judged = Tuple[Branch, Admission]  # a branch with what its classes admit


def filter_parts(judged: Sequence[Judged], rest: str, node: ast.expr, described: str) -> Tuple[FilterPart, ...]:
    """The filter parts of a read predicate: TYPES for the classes it returns True for (none
    when a branch ahead of one may decide an expiry or cancel error first), ALL_BUT when it
    returns True for every other exception, UNKNOWN for what it may or may not retry."""
    parts: List[FilterPart] = []
    ahead: List[Admission] = []
    for branch, admission in judged:
        if branch.outcome != TRUE:
            ahead.append(admission)
            continue
        if any(not a.complete or a.kinds for a in ahead):
            return (FilterPart(UNKNOWN, node),)
        parts.append(FilterPart(TYPES, node, admission, tested=True, predicate=described))
    if rest == TRUE:
        if any(branch.outcome == MAYBE for branch, _ in judged):
            return (FilterPart(UNKNOWN, node),)
        excluded = [a for branch, a in judged if branch.outcome == FALSE]
        elements = tuple(e for a in excluded for e in a.elements)
        admission = Admission(elements, all(a.complete for a in excluded))
        return (FilterPart(ALL_BUT, node, admission, tested=True, predicate=described),)
    if rest == MAYBE:
        parts.append(FilterPart(UNKNOWN, node))
    return tuple(parts)


def exact(admission: Admission) -> Admission:
    """`type(exc) in (...)`: only the classes named pass, none through a base class."""
    elements = tuple(Element(e.node, e.qualname, tuple(a for a in e.admitted if a.direct)) for e in admission.elements)
    return Admission(elements, admission.complete)


def local_predicate(
    ctx: "FileView", exceptions: ExceptionAnalysis, function: ast.expr, scope: Scope, state: bool = False
) -> Optional[Tuple[Predicate, Reading, Scope, str]]:
    """A lambda, or a def of this file named once: the node, its reading, the scope its
    body is read in, and how a message names it (`` `is_retryable` at line 12``)."""
    resolver = ctx.resolver
    node: Predicate
    described = ""
    if isinstance(function, ast.Lambda):
        node = function
    elif isinstance(function, ast.Name):
        bindings = scope.lookup(function.id)
        if not bindings or len(bindings) != 1 or bindings[0].kind != OTHER:
            return None
        value = bindings[0].value
        if not isinstance(value, FUNCTIONS):
            return None
        node, scope = value, bindings[0].scope
        described = f"`{function.id}` at line {value.lineno}"
    else:
        return None
    where = resolver.scope_of(node, scope)
    if where is None:
        return None

    def is_builtin(name: str) -> bool:
        return resolver.qualified_name(ast.Name(name, ast.Load()), where) == name

    reading = read_predicate(node, is_builtin, state)
    if reading is None or (state and not reading.branches):
        return None  # a state function testing no class (`lambda rs: True`) says nothing of expiry
    return node, reading, where, described


def judged_predicate(
    ctx: "FileView", exceptions: ExceptionAnalysis, function: ast.expr, scope: Scope, state: bool = False
) -> Optional[Tuple[List[Judged], str, str]]:
    """A predicate read here or in its own project module: its branches with what their
    classes admit, what the rest gets, and how a message names it. A `state` predicate (of
    tenacity's retry state) is read only here: the project fact reads exception predicates."""
    found = local_predicate(ctx, exceptions, function, scope, state)
    if found is not None:
        _, reading, where, described = found
        judged: List[Judged] = []
        for branch in reading.branches:
            for classes in branch.classes:
                admission = exceptions.admits(classes, where)
                judged.append((branch, exact(admission) if branch.exact else admission))
        return judged, reading.rest, described
    if state or not imported_binding(function, scope):
        return None
    from deadline_lint.semantics.file import FileSemantics

    semantics = ctx.analysis(FileSemantics)
    symbol = semantics.callee(function, scope)
    answer = semantics.facts.about(PREDICATE_CLASSES, symbol) if symbol is not None else None
    if answer is None or symbol is None:
        return None
    payload = answer.payload
    judged = []
    for entry in payload[2:]:
        outcome, flag, qualname = entry.split(":", 2)
        admission = exceptions.admits_classes((qualname or None,), function)
        judged.append((Branch((), outcome, flag == "1"), exact(admission) if flag == "1" else admission))
    return judged, payload[1], f"`{answer.chain[0]}` at line {payload[0]} of `{symbol.module.name}`"


def spares_expiry(judged: Sequence[Judged], rest: str) -> bool:
    """The predicate returns False for every expiry error: True only for classes that admit
    none (and may return True only for those), False for the rest."""
    return rest == FALSE and all(a.complete and not a.kinds for branch, a in judged if branch.outcome != FALSE)


def imported_binding(function: ast.expr, scope: Scope) -> bool:
    """The predicate is a name imported at the module's top (or `module.function`)."""
    if isinstance(function, ast.Attribute):
        return isinstance(function.value, (ast.Name, ast.Attribute))
    if not isinstance(function, ast.Name):
        return False
    bindings = scope.lookup(function.id) or []
    return len(bindings) == 1 and bindings[0].kind == IMPORT and bindings[0].scope.parent is None


# -- across modules -------------------------------------------------------------------------
# Payload: (line, rest, then per class tested "outcome:exact:qualname", in order; an empty
# qualname for a class that cannot be resolved in its module).
Encoded = Tuple[str, ...]


class PredicateClasses(Fact[Encoded]):
    """A project module's function of one parameter that only branches on its class."""

    name = "retry.predicate"
    version = 1
    through_returns = False  # a predicate is read where it is written

    def may_hold(self, text: str) -> bool:
        return "isinstance(" in text or "type(" in text

    def function(self, module: ModuleTree, node: ast.AST, klass: Optional[ast.ClassDef]) -> Optional[Local]:
        if klass is not None or not isinstance(node, FUNCTIONS):
            return None
        kinds = module.summary.kinds
        reading = read_predicate(node, lambda name: name not in kinds)
        if reading is None:
            return None
        shadowed = (reading.parameter,)
        encoded = [str(node.lineno), reading.rest]
        for branch in reading.branches:
            for expr in branch.classes:
                for element in _elements(module, expr):
                    qualname = class_name(module, element, shadowed) or ""
                    encoded.append(f"{branch.outcome}:{int(branch.exact)}:{qualname}")
        return Local(tuple(encoded), node.name)


def _elements(module: ModuleTree, expr: ast.expr) -> Sequence[ast.expr]:
    """A tuple written in place, or a top-level name of the module bound to one."""
    if isinstance(expr, ast.Name) and isinstance(module.values.get(expr.id), (ast.Tuple, ast.List, ast.Set)):
        expr = module.values[expr.id]
    return expr.elts if isinstance(expr, (ast.Tuple, ast.List, ast.Set)) else [expr]


PREDICATE_CLASSES = PredicateClasses()

