"""`--thread-budget`: give a function with outbound calls but no budget a budget parameter,
make its timeouts use it, and forward it from its callers in the same module.

The parameter is keyword-only, `budget_s: float = <the profile's edge default>`: the caller's
remaining time in seconds (the edge total when nobody passes one: a missing deadline is the
edge total, never infinite). Its fixes get the profile's seconds template instead of the edge
default (`max(0.001, budget_s - <margin>)` by default). A plain float, not the organisation's
budget object, because a default must be a value we can write without knowing how that object
is built; and not named like a profile budget parameter (`budget`), because those are read as
budget objects (`budget.timeout()`), which a float is not.

The rules build their own fixes (keyword, timeout object, `wait_for` wrapper, imports), so the
plan does not rebuild them: it checks the file once more with a profile whose edge default is a
placeholder name, and in a threaded function swaps the placeholder in those fixes for the
`budget_s` expression. A fix without the placeholder is one it cannot prove: the function is
left alone.

Callers in the same module that call it by name forward their own budget: a caller that has
`budget_s` passes `budget_s=budget_s`; a caller with a budget in scope passes the timeout it
would give an outbound call (`budget_s=budget.timeout()`): already less the hop margin, so the
callee may only get less time, never more.

With DL503 (budget-not-forwarded) selected and unsafe fixes on, the parameter also travels
up the call graph: a function with no budget that calls a threaded function by name is
threaded too (signature and forwarding only), and so are its callers, until a caller has a
budget of its own or cannot be threaded; one run forwards the budget along a whole chain.

`budget_s` is the time left at the call. A function that spends it more than once (two hops,
a hop and a forward, a hop in a loop) would give each later hop the time an earlier one used:
such a function turns it into a deadline on entry (`budget_deadline_s = time.monotonic() +
budget_s`) and derives every timeout and forwarded budget from what is left of it then
(bench/simulate.py runs fixed code and found the snapshot overspending). Where `time` is bound
to something else, or the function has nested scopes, it keeps the plain parameter.

Methods of this module's classes are forwarded to as well (thread_methods.py), never by
adding a keyword alone: `INSTANCE.m(...)` on a module-level `INSTANCE = Klass()` runs exactly
`Klass.m`; `self.m(...)` may run any override, so every override of `m` in the module gets the
parameter in the same plan, and the call is forwarded only with unsafe fixes (an override in
another module cannot be seen, and would get a keyword it lacks).

Prove or bail: lambdas, `*args`/`**kwargs` signatures, decorators other than staticmethod and
classmethod (a framework may read the signature; a retry decorator such as `tenacity.retry`
calls the function again with the same arguments, so every attempt would spend the whole
`budget_s` again), dunder methods, functions defined more than
once (overloads, conditional defs), functions that already use the name, test functions in
test files (the runner calls them, never with a budget) and lines with a DL suppression are
left alone, and so is a method call when any method it can run is one of those.
A retried one keeps the edge default; with two or more hops (or one in a loop) it spends it
from a deadline taken on entry (`edge_deadline_s`), so one attempt spends the edge total once,
not once per hop. Its callers with a budget are told why it is not threaded (DL303).
"""
from __future__ import annotations

import ast
import copy
import os
import re
import weakref
from typing import (
    TYPE_CHECKING,
    Callable,
    Dict,
    FrozenSet,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
)

from deadline_lint.support.diagnostics import Applicability, Diagnostic, Edit, Fix
from deadline_lint.engine.edits import add_keyword_only_parameter, insert_keyword
from deadline_lint.support.source import ALL_CODES, SourceFile
from deadline_lint.families.outbound.fixes.spend_deadline import (
    THREADED_DEADLINE,
    can_take_deadline,
    has_deadline,
    imports_time,
    prepend_statement,
)
from deadline_lint.families.outbound.fixes.thread_methods import MethodTargets
from deadline_lint.families.shared.budget.budget import SECONDS, BudgetAnalysis
from deadline_lint.families.shared.budget.forwarding_facts import (
    AcceptsBudget,
    Vocabulary,
    accepts_budget,
    parameters_reached,
)
from deadline_lint.semantics.file import FileSemantics
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.resolve import Resolver
from deadline_lint.semantics.local.scopes import FUNCTION, IMPORT, OTHER, Scope
from deadline_lint.settings.profile import Profile
from deadline_lint.support.records import dataclass

