"""Retry policies: what a retry decorator, a policy object or a hand-written retry loop retries,
what stops it, and which functions and clients of a file retry on their own.

    retry = ctx.analysis(RetryAnalysis)
    retry.decorator(expr, scope)   -> Optional[RetryPolicy]  # `@retry`, `@backoff.on_exception(...)`
    retry.decorators(function)     -> Tuple[RetryPolicy, ...] # of a def (resolved in its outer scope)
    retry.policy_call(call, scope) -> Optional[RetryPolicy]  # `Retrying(...)`, `Retry(predicate=...)`
    retry.loop(statement, scope)   -> Optional[RetryLoop]    # for/while around try/except that retries
    retry.round_paths(handler, scope) -> Tuple[RoundPath, ...] # its handler's ways round, each narrowed
    retry.policy_loop(statement, scope) -> Optional[RetryPolicy]  # `for attempt in Retrying(...)`
    retry.retrying_function(node)  -> bool                    # a def carrying a retry decorator
    retry.retry_decorator(node)    -> Optional[ast.expr]      # that decorator
    retry.own_retries(call, scope) -> Optional[ast.Call]      # the receiver was built with retries

A policy's filter is a union of parts (`retry_if_exception_type(A) | retry_if_result(f)`);
each part is ALL (no filter: every Exception), TYPES (the classes of its `admission`),
ALL_BUT (every Exception except those of its `admission`), NOTHING (results only), or UNKNOWN
(a callable, an intersection, anything not in the catalog): rules stay quiet on UNKNOWN parts.
The library names live in catalog/retry.yaml.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, Iterator, List, Mapping, Optional, Tuple

from deadline_lint.catalog.retry import (
    ALL,
    ALL_BUT,  # noqa: F401  (re-exported: a filter part's state)
    ANY,
    ATTEMPTS,
    DECORATOR,
    DELAY,
    NEVER,
    NONE,
    NOTHING,
    OBJECT,
    PREDICATE,
    STOP,
    TEST,
    TYPES,
    Argument,
    RetryApi,
    RetryCatalog,
)
from deadline_lint.families.retry.polling import only_waits_locally
from deadline_lint.families.retry.retry_guards import Narrowing, RoundPath, round_paths
from deadline_lint.families.retry.retry_loops import _exits_on_success, _goes_round, _leaves, _loop_level
from deadline_lint.families.shared.errors.exceptions import Admission, ExceptionAnalysis, StatusTest
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.declared import is_none
from deadline_lint.semantics.local.resolve import dotted_parts
from deadline_lint.semantics.local.scopes import ASSIGN, CLASS, OTHER, Scope
from deadline_lint.support.records import dataclass

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

UNKNOWN = "unknown"
_MAX_DEPTH = 6
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class FilterPart:
    state: str  # ALL, TYPES, ALL_BUT, NOTHING or UNKNOWN
    node: Optional[ast.AST]  # the predicate / classes as written (None: the library default)
    admission: Optional[Admission] = None  # TYPES: what is retried; ALL_BUT: what is excluded
    tested: bool = False  # read from a function of the exception (`retry_if_exception(f)`)
    default: str = ""  # the project helper's parameter whose default this is (none given here)

    def place(self, node: ast.AST, policy: Optional[ast.AST]) -> ast.AST:
        """Where a finding about `node` (a class of this part's admission) is shown: on it
        when it is written in the policy (`policy`, its call or decorator), else on the name
        the policy uses to reach it (`retry_if_exception_type(RETRYABLE)`,
        `retry_if_exception(is_transient)`), where the reader is."""
        if self.node is None or policy is None or _within(node, policy) or not _within(self.node, policy):
            return node
        return self.node


@dataclass(frozen=True)
class Stop:
    kind: str  # ATTEMPTS, DELAY, NEVER or UNKNOWN
    node: Optional[ast.AST]  # the value as written; None for the library default
    keyword: Optional[str] = None  # the policy's argument it was given as

    def single(self, retries: bool = False) -> bool:
        """An attempt count of at most 1 (with `retries`, a count of retries of 0 / False),
        written as a literal: no retry at all."""
        value = self.node
        if isinstance(value, ast.Call) and len(value.args) == 1:
            value = value.args[0]
        if not isinstance(value, ast.Constant):
            return False
        if retries:
            return value.value is not None and value.value in (0, False)
        return type(value.value) is int and value.value <= 1


@dataclass(frozen=True)
class RetryPolicy:
    api: RetryApi
    node: ast.expr  # the decorator expression or the policy call
    call: Optional[ast.Call]  # None for a bare `@retry`
    filter: Tuple[FilterPart, ...]  # a union
    filter_given: bool  # False: the library default decides what is retried
    stops: Tuple[Stop, ...]  # a union: retrying ends at the first that fires
    giveup: bool  # a giveup callable may exclude some errors
    own_timeouts: bool = False  # retries the library's own expiry type (api.timeouts) as written

    @property
    def library(self) -> str:
        return self.api.library

    @property
    def retries(self) -> bool:
        """False for a policy that makes one attempt only (`stop_after_attempt(1)`, `max_tries=1`)."""
        retries = self.api.counts_retries
        return not any(stop.kind == ATTEMPTS and stop.single(retries) for stop in self.stops)


@dataclass(frozen=True)
class RetryLoop:
    """A for/while loop around try/except where some handler goes round again."""

    loop: ast.stmt
    handlers: Tuple[ast.ExceptHandler, ...]  # the handlers that retry
    sleeps: Tuple[ast.Call, ...]  # waits between attempts (in those handlers or after the try)
    tries: Tuple[ast.Try, ...]
    # `if err.code() in RETRYABLE: continue` / `if err.code() not in RETRYABLE: raise`: the
    # handler, the test, and the expiry / cancel status codes it goes round for
    status_retries: Tuple[Tuple[ast.ExceptHandler, ast.Compare, StatusTest], ...] = ()


class RetryAnalysis:
    def __init__(self, ctx: "FileView") -> None:
        self.ctx = ctx
        self.resolver = ctx.resolver
        own = tuple(ctx.profile.retry_decorators)
        base = ctx.catalog.retry
        self.catalog: RetryCatalog = (
            ctx.catalog.cached(("retry", own), lambda: base.with_decorators(own)) if own else base
        )
        self.exceptions = ctx.analysis(ExceptionAnalysis)
        self._policies: Dict[int, Tuple[ast.AST, Optional[RetryPolicy]]] = {}
        self._loops: Dict[int, Optional[RetryLoop]] = {}
        self._paths: Dict[int, Tuple[RoundPath, ...]] = {}
        self._retrying: Dict[int, Optional[ast.expr]] = {}
        self._around: Optional[Dict[int, Scope]] = None  # module-level defs and methods -> their scope
        self._subclasses: Optional[Dict[str, RetryApi]] = None
        self._helpers: Optional[bool] = None
        self._final_names = frozenset(
            name.rpartition(".")[2] for name in [*self.catalog.policies, *self.catalog.aliases]
        )

    def _qualname(self, expr: ast.expr, scope: Scope) -> Optional[str]:
        found = self.resolver.qualified_name(expr, scope)
        return self.catalog.canonical(found) if found else None

    # -- policies ------------------------------------------------------------------------
    def decorators(self, function: ast.AST) -> Tuple[RetryPolicy, ...]:
        """The retry policies decorating a def; decorators resolve in the def's outer scope."""
        scope = self._outer_scope(function)
        if scope is None:
            return ()
        found = (self.decorator(d, scope) for d in getattr(function, "decorator_list", ()))
        return tuple(p for p in found if p is not None)

    def _outer_scope(self, function: ast.AST) -> Optional[Scope]:
        ctx = self.ctx
        if ctx.scope.node is function:
            return ctx.scope.parent
        return ctx.scope  # visited from the outer scope, before the walk enters the def

    def decorator(self, expr: ast.expr, scope: Scope) -> Optional[RetryPolicy]:
        if isinstance(expr, ast.Call):
            return self.policy_call(expr, scope)  # `@retry(...)`, and `@Retrying(...)` decorates too
        api = self.catalog.policy(self._qualname(expr, scope))
        if api is None or not api.bare:
            return None
        return self._remember(expr, self._build(api, expr, None, scope))

    def policy_call(self, call: ast.Call, scope: Scope) -> Optional[RetryPolicy]:
        known = self._policies.get(id(call))
        if known is not None:
            return known[1]
        api = None
        named = self._may_name_policy(call.func, scope)
        if named:
            api = self.catalog.policy(self._qualname(call.func, scope))
            if api is None and isinstance(call.func, ast.Name):
                api = self._subclassed(call.func.id)
        if api is not None:
            return self._remember(call, self._build(api, call, call, scope))
        if self._helpers is False or (self._helpers is None and not self._helpers_possible()):
            return self._remember(call, None) if named else None
        return self._remember(call, self._project_policy(call, scope))

    def _helpers_possible(self) -> bool:
        """Once per file: a project decorator or helper filtering by a parameter can be reached."""
        if self._helpers is None:
            from deadline_lint.families.retry.retry_helpers import ProjectRetryHelpers

            self._helpers = self.ctx.analysis(ProjectRetryHelpers).possible
        return self._helpers

    def _project_policy(self, call: ast.Call, scope: Scope) -> Optional[RetryPolicy]:
        """A project decorator factory or helper whose filter is one of its parameters
        (`@async_retry(exception_types=[...])`, `call(fn, retry_on=(...))`): the argument
        given here, else the default it declares (read in its module, placed on the name
        called here)."""
        from deadline_lint.families.retry.retry_helpers import DECORATOR_FORM, RETRIES_COUNT, ProjectRetryHelpers

        found = self.ctx.analysis(ProjectRetryHelpers).helper(call, scope)
        if found is None:
            return None
        helper, qualname = found
        stops = {helper.attempts: ATTEMPTS} if helper.attempts else {}
        positions = {helper.attempts: helper.attempts_position} if helper.attempts_position >= 0 else {}
        api = RetryApi(
            qualname, DECORATOR if helper.form == DECORATOR_FORM else OBJECT,
            filter=Argument(helper.parameter, helper.position if helper.position >= 0 else None),
            stops=stops, positions=positions, default_stop=UNKNOWN, hint="a narrower exception tuple",
            counts_retries=helper.attempts_kind == RETRIES_COUNT,
        )
        value = _argument(call, api.filter)  # type: ignore[arg-type]
        if value is not None:
            parts: Tuple[FilterPart, ...] = (self._types_part(value, scope),)
        elif _passes_unpacked(call) or helper.default is None:
            parts = (FilterPart(UNKNOWN, call.func),)
        else:
            admission = self.exceptions.admits_classes(helper.default, call.func)
            parts = (FilterPart(TYPES, call.func, admission, default=helper.parameter),)
        given = _argument(call, Argument(helper.attempts, positions.get(helper.attempts))) if helper.attempts else None
        if given is not None:
            stop = Stop(ATTEMPTS, given, helper.attempts)
        elif helper.attempts_default is not None and not _passes_unpacked(call):
            stop = Stop(ATTEMPTS, ast.copy_location(ast.Constant(helper.attempts_default), call.func), helper.attempts)
        else:
            stop = Stop(UNKNOWN, None)
        return RetryPolicy(api, call, call, parts, value is not None, (stop,), False)

    def _may_name_policy(self, func: ast.expr, scope: Scope) -> bool:
        """A first look, before resolving: a policy is reached through an imported name, or as
        an attribute spelled like one (`tenacity.Retrying`, `retry.Retry`), or is a class of
        this module deriving from one (`class ApiRetry(Retry)`)."""
        if isinstance(func, ast.Name):
            return func.id in self.resolver.imported_names(scope) or func.id in self._policy_classes()
        return isinstance(func, ast.Attribute) and func.attr in self._final_names

    def _policy_classes(self) -> Dict[str, RetryApi]:
        """Module-level classes whose base is a policy object: `class ApiRetry(Retry): ...`."""
        if self._subclasses is None:
            module = self.ctx.module_scope
            found: Dict[str, RetryApi] = {}
            for statement in module.node.body:  # type: ignore[attr-defined]
                if not isinstance(statement, ast.ClassDef):
                    continue
                for base in statement.bases:
                    api = self.catalog.policy(self._qualname(base, module)) if self._spelled_like_policy(base) else None
                    api = api or (found.get(base.id) if isinstance(base, ast.Name) else None)
                    if api is not None and api.form == OBJECT:
                        found[statement.name] = api
                        break
            self._subclasses = found
        return self._subclasses

    def _spelled_like_policy(self, base: ast.expr) -> bool:
        name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
        return name in self._final_names

    def _subclassed(self, name: str) -> Optional[RetryApi]:
        return self._policy_classes().get(name)

    def _remember(self, node: ast.AST, policy: Optional[RetryPolicy]) -> Optional[RetryPolicy]:
        self._policies[id(node)] = (node, policy)
        return policy

    def _build(self, api: RetryApi, node: ast.expr, call: Optional[ast.Call], scope: Scope) -> RetryPolicy:
        value = _argument(call, api.filter) if call is not None and api.filter is not None else None
        dynamic = call is not None and _passes_unpacked(call)
        if api.source == "profile" or (value is None and dynamic):  # `**kwargs` may hold the filter
            parts: Tuple[FilterPart, ...] = (FilterPart(UNKNOWN, node),)
        elif value is None:
            state = NOTHING if api.retries_results or api.default == NONE else ALL
            parts = (FilterPart(state, None),)
        elif api.filter_as == TYPES:
            parts = (self._types_part(value, scope),)
        elif api.filter_as == PREDICATE:
            parts = tuple(self._predicate(value, scope, 0))
        else:
            parts = (FilterPart(UNKNOWN, value),)
        giveup = call is not None and any(_argument(call, Argument(k)) is not None for k in api.giveup)
        stops = self._stops(api, call, scope)
        if dynamic and all(stop.node is None for stop in stops):
            stops = (Stop(UNKNOWN, None),)
        own = (
            api.timeouts is not None and value is None and not dynamic
            and not _turned_off(call, api.timeouts.unless, api.positions)
        )
        return RetryPolicy(api, node, call, parts, value is not None, stops, giveup, own)

    def _types_part(self, value: ast.expr, scope: Scope) -> FilterPart:
        admission = self.exceptions.admits(value, scope)
        return FilterPart(TYPES, value, admission)

    def _predicate(self, expr: ast.expr, scope: Scope, depth: int) -> Iterator[FilterPart]:
        for leaf, where, level in _combined(expr, scope, depth):
            if level > _MAX_DEPTH:
                yield FilterPart(UNKNOWN, leaf)
            else:
                yield from self._predicate_leaf(leaf, where, level)

    def _predicate_leaf(self, expr: ast.expr, scope: Scope, depth: int) -> Iterator[FilterPart]:
        predicate = self.catalog.predicate(self._qualname(expr.func, scope)) if isinstance(expr, ast.Call) else None
        if predicate is None:
            yield FilterPart(UNKNOWN, expr)
            return
        call = expr  # type: ignore[assignment]
        if predicate.admits == ANY:
            for argument in call.args:  # type: ignore[attr-defined]
                yield from self._predicate(argument, scope, depth + 1)
            return
        if predicate.admits in (NOTHING, ALL):
            yield FilterPart(predicate.admits, expr)
            return
        if predicate.admits == TEST:
            yield from self._test(_argument(call, predicate.argument), call, scope)  # type: ignore[arg-type]
            return
        classes = self._classes(call, predicate)  # type: ignore[arg-type]
        if classes is None:  # no argument: the predicate's default class (Exception)
            yield FilterPart(ALL if predicate.admits == TYPES else NOTHING, expr)
            return
        yield FilterPart(predicate.admits, classes, self.exceptions.admits(classes, scope))

    def _test(self, function: Optional[ast.expr], call: ast.Call, scope: Scope) -> Iterator[FilterPart]:
        """`retry_if_exception(is_transient)`: the types the function's `isinstance` tests
        admit, when it is a lambda or a def of this file whose whole body is one `return` of
        `isinstance(exc, T)` (several joined by `or`), or of its negation (every error but T).
        Each part is placed on the function as the policy names it, where the reader is."""
        found = self._test_function(function, scope)
        if found is None:
            yield FilterPart(UNKNOWN, call)
            return
        parameter, returned, where = found
        negated = isinstance(returned, ast.UnaryOp) and isinstance(returned.op, ast.Not)
        if negated:
            returned = returned.operand  # type: ignore[union-attr]
        tests = _or_operands(returned)
        if negated and len(tests) > 1:
            yield FilterPart(UNKNOWN, call)  # not (a or b): every error but both
            return
        parts = []
        for test in tests:
            checked = self.exceptions.isinstance_test(test, where) if isinstance(test, ast.Call) else None
            if checked is None or not (isinstance(checked[0], ast.Name) and checked[0].id == parameter):
                yield FilterPart(UNKNOWN, call)
                return
            parts.append(FilterPart(ALL_BUT if negated else TYPES, function, checked[1], tested=True))
        yield from parts

    def _test_function(self, function: Optional[ast.expr], scope: Scope):
        """The parameter, the returned expression and the scope it is read in, of a lambda or
        of a def of this file (named once) that only returns; None for anything else."""
        if isinstance(function, ast.Lambda):
            node: ast.AST = function
            body = function.body
        elif isinstance(function, ast.Name):
            bindings = scope.lookup(function.id)
            if not bindings or len(bindings) != 1 or not isinstance(bindings[0].value, _FUNCTIONS):
                return None
            node = bindings[0].value  # type: ignore[assignment]
            statements = [s for s in node.body if not _is_docstring(s)]  # type: ignore[attr-defined]
            if len(statements) != 1 or not isinstance(statements[0], ast.Return) or statements[0].value is None:
                return None
            body = statements[0].value
            scope = bindings[0].scope
        else:
            return None
        args = node.args  # type: ignore[attr-defined]
        if len(args.posonlyargs) + len(args.args) != 1 or args.vararg or args.kwonlyargs:
            return None
        parameter = [*args.posonlyargs, *args.args][0].arg
        where = self.resolver.scope_of(node, scope)
        return parameter, body, where

    def _classes(self, call: ast.Call, predicate) -> Optional[ast.expr]:
        if predicate.varargs:
            if not call.args:
                return None
            if len(call.args) == 1 and not isinstance(call.args[0], ast.Starred):
                return call.args[0]
            return ast.copy_location(ast.Tuple(elts=list(call.args), ctx=ast.Load()), call.args[0])
        return _argument(call, predicate.argument)

    def _stops(self, api: RetryApi, call: Optional[ast.Call], scope: Scope) -> Tuple[Stop, ...]:
        found: List[Stop] = []
        for keyword, kind in api.stops.items():
            value = _argument(call, Argument(keyword, api.positions.get(keyword))) if call is not None else None
            if value is None:
                continue
            if is_none(value):
                found.append(Stop(NEVER, value, keyword))
            elif kind == STOP:
                found.extend(Stop(s.kind, s.node, keyword) for s in self._stop_value(value, scope, 0))
            else:
                found.append(Stop(kind, value, keyword))
        if not found:
            default = UNKNOWN if api.source == "profile" else api.default_stop
            found.append(Stop(default, None))
        return tuple(found)

    def _stop_value(self, expr: ast.expr, scope: Scope, depth: int) -> Iterator[Stop]:
        for leaf, where, level in _combined(expr, scope, depth):
            if level > _MAX_DEPTH:
                yield Stop(UNKNOWN, leaf)
            else:
                yield from self._stop_leaf(leaf, where, level)

    def _stop_leaf(self, expr: ast.expr, scope: Scope, depth: int) -> Iterator[Stop]:
        target = expr.func if isinstance(expr, ast.Call) else expr  # `stop_never` is a value
        kind = self.catalog.stop_builder(self._qualname(target, scope))
        if kind == ANY and isinstance(expr, ast.Call):
            for argument in expr.args:
                yield from self._stop_value(argument, scope, depth + 1)
        elif kind in (ATTEMPTS, DELAY, NEVER):
            yield Stop(kind, expr)
        else:
            yield Stop(UNKNOWN, expr)

    def policy_loop(self, statement: ast.AST, scope: Scope) -> Optional[RetryPolicy]:
        """`for attempt in Retrying(...)` / `async for attempt in AsyncRetrying(...)` /
        `for attempt in stamina.retry_context(...)`; the policy may be bound to a name first."""
        if not isinstance(statement, (ast.For, ast.AsyncFor)):
            return None
        iterable = statement.iter
        if isinstance(iterable, ast.Name):
            bound = _single_assignment(iterable, scope)
            if bound is None:
                return None
            iterable, scope = bound
        if not isinstance(iterable, ast.Call):
            return None
        policy = self.policy_call(iterable, scope)
        return policy if policy is not None and policy.api.form == OBJECT else None

    # -- hand-written loops -----------------------------------------------------------------
    def loop(self, statement: ast.AST, scope: Scope) -> Optional[RetryLoop]:
        if not isinstance(statement, _LOOPS):
            return None
        key = id(statement)
        if key not in self._loops:
            self._loops[key] = self._hand_written(statement, scope)
        return self._loops[key]

    def _hand_written(self, loop: ast.stmt, scope: Scope) -> Optional[RetryLoop]:
        if isinstance(loop, (ast.For, ast.AsyncFor)) and not self._counting(loop.iter, scope):
            return None  # `for item in items:` goes over data, it does not try again
        handlers: List[ast.ExceptHandler] = []
        sleeps: List[ast.Call] = []
        tries: List[ast.Try] = []
        by_status: List[Tuple[ast.ExceptHandler, ast.Compare, StatusTest]] = []
        body = loop.body  # type: ignore[attr-defined]
        for index, statement in enumerate(body):
            for node in _loop_level(statement):
                if not isinstance(node, ast.Try) or not _exits_on_success(node, body[index + 1:]):
                    continue
                going_round = [h for h in node.handlers if _goes_round(h)]
                statuses = [(h, test, found) for h in node.handlers for test, found in self._status_retries(h, scope)]
                if not (going_round or statuses) or only_waits_locally(
                    self.ctx, node, self.catalog.local_waits, self._qualname_here(scope)
                ):
                    continue  # nothing goes round, or it waits again on this process: polling
                tries.append(node)
                handlers.extend(going_round)
                by_status.extend(statuses)
                for handler in dict.fromkeys([*going_round, *(h for h, _, _ in statuses)]):
                    sleeps.extend(self._sleeps(handler.body, scope))
                sleeps.extend(self._sleeps(body[index + 1:], scope))
        if not handlers and not by_status:
            return None
        if isinstance(loop, ast.While) and not sleeps and _polls(loop, tries):
            return None
        return RetryLoop(loop, tuple(handlers), tuple(dict.fromkeys(sleeps)), tuple(tries), tuple(by_status))

    def round_paths(self, handler: ast.ExceptHandler, scope: Scope) -> Tuple[RoundPath, ...]:
        """The handler's ways back to the next attempt, each with the test on the caught error
        it passes (`retry_guards.py`)."""
        key = id(handler)
        if key not in self._paths:
            self._paths[key] = round_paths(handler, lambda call, _name: self._narrowing(call, scope))
        return self._paths[key]

    def _narrowing(self, call: ast.Call, scope: Scope) -> Optional[Narrowing]:
        """`isinstance(err, T)`, or `predicate(err)` / `self.predicate(err)` for a def of this
        file that returns True for `isinstance(param, T)`."""
        exceptions = self.exceptions
        found = exceptions.isinstance_test(call, scope)
        if found is not None:
            return Narrowing(call, found[1])
        function = self.called_function(call, scope)
        around = self._scope_around(function) if function is not None else None
        if function is None or around is None or len(call.args) != 1 or call.keywords:
            return None
        inner = self.resolver.scope_of(function, around)
        params = inner.function_params()
        if isinstance(call.func, ast.Attribute):
            params = params[1:]  # called on self / cls
        if not params:
            return None
        admissions = []
        for test in _returns_true_when(function):
            checked = exceptions.isinstance_test(test, inner)
            if checked is not None and isinstance(checked[0], ast.Name) and checked[0].id == params[0].arg:
                admissions.append(checked[1])
        if not admissions:
            return None
        union = Admission(tuple(e for a in admissions for e in a.elements), all(a.complete for a in admissions))
        return Narrowing(call, union, getattr(function, "name", None))

    def _status_retries(self, handler: ast.ExceptHandler, scope: Scope) -> Iterator[Tuple[ast.Compare, StatusTest]]:
        """The handler's own `if`s on a status code that send expiry or cancel codes round:
        `if err.code() == DEADLINE_EXCEEDED: continue`, or `if err.code() not in RETRYABLE:
        raise` followed by going round (RETRYABLE holding DEADLINE_EXCEEDED or CANCELLED)."""
        body = handler.body
        for index, statement in enumerate(body):
            if not isinstance(statement, ast.If):
                continue
            test, negated = statement.test, False
            while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, negated = test.operand, not negated
            if not isinstance(test, ast.Compare):
                continue
            found = self._status_test(test, scope)
            if found is None or not found.kinds:
                continue
            if negated != found.negated:  # the codes compared against get past the `if`
                if _block_exits(statement.body) and not _block_exits(body[index + 1:]):
                    yield test, found
            elif statement.body and not _block_exits(statement.body):
                yield test, found

    def _status_test(self, test: ast.Compare, scope: Scope) -> Optional[StatusTest]:
        """A status test, with a name bound once to a tuple / set / list of codes followed."""
        found = self.exceptions.status_test(test, scope)
        right = test.comparators[0] if len(test.comparators) == 1 else None
        if found is not None or not isinstance(right, ast.Name) or not isinstance(test.ops[0], (ast.In, ast.NotIn)):
            return found
        bound = _single_assignment(right, scope)
        value = bound[0] if bound is not None else None
        if (
            isinstance(value, ast.Call) and len(value.args) == 1
            and isinstance(value.func, ast.Name) and value.func.id in ("frozenset", "set", "tuple")
        ):
            value = value.args[0]
        if not isinstance(value, (ast.Tuple, ast.List, ast.Set)):
            return None
        literal = ast.Compare(left=test.left, ops=test.ops, comparators=[value])
        return self.exceptions.status_test(literal, bound[1])  # type: ignore[index]

    def _qualname_here(self, scope: Scope):
        return lambda expr: self._qualname(expr, scope)

    def _counting(self, iterable: ast.expr, scope: Scope) -> bool:
        """`range(...)` or `itertools.count(...)`: the loop counts attempts."""
        if not isinstance(iterable, ast.Call):
            return False
        return self._qualname(iterable.func, scope) in ("range", "itertools.count")

    def _sleeps(self, statements: List[ast.stmt], scope: Scope) -> Iterator[ast.Call]:
        for statement in statements:
            for node in walk_here(statement):
                if isinstance(node, ast.Call) and self.catalog.is_sleep(self._qualname(node.func, scope)):
                    yield node

    # -- retrying functions and clients ----------------------------------------------------
    def retrying_function(self, function: ast.AST) -> bool:
        """A module-level def or method carrying a retry decorator (a library's or the profile's)."""
        return self.retry_decorator(function) is not None

    def retry_decorator(self, function: ast.AST) -> Optional[ast.expr]:
        """The first decorator of a module-level def or method that is a retry policy."""
        key = id(function)
        if key not in self._retrying:
            scope = self._scope_around(function)
            found = None
            if scope is not None:
                decorators = getattr(function, "decorator_list", ())
                found = next((d for d in decorators if _retries(self.decorator(d, scope))), None)
            self._retrying[key] = found
        return self._retrying[key]

    def _scope_around(self, function: ast.AST) -> Optional[Scope]:
        """The scope a module-level def or a method is defined in."""
        if self._around is None:
            module = self.ctx.module_scope
            around: Dict[int, Scope] = {}
            for statement in module.node.body:  # type: ignore[attr-defined]
                around[id(statement)] = module
                if isinstance(statement, ast.ClassDef):
                    class_scope = self.resolver.scope_of(statement, module)
                    around.update((id(s), class_scope) for s in statement.body)
            self._around = around
        return self._around.get(id(function))

    def called_function(self, call: ast.Call, scope: Scope) -> Optional[ast.AST]:
        """The def a call reaches in this file: a module-level function, or a method of the
        enclosing class called on `self` / `cls`."""
        func = call.func
        if isinstance(func, ast.Name):
            bindings = scope.lookup(func.id)
            if bindings and len(bindings) == 1 and bindings[0].kind == OTHER:
                value = bindings[0].value
                if isinstance(value, _FUNCTIONS) and bindings[0].scope.kind != CLASS:
                    return value
            return None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            method: Optional[Scope] = scope
            while method is not None and method.enclosing_class is None:
                method = method.parent if method.kind != CLASS else None
            if method is None:
                return None
            params = method.function_params()
            if not params or params[0].arg != func.value.id:
                return None
            found = method.enclosing_class.bindings().get(func.attr)  # type: ignore[union-attr]
            if found and len(found) == 1 and isinstance(found[0].value, _FUNCTIONS):
                return found[0].value  # type: ignore[return-value]
        return None

    def own_retries(self, call: ast.Call, scope: Scope) -> Optional[ast.Call]:
        """For `client.method(...)` / `self.client.method(...)`: the call that gave the client
        its own retries (`Config(retries=...)` among its arguments, `HTTPAdapter(max_retries=3)`
        mounted on it), or None. The client must be bound once."""
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr == "mount":
            return None
        receiver = func.value
        target = dotted_parts(receiver)
        if target is None or len(target) > 2:
            return None
        if isinstance(receiver, ast.Name):
            bound = _single_assignment(receiver, scope)
        else:
            bound = self._self_attribute(receiver, scope)  # type: ignore[arg-type]
        if bound is None:
            return None
        value, value_scope = bound
        return self._configured(value, value_scope, 0) or self._mounted(target, value_scope)

    def _self_attribute(self, expr: ast.Attribute, scope: Scope) -> Optional[Tuple[ast.expr, Scope]]:
        method: Optional[Scope] = scope
        while method is not None and method.enclosing_class is None:
            method = method.parent if method.kind != CLASS else None
        if method is None or not isinstance(expr.value, ast.Name):
            return None
        params = method.function_params()
        if not params or params[0].arg != expr.value.id:
            return None
        bindings = self.resolver.attribute_bindings(method.enclosing_class).get(expr.attr)  # type: ignore[arg-type]
        if not bindings or len(bindings) != 1 or bindings[0].kind != ASSIGN:
            return None
        return bindings[0].value, bindings[0].scope  # type: ignore[return-value]

    def _configured(self, expr: ast.expr, scope: Scope, depth: int) -> Optional[ast.Call]:
        """A call with retries among `expr`'s arguments (following names bound once)."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name):
            bound = _single_assignment(expr, scope)
            return self._configured(bound[0], bound[1], depth + 1) if bound else None
        if not isinstance(expr, ast.Call):
            return None
        argument = self.catalog.client_retry_argument(self._qualname(expr.func, scope))
        if argument is not None:
            if argument.keyword is None and argument.position is None:
                return expr  # the client always retries
            value = _argument(expr, argument)
            if value is not None and self._retries(value, scope):
                return expr
        for value in [*expr.args, *(k.value for k in expr.keywords)]:
            found = self._configured(value, scope, depth + 1)
            if found is not None:
                return found
        return None

    def _retries(self, value: ast.expr, scope: Scope) -> bool:
        """A retries argument that may retry: not a literal 0 / False / None, nor a retry
        object built with one."""
        if isinstance(value, ast.Constant):
            return value.value not in (0, False, None)
        if isinstance(value, ast.Call):
            argument = self.catalog.retry_object_argument(self._qualname(value.func, scope))
            if argument is not None:
                count = _argument(value, argument)
                return not (isinstance(count, ast.Constant) and count.value in (0, False))
        if isinstance(value, ast.Dict):  # botocore: {"max_attempts": 0}
            for key, item in zip(value.keys, value.values):
                if isinstance(key, ast.Constant) and key.value in ("max_attempts", "total_max_attempts"):
                    limit = 1 if key.value == "total_max_attempts" else 0
                    if isinstance(item, ast.Constant) and isinstance(item.value, int) and item.value <= limit:
                        return False
        return True

    def _mounted(self, target: List[str], scope: Scope) -> Optional[ast.Call]:
        """`target.mount(prefix, HTTPAdapter(max_retries=3))` in the scope the client is bound in."""
        for statement in _statements_here(scope.node):
            if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
                continue
            mount = statement.value
            func = mount.func
            if (
                isinstance(func, ast.Attribute) and func.attr == "mount" and len(mount.args) == 2
                and dotted_parts(func.value) == target
            ):
                found = self._configured(mount.args[1], scope, 0)
                if found is not None:
                    return found
        return None


# -- helpers ---------------------------------------------------------------------------------
def _argument(call: Optional[ast.Call], where: Argument) -> Optional[ast.expr]:
    if call is None:
        return None
    if where.keyword is not None:
        for keyword in call.keywords:
            if keyword.arg == where.keyword:
                return keyword.value
    if where.position is not None and len(call.args) > where.position:
        if not any(isinstance(a, ast.Starred) for a in call.args[: where.position + 1]):
            return call.args[where.position]
    return None


def _turned_off(call: Optional[ast.Call], keywords: Tuple[str, ...], positions: Mapping[str, int]) -> bool:
    """One of `keywords` is given a literal 0 / False (`Retry(read=0)`; None defers to `total`)."""
    for keyword in keywords:
        value = _argument(call, Argument(keyword, positions.get(keyword)))
        if isinstance(value, ast.Constant) and value.value is not None and value.value in (0, False):
            return True
    return False


def _retries(policy: Optional[RetryPolicy]) -> bool:
    return policy is not None and policy.retries


def _passes_unpacked(call: ast.Call) -> bool:
    return any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args)




def _combined(expr: ast.expr, scope: Scope, depth: int) -> Iterator[Tuple[ast.expr, Scope, int]]:
    """The parts of a filter or stop combined with `|` (`a | b`), names bound once followed to
    their value: each leaf with the scope it is read in and its depth. A leaf deeper than
    _MAX_DEPTH is handed back as it is, for the caller to call unknown."""
    if depth > _MAX_DEPTH:
        yield expr, scope, depth
    elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
        yield from _combined(expr.left, scope, depth + 1)
        yield from _combined(expr.right, scope, depth + 1)
    else:
        bound = _single_assignment(expr, scope) if isinstance(expr, ast.Name) else None
        if bound is not None:
            yield from _combined(bound[0], bound[1], depth + 1)
        else:
            yield expr, scope, depth


def _single_assignment(name: ast.Name, scope: Scope) -> Optional[Tuple[ast.expr, Scope]]:
    bindings = scope.lookup(name.id)
    if not bindings or len(bindings) != 1 or bindings[0].kind != ASSIGN:
        return None
    return bindings[0].value, bindings[0].scope  # type: ignore[return-value]


def _within(node: ast.AST, outer: ast.AST) -> bool:
    """`node` lies in the source span of `outer`."""
    start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    end = (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)
    return (outer.lineno, outer.col_offset) <= start and end <= (  # type: ignore[attr-defined]
        outer.end_lineno or 0, outer.end_col_offset or 0  # type: ignore[attr-defined]
    )


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _polls(loop: ast.While, tries: List[ast.Try]) -> bool:
    """A `while` that waits for something rather than retrying: it checks an exit condition
    of its own (`while not stop.is_set():`, `if quit.is_set(): return` before the attempt)
    and neither sleeps nor counts attempts (`attempts += 1` of a name its test reads)."""
    test_names = {n.id for n in walk_nodes(loop.test) if isinstance(n, ast.Name)}
    for node in walk_nodes(loop):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in test_names:
            return False  # counts attempts
    if not (isinstance(loop.test, ast.Constant) and loop.test.value):
        return True
    first_try = min(loop.body.index(t) for t in tries if t in loop.body) if any(t in loop.body for t in tries) else 0
    return any(
        isinstance(statement, ast.If) and any(isinstance(s, (ast.Return, ast.Break, ast.Raise)) for s in statement.body)
        for statement in loop.body[:first_try]
    )


def _block_exits(block: List[ast.stmt]) -> bool:
    """The block ends by leaving the loop (an empty block falls through)."""
    return bool(block) and _leaves(block[-1])


def walk_here(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk without descending into nested defs, lambdas and classes."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)


def _statements_here(node: ast.AST) -> Iterator[ast.stmt]:
    for child in walk_here(node):
        if isinstance(child, ast.stmt) and child is not node:
            yield child


def _returns_true_when(function: ast.AST) -> Iterator[ast.Call]:
    """The calls a predicate's top-level statements return True on: the test of
    `if <test>: ... return True` and a returned expression, each split at `or`."""
    for statement in getattr(function, "body", ()):
        if isinstance(statement, ast.If) and statement.body and _returns_true(statement.body[-1]):
            test: Optional[ast.expr] = statement.test
        elif isinstance(statement, ast.Return):
            test = statement.value
        else:
            continue
        yield from (t for t in _or_operands(test) if isinstance(t, ast.Call))  # type: ignore[arg-type]


def _returns_true(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Return) and isinstance(statement.value, ast.Constant)
        and statement.value.value is True
    )


def _or_operands(expr: Optional[ast.expr]) -> List[ast.expr]:
    """`a or b or c` -> [a, b, c]; anything else alone (none for None)."""
    if expr is None:
        return []
    if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.Or):
        return list(expr.values)
    return [expr]
