"""A project helper that starts its argument as a background task (DL403, DL302's callers).

`ProjectLifecycle` takes a coroutine handed to `create_task` / `ensure_future` (and the other
`outside_requests.background` APIs) and dropped or kept as running on its own, by the name
of the call it is handed to. The same coroutine handed to a project helper that does just that
(`spawn(serve(conn))`, `self._spawn(serve(conn))`, `run_in_background(serve, conn)`) must get
the same verdict: the helper is looked up where it is called, and counts when its body hands
one of its parameters, or a call of one, to such an API. One hop, read from the helper's own
tree; a helper that cannot be found or read is no helper (the caller is then judged as before).
"""
from __future__ import annotations

import ast
from typing import FrozenSet, Optional, Tuple

from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.semantics.local.expressions import last_name
from deadline_lint.semantics.modules import ModuleSource
from deadline_lint.semantics.summary import CLASS, FUNCTION, Names, Symbol, summary_of, tree_of

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def hands_to_background(
    names: Names, module: ModuleSource, within: Tuple[str, ...], handed: str, background: FrozenSet[str]
) -> bool:
    """`handed` (the last name of the call a use is an argument of, in `module`, in the def
    at `within`) is a project helper whose body starts its argument in the background."""
    if not handed or handed.startswith("=") or handed in background:
        return False
    helper = _helper(names, module, within, handed)
    if helper is None:
        return False
    tree = tree_of(helper.module)
    node = tree.node(helper.path) if tree is not None else None
    return isinstance(node, _FUNCTIONS) and _starts_a_parameter(node, background)


def _helper(names: Names, module: ModuleSource, within: Tuple[str, ...], handed: str) -> Optional[Symbol]:
    summary = summary_of(module)
    if summary is None:
        return None
    if within and summary.kinds.get(within[0]) == CLASS:  # `self._spawn(...)` in a method
        members = summary.classes[within[0]].members
        if members.get(handed) == FUNCTION:
            return Symbol(module, (within[0], handed), FUNCTION)
    found = names.symbol(f"{module.name}.{handed}") if module.name else None  # its own def, or imported
    return found if found is not None and found.is_function else None


def _starts_a_parameter(function: Function, background: FrozenSet[str]) -> bool:
    args = function.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    if args.vararg is not None:
        params.add(args.vararg.arg)
    for node in ast.walk(function):
        if not isinstance(node, ast.Call) or last_name(node.func) not in background:
            continue
        for argument in node.args[:1]:
            inner = argument.func if isinstance(argument, ast.Call) else argument  # `coro` or `fn(*args)`
            if isinstance(inner, ast.Name) and inner.id in params:
                return True
    return False