if TYPE_CHECKING:
    from deadline_lint.engine.checker import Checker

PARAMETER = "budget_s"
THREADED_CODE = "DL101"  # the finding that says "this function makes an unbudgeted outbound call"
# Findings whose fix bounds a call by the edge default: each makes its function a candidate
# (DL103, an explicit `timeout=None`, only where its unsafe fix applies).
THREADED_CODES = frozenset({THREADED_CODE, "DL103"})
FORWARDING_CODE = "DL503"  # budget-not-forwarded: its presence threads callers too
DEADLINE = THREADED_DEADLINE  # a function that spends `budget_s` twice turns it into this
EDGE_DEADLINE = "edge_deadline_s"  # and one that cannot take `budget_s` spends the edge default from this
PLACEHOLDER = "__deadline_lint_edge_default__"  # stands in for the edge default in fix texts
_UNDERSTOOD_DECORATORS = frozenset({"staticmethod", "classmethod"})
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ATOMIC = (ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.Subscript)
_PLACEHOLDER_PATTERN = re.compile(r"\b" + PLACEHOLDER + r"\b")

Position = Tuple[int, int, int, int]  # line, column, end line, end column (as in Diagnostic)
Key = Tuple[str, Position]  # a finding: its code and where it is

ELSEWHERE = ast.Pass()  # `_threaded_target`'s answer for a function of another module

_PLACEHOLDER_CHECKERS: "weakref.WeakKeyDictionary[Checker, Checker]" = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class ThreadPlan:
    edits: Tuple[Edit, ...]
    imports: Tuple[str, ...]
    covered: FrozenSet[Key]  # findings the plan fixes (instead of their own fix)
    functions: int  # functions given the parameter


def finding_key(diagnostic: Diagnostic) -> Key:
    return diagnostic.code, (diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column)


def plan_thread_budget(
    checker: "Checker",
    source: SourceFile,
    tree: ast.Module,
    found: Sequence[Diagnostic],
    applies: Callable[[Optional[Fix]], bool],
) -> Optional[ThreadPlan]:
    """Edits that thread `budget_s` through this module, or None when there is nothing to do."""
    profile = checker.profile
    if PARAMETER in profile.budget.parameters:
        return None  # it would read as a budget object, which a float is not
    module = _ModuleIndex(checker, source, tree, applies(Fix((), Applicability.UNSAFE, "")))
    applicable = [d for d in found if applies(d.fix)]
    threaded: Dict[int, ast.AST] = {id(f): f for f in module.functions if _has_threaded_parameter(f)}
    candidates = {id(f): f for f in threaded.values()}
    for diagnostic in applicable:
        if diagnostic.code in THREADED_CODES:
            function = module.innermost_function(diagnostic)
            if function is not None and isinstance(function, _DEFS):
                candidates[id(function)] = function

    edits: List[Edit] = []
    imports: List[str] = []
    covered: Set[Key] = set()
    new_functions = 0
    if any(module.budgets.budget_of(module.scope_of[key]) is None for key in candidates):
        placeholder_fixes = _placeholder_fixes(checker, source)
        expression = profile.render("seconds_expression", PARAMETER)
        parameter = f"{PARAMETER}: float = {profile.render('edge_expression')}"
        for function in candidates.values():
            if module.budgets.budget_of(module.scope_of[id(function)]) is not None:
                continue  # a budget is in scope: the rules' own fixes already use it
            inside = [d for d in applicable if module.innermost_function(d) is function]
            planned = _thread_function(module, function, inside, placeholder_fixes, parameter, expression)
            if planned is None:
                once = _spend_the_edge_default_once(module, function, inside, placeholder_fixes)
                if once is not None:
                    edits.extend(once[0])
                    imports.extend(once[1])
                    covered.update(once[2])
                continue
            function_edits, function_imports, function_covered = planned
            if not _has_threaded_parameter(function):
                new_functions += 1
            threaded[id(function)] = function
            edits.extend(function_edits)
            imports.extend(function_imports)
            covered.update(function_covered)
    if _threads_callers(checker, applies):
        for function in _callers_to_thread(module, threaded):
            signature = add_keyword_only_parameter(source, function, module.parameter)  # type: ignore[arg-type]
            if signature is not None:
                edits.append(signature)
                threaded[id(function)] = function
                new_functions += 1
    forwarding, overrides = _forwarding_edits(module, threaded)
    new_functions += overrides
    edits.extend(forwarding)
    covered.update(_forwarding_findings(found, forwarding, source))
    edits, clock_imports = _spend_from_a_deadline(module, threaded, edits)
    imports.extend(clock_imports)
    if not edits or _overlapping(edits):
        return None
    return ThreadPlan(tuple(edits), tuple(dict.fromkeys(imports)), frozenset(covered), new_functions)


