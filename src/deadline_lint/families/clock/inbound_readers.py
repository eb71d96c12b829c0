"""Functions of the checked module that return an inbound budget read: a helper such as
litellm's `_get_timeout_from_request(headers)`, which returns `float(headers.get(
"x-litellm-timeout"))`. A call of one is where the budget enters its caller, so DL204 judges
the caller's use of the value as if the header were read there.

Only this module's top-level functions and the methods of its top-level classes count (a
call names them as `helper(...)`, `self.helper(...)`, `cls.helper(...)` or
`Class.helper(...)`), and only a value a `return` hands back as it is or through local names
(`value = headers.get(...)`; `return float(value)`)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, NamedTuple, Optional, Tuple

from deadline_lint.families.clock.wire import WireValues, literal_key_read
from deadline_lint.semantics.local.function_body import function_body
from deadline_lint.semantics.local.scopes import Scope
from deadline_lint.semantics.summary import own_returns

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class Reader(NamedTuple):
    name: str  # the function's name, as a message shows it
    key: str  # the header it reads (normalised)
    read: ast.AST  # where it reads it
    scope: Scope  # the function's own scope, to judge what it does with the value


class InboundReaders:
    def __init__(self, ctx: "FileView") -> None:
        self._ctx = ctx
        self._wire = ctx.analysis(WireValues)
        # (class name or None, function name) -> the reader
        self._readers: Dict[Tuple[Optional[str], str], Reader] = {}
        module = ctx.module_scope
        for node in ctx.tree.body:
            if isinstance(node, _FUNCTIONS):
                self._consider(None, node, Scope(node, module))
            elif isinstance(node, ast.ClassDef):
                class_scope = Scope(node, module)
                for member in node.body:
                    if isinstance(member, _FUNCTIONS):
                        self._consider(node.name, member, Scope(member, class_scope))
        self.names = frozenset(name for _, name in self._readers)

    def _consider(self, owner: Optional[str], function: ast.AST, scope: Scope) -> None:
        returns = own_returns(function)
        if not returns:
            return
        body = function_body(scope)
        for node in (*body.nodes(ast.Subscript), *body.nodes(ast.Call)):
            if literal_key_read(node) is None:
                continue
            key = self._wire.header_read(node, scope)
            if key is None or not self._wire.is_budget_key(key):
                continue
            carries = self._wire.carrier(scope, node)
            if any(carries(value) for value in returns):
                name = function.name  # type: ignore[attr-defined]
                self._readers[(owner, name)] = Reader(name, key, node, scope)
                return

    def reader_at(self, call: ast.Call, scope: Scope) -> Optional[Reader]:
        """The reader a call in `scope` names, or None."""
        func = call.func
        if isinstance(func, ast.Name):
            bindings = scope.lookup(func.id) or []
            if len(bindings) == 1 and bindings[0].scope.parent is None:
                return self._readers.get((None, func.id))
            return None
        if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
            return None
        receiver = func.value.id
        if receiver in ("self", "cls"):
            klass = _enclosing_class(scope)
            return self._readers.get((klass, func.attr)) if klass is not None else None
        return self._readers.get((receiver, func.attr))


def _enclosing_class(scope: Scope) -> Optional[str]:
    owner = scope.enclosing_class
    if owner is None or owner.parent is None or owner.parent.parent is not None:
        return None  # only methods of top-level classes are readers
    return owner.node.name  # type: ignore[attr-defined]
