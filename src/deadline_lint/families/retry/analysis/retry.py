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

What a policy's filter and stops are: `retry_policy.py`; reading them: `policy_reader.py`;
clients with retries of their own: `client_retries.py`. The library names live in
catalog/retry.yaml.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Dict, Iterator, List, Optional, Tuple, Union

from deadline_lint.catalog.retry import RetryCatalog
from deadline_lint.families.retry.analysis.client_retries import ClientRetries
from deadline_lint.families.retry.analysis.policy_reader import PolicyReader
from deadline_lint.families.retry.analysis.polling import only_waits_locally
from deadline_lint.families.retry.analysis.retry_guards import Narrowing, RoundPath, round_paths
from deadline_lint.families.retry.analysis.retry_loops import _exits_on_success, _goes_round, _leaves, _loop_level
from deadline_lint.families.retry.analysis.retry_policy import (
    RetryLoop,
    RetryPolicy,
    module_body,
    or_operands,
    single_assignment,
    walk_here,
)
from deadline_lint.families.shared.errors.exceptions import Admission, ExceptionAnalysis, StatusTest
from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.scopes import CLASS, OTHER, Scope

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class RetryAnalysis:
    def __init__(self, ctx: "FileView") -> None:
        self.ctx = ctx
        self.resolver = ctx.resolver
        own = tuple(ctx.profile.retry_decorators)
        base = ctx.catalog.retry
        self.catalog: RetryCatalog = (
            ctx.catalog.cached(RetryAnalysis, lambda: base.with_decorators(own), own) if own else base
        )
        self.exceptions = ctx.analysis(ExceptionAnalysis)
        self.policies = PolicyReader(ctx, self.catalog, self.exceptions)
        self.clients = ClientRetries(self.resolver, self.catalog)
        self._loops: Dict[int, Optional[RetryLoop]] = {}
        self._paths: Dict[int, Tuple[RoundPath, ...]] = {}
        self._retrying: Dict[int, Optional[ast.expr]] = {}
        self._around: Optional[Dict[int, Scope]] = None  # module-level defs and methods -> their scope

    def _qualname(self, expr: ast.expr, scope: Scope) -> Optional[str]:
        found = self.resolver.qualified_name(expr, scope)
        return self.catalog.canonical(found) if found else None

    # -- policies (`policy_reader.py`) and clients (`client_retries.py`) ---------------------
    def decorators(self, function: ast.AST) -> Tuple[RetryPolicy, ...]:
        return self.policies.decorators(function)

    def decorator(self, expr: ast.expr, scope: Scope) -> Optional[RetryPolicy]:
        return self.policies.decorator(expr, scope)

    def policy_call(self, call: ast.Call, scope: Scope) -> Optional[RetryPolicy]:
        return self.policies.policy_call(call, scope)

    def policy_loop(self, statement: ast.AST, scope: Scope) -> Optional[RetryPolicy]:
        return self.policies.policy_loop(statement, scope)

    def own_retries(self, call: ast.Call, scope: Scope) -> Optional[ast.Call]:
        return self.clients.own_retries(call, scope)

    # -- hand-written loops -----------------------------------------------------------------
    def loop(self, statement: ast.AST, scope: Scope) -> Optional[RetryLoop]:
        if not isinstance(statement, _LOOPS):
            return None
        key = id(statement)
        if key not in self._loops:
            self._loops[key] = self._hand_written(statement, scope)
        return self._loops[key]

    def _hand_written(self, loop: Union[ast.For, ast.AsyncFor, ast.While], scope: Scope) -> Optional[RetryLoop]:
        if isinstance(loop, (ast.For, ast.AsyncFor)) and not self._counting(loop.iter, scope):
            return None  # `for item in items:` goes over data, it does not try again
        handlers: List[ast.ExceptHandler] = []
        sleeps: List[ast.Call] = []
        tries: List[ast.Try] = []
        by_status: List[Tuple[ast.ExceptHandler, ast.Compare, StatusTest]] = []
        body = loop.body
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
        bound = single_assignment(right, scope)
        if bound is None:
            return None
        value = bound[0]
        if (
            isinstance(value, ast.Call) and len(value.args) == 1
            and isinstance(value.func, ast.Name) and value.func.id in ("frozenset", "set", "tuple")
        ):
            value = value.args[0]
        if not isinstance(value, (ast.Tuple, ast.List, ast.Set)):
            return None
        literal = ast.Compare(left=test.left, ops=test.ops, comparators=[value])
        return self.exceptions.status_test(literal, bound[1])

    def _qualname_here(self, scope: Scope) -> Callable[[ast.expr], Optional[str]]:
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

    # -- retrying functions ----------------------------------------------------
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
            for statement in module_body(module):
                around[id(statement)] = module
                if isinstance(statement, ast.ClassDef):
                    class_scope = self.resolver.scope_of(statement, module)
                    around.update((id(s), class_scope) for s in statement.body)
            self._around = around
        return self._around.get(id(function))

    def called_function(self, call: ast.Call, scope: Scope) -> Optional[Function]:
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
            owner = method.enclosing_class if method is not None else None
            if method is None or owner is None:
                return None
            params = method.function_params()
            if not params or params[0].arg != func.value.id:
                return None
            found = owner.bindings().get(func.attr)
            if found and len(found) == 1 and isinstance(found[0].value, _FUNCTIONS):
                return found[0].value
        return None


def _retries(policy: Optional[RetryPolicy]) -> bool:
    return policy is not None and policy.retries


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
        yield from (t for t in or_operands(test) if isinstance(t, ast.Call))


def _returns_true(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Return) and isinstance(statement.value, ast.Constant)
        and statement.value.value is True
    )