def _spend_from_a_deadline(
    module: _ModuleIndex, threaded: Dict[int, ast.AST], edits: List[Edit],
) -> Tuple[List[Edit], List[str]]:
    """`budget_s` is the time left when the function was called. A function that spends it more
    than once (two hops, a hop and a forward, a hop in a loop) would give every later hop the
    time the first one already used: it turns the parameter into a deadline on entry
    (`budget_deadline_s = time.monotonic() + budget_s`) and derives each timeout and each
    forwarded budget from what is left of it at that moment. Where `time` or the name means
    something else there, the plain parameter stays (and the function says so in its docs)."""
    profile = module.profile
    seconds = profile.render("seconds_expression", PARAMETER)
    fresh = profile.render("seconds_expression", f"({DEADLINE} - time.monotonic())")
    forward = f"{PARAMETER}={PARAMETER}"
    imports: List[str] = []
    result = list(edits)
    for function in threaded.values():
        start, end = module.source.node_span(function)
        body_start = module.source.node_span(function.body[0])[0]  # type: ignore[attr-defined]
        inside = [i for i, e in enumerate(result) if body_start <= e.start and e.end <= end]
        uses = [i for i in inside if seconds in result[i].text or result[i].text.endswith(forward)]
        if not uses:
            continue
        if has_deadline(function, DEADLINE):
            # Taken by an earlier round or pass (a forward to another module added later):
            # `budget_s` is the time at entry, so a new use spends what is left now.
            _spend_fresh(result, uses, seconds, fresh, forward)
            continue
        # Uses already in the code count too: a function threaded by an earlier pass (or by
        # hand) with one hop, given a forward to another module now, spends `budget_s` twice.
        spent = _spent_already(function, module.source)
        in_loop = any(_in_loop(function, result[i].start, module.source) for i in uses)
        if len(uses) + len(spent) < 2 and not in_loop:
            continue
        if not can_take_deadline(module.tree, function, DEADLINE):
            continue
        opening = prepend_statement(module.source, function, f"{DEADLINE} = time.monotonic() + {PARAMETER}")
        if opening is None:
            continue
        rewritten = [Edit(start, end, f"({DEADLINE} - time.monotonic())") for start, end in spent]
        if _overlapping([*(result[i] for i in uses), *rewritten, opening]):
            continue
        _spend_fresh(result, uses, seconds, fresh, forward)
        result.extend(rewritten)
        result.append(opening)
        if not imports_time(module.tree):
            imports.append("time")  # only when missing: adding one is a LibCST pass over the file
    return result, imports


