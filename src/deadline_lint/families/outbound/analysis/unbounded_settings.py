"""Module-level settings that are unbounded unless configured: `TIMEOUT = int(raw) if raw
else None`, `TIMEOUT = None` bound in a `try`/`except` beside a number. A call given such a
name waits forever whenever the setting is not set, which is the default.

Only names every binding of which is a module-level assignment count (an import, a
parameter or a `global` rebinding in some function makes the value unknown: stay quiet), and
a binding counts when its value is `None` or infinite, or a conditional whose branch taken
when the environment sets nothing is (its test an environment read with a default, followed
through module-level names). The same holds for such a setting imported from another module of the project
(`from app.env import AIOHTTP_CLIENT_TIMEOUT`, open-webui): `UnboundedSetting` is the fact,
read from the defining module alone and memoised by its content."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterator, List, NamedTuple, Optional

from deadline_lint.semantics.facts import Fact, Local, locals_of
from deadline_lint.semantics.file import FileSemantics
from deadline_lint.semantics.local.scopes import ASSIGN, IMPORT, Binding, Scope
from deadline_lint.semantics.summary import ModuleTree

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_INFINITE = ("inf", "infinity")
_ENV_READS = frozenset({"os.getenv", "os.environ.get", "getenv", "environ.get"})
_MAX_DEPTH = 6


class Unset(NamedTuple):
    """Why a setting is unbounded: the value as written, its line and (when it is defined in
    another module) that module's name."""

    text: str
    line: int
    module: str = ""

    def shown(self) -> str:
        where = f"{self.module}, line {self.line}" if self.module else f"line {self.line}"
        return f"`{self.text}`, {where}"


class UnboundedSetting(Fact[tuple]):
    """A project module's top-level setting that is unbounded unless configured; payload:
    (the value as written, its line)."""

    name = "outbound.unbounded_setting"
    version = 1

    def may_hold(self, text: str) -> bool:
        return "None" in text or "inf" in text

    def locals(self, module: ModuleTree) -> Dict[str, Local]:
        found: Dict[str, Local] = {}
        for name, bindings in module.scope.bindings().items():
            value = _unset_value(name, bindings)
            if value is not None:
                text = ast.get_source_segment(module.module.text, value) or "None"
                found[name] = Local((_shortened(text), value.lineno), name)
        return found


UNBOUNDED_SETTING = UnboundedSetting()


def setting_unset(expr: ast.expr, ctx: "FileView") -> Optional[Unset]:
    """Why the setting `expr` names (of this module, or imported from the project) is
    unbounded when not configured, or None."""
    local = unbounded_setting(expr, ctx.scope)
    if local is not None:
        return Unset(_shortened(ctx.source.segment(local)), local.lineno)
    if not isinstance(expr, ast.Name):
        return None
    bindings = ctx.scope.lookup(expr.id)
    if not bindings or len(bindings) != 1 or bindings[0].kind != IMPORT or bindings[0].scope.parent is not None:
        return None
    semantics = ctx.analysis(FileSemantics)
    qualname = semantics.summary.qualname_of(expr)
    if qualname is None or not semantics.names.is_project_name(qualname):
        return None
    found = semantics.names.defining(qualname)
    if found is None or len(found[1]) != 1:
        return None
    module, (name,) = found
    if not UNBOUNDED_SETTING.may_hold(module.text):
        return None
    held = locals_of(UNBOUNDED_SETTING, module).get(name)
    if held is None:
        return None
    payload: tuple = held.payload  # type: ignore[assignment]
    return Unset(str(payload[0]), int(payload[1]), module.name)


def _shortened(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def unbounded_setting(expr: ast.expr, scope: Scope) -> Optional[ast.expr]:
    """The value (`None`, `inf`, or the conditional holding one) that makes the module-level
    setting `expr` names unbounded in some configuration, or None."""
    if not isinstance(expr, ast.Name):
        return None
    return _unset_value(expr.id, scope.lookup(expr.id) or [])


def _unset_value(name: str, bindings: List[Binding]) -> Optional[ast.expr]:
    """The first binding's value that leaves the setting unbounded when nothing is
    configured, when every binding of `name` is a module-level assignment no function
    rebinds with `global`."""
    if not bindings or any(b.kind != ASSIGN or b.scope.parent is not None for b in bindings):
        return None
    if name in _rebound_globally(bindings[0].scope):
        return None
    for binding in bindings:
        if _unbounded_branch(binding.value, binding.scope) is not None:  # type: ignore[arg-type]
            return binding.value  # type: ignore[return-value]
    return None


def _unbounded_branch(value: ast.expr, scope: Scope, depth: int = 0) -> Optional[ast.expr]:
    """`None` or infinity as the setting is when nothing is configured: a conditional counts
    only when its test is an environment read whose default picks the unbounded branch
    (`int(raw) if raw else None` with `raw = os.getenv("T", "")`, not with `"10"`)."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, ast.Constant):
        return value if value.value is None or value.value == float("inf") else None
    if isinstance(value, ast.IfExp):
        taken = _truthiness(value.test, scope, depth + 1)
        if taken is None:
            return None  # which branch a run takes is not known: stay quiet
        return _unbounded_branch(value.body if taken else value.orelse, scope, depth + 1)
    if (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "float"
        and len(value.args) == 1 and isinstance(value.args[0], ast.Constant)
        and isinstance(value.args[0].value, str) and value.args[0].value.strip().lower() in _INFINITE
    ):
        return value
    return None


def _truthiness(test: ast.expr, scope: Scope, depth: int) -> Optional[bool]:
    """Whether `test` holds when nothing is configured, or None when it cannot be told."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _truthiness(test.operand, scope, depth + 1)
        return None if inner is None else not inner
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.Name):
        bindings = scope.lookup(test.id) or []
        if len(bindings) != 1 or bindings[0].kind != ASSIGN or bindings[0].scope.parent is not None:
            return None
        return _truthiness(bindings[0].value, scope, depth + 1)  # type: ignore[arg-type]
    if isinstance(test, ast.Call) and _dotted(test.func) in _ENV_READS and test.args:
        default = test.args[1] if len(test.args) > 1 else None
        for keyword in test.keywords:
            if keyword.arg == "default":
                default = keyword.value
        if default is None:
            return False  # no default: None when the variable is not set
        return _truthiness(default, scope, depth + 1)
    return None


def _dotted(expr: ast.expr) -> str:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return f"{_dotted(expr.value)}.{expr.attr}"
    return ""


_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(tree: ast.AST) -> Iterator[ast.AST]:
    """Every statement of a tree (and its handlers and match cases), never an expression: a
    `global` can only be one, and expressions are most of a tree's nodes."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for field in _STATEMENT_LISTS:
            children = getattr(node, field, None)
            if isinstance(children, list):
                stack.extend(children)


def _rebound_globally(module: Scope) -> FrozenSet[str]:
    """Names some function rebinds with `global` (a configure step sets them later)."""
    found = module.facts.get("settings.global_names")
    if found is None:
        globals_ = (node for node in _statements(module.node) if isinstance(node, ast.Global))
        found = frozenset(name for node in globals_ for name in node.names)
        module.facts["settings.global_names"] = found
    return found  # type: ignore[return-value]
