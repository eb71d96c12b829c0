"""Which kind of error (expiry, cancel, open breaker) a piece of code is handling, and what it
turns it into: the statuses it produces and the errors it raises.

A *handling* is an `except` clause that names a kind directly (`except asyncio.TimeoutError`,
`except (CancelledError, TimeoutError)`, not `except Exception`), an `if` branch on
`isinstance(err, <kind>)` or on `err.code() == grpc.StatusCode.DEADLINE_EXCEEDED`, or a
function a framework calls for an exception type it was registered for
(`@app.exception_handler(asyncio.TimeoutError)`, `app.add_exception_handler(Timeout, f)`,
`Starlette(exception_handlers={Timeout: f})`, Flask's `@app.errorhandler(Timeout)`,
statuses.yaml's `handler_registrations`). Framework hooks that receive every exception
(Django's `process_exception`, DRF's `exception_handler`, aiohttp middlewares, gRPC server
interceptors) need nothing of their own: they are `isinstance` branches and `except` clauses. Its
outcomes are the statements of its body that produce a status (analysis.statuses) or raise an
error of a kind (analysis.exceptions), leaving out nested definitions, nested `except`
clauses and nested `isinstance` / status branches: those handle something else, or are
handlings of their own.

    handling = ctx.analysis(HandlingAnalysis)
    for found in handling.at(node):                 # node: an ExceptHandler or an If
        found.kinds, found.exact, found.outcomes, found.report_node
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple, Union

from deadline_lint.catalog.exceptions import CATALOG
from deadline_lint.families.shared.errors.exceptions import (
    CANCEL,
    Admission,
    Admitted,
    ExceptionAnalysis,
    ExceptionType,
)
from deadline_lint.families.shared.errors.statuses import ProducedStatus, StatusAnalysis
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.scopes import Scope, imports_any

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_TRY_TYPES = (ast.Try, ast.TryStar)
_BLOCK_FIELDS = ("body", "orelse", "finalbody")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
_TASK_CANCEL_BASE = "Exception"  # a cancel type deriving from this is an error, not task cancellation


class Span(ast.AST):
    """A position that is not a node of the tree: the `except` keyword of a handler. A node
    class of its own, so it goes wherever a finding's node does."""

    _fields = ()
    _attributes = ("lineno", "col_offset", "end_lineno", "end_col_offset")

    def __init__(self, lineno: int, col_offset: int, end_lineno: int, end_col_offset: int) -> None:
        super().__init__()
        self.lineno = lineno
        self.col_offset = col_offset
        self.end_lineno = end_lineno
        self.end_col_offset = end_col_offset


@dataclass(frozen=True)
class Outcome:
    statement: ast.stmt  # where a finding about it is reported
    status: Optional[ProducedStatus] = None
    raised: Optional[ExceptionType] = None  # an error of a kind, raised here
    raised_node: Optional[ast.expr] = None
    conditional: bool = False  # only on some paths through the body (inside an if, a loop)


@dataclass(frozen=True)
class Handling:
    node: ast.AST  # the ExceptHandler, the If, or a registered handler function
    report_node: ast.AST  # the `except` keyword, the If's test, or the registered type
    kinds: FrozenSet[str]  # the kinds handled, named directly
    witnesses: Tuple[Admitted, ...]  # one per element naming a kind
    exact: bool  # nothing but those kinds is handled here (a rewrite affects only them)
    outcomes: Tuple[Outcome, ...]
    distinguishes: bool  # the body itself branches on the error's type or status code

    def witness(self, kind: str) -> Optional[Admitted]:
        return next((w for w in self.witnesses if w.kind == kind), None)

    def named(self, kind: str) -> Admitted:
        """The witness of one of `kinds` (each has one: `kinds` is read off the witnesses)."""
        return next(w for w in self.witnesses if w.kind == kind)