def _spent_already(function: ast.AST, source: SourceFile) -> List[Tuple[int, int]]:
    """Where the body already reads `budget_s` (a nested scope has bailed before this)."""
    spans = []
    for statement in function.body:  # type: ignore[attr-defined]
        for node in walk_nodes(statement):
            if isinstance(node, ast.Name) and node.id == PARAMETER and isinstance(node.ctx, ast.Load):
                spans.append(source.node_span(node))
    return spans


def _spend_fresh(edits: List[Edit], uses: List[int], seconds: str, fresh: str, forward: str) -> None:
    for i in uses:
        edit = edits[i]
        text = edit.text.replace(seconds, fresh)
        if text.endswith(forward):
            text = text[: -len(forward)] + f"{PARAMETER}={fresh}"
        edits[i] = Edit(edit.start, edit.end, text)


def _spend_the_edge_default_once(
    module: _ModuleIndex, function: ast.AST, inside: List[Diagnostic], placeholder_fixes: Dict[Key, Fix],
) -> Optional[Tuple[List[Edit], List[str], Set[Key]]]:
    """A retried function cannot take `budget_s` (`_threadable`: every attempt would spend it
    again): it keeps the edge default, and would spend the whole of it at every hop. With two
    or more such hops, or one in a loop, it takes the edge default as a deadline on entry
    (`edge_deadline_s = time.monotonic() + <edge default>`) and gives each hop what is left of
    it: one attempt then spends the edge total once. The next attempt starts a new one (DL303
    says why no budget is threaded there). None when any of its edge-default fixes cannot be
    shown, or the deadline cannot be taken (spend_deadline.py)."""
    if not _retried(module, function) or _suppressed(module.source, function.lineno):  # type: ignore[attr-defined]
        return None
    profile = module.profile
    expression = profile.render("seconds_expression", f"({EDGE_DEADLINE} - time.monotonic())")
    planned = _edge_default_fixes(inside, placeholder_fixes, expression)
    if planned is None:
        return None
    edits, imports, covered = planned
    uses = [e.start for key in covered for e in placeholder_fixes[key].edits if PLACEHOLDER in e.text]
    if len(uses) < 2 and not any(_in_loop(function, use, module.source) for use in uses):
        return None
    if has_deadline(function, EDGE_DEADLINE) or not can_take_deadline(module.tree, function, EDGE_DEADLINE):
        return None
    opening = prepend_statement(
        module.source, function, f"{EDGE_DEADLINE} = time.monotonic() + {profile.render('edge_expression')}"
    )
    if opening is None:
        return None
    if not imports_time(module.tree):
        imports.append("time")
    return [opening, *edits], imports, covered


def _retried(module: _ModuleIndex, function: ast.AST) -> bool:
    """A decorator of `function` is a retry policy the catalog or the profile knows. Only these
    spend the edge default from an entry deadline: on the corpora, the other unthreadable
    functions it reached were lifespans building long-lived clients (a client's timeout is for
    its whole life, not a hop spent now), cleanup waits in `finally` and background loops."""
    scope = module.scope_of[id(function)].parent
    if scope is None:
        return False
    for decorator in function.decorator_list:  # type: ignore[attr-defined]
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        qualname = module.resolver.qualified_name(target, scope)
        if qualname is not None and (
            module.catalog.retry.policy(qualname) is not None or qualname in module.profile.retry_decorators
        ):
            return True
    return False


# Code that runs a call more than once, one after the other (a comprehension too).
_REPEATS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _in_loop(function: ast.AST, offset: int, source: SourceFile) -> bool:
    for node in walk_nodes(function):
        if isinstance(node, _REPEATS) and node is not function:
            start, end = source.node_span(node)
            if start <= offset < end:
                return True
    return False


def _threads_callers(checker: "Checker", applies: Callable[[Optional[Fix]], bool]) -> bool:
    """With DL503 (budget-not-forwarded) selected and its unsafe fixes applied, the plan
    also threads the parameter up the call graph: a caller without a budget gets one too."""
    return FORWARDING_CODE in checker.codes and applies(Fix((), Applicability.UNSAFE, ""))


