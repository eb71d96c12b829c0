"""The retry family's project fact about decorators and helpers the project writes itself
whose retry filter is one of their parameters (`@async_retry(exception_types=[...])`,
`call(fn, retry_on=(...))`), defined in this module or another: what the parameter is, where
it sits, what its default holds and which parameter counts the attempts, so that the policy
is judged where it is used."""
from __future__ import annotations

import ast
import re
from types import MappingProxyType
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, NamedTuple, Optional, Tuple, Union

from deadline_lint.families.retry.analysis.retry_loops import _exits_on_success, _goes_round, _loop_level
from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.semantics.facts import Fact, Local, text_may_hold
from deadline_lint.semantics.file import FactUse, FileSemantics
from deadline_lint.semantics.imported import holds_here_or_imported
from deadline_lint.semantics.local.scopes import Scope
from deadline_lint.semantics.modules import absolute_name
from deadline_lint.semantics.scan import import_table
from deadline_lint.semantics.summary import FUNCTIONS, ModuleTree

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

# parameter -> (position among the arguments a call passes, -1 keyword only; default)
Parameters = Dict[str, Tuple[int, Optional[ast.expr]]]


# -- project retry decorators and helpers whose filter is a parameter -----------------------
DECORATOR_FORM, HELPER_FORM = "decorator", "helper"
ATTEMPTS_COUNT, RETRIES_COUNT = "attempts", "retries"


class ParameterFilter(NamedTuple):
    """A project def that retries what one of its parameters names: a decorator factory
    (`def async_retry(exception_types=(...), tries=3)` whose wrapper loops and catches
    `except exception_types:`), or a helper (`def call(fn, retry_on=(Timeout,))` looping
    around `except retry_on:`). Judged where it is used, with the argument given there or
    the default."""

    form: str  # DECORATOR_FORM or HELPER_FORM
    parameter: str
    position: int  # among the arguments a call passes (after `self`), -1: keyword only
    default: Optional[Tuple[Optional[str], ...]]  # the default's classes (None: no default we can read)
    attempts: str = ""  # the parameter giving the attempts (`range(tries)`), "" when none
    attempts_kind: str = ""  # ATTEMPTS_COUNT or RETRIES_COUNT (`range(retries + 1)`)
    attempts_position: int = -1
    attempts_default: Optional[int] = None

    @classmethod
    def of(cls, payload: object) -> Optional["ParameterFilter"]:
        try:
            items = list(payload)  # type: ignore[call-overload]
            if items[3] is not None:
                items[3] = tuple(items[3])
            return cls(*items)
        except (TypeError, ValueError, IndexError):
            return None


class FiltersByParameter(Fact[tuple]):
    name = "retry.parameter_filter"
    version = 4  # 3: a factory handing its parameter to a library's retry filter; 4: read from **kwargs
    through_returns = False  # a helper is one by its own body

    def may_hold(self, text: str) -> bool:
        if any(word in text for word in _DELEGATE_WORDS):
            return True
        return "except" in text and ("for " in text or "while " in text) and _catches_a_parameter(text)

    def function(self, module: ModuleTree, node: ast.AST, klass: Optional[ast.ClassDef]) -> Optional[Local]:
        if not isinstance(node, FUNCTIONS):
            return None
        params = _parameters(node, klass is not None)
        read = _kwargs_reads(node)
        if not params and not read:
            return None
        found = _retry_loop_on_parameter(node, params) if params else None
        if found is None:
            return _delegated(module, node, {**read, **params}, frozenset(read))
        form, parameter, loop = found
        position, default = params[parameter]
        classes = _default_classes(module, default)
        count, kind = _attempt_count(loop, params)
        count_position, count_default = -1, None
        if count:
            count_position, count_value = params[count]
            if isinstance(count_value, ast.Constant) and type(count_value.value) is int:
                count_default = count_value.value
        payload = ParameterFilter(form, parameter, position, classes, count, kind, count_position, count_default)
        return Local(tuple(payload), node.name)


_CAUGHT_NAME = re.compile(r"\s+\(?\s*(?:tuple\(\s*)?([a-z_]\w*)\s*\)?\s*\)?\s*(?:as\s+\w+\s*)?:")


def _catches_a_parameter(text: str) -> bool:
    """Some `except NAME:` names a word the text also spells like a parameter (`(NAME=`,
    `, NAME: tuple`)."""
    seen = set()
    at = text.find("except")
    while at != -1:
        match = _CAUGHT_NAME.match(text, at + 6)
        at = text.find("except", at + 6)
        if match is None or match.group(1) in seen:
            continue
        word = match.group(1)
        seen.add(word)
        if re.search(rf"[(,]\s*{word}\s*[:=,)]", text):
            return True
    return False