class HandlingAnalysis:
    def __init__(self, ctx: "FileView") -> None:
        self.ctx = ctx
        self.exceptions = ctx.analysis(ExceptionAnalysis)
        self.statuses = ctx.analysis(StatusAnalysis)
        self._found: Dict[int, Tuple[ast.AST, Tuple[Handling, ...]]] = {}
        self._status_names = frozenset(s.short_name for s in self.exceptions.vocabulary.statuses())
        self._registered_by_call: Optional[Dict[str, List[ast.expr]]] = None
        self._framework_file: Optional[bool] = None  # imports a module registrations apply to

    def at(self, node: ast.AST) -> Tuple[Handling, ...]:
        """The handlings `node` opens (an `except` clause or an `if` branch), if any."""
        known = self._found.get(id(node))
        if known is not None:
            return known[1]
        scope = self.ctx.scope
        found: Tuple[Handling, ...] = ()
        if isinstance(node, ast.ExceptHandler):
            one = self._handler(node, scope)
            found = (one,) if one is not None else ()
        elif isinstance(node, ast.If) and self._may_test_error(node.test):
            found = self._branches(node, scope)
        elif isinstance(node, _FUNCTIONS):
            registered = self._registered_handler(node, scope)
            found = (registered,) if registered is not None else ()
        self._found[id(node)] = (node, found)
        return found

    def _may_test_error(self, test: ast.expr) -> bool:
        """A cheap look before resolving anything: `isinstance(...)`, or a comparison with an
        attribute named like a listed status code (`... == grpc.StatusCode.CANCELLED`)."""
        test, _ = _unnegated(test)
        if isinstance(test, ast.Call):
            return isinstance(test.func, ast.Name) and test.func.id == "isinstance"
        if not isinstance(test, ast.Compare) or len(test.ops) != 1:
            return False
        names = self._status_names
        sides = [test.left, *test.comparators]
        for side in list(sides):
            if isinstance(side, (ast.Tuple, ast.List, ast.Set)):
                sides.extend(side.elts)
        return any(isinstance(side, ast.Attribute) and side.attr in names for side in sides)

    # -- where a handling starts ----------------------------------------------------------
    def _handler(self, handler: ast.ExceptHandler, scope: Scope) -> Optional[Handling]:
        if handler.type is None:
            return None
        admission = self.exceptions.handler(handler, scope)
        return self._handling(handler, except_keyword(handler), admission, handler.body, scope)

    def _branches(self, node: ast.If, scope: Scope) -> Tuple[Handling, ...]:
        test, negated = _unnegated(node.test)
        body = node.orelse if negated else node.body
        if not body:
            return ()
        if isinstance(test, ast.Call):
            found = self.exceptions.isinstance_test(test, scope)
            if found is None:
                return ()
            handling = self._handling(node, test, found[1], body, scope)
            return (handling,) if handling is not None else ()
        if isinstance(test, ast.Compare):
            status_test = self.exceptions.status_test(test, scope)
            if status_test is None or not status_test.kinds:
                return ()
            negated = negated != status_test.negated
            body = node.orelse if negated else node.body
            if not body:
                return ()
            witnesses = tuple(
                Admitted(s.kind, s.qualname, s.qualname, True, test, s.source, True)
                for s in status_test.statuses
                if s.kind
            )
            exact = len(status_test.statuses) == _compared_count(test)
            outcomes, distinguishes = self._outcomes(body, scope)
            return (Handling(node, test, status_test.kinds, witnesses, exact, outcomes, distinguishes),)
        return ()

    def _registered_handler(self, function: Function, scope: Scope) -> Optional[Handling]:
        """A function a framework calls for the exception types it is registered for: it
        catches them. Several registrations of one function are one handling of them all."""
        registrations = self.statuses.vocabulary.registrations
        if not function.decorator_list and not self._registered_by_calls():
            return None  # the common case, decided without looking at the imports
        if not registrations.modules or not self._imports_any(registrations.modules):
            return None
        types: List[Tuple[ast.expr, Scope]] = []
        for decorator in function.decorator_list:
            if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute):
                position = registrations.decorators.get(decorator.func.attr)
                found = _positional(decorator, position) if position is not None else None
                if found is not None:
                    types.append((found, scope))
        module = self.ctx.module_scope
        types.extend((found, module) for found in self._registered_by_calls().get(function.name, ()))
        if not types:
            return None
        admissions = [self.exceptions.admits(expr, where) for expr, where in types]
        own = self.ctx.resolver.scope_of(function, scope)
        return self._handling(function, types[0][0], admissions, function.body, own)

    def _registered_by_calls(self) -> Dict[str, List[ast.expr]]:
        """`app.add_exception_handler(Timeout, on_timeout)` anywhere in the file: the types
        registered for each handler named by a plain name that exactly one function has."""
        if self._registered_by_call is None:
            registrations = self.statuses.vocabulary.registrations
            calls, mappings = registrations.calls, frozenset(registrations.mappings)
            found: Dict[str, List[ast.expr]] = {}
            tree = self.ctx.module_scope.node
            if any(name in self.ctx.source.text for name in [*calls, *mappings]):
                defined: Dict[str, int] = {}
                for node in walk_nodes(tree):
                    if isinstance(node, _FUNCTIONS):
                        defined[node.name] = defined.get(node.name, 0) + 1
                    if not isinstance(node, ast.Call):
                        continue
                    if isinstance(node.func, ast.Attribute) and node.func.attr in calls:
                        type_at, handler_at = calls[node.func.attr]
                        registered, handler = _positional(node, type_at), _positional(node, handler_at)
                        if registered is not None and isinstance(handler, ast.Name):
                            found.setdefault(handler.id, []).append(registered)
                    for keyword in node.keywords:
                        table = self._handler_table(keyword.value) if keyword.arg in mappings else None
                        for registered, handler in zip(table.keys, table.values) if table is not None else ():
                            if registered is not None and isinstance(handler, ast.Name):
                                found.setdefault(handler.id, []).append(registered)
                found = {name: types for name, types in found.items() if defined.get(name) == 1}
            self._registered_by_call = found
        return self._registered_by_call

    def _handler_table(self, value: ast.expr) -> Optional[ast.Dict]:
        """`exception_handlers={...}` written in place, or a module-level name bound once to
        a dict literal."""
        if isinstance(value, ast.Dict):
            return value
        if isinstance(value, ast.Name):
            bindings = self.ctx.module_scope.lookup(value.id)
            if bindings and len(bindings) == 1 and isinstance(bindings[0].value, ast.Dict):
                return bindings[0].value
        return None

    def _imports_any(self, modules: Sequence[str]) -> bool:
        if self._framework_file is None:
            self._framework_file = imports_any(self.ctx.module_scope, modules)
        return self._framework_file

    def _handling(
        self,
        node: ast.AST,
        report_node: ast.AST,
        admission: Union[Admission, Sequence[Admission]],
        body: List[ast.stmt],
        scope: Scope,
    ) -> Optional[Handling]:
        admissions = [admission] if isinstance(admission, Admission) else list(admission)
        elements = [e for one in admissions for e in one.elements]
        witnesses = tuple(a for e in elements for a in e.admitted if a.direct)
        if not witnesses:
            return None
        kinds = frozenset(w.kind for w in witnesses)
        complete = all(one.complete for one in admissions)
        exact = complete and all(any(a.direct for a in e.admitted) for e in elements)
        outcomes, distinguishes = self._outcomes(body, scope)
        return Handling(node, report_node, kinds, witnesses, exact, outcomes, distinguishes)

    # -- what the body does ---------------------------------------------------------------
    def _outcomes(self, body: List[ast.stmt], scope: Scope) -> Tuple[Tuple[Outcome, ...], bool]:
        found: List[Outcome] = []
        distinguishes = any(_reraises_on_a_branch(stmt) for stmt in body)
        stack: List[Tuple[ast.stmt, bool]] = [(stmt, False) for stmt in reversed(body)]
        while stack:
            stmt, conditional = stack.pop()
            if isinstance(stmt, _DEFINITIONS):
                continue
            if isinstance(stmt, ast.If) and self._is_type_test(stmt.test, scope):
                distinguishes = True  # both branches are told apart: handlings of their own
                continue
            self._statement_outcomes(stmt, scope, found, conditional)
            nested: List[ast.stmt] = []
            for field in _BLOCK_FIELDS:
                nested.extend(getattr(stmt, field, None) or ())
            for case in getattr(stmt, "cases", None) or ():
                nested.extend(case.body)
            # Nested `except` clauses handle what their own `try` raised: not ours. What a
            # `with` or a `try` body holds runs whenever they do; anything else only sometimes.
            inner = conditional or not isinstance(stmt, (ast.With, ast.AsyncWith, *_TRY_TYPES))
            stack.extend((child, inner) for child in reversed(nested))
        return tuple(found), distinguishes

    def _is_type_test(self, test: ast.expr, scope: Scope) -> bool:
        if not self._may_test_error(test):
            return False
        test, _ = _unnegated(test)
        if isinstance(test, ast.Call):
            return self.exceptions.isinstance_test(test, scope) is not None
        if isinstance(test, ast.Compare):
            return self.exceptions.status_test(test, scope) is not None
        return False

    def _statement_outcomes(self, stmt: ast.stmt, scope: Scope, found: List[Outcome], conditional: bool) -> None:
        statuses = self.statuses
        for produced in statuses.produced(stmt, scope):
            found.append(Outcome(stmt, status=produced, conditional=conditional))
        for node in _header_expressions(stmt):
            if isinstance(node, ast.Call):
                for produced in statuses.produced(node, scope):
                    found.append(Outcome(stmt, status=produced, conditional=conditional))
        if isinstance(stmt, ast.Raise) and stmt.exc is not None:
            raised = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
            exc_type = self.exceptions.type_of(raised, scope)
            if exc_type is not None and exc_type.kind is not None:
                found.append(Outcome(stmt, raised=exc_type, raised_node=raised, conditional=conditional))

    # -- cancellation of the running task ---------------------------------------------------
    def task_cancel(self, admission: Admission) -> Optional[str]:
        """The task-cancellation type an admission lets through, if any: a cancel type that is
        not an ordinary error (`asyncio.CancelledError`, trio's `Cancelled`), named or caught by
        a catch-all (bare `except:`, `BaseException`)."""
        vocabulary = self.exceptions.vocabulary
        for element in admission.elements:
            if element.qualname == "BaseException":
                found = [exc.qualname for exc in vocabulary.admitted("BaseException") if self._is_task_cancel(exc)]
                if found:  # name the one of a library this file uses (trio's, in trio code)
                    text = self.ctx.source.text
                    return next((q for q in found if q.split(".")[0] in text), found[0])
            for admitted in element.admitted:
                # Only the catalog's: a `*Canceled*` class by its name (a database's
                # QueryCanceled) is an error, not the task's cancellation.
                if admitted.direct and admitted.kind == CANCEL and not admitted.status and admitted.source == CATALOG:
                    if _TASK_CANCEL_BASE not in vocabulary.ancestors(admitted.type):
                        return admitted.type
        return None

    def _is_task_cancel(self, exc: ExceptionType) -> bool:
        return (
            exc.kind == CANCEL
            and exc.source == CATALOG
            and not exc.status
            and _TASK_CANCEL_BASE not in self.exceptions.vocabulary.ancestors(exc.qualname)
        )