def _callers_to_thread(module: _ModuleIndex, threaded: Dict[int, ast.AST]) -> List[ast.AST]:
    """Functions with no budget that call a threaded function by name, and (a fixpoint)
    the callers of those, each provably threadable."""
    added: List[ast.AST] = []
    reached = dict(threaded)
    changed = True
    while changed:
        changed = False
        for call, scope in module.calls:
            caller = scope.node
            if scope.kind != FUNCTION or not isinstance(caller, _DEFS) or id(caller) in reached:
                continue
            if _threaded_target(call, scope, reached, module) is None or not _forwardable(call, module):
                continue
            if module.budgets.budget_of(scope) is not None or _has_threaded_parameter(caller):
                continue
            if (
                not _threadable(caller, scope) or _suppressed(module.source, caller.lineno)
                or _mentions_parameter(caller) or module.is_test(caller)
            ):
                continue
            reached[id(caller)] = caller
            added.append(caller)
            changed = True
    return added


def _forwardable(call: ast.Call, module: _ModuleIndex) -> bool:
    if any(kw.arg is None or kw.arg == PARAMETER for kw in call.keywords):
        return False  # already passed, or maybe hidden in **kwargs
    if any(isinstance(a, ast.Starred) for a in call.args):
        return False
    return not _suppressed(module.source, call.lineno)


def _forwarding_findings(found: Sequence[Diagnostic], forwarding: List[Edit], source: SourceFile) -> Set[Key]:
    """The DL503 findings the forwarding edits settle (the same keyword at the same call),
    so their own fixes do not apply on top."""
    at = {edit.start for edit in forwarding}
    covered: Set[Key] = set()
    for diagnostic in found:
        if diagnostic.code == FORWARDING_CODE and diagnostic.fix is not None:
            if any(edit.start in at for edit in diagnostic.fix.edits):
                covered.add(finding_key(diagnostic))
    return covered


def _placeholder_fixes(checker: "Checker", source: SourceFile) -> Dict[Key, Fix]:
    """The fixes the rules would make if the edge default were the placeholder name."""
    twin = _PLACEHOLDER_CHECKERS.get(checker)
    if twin is None:
        raw = copy.deepcopy(dict(checker.profile.raw))
        raw["fix"]["edge_expression"] = PLACEHOLDER
        profile = Profile.from_raw(raw, checker.profile.source, checker.profile.root)
        twin = _PLACEHOLDER_CHECKERS[checker] = type(checker)(profile, select=checker.codes, catalog=checker.catalog)
    return {
        finding_key(d): d.fix
        for d in twin.check_text(source.text, source.path)
        if d.fix is not None and any(PLACEHOLDER in e.text for e in d.fix.edits)
    }


def _substitute(text: str, expression: str) -> str:
    """Put `expression` where the placeholder is; in parentheses unless it is one operand or
    fills a whole argument (`timeout=X`, `f(X, ...)`), so no template can regroup it."""
    try:
        atomic = isinstance(ast.parse(expression, mode="eval").body, _ATOMIC)
    except SyntaxError:
        atomic = False

    def replace(match: "re.Match[str]") -> str:
        before = text[:match.start()].rstrip()
        after = text[match.end():].lstrip()
        opens = before.endswith(("(", ",")) or (
            before.endswith("=") and not before.endswith(("==", "<=", ">=", "!="))
        )
        whole_argument = opens and (not after or after.startswith((")", ",")))
        return expression if atomic or whole_argument else f"({expression})"

    return _PLACEHOLDER_PATTERN.sub(replace, text)


