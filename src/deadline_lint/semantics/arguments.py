"""What a call passes, as small texts that outlive the caller's tree (issue 32).

The call-site index (`call_sites`) keeps, for every call, one text per argument, so a family
can judge what every caller in the project passes a parameter without parsing the callers'
modules again: a resolved call with its arguments (`time.time()`,
`aiohttp.ClientSession(timeout=_)`), arithmetic on such values (`(time.time() + _)`), a number,
a module-level name by its absolute name, a local assigned once in the caller by its value;
anything else is `_`. Keywords are `name=<text>`; `*` and `**` stand for an argument list that
cannot be read. A call passing nothing the module resolves keeps none (`()`): what a family
asks of an argument (a clock read, a client built, a module-level tuple of exception types) is
always a resolved call or name, and most calls pass neither, so the index stays small. The texts parse as Python
expressions (`ast.parse(text, mode="eval")`), name only absolute dotted names and `_`, and
are cut to `_` past `MAX_TEXT` characters, so the store stays small and a reader meets no
surprise.
"""
from __future__ import annotations

import ast
import re
from typing import Optional, Tuple

from deadline_lint.semantics.local.scopes import ASSIGN, Scope

UNREAD = "_"
MAX_TEXT = 160
_DEPTH = 3  # calls and arithmetic nested deeper than this are `_`
_KEYWORD = re.compile(r"[A-Za-z_]\w*=(?!=)")  # `name=...`, as the readers split them
_BUILTINS = frozenset({"int", "float", "round"})
_OPERATORS = ((ast.Add, "+"), (ast.Sub, "-"), (ast.Mult, "*"), (ast.Div, "/"), (ast.FloorDiv, "//"))


def describe_arguments(call: ast.Call, scope: Scope, summary: object) -> Tuple[str, ...]:
    """One text per argument of `call` (positional first, then keywords), as the module
    spells them; `summary` resolves module-level names (a `ModuleSummary`, or None)."""
    parts = []
    for argument in call.args:
        parts.append("*" if isinstance(argument, ast.Starred) else describe(argument, scope, summary))
    for keyword in call.keywords:
        parts.append("**" if keyword.arg is None else f"{keyword.arg}={describe(keyword.value, scope, summary)}")
    if not any(_named(part.partition("=")[2] if _KEYWORD.match(part) else part) for part in parts):
        return ()  # nothing the module resolves: every reader needs a name or a call, kept small
    return tuple(parts)


def _named(text: str) -> bool:
    """The text names something the module resolves: a call, arithmetic on one, or a value."""
    return text not in (UNREAD, "*", "**") and not text[0].isdigit() and text != "-"


def describe(expr: ast.expr, scope: Scope, summary: object) -> str:
    text = _text(expr, scope, summary, 0)
    return text if len(text) <= MAX_TEXT else UNREAD


def _text(expr: ast.expr, scope: Scope, summary: object, depth: int) -> str:
    if depth > _DEPTH:
        return UNREAD
    if isinstance(expr, ast.Constant):
        value = expr.value
        return repr(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else UNREAD
    if isinstance(expr, ast.BinOp):
        op = next((spelled for kind, spelled in _OPERATORS if isinstance(expr.op, kind)), None)
        if op is None:
            return UNREAD
        left, right = _text(expr.left, scope, summary, depth + 1), _text(expr.right, scope, summary, depth + 1)
        return f"({left} {op} {right})"
    if isinstance(expr, ast.Call):
        callee = _module_name(expr.func, scope, summary)
        if callee is None:
            return UNREAD
        inner = [
            "*_" if isinstance(a, ast.Starred) else _text(a, scope, summary, depth + 1) for a in expr.args
        ] + [
            "**_" if k.arg is None else f"{k.arg}={_text(k.value, scope, summary, depth + 1)}" for k in expr.keywords
        ]
        return f"{callee}({', '.join(inner)})"
    if isinstance(expr, ast.Name):
        bindings = scope.lookup(expr.id)
        if bindings and len(bindings) == 1:
            binding = bindings[0]
            if binding.scope.parent is not None and binding.kind == ASSIGN and isinstance(binding.value, ast.expr):
                return _text(binding.value, binding.scope, summary, depth + 1)  # `started = time.time()`
    if isinstance(expr, (ast.Name, ast.Attribute)):
        return _module_name(expr, scope, summary) or UNREAD
    return UNREAD


def _module_name(expr: ast.expr, scope: Scope, summary: object) -> Optional[str]:
    """The absolute name `expr` spells, when its head is bound once at module level."""
    head = expr
    while isinstance(head, ast.Attribute):
        head = head.value
    if not isinstance(head, ast.Name) or summary is None:
        return None
    bindings = scope.lookup(head.id)
    if not bindings and head is expr and head.id in _BUILTINS:
        return head.id  # `int(...)`
    if bindings and (len(bindings) != 1 or bindings[0].scope.parent is not None):
        return None  # a local shadows it
    return summary.qualname_of(expr)  # type: ignore[attr-defined, no-any-return]


Place = Tuple[Optional[int], str]  # a parameter's position (None: keyword-only) and its name


def parameter_place(node: ast.AST, name: str, method: bool) -> Optional[Place]:
    """Where a call of the def gives the parameter `name`: its position among the arguments a
    caller writes (after `self` for a method) and its name; None when no call can give it."""
    args = node.args  # type: ignore[attr-defined]
    positional = [a.arg for a in [*args.posonlyargs, *args.args]]
    if method:
        if not positional:
            return None
        positional = positional[1:]
    if name in positional:
        return positional.index(name), name
    if any(a.arg == name for a in args.kwonlyargs):
        return None, name
    return None


def passed_at(arguments: Tuple[str, ...], place: Place) -> Optional[str]:
    """The text a call's argument texts give the parameter at `place`; None when an argument
    list (`*`, `**`) could hold it or no argument gives it."""
    if any(a in ("*", "**") for a in arguments):
        return None
    index, name = place
    positional = [a for a in arguments if not _KEYWORD.match(a)]
    if index is not None and index < len(positional):
        return positional[index]
    prefix = f"{name}="
    return next((a[len(prefix):] for a in arguments if a.startswith(prefix)), None)


def read_back(text: str) -> Optional[ast.expr]:
    """The expression an argument text spells; None for one that could not be read (`_`)."""
    if text == UNREAD:
        return None
    try:
        return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError):  # a text from a damaged or foreign store
        return None
