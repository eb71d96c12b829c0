"""Which functions `--thread-budget` may give a `budget_s` parameter with no default.

A default budget mints time: every caller that omits it starts a new total below the edge. So
the parameter is required, and a required parameter is safe only where every call of the
function passes it after the run. A function joins the threaded set only when:

- every reference to it in its module is the callee of a call the run forwards (a plain
  call from a function that has a budget or is threaded itself, the keyword insertable);
  a function passed as a value, decorated, listed in `__all__` or called at module level is
  left alone;
- a method joins only with every method of that name in the module's classes, and its calls
  run a family thread_methods.py can name (on `self` only with unsafe fixes);
- another file of the project that spells its name (a word test: an importer, a subclass
  overriding it in another package, an abstract base or `Protocol` declaring it, a test, a
  config naming an entry point) is in the same `fix` run and names it only by importing it
  and calling it from a function that has a budget or is threaded in a later pass
  (thread_elsewhere.py); a method or nested function named elsewhere, so a method with a
  common name (`get`), stays unthreaded: precision first;
- it is not public API: defined in a package's `__init__` without a leading underscore,
  spelled by one (a re-export: for a method, its class's name), listed in its module's
  `__all__`, or named by the profile's `fix.public_api`;
- it is reached from a function that has a budget (the edge), through threaded callers.

The set is the greatest one closed under these conditions: start from every proposal and drop
members until nothing changes.
"""
from __future__ import annotations

import ast
import os
from typing import Dict, Iterator, List, Optional, Set, Tuple

from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.families.outbound.fixes.thread_elsewhere import Elsewhere, Forwards
from deadline_lint.families.outbound.fixes.thread_index import (
    DEFS,
    PARAMETER,
    ModuleIndex,
    has_threaded_parameter,
    mentions_parameter,
    suppressed,
    threadable,
)
from deadline_lint.semantics.local.scopes import FUNCTION, IMPORT, Scope


def required_parameter_set(
    module: ModuleIndex, proposed: Dict[int, Function], elsewhere: Elsewhere, depth: int = 0,
) -> Dict[int, Function]:
    """The greatest subset of `proposed` (functions that would get the parameter) that can
    take it with no default, so that no call breaks and no caller mints time."""
    members = dict(proposed)
    reached_elsewhere: Set[int] = set()
    for key, function in list(members.items()):
        verdict = _callers_elsewhere(function, module, elsewhere, depth)
        if verdict is None:
            del members[key]
        elif verdict:
            reached_elsewhere.add(key)
    while True:
        before = len(members)
        for key in [k for k, f in members.items() if not _every_call_forwards(f, members, module, elsewhere.forwards)]:
            del members[key]
        reached = _reached_from_a_budget(members, module, reached_elsewhere)
        members = {k: f for k, f in members.items() if k in reached}
        if len(members) == before:
            return members


def caller_would_thread(module: ModuleIndex, caller: Function, elsewhere: Elsewhere, depth: int) -> Optional[bool]:
    """A caller in another module with no budget it can forward: its own module's pass threads
    it (True) or not (None), by the rules above."""
    if not proposable_caller(module, caller):
        return None
    chosen = required_parameter_set(module, {id(caller): caller}, elsewhere, depth)
    return True if id(caller) in chosen else None


def proposable_caller(module: ModuleIndex, caller: Function) -> bool:
    """A caller that its module's pass proposes to thread once a callee takes the parameter
    (thread_budget._callers_to_thread): the one test that pass and this judgment share. A
    caller with a budget of its own is never proposed, even one whose budget has no timeout
    expression to forward (`t = accessor() - 0.05`): it neither forwards nor is threaded."""
    return (
        id(caller) not in module.minted  # an edge mints the budget it forwards
        and not has_threaded_parameter(caller)
        and module.budgets.budget_of(module.scope_of[id(caller)]) is None
        and may_change(caller, module)
    )


def may_change(function: Function, module: ModuleIndex) -> bool:
    """Its signature may change at all (thread_index's prove-or-bail predicates)."""
    return (
        threadable(function, module.scope_of[id(function)])
        and not suppressed(module.source, function.lineno)
        and not mentions_parameter(function)
        and not module.is_test(function)
    )