class _ModuleIndex:
    """Scopes for every function, the scope of every call and where each body lies, built
    with the shared analyses."""

    def __init__(self, checker: "Checker", source: SourceFile, tree: ast.Module, unsafe: bool = False) -> None:
        self.source = source
        self.tree = tree
        self.profile = checker.profile
        module_scope = Scope(tree, None)
        self.catalog = checker.catalog
        self.resolver = Resolver(checker.catalog, {id(tree): module_scope})
        self.budgets = BudgetAnalysis(self)
        self.functions: List[ast.AST] = []
        self.calls: List[Tuple[ast.Call, Scope]] = []
        self.scope_of: Dict[int, Scope] = {}
        self.bodies: List[Tuple[ast.AST, Tuple[int, int]]] = []  # defs and lambdas: body span
        self._index(tree, module_scope)
        self.methods = MethodTargets(tree, module_scope)
        self.unsafe = unsafe  # forwarding on `self` is an unsafe fix (thread_methods.py says why)
        self.parameter = f"{PARAMETER}: float = {self.profile.render('edge_expression')}"
        self.elsewhere = _OtherModules(self)
        self._test_file = _is_test_file(source.path)

    def is_test(self, function: ast.AST) -> bool:
        """A test function in a test file: the runner calls it, never with a budget, so a
        parameter would only be noise (its calls keep the rules' own fixes)."""
        return self._test_file and function.name.startswith("test")  # type: ignore[attr-defined]

    def _index(self, tree: ast.Module, module_scope: Scope) -> None:
        stack: List[Tuple[ast.AST, Scope]] = [(tree, module_scope)]
        while stack:
            node, scope = stack.pop()
            if isinstance(node, ast.Call):
                self.calls.append((node, scope))
            if isinstance(node, (*_DEFS, ast.Lambda, ast.ClassDef)):
                inner = self.resolver.scope_of(node, scope)
                self.scope_of[id(node)] = inner
                body = [node.body] if isinstance(node, ast.Lambda) else node.body
                if isinstance(node, _DEFS):
                    self.functions.append(node)
                if not isinstance(node, ast.ClassDef):
                    self.bodies.append((node, (self.source.node_span(body[0])[0], self.source.node_span(node)[1])))
                # Decorators, defaults, annotations and bases run in the enclosing scope.
                body_ids = {id(statement) for statement in body}
                for child in ast.iter_child_nodes(node):
                    stack.append((child, inner if id(child) in body_ids else scope))
                continue
            for child in ast.iter_child_nodes(node):
                stack.append((child, scope))

    def innermost_function(self, diagnostic: Diagnostic) -> Optional[ast.AST]:
        """The def or lambda whose body holds the finding (not its defaults or decorators:
        those run in the enclosing scope)."""
        starts = self.source.line_starts
        if not 0 < diagnostic.line <= len(starts):
            return None
        offset = starts[diagnostic.line - 1] + diagnostic.column - 1
        best: Optional[ast.AST] = None
        best_size = 0
        for node, (start, end) in self.bodies:
            if start <= offset < end and (best is None or end - start < best_size):
                best, best_size = node, end - start
        return best


class _OtherModules:
    """Functions of other modules of the project that take `budget_s`, read through the
    semantics layer (forwarding_facts.AcceptsBudget): the file on disk, or the text an earlier
    pass of this run gave it (thread_project.py). Built on the first call that may need it."""

    def __init__(self, module: _ModuleIndex) -> None:
        self.module = module
        self._semantics: Optional[FileSemantics] = None
        self._fact: Optional[AcceptsBudget] = None

    def takes_parameter(self, call: ast.Call, scope: Scope) -> bool:
        head = call.func
        while isinstance(head, ast.Attribute):
            head = head.value
        if not isinstance(head, ast.Name):
            return False
        bindings = scope.lookup(head.id)
        if not bindings or len(bindings) != 1 or bindings[0].kind != IMPORT:
            return False  # cheap: only a name imported at module level can reach one
        if self._semantics is None:
            self._semantics = FileSemantics(self.module)  # type: ignore[arg-type]  # reads source and tree only
            self._fact = accepts_budget(Vocabulary.of(self.module.budgets))
        assert self._fact is not None
        return any(
            p.name == PARAMETER and p.kind == SECONDS and p.position is None
            for p in parameters_reached(self._semantics, self._fact, call, scope)
        )