def _positional(call: ast.Call, position: int) -> Optional[ast.expr]:
    """The argument at `position`, when no `*args` comes before it."""
    if any(isinstance(arg, ast.Starred) for arg in call.args[: position + 1]) or len(call.args) <= position:
        return None
    return call.args[position]


def _reraises_on_a_branch(stmt: ast.stmt) -> bool:
    """`if not expired: raise` at the handler's own level: one kind goes on as it came, the
    rest is mapped after it; the handler tells them apart by a test of its own."""
    if not isinstance(stmt, ast.If):
        return False
    return any(
        block and isinstance(block[-1], ast.Raise) and block[-1].exc is None for block in (stmt.body, stmt.orelse)
    )


def except_keyword(handler: ast.ExceptHandler) -> Span:
    """The `except` keyword, where findings about a whole handler are reported."""
    return Span(handler.lineno, handler.col_offset, handler.lineno, handler.col_offset + len("except"))


def _unnegated(test: ast.expr) -> Tuple[ast.expr, bool]:
    negated = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, not negated
    return test, negated


def _compared_count(test: ast.Compare) -> int:
    right = test.comparators[0]
    return len(right.elts) if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else 1


def _header_expressions(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The expressions of a statement itself, not of the blocks nested in it (nor of lambdas)."""
    stack: List[ast.AST] = []
    for field, value in ast.iter_fields(stmt):
        if field in _BLOCK_FIELDS or field in ("handlers", "cases"):
            continue
        if isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            stack.append(value)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Lambda):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))
