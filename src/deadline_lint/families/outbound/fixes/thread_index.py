"""What `--thread-budget` (thread_budget.py) knows of one module: the scope of every function
and call, where each body lies, the methods a call can run (thread_methods.py), the functions
of other project modules that already take `budget_s`, and the prove-or-bail predicates that
decide whether a function's signature may change at all."""
from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

from deadline_lint.families.outbound.fixes.adoption.edges import Edge, find_edges
from deadline_lint.families.outbound.fixes.adoption.minting import mint_edit
from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.families.outbound.fixes.thread_methods import MethodTargets, interface_class
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
from deadline_lint.semantics.local.scopes import IMPORT, Scope
from deadline_lint.support.diagnostics import Diagnostic
from deadline_lint.support.source import ALL_CODES, SourceFile

if TYPE_CHECKING:
    from deadline_lint.engine.checker import Checker

PARAMETER = "budget_s"
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_UNDERSTOOD_DECORATORS = frozenset({"staticmethod", "classmethod"})


class ModuleIndex:
    """Scopes for every function, the scope of every call and where each body lies, built
    with the shared analyses."""

    def __init__(
        self, checker: "Checker", source: SourceFile, tree: ast.Module, unsafe: bool = False, mint: bool = False,
    ) -> None:
        self.source = source
        self.tree = tree
        self.profile = checker.profile
        module_scope = Scope(tree, None)
        self.catalog = checker.catalog
        self.resolver = Resolver(checker.catalog, {id(tree): module_scope})
        self.budgets = BudgetAnalysis(self)
        self.functions: List[Function] = []
        self.calls: List[Tuple[ast.Call, Scope]] = []
        self.scope_of: Dict[int, Scope] = {}
        self.bodies: List[Tuple[ast.AST, Tuple[int, int]]] = []  # defs and lambdas: body span
        self.names: List[Tuple[ast.Name, Scope]] = []  # every name, to find each reference to a function
        self.attributes: List[Tuple[ast.Attribute, Scope]] = []  # and every attribute (methods)
        self.callee_of: Dict[int, ast.Call] = {}  # a call's `func` node -> the call
        self.scope_at: Dict[int, Scope] = {}  # a name's or attribute's node -> its scope
        self.function_of: Dict[int, Function] = {}  # id -> def
        self._index(tree, module_scope)
        self.methods = MethodTargets(tree, module_scope)
        self.unsafe = unsafe  # forwarding on `self` is an unsafe fix (thread_methods.py says why)
        # No default: a default would mint a new total at every caller that omits it.
        self.parameter = f"{PARAMETER}: float"
        self.elsewhere = OtherModules(self)
        self._test_file = _is_test_file(source.path)
        self.mint = mint
        # `adopt`: the edges with no budget of their own, which mint `budget_s` (adoption/minting.py).
        # and of those, the ones that mint it already (an earlier pass or run of `adopt`).
        self.minted: Dict[int, Edge] = {}
        self.minted_before: Set[int] = set()
        if mint:
            self._edges()

    def _edges(self) -> None:
        for edge in find_edges(self.tree, self.source.path, self.profile.edge.entry_points):
            function = edge.node
            scope = self.scope_of.get(id(function))
            if (
                not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or scope is None
                or has_threaded_parameter(function) or suppressed(self.source, function.lineno)
            ):
                continue
            if mentions_parameter(function):
                if not _mints(function):
                    continue
                # Minted by an earlier pass, whatever the budget analysis makes of its text now
                # (a deadline taken from it reads as a budget with no timeout to forward).
                self.minted_before.add(id(function))
            elif self.budgets.budget_of(scope) is not None:
                continue
            elif mint_edit(self.source, function, ["pass"]) is None:
                continue  # no line of its own for the mint (`def f(): return g()`): not an edge that mints
            self.minted[id(function)] = edge

    def is_test(self, function: Function) -> bool:
        """A test function in a test file: the runner calls it, never with a budget, so a
        parameter would only be noise (its calls keep the rules' own fixes)."""
        return self._test_file and function.name.startswith("test")

    def _index(self, tree: ast.Module, module_scope: Scope) -> None:
        stack: List[Tuple[ast.AST, Scope]] = [(tree, module_scope)]
        while stack:
            node, scope = stack.pop()
            if isinstance(node, ast.Call):
                self.calls.append((node, scope))
                self.callee_of[id(node.func)] = node
            elif isinstance(node, ast.Name):
                self.names.append((node, scope))
                self.scope_at[id(node)] = scope
            elif isinstance(node, ast.Attribute):
                self.attributes.append((node, scope))
                self.scope_at[id(node)] = scope
            if isinstance(node, (*DEFS, ast.Lambda, ast.ClassDef)):
                inner = self.resolver.scope_of(node, scope)
                self.scope_of[id(node)] = inner
                body = [node.body] if isinstance(node, ast.Lambda) else node.body
                if isinstance(node, DEFS):
                    self.functions.append(node)
                    self.function_of[id(node)] = node
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


class OtherModules:
    """Functions of other modules of the project that take `budget_s`, read through the
    semantics layer (forwarding_facts.AcceptsBudget): the file on disk, or the text an earlier
    pass of this run gave it (thread_project.py). Built on the first call that may need it."""

    def __init__(self, module: ModuleIndex) -> None:
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
            self._semantics = FileSemantics(self.module)
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


def has_threaded_parameter(function: Function) -> bool:
    return any(arg.arg == PARAMETER for arg in function.args.kwonlyargs)


def threadable(function: Function, scope: Scope) -> bool:
    name = function.name
    if name.startswith("__") and name.endswith("__"):
        return False
    args = function.args
    if args.vararg is not None or args.kwarg is not None:
        return False
    parent = scope.parent
    if parent is None or len(parent.bindings().get(name, [])) != 1:
        return False  # overloads, redefinitions, conditional defs
    if isinstance(parent.node, ast.ClassDef) and interface_class(parent.node):
        return False  # implemented where the project may not look: a signature others follow
    for decorator in function.decorator_list:
        if not (isinstance(decorator, ast.Name) and decorator.id in _UNDERSTOOD_DECORATORS):
            return False
        if parent.lookup(decorator.id) is not None:
            return False  # `staticmethod` rebound to something else
    return True


def suppressed(source: SourceFile, line: int) -> bool:
    """A bare `# noqa` or one naming a DL code (another linter's `# noqa: E501` is no reason)."""
    codes = source.suppressed_codes(line)
    return codes is ALL_CODES or any(code.startswith("DL") for code in codes)


def _mints(function: Function) -> bool:
    """`budget_s = ...` among the body's own first statements (minting.py wrote it)."""
    for statement in function.body[:3]:
        inner = statement.body[0] if isinstance(statement, ast.Try) and statement.body else statement
        if (
            isinstance(inner, ast.Assign) and len(inner.targets) == 1
            and isinstance(inner.targets[0], ast.Name) and inner.targets[0].id == PARAMETER
        ):
            return True
    return False


def mentions_parameter(function: Function) -> bool:
    for node in walk_nodes(function):
        if isinstance(node, ast.Name) and node.id == PARAMETER:
            return True
        if isinstance(node, ast.arg) and node.arg == PARAMETER:
            return True
    return False



def forwardable(call: ast.Call, module: ModuleIndex) -> bool:
    if any(kw.arg is None or kw.arg == PARAMETER for kw in call.keywords):
        return False  # already passed, or maybe hidden in **kwargs
    if any(isinstance(a, ast.Starred) for a in call.args):
        return False
    return not suppressed(module.source, call.lineno)