def _is_test_file(path: str) -> bool:
    name = os.path.basename(path)
    folders = os.path.normpath(os.path.dirname(path)).split(os.sep)
    return name.startswith("test_") or name.endswith("_test.py") or "tests" in folders or "test" in folders


def _has_threaded_parameter(function: ast.AST) -> bool:
    return any(arg.arg == PARAMETER for arg in function.args.kwonlyargs)  # type: ignore[attr-defined]


def _thread_function(
    module: _ModuleIndex,
    function: ast.AST,
    inside: List[Diagnostic],
    placeholder_fixes: Dict[Key, Fix],
    parameter: str,
    expression: str,
) -> Optional[Tuple[List[Edit], List[str], Set[Key]]]:
    """The signature edit (unless already threaded) plus, for each finding in the body whose
    fix uses the edge default, that fix with `budget_s` instead; None to bail."""
    scope = module.scope_of[id(function)]
    if not _threadable(function, scope) or _suppressed(module.source, function.lineno):  # type: ignore[attr-defined]
        return None
    if module.is_test(function):
        return None
    edits: List[Edit] = []
    if not _has_threaded_parameter(function):
        if _mentions_parameter(function):
            return None
        signature = add_keyword_only_parameter(module.source, function, parameter)  # type: ignore[arg-type]
        if signature is None:
            return None
        edits.append(signature)
    planned = _edge_default_fixes(inside, placeholder_fixes, expression)
    if planned is None or not planned[2]:
        return None  # a timeout it cannot place, or nothing in the body would use the parameter
    return edits + planned[0], planned[1], planned[2]


def _edge_default_fixes(
    inside: List[Diagnostic], placeholder_fixes: Dict[Key, Fix], expression: str,
) -> Optional[Tuple[List[Edit], List[str], Set[Key]]]:
    """The fixes of a function's findings that use the edge default, with `expression` in its
    place, their imports and the findings they settle; None when a DL101 fix cannot show where
    its timeout goes (the function is then left alone). Other findings keep their own fix."""
    edits: List[Edit] = []
    imports: List[str] = []
    covered: Set[Key] = set()
    for diagnostic in inside:
        key = finding_key(diagnostic)
        fix = placeholder_fixes.get(key)
        if fix is None:
            if diagnostic.code == THREADED_CODE:
                return None
            continue
        edits.extend(Edit(e.start, e.end, _substitute(e.text, expression)) for e in fix.edits)
        imports.extend(fix.imports)
        covered.add(key)
    return edits, imports, covered


def _threadable(function: ast.AST, scope: Scope) -> bool:
    name = function.name  # type: ignore[attr-defined]
    if name.startswith("__") and name.endswith("__"):
        return False
    args = function.args  # type: ignore[attr-defined]
    if args.vararg is not None or args.kwarg is not None:
        return False
    parent = scope.parent
    if parent is None or len(parent.bindings().get(name, [])) != 1:
        return False  # overloads, redefinitions, conditional defs
    for decorator in function.decorator_list:  # type: ignore[attr-defined]
        if not (isinstance(decorator, ast.Name) and decorator.id in _UNDERSTOOD_DECORATORS):
            return False
        if parent.lookup(decorator.id) is not None:
            return False  # `staticmethod` rebound to something else
    return True


def _suppressed(source: SourceFile, line: int) -> bool:
    """A bare `# noqa` or one naming a DL code (another linter's `# noqa: E501` is no reason)."""
    codes = source.suppressed_codes(line)
    return codes is ALL_CODES or any(code.startswith("DL") for code in codes)


def _mentions_parameter(function: ast.AST) -> bool:
    for node in walk_nodes(function):
        if isinstance(node, ast.Name) and node.id == PARAMETER:
            return True
        if isinstance(node, ast.arg) and node.arg == PARAMETER:
            return True
    return False


