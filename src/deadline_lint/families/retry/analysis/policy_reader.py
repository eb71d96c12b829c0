"""Reading retry policies: a retry decorator, a policy object (`Retrying(...)`,
`Retry(predicate=...)`), a project helper filtering by one of its parameters, and the
`for attempt in Retrying(...)` loop; each into a `RetryPolicy` (`retry_policy.py`)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Tuple

from deadline_lint.catalog.retry import (
    ALL,
    CALLABLE,
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
    Predicate,
    RetryApi,
    RetryCatalog,
)
from deadline_lint.families.retry.analysis.retry_policy import (
    MAX_DEPTH,
    UNKNOWN,
    FilterPart,
    RetryPolicy,
    Stop,
    both_parts,
    combined,
    given_argument,
    module_body,
    passes_unpacked,
    single_assignment,
    turned_off,
)
from deadline_lint.families.shared.errors.exceptions import ExceptionAnalysis
from deadline_lint.semantics.local.declared import is_none
from deadline_lint.semantics.local.scopes import Scope

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

class PolicyReader:
    """Per file (held by `RetryAnalysis`); a policy call is read once."""

    def __init__(self, ctx: "FileView", catalog: RetryCatalog, exceptions: ExceptionAnalysis) -> None:
        self.ctx = ctx
        self.resolver = ctx.resolver
        self.catalog = catalog
        self.exceptions = exceptions
        self._policies: Dict[int, Tuple[ast.AST, Optional[RetryPolicy]]] = {}
        self._subclasses: Optional[Dict[str, RetryApi]] = None
        self._helpers: Optional[bool] = None
        self._final_names = frozenset(
            name.rpartition(".")[2] for name in [*self.catalog.policies, *self.catalog.aliases]
        )

    def _qualname(self, expr: ast.expr, scope: Scope) -> Optional[str]:
        found = self.resolver.qualified_name(expr, scope)
        return self.catalog.canonical(found) if found else None

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
            from deadline_lint.families.retry.analysis.retry_helpers import ProjectRetryHelpers

            self._helpers = self.ctx.analysis(ProjectRetryHelpers).possible
        return self._helpers

    def _project_policy(self, call: ast.Call, scope: Scope) -> Optional[RetryPolicy]:
        """A project decorator factory or helper whose filter is one of its parameters
        (`@async_retry(exception_types=[...])`, `call(fn, retry_on=(...))`): the argument
        given here, else the default it declares (read in its module, placed on the name
        called here)."""
        from deadline_lint.families.retry.analysis.retry_helpers import (
            DECORATOR_FORM,
            RETRIES_COUNT,
            ProjectRetryHelpers,
        )

        found = self.ctx.analysis(ProjectRetryHelpers).helper(call, scope)
        if found is None:
            return None
        helper, qualname = found
        stops = {helper.attempts: ATTEMPTS} if helper.attempts else {}
        positions = {helper.attempts: helper.attempts_position} if helper.attempts_position >= 0 else {}
        filter_argument = Argument(helper.parameter, helper.position if helper.position >= 0 else None)
        api = RetryApi(
            qualname, DECORATOR if helper.form == DECORATOR_FORM else OBJECT,
            filter=filter_argument,
            stops=stops, positions=positions, default_stop=UNKNOWN, hint="a narrower exception tuple",
            counts_retries=helper.attempts_kind == RETRIES_COUNT,
        )
        value = given_argument(call, filter_argument)
        if value is not None:
            parts: Tuple[FilterPart, ...] = (self._types_part(value, scope),)
        elif passes_unpacked(call) or helper.default is None or self._in_tests():
            parts = (FilterPart(UNKNOWN, call.func),)  # a test exercising the helper: its default is the point
        else:
            admission = self.exceptions.admits_classes(helper.default, call.func)
            parts = (FilterPart(TYPES, call.func, admission, default=helper.parameter),)
        attempts = Argument(helper.attempts, positions.get(helper.attempts))
        given = given_argument(call, attempts) if helper.attempts else None
        if given is not None:
            stop = Stop(ATTEMPTS, given, helper.attempts)
        elif helper.attempts_default is not None and not passes_unpacked(call):
            stop = Stop(ATTEMPTS, ast.copy_location(ast.Constant(helper.attempts_default), call.func), helper.attempts)
        else:
            stop = Stop(UNKNOWN, None)
        return RetryPolicy(api, call, call, parts, value is not None, (stop,), False)

    def _in_tests(self) -> bool:
        """The file being checked is a test (`tests/`, `test_*.py`), from the project's root."""
        import os

        from deadline_lint.semantics.callers import is_test_path
        from deadline_lint.semantics.file import FileSemantics

        semantics = self.ctx.analysis(FileSemantics)
        modules = semantics.names.modules
        path = semantics.own.path
        return is_test_path(os.path.relpath(path, modules.root) if modules is not None else os.path.basename(path))

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
            for statement in module_body(module):
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
        value = given_argument(call, api.filter) if call is not None and api.filter is not None else None
        dynamic = call is not None and passes_unpacked(call)
        if api.source == "profile" or (value is None and dynamic):  # `**kwargs` may hold the filter
            parts: Tuple[FilterPart, ...] = (FilterPart(UNKNOWN, node),)
        elif value is None:
            state = NOTHING if api.retries_results or api.default == NONE else ALL
            parts = (FilterPart(state, None),)
        elif api.filter_as == TYPES:
            parts = (self._types_part(value, scope),)
        elif api.filter_as == PREDICATE:
            parts = tuple(self._predicate(value, scope, 0))
        elif api.filter_as == CALLABLE and call is not None:
            # retrying's `retry_on_exception=` is called with the exception: read like a test
            parts = tuple(self._test(value, call, scope))
        else:
            parts = (FilterPart(UNKNOWN, value),)
        giveup, spared = self._gives_up(call, api, scope) if call is not None else (False, "")
        stops = self._stops(api, call, scope)
        if dynamic and all(stop.node is None for stop in stops):
            stops = (Stop(UNKNOWN, None),)
        own = (
            api.timeouts is not None and value is None and not dynamic
            and not turned_off(call, api.timeouts.unless, api.positions)
        )
        return RetryPolicy(api, node, call, parts, value is not None, stops, giveup, own, spared)

    def _types_part(self, value: ast.expr, scope: Scope) -> FilterPart:
        admission = self.exceptions.admits(value, scope)
        return FilterPart(TYPES, value, admission)

    def _predicate(self, expr: ast.expr, scope: Scope, depth: int) -> Iterator[FilterPart]:
        for leaf, where, level in combined(expr, scope, depth):
            if level > MAX_DEPTH:
                yield FilterPart(UNKNOWN, leaf)
            elif isinstance(leaf, ast.BinOp) and isinstance(leaf.op, ast.BitAnd):
                left = list(self._predicate(leaf.left, where, level + 1))
                yield from both_parts(left, list(self._predicate(leaf.right, where, level + 1)), leaf)
            else:
                yield from self._predicate_leaf(leaf, where, level)

    def _predicate_leaf(self, expr: ast.expr, scope: Scope, depth: int) -> Iterator[FilterPart]:
        call = expr if isinstance(expr, ast.Call) else None
        if call is None and isinstance(expr, (ast.Name, ast.Lambda)):
            yield from self._state_test(expr, scope)  # `retry=lambda rs: ...`, `retry=should_retry`
            return
        predicate = self.catalog.predicate(self._qualname(call.func, scope)) if call is not None else None
        if call is None or predicate is None:
            yield FilterPart(UNKNOWN, expr)
            return
        if predicate.admits == ANY:
            for argument in call.args:
                yield from self._predicate(argument, scope, depth + 1)
            return
        if predicate.admits in (NOTHING, ALL):
            yield FilterPart(predicate.admits, expr)
            return
        if predicate.admits == TEST:
            yield from self._test(given_argument(call, predicate.argument), call, scope)
            return
        classes = self._classes(call, predicate)
        if classes is None:  # no argument: the predicate's default class (Exception)
            yield FilterPart(ALL if predicate.admits == TYPES else NOTHING, expr)
            return
        yield FilterPart(predicate.admits, classes, self.exceptions.admits(classes, scope))

    def _test(self, function: Optional[ast.expr], call: ast.Call, scope: Scope) -> Iterator[FilterPart]:
        """`retry_if_exception(is_transient)`: what the function returns True for, when it is a
        lambda or a def of this file or of another project module that only branches on the
        class of the exception (`retry_predicates.py`). Each part is placed on the function as
        the policy names it, where the reader is."""
        from deadline_lint.families.retry.analysis.retry_predicates import filter_parts, judged_predicate

        found = judged_predicate(self.ctx, self.exceptions, function, scope) if function is not None else None
        if found is None:
            yield FilterPart(UNKNOWN, call)
            return
        assert function is not None  # read above
        judged, rest, described = found
        yield from filter_parts(judged, rest, function, described)

    def _state_test(self, function: ast.expr, scope: Scope) -> Iterator[FilterPart]:
        """tenacity's `retry=` given a plain function of the retry state: read like a test of
        the exception when it tests `isinstance(rs.outcome.exception(), T)` only."""
        from deadline_lint.families.retry.analysis.retry_predicates import filter_parts, judged_predicate

        found = judged_predicate(self.ctx, self.exceptions, function, scope, state=True)
        if found is None:
            yield FilterPart(UNKNOWN, function)
            return
        judged, rest, described = found
        yield from filter_parts(judged, rest, function, described)

    def _gives_up(self, call: ast.Call, api: RetryApi, scope: Scope) -> Tuple[bool, str]:
        """backoff's `giveup=` may give up on an expiry error: quiet unless it is a predicate
        read to return True only for classes that admit none (`giveup=lambda e:
        isinstance(e, ValueError)`: timeouts are still retried); then also how a message
        names it."""
        from deadline_lint.families.retry.analysis.retry_predicates import judged_predicate, spares_expiry

        spared = ""
        for keyword in api.giveup:
            value = given_argument(call, Argument(keyword))
            if value is None:
                continue
            found = judged_predicate(self.ctx, self.exceptions, value, scope)
            if found is None or not spares_expiry(found[0], found[1]):
                return True, ""
            spared = found[2] or f"`{keyword}=` at line {value.lineno}"
        return False, spared

    def _classes(self, call: ast.Call, predicate: Predicate) -> Optional[ast.expr]:
        if predicate.varargs:
            if not call.args:
                return None
            if len(call.args) == 1 and not isinstance(call.args[0], ast.Starred):
                return call.args[0]
            return ast.copy_location(ast.Tuple(elts=list(call.args), ctx=ast.Load()), call.args[0])
        return given_argument(call, predicate.argument)

    def _stops(self, api: RetryApi, call: Optional[ast.Call], scope: Scope) -> Tuple[Stop, ...]:
        found: List[Stop] = []
        for keyword, kind in api.stops.items():
            value = given_argument(call, Argument(keyword, api.positions.get(keyword))) if call is not None else None
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
        for leaf, where, level in combined(expr, scope, depth):
            if level > MAX_DEPTH:
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
            bound = single_assignment(iterable, scope)
            if bound is None:
                return None
            iterable, scope = bound
        if not isinstance(iterable, ast.Call):
            return None
        policy = self.policy_call(iterable, scope)
        return policy if policy is not None and policy.api.form == OBJECT else None