def _callers_elsewhere(function: Function, module: ModuleIndex, elsewhere: Elsewhere, depth: int) -> Optional[bool]:
    """None when the function is public or named where this run cannot pass it the budget;
    else whether a caller in another module reaches it from a budget."""
    name = function.name
    scope = module.scope_of[id(function)]
    klass = scope.enclosing_class
    dotted = f"{klass.node.name}.{name}" if klass is not None and isinstance(klass.node, ast.ClassDef) else name
    if any(entry == dotted or entry.endswith("." + dotted) for entry in elsewhere.public_api):
        return None
    exported = dotted.split(".")[0]
    if exported in _all_names(module.tree):
        return None
    path = module.source.path
    if os.path.basename(path) == "__init__.py" and not exported.startswith("_"):
        return None
    files = elsewhere.words.files_naming(path, name)
    if files is None:
        return None
    exporters = files if exported == name else elsewhere.words.files_naming(path, exported)
    if exporters is None or (not exported.startswith("_") and any(_package_init(f) for f in exporters)):
        return None  # a package's `__init__` spells it (or its class): a name users may call
    if not files:
        return False
    if klass is not None or scope.parent is None or scope.parent.kind == FUNCTION:
        return None  # a method or a nested function named in another file: not followed
    return elsewhere.callers_forward(os.path.abspath(path), function, files, depth)


def _package_init(path: str) -> bool:
    return os.path.basename(path) in ("__init__.py", "__init__.pyi")


def _all_names(tree: ast.Module) -> Set[str]:
    names: Set[str] = set()
    for statement in tree.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else (
            [statement.target] if isinstance(statement, (ast.AugAssign, ast.AnnAssign)) else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            for node in ast.walk(statement):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    names.add(node.value)
    return names


def _references(function: Function, module: ModuleIndex) -> Optional[List[Tuple[ast.expr, Scope]]]:
    """Every place the module names `function`; None when one cannot be told apart (a method's
    name used as a plain name, which may be a class-level alias)."""
    name = function.name
    if module.scope_of[id(function)].enclosing_class is not None:
        if any(node.id == name for node, _ in module.names):
            return None
        modules = _imported_modules(module.tree)
        return [
            (node, scope) for node, scope in module.attributes
            if node.attr == name and not _module_attribute(node, scope, modules)
        ]
    found: List[Tuple[ast.expr, Scope]] = []
    for node, scope in module.names:
        if node.id == name and any(b.value is function for b in scope.lookup(name) or ()):
            found.append((node, scope))
    return found


def _module_attribute(node: ast.Attribute, scope: Scope, modules: Set[str]) -> bool:
    """`requests.get`: an attribute of a module bound by `import`, never a method of ours."""
    if not isinstance(node.value, ast.Name) or node.value.id not in modules:
        return False
    bindings = scope.lookup(node.value.id)
    return bool(bindings) and all(b.kind == IMPORT for b in bindings or ())


def _imported_modules(tree: ast.Module) -> Set[str]:
    """Names only ever bound by a plain `import` statement (modules)."""
    modules: Set[str] = set()
    others: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update((a.asname or a.name.split(".")[0]) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            others.update((a.asname or a.name) for a in node.names)
    return modules - others


def _every_call_forwards(
    function: Function, members: Dict[int, Function], module: ModuleIndex, forwards: Forwards,
) -> bool:
    name = function.name
    method = module.scope_of[id(function)].enclosing_class is not None
    if method and any(id(m) not in members and not has_threaded_parameter(m) for m in _same_named(name, module)):
        return False  # a method goes with every method of its name, or not at all
    references = _references(function, module)
    if references is None:
        return False
    for node, scope in references:
        call = module.callee_of.get(id(node))
        if call is None:
            return False  # passed as a value, a decorator, a rebinding: a call we cannot update
        if any(kw.arg == PARAMETER for kw in call.keywords):
            continue
        if not forwards(module, call, scope, members):
            return False  # the forwarding step (thread_budget) would not give this call the keyword
    return True


def _reached_from_a_budget(members: Dict[int, Function], module: ModuleIndex, seeds: Set[int]) -> Set[int]:
    """Members some chain of calls reaches from a function that had a budget before the run
    (in this module, or in another: `seeds`): threading a function nobody with a budget calls
    would only move the minting up."""
    reached: Set[int] = {key for key in seeds if key in members}
    changed = True
    while changed:
        changed = False
        for key, function in members.items():
            if key in reached:
                continue
            for _, scope in _references(function, module) or ():
                caller = scope.node
                if (
                    id(caller) in reached or id(caller) in module.minted
                    or (isinstance(caller, DEFS) and has_threaded_parameter(caller))
                    or (
                        scope.kind == FUNCTION and id(caller) not in members
                        and module.budgets.budget_of(scope) is not None
                    )
                ):
                    reached.add(key)
                    changed = True
                    break
    return reached


def _same_named(name: str, module: ModuleIndex) -> Iterator[Function]:
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, DEFS) and statement.name == name:
                    yield statement


def same_named_methods(function: Function, module: ModuleIndex) -> List[Function]:
    """The other methods of `function`'s name in the module's classes (they go together)."""
    if module.scope_of[id(function)].enclosing_class is None:
        return []
    return [m for m in _same_named(function.name, module) if m is not function]