def _forwarding_edits(module: _ModuleIndex, threaded: Dict[int, ast.AST]) -> Tuple[List[Edit], int]:
    """`f(x)` -> `f(x, budget_s=...)` where `f` is threaded and the caller has a budget. A
    method's overrides that lack the parameter get it here too (signature only), and how many
    did is returned with the edits."""
    edits: List[Edit] = []
    added = 0
    if not threaded:
        return edits, added
    for call, scope in module.calls:
        target = _threaded_target(call, scope, threaded, module)
        if target is None or not _forwardable(call, module):
            continue  # a suppressed line is left exactly as it is
        value = _caller_budget(scope, threaded, module)
        if value is None:
            continue
        edit = insert_keyword(module.source, call, PARAMETER, value)
        if edit is None:
            continue
        signatures = []
        for member in () if target is ELSEWHERE else _family_members(call, scope, module):
            if id(member) in threaded or _has_threaded_parameter(member):
                continue
            signature = add_keyword_only_parameter(module.source, member, module.parameter)  # type: ignore[arg-type]
            if signature is None:
                break
            signatures.append((member, signature))
        else:
            for member, signature in signatures:
                threaded[id(member)] = member
                edits.append(signature)
                added += 1
            edits.append(edit)
    return edits, added


def _family_members(call: ast.Call, scope: Scope, module: _ModuleIndex) -> Tuple[ast.AST, ...]:
    family = module.methods.family(call, scope) if isinstance(call.func, ast.Attribute) else None
    return family.members if family is not None else ()


def _threaded_target(call: ast.Call, scope: Scope, threaded: Dict[int, ast.AST], module: _ModuleIndex):
    """The threaded function `call` calls, if provably so: one of this module's (below), or
    an undecorated module-level function of another project module that already takes
    `budget_s` (ELSEWHERE: threaded by an earlier pass of this run, or written so)."""
    found = _threaded_here(call, scope, threaded, module)
    if found is None and module.elsewhere.takes_parameter(call, scope):
        return ELSEWHERE
    return found


def _threaded_here(call: ast.Call, scope: Scope, threaded: Dict[int, ast.AST], module: _ModuleIndex):
    """A function of this module: a module-level or nested function by plain name, or a
    method whose whole family (thread_methods.py) has or can take the parameter (on `self`
    only with unsafe fixes: an override elsewhere cannot be seen)."""
    if isinstance(call.func, ast.Attribute):
        family = module.methods.family(call, scope)
        if family is None or (family.on_self and not module.unsafe):
            return None
        method = family.members[0]
        if id(method) not in threaded:
            return None
        for member in family.members:
            if id(member) in threaded or _has_threaded_parameter(member):
                continue
            member_scope = module.scope_of[id(member)]
            if (
                not _threadable(member, member_scope)
                or _suppressed(module.source, member.lineno)  # type: ignore[attr-defined]
                or _mentions_parameter(member)
            ):
                return None
        return method
    if not isinstance(call.func, ast.Name):
        return None
    bindings = scope.lookup(call.func.id)
    if not bindings or len(bindings) != 1 or bindings[0].kind != OTHER:
        return None
    target = bindings[0].value
    if id(target) not in threaded or not isinstance(target, _DEFS):
        return None
    target_scope = module.scope_of[id(target)]
    if target_scope.enclosing_class is not None or not _threadable(target, target_scope):
        return None
    return target


def _caller_budget(scope: Scope, threaded: Dict[int, ast.AST], module: _ModuleIndex) -> Optional[str]:
    if scope.kind != FUNCTION:
        return None
    if id(scope.node) in threaded:
        return PARAMETER
    budget = module.budgets.budget_of(scope)
    return budget.timeout_expression(module.profile) if budget is not None else None


def _overlapping(edits: List[Edit]) -> bool:
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    return any(b.start < a.end or (b.start == a.start) for a, b in zip(ordered, ordered[1:]))
