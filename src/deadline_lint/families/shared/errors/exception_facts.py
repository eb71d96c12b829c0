"""The exception vocabulary's project fact: a top-level name bound to a tuple (list, set) of
exception classes in a project module (`RETRYABLE = (requests.Timeout, ConnectionError)`), so
that `except errors.RETRYABLE:` in another module is judged by what the tuple holds, and the
finding lands on the name where the reader is."""
from __future__ import annotations

import ast
import builtins
from typing import Optional, Tuple

from deadline_lint.semantics.facts import Fact, Local
from deadline_lint.semantics.summary import ModuleTree

_BUILTINS = frozenset(dir(builtins))
# Payload: each element's absolute class name, None for one that cannot be resolved.
Classes = Tuple[Optional[str], ...]


class ExceptionTuple(Fact[Classes]):
    name = "exceptions.tuple"
    version = 1

    def value(self, module: ModuleTree, name: str, expr: ast.expr) -> Optional[Local]:
        if not isinstance(expr, (ast.Tuple, ast.List, ast.Set)) or not expr.elts:
            return None
        classes = tuple(class_name(module, element) for element in expr.elts)
        return Local(classes, name)


def class_name(module: ModuleTree, element: ast.expr, shadowed: Tuple[str, ...] = ()) -> Optional[str]:
    """The exception class `element` names at module level (a builtin by its bare name), or
    None; a name `shadowed` by a local binding names nothing known."""
    if isinstance(element, ast.Name) and element.id in shadowed:
        return None
    qualname = module.qualname_of(element, shadowed)
    if qualname is not None:
        return qualname
    if isinstance(element, ast.Name) and element.id in _BUILTINS and element.id not in module.summary.kinds:
        return element.id
    return None


EXCEPTION_TUPLE = ExceptionTuple()