def _parameters(node: Function, method: bool) -> Parameters:
    """Parameter -> (position among the arguments a call passes, -1 keyword only; default)."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    skip = 1 if method and not static and positional else 0
    defaults: List[Optional[ast.expr]] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    found: Parameters = {}
    for index, (arg, default) in enumerate(zip(positional, defaults)):
        if index >= skip:
            found[arg.arg] = (index - skip, default)
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        found[arg.arg] = (-1, default)
    return found


def _retry_loop_on_parameter(node: ast.AST, params: Parameters) -> Optional[Tuple[str, str, ast.stmt]]:
    """(form, parameter, loop) for the first loop of the def (or of a def nested in it, the
    wrapper of a decorator factory) that retries on `except <parameter>:`."""
    stack: List[Tuple[ast.AST, bool, frozenset]] = [(node, False, frozenset())]
    while stack:
        current, nested, shadowed = stack.pop()
        for child in ast.iter_child_nodes(current):
            if isinstance(child, FUNCTIONS):
                inner = shadowed | {a.arg for a in (*child.args.posonlyargs, *child.args.args, *child.args.kwonlyargs)}
                stack.append((child, True, frozenset(inner)))
                continue
            if isinstance(child, (ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(child, (ast.For, ast.AsyncFor, ast.While)) and _counts(child):
                body = child.body
                for index, statement in enumerate(body):
                    for attempt in _loop_level(statement):
                        if not isinstance(attempt, ast.Try) or not _exits_on_success(attempt, body[index + 1:]):
                            continue
                        for handler in attempt.handlers:
                            caught = _caught_name(handler.type)
                            found = caught is not None and caught in params and caught not in shadowed
                            if found and _goes_round(handler):
                                return (DECORATOR_FORM if nested else HELPER_FORM), str(caught), child
            stack.append((child, nested, shadowed))
    return None


# a library's retry filter or decorator -> (position, keyword) of its filter argument
_DELEGATES = MappingProxyType({
    "tenacity.retry_if_exception_type": (0, "exception_types"),
    "retry_async.api.retry": (0, "exceptions"),
    "retry_async.retry": (0, "exceptions"),
})
_DELEGATE_WORDS = ("retry_if_exception_type", "retry_async")
_ATTEMPT_STOPS = ("tenacity.stop_after_attempt", "tenacity.stop.stop_after_attempt")


def _kwargs_reads(node: Function) -> Parameters:
    """`retry_exceptions = kwargs.get("retry_exceptions", ())` at the def's top, from its own
    `**kwargs` and under the key's own name: a keyword parameter by another spelling."""
    kwarg = node.args.kwarg
    if kwarg is None:
        return {}
    found: Parameters = {}
    for statement in node.body:
        target = value = None
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign):
            target, value = statement.target, statement.value
        if not (
            isinstance(target, ast.Name) and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr == "get" and isinstance(value.func.value, ast.Name)
            and value.func.value.id == kwarg.arg and not value.keywords and len(value.args) in (1, 2)
            and isinstance(value.args[0], ast.Constant) and value.args[0].value == target.id
        ):
            continue
        found[target.id] = (-1, value.args[1] if len(value.args) == 2 else None)
    return found


def _delegated(
    module: ModuleTree, node: Function, params: Parameters, read: FrozenSet[str] = frozenset()
) -> Optional[Local]:
    """A decorator factory that hands one of its parameters, unchanged, to a library's retry
    filter (`retry_if_exception_type(exceptions)`, `retry_async.api.retry(exceptions, ...)`):
    its default is the filter where a use does not pass it. Only a parameter read by name,
    never rebound in the def (`read`: those taken from `**kwargs`, bound once by that read)."""
    text = module.module.text
    if not any(word in text for word in _DELEGATE_WORDS):
        return None
    table = import_table(text)
    stores: Dict[str, int] = {}
    for t in ast.walk(node):
        if isinstance(t, ast.Name) and isinstance(t.ctx, (ast.Store, ast.Del)):
            stores[t.id] = stores.get(t.id, 0) + 1
    rebound = {name for name, count in stores.items() if count > (1 if name in read else 0)}
    parameter, attempts = "", ""
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        target = _imported(call.func, table)
        delegate = _DELEGATES.get(target or "")
        if delegate is not None:
            position, keyword = delegate
            given = call.args[position] if len(call.args) > position else None
            given = next((k.value for k in call.keywords if k.arg == keyword), given)
            name = _caught_name(given)
            if name is None or name not in params or name in rebound or (parameter and parameter != name):
                return None
            parameter = name
            tries = next((k.value for k in call.keywords if k.arg == "tries"), None)
            if isinstance(tries, ast.Name) and tries.id in params:
                attempts = tries.id
        elif target in _ATTEMPT_STOPS and len(call.args) == 1 and isinstance(call.args[0], ast.Name):
            if call.args[0].id in params:
                attempts = call.args[0].id
    if not parameter or not any(isinstance(c, FUNCTIONS) for c in ast.walk(node) if c is not node) and (
        "retry_async" not in (_imported(_first_call(node), table) or "")
    ):
        return None
    position, default = params[parameter]
    classes = _default_classes(module, default)
    count_position, count_default = -1, None
    if attempts:
        count_position, count_value = params[attempts]
        if isinstance(count_value, ast.Constant) and type(count_value.value) is int and count_value.value > 0:
            count_default = count_value.value
    payload = ParameterFilter(
        DECORATOR_FORM, parameter, position, classes, attempts, ATTEMPTS_COUNT if attempts else "",
        count_position, count_default,
    )
    return Local(tuple(payload), node.name)


def _first_call(node: Function) -> Optional[ast.expr]:
    """`return __retry(...)`: the callee of a def whose body returns a call."""
    last = node.body[-1] if node.body else None
    if isinstance(last, ast.Return) and isinstance(last.value, ast.Call):
        return last.value.func
    return None


def _imported(func: Optional[ast.expr], table: Dict[str, str]) -> Optional[str]:
    """The library name an imported callee stands for (`tenacity.retry_if_exception_type`)."""
    parts: List[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in table or table[func.id].startswith("."):
        return None
    return ".".join([table[func.id], *reversed(parts)])


def _counts(loop: Union[ast.For, ast.AsyncFor, ast.While]) -> bool:
    if isinstance(loop, ast.While):
        return True
    iterable = loop.iter
    func = iterable.func if isinstance(iterable, ast.Call) else None
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("range", "count")


def _caught_name(expr: Optional[ast.expr]) -> Optional[str]:
    """`except retry_on:` / `except tuple(retry_on):` -> "retry_on"."""
    if (
        isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "tuple"
        and len(expr.args) == 1
    ):
        expr = expr.args[0]
    return expr.id if isinstance(expr, ast.Name) else None


def _default_classes(module: ModuleTree, default: Optional[ast.expr]) -> Optional[Tuple[Optional[str], ...]]:
    from deadline_lint.families.shared.errors.exception_facts import class_name

    if default is None:
        return None
    elements = default.elts if isinstance(default, (ast.Tuple, ast.List, ast.Set)) else [default]
    if not elements or any(isinstance(e, ast.Starred) for e in elements):
        return None
    return tuple(class_name(module, e) for e in elements)


def _attempt_count(loop: ast.stmt, params: Parameters) -> Tuple[str, str]:
    """`for _ in range(tries)` -> (tries, attempts); `range(retries + 1)` -> (retries, retries)."""
    iterable = getattr(loop, "iter", None)
    if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range"):
        return "", ""
    bound = iterable.args[-1] if len(iterable.args) in (1, 2) else None
    if isinstance(bound, ast.Name) and bound.id in params:
        return (bound.id, ATTEMPTS_COUNT) if len(iterable.args) == 1 else ("", "")
    if (
        isinstance(bound, ast.BinOp) and isinstance(bound.op, ast.Add) and isinstance(bound.left, ast.Name)
        and bound.left.id in params and isinstance(bound.right, ast.Constant) and bound.right.value == 1
    ):
        return bound.left.id, RETRIES_COUNT if len(iterable.args) == 1 else ATTEMPTS_COUNT
    return "", ""


FILTERS_BY_PARAMETER = FiltersByParameter()


class ProjectRetryHelpers(FactUse):
    """Per file (`ctx.analysis(ProjectRetryHelpers)`): the project decorator or helper a call
    reaches whose retry filter is one of its parameters."""

    def __init__(self, ctx: "FileView") -> None:
        super().__init__(ctx, FILTERS_BY_PARAMETER)
        self._possible: Optional[bool] = None

    @property
    def possible(self) -> bool:
        """This module's text, or that of a project module it imports, can hold a helper:
        judged from texts once per file, before the names a call may reach are worked out."""
        if self._possible is None:
            self._possible = _possible(self.ctx.analysis(FileSemantics), self.fact)
        return self._possible

    def helper(self, call: ast.Call, scope: Scope) -> Optional[Tuple[ParameterFilter, str]]:
        """What the call reaches, and the def's name as a message shows it (its own name: not
        its module's, which depends on where the project's root is found)."""
        if not self.possible:
            return None
        answer = self.reached(call, scope)
        if answer is None:
            return None
        found = ParameterFilter.of(answer.payload)
        return (found, answer.chain[0]) if found is not None else None


def holds_parameter_filter(text: str, path: str) -> bool:
    """The `Project` need of the retry rules for these helpers: the file defines one, or
    imports a project module that does."""
    if not FILTERS_BY_PARAMETER.may_hold(text) and "import" not in text:
        return False
    return holds_here_or_imported(FILTERS_BY_PARAMETER, text, path)


def parameter_filter_need(rule: object) -> Callable[[str, str], bool]:
    return holds_parameter_filter


def _possible(semantics: FileSemantics, fact: Fact) -> bool:
    names, own = semantics.names, semantics.own
    if text_may_hold(fact, own, names):
        return True
    for target in set(import_table(own.text).values()):  # the import lines: no walk of the tree
        target = absolute_name(own.name, own.is_package, target)
        if names.is_project_name(target):
            defining = names.defining_module(target)
            if defining is not None and text_may_hold(fact, defining, names):
                return True
    return False
