"""Every call of a name and every load of it as a value in one module, read from its `ast`
and keyed by the module's content: the table `Callers` looks callers up in. A callee is
resolved as far as the module itself can (a module-level name to its absolute name, `self.m()`
in a method to the class, `x.m()` for a local built by `App()` or a parameter annotated
`App`); what it cannot resolve is kept as "?".

A call also keeps what it passes (`arguments`), each argument as a small text a family can
read without the caller's tree (issue 32): a call of a name the module resolves, with its own
arguments (`time.time()`, `requests.Session()`, `aiohttp.ClientSession(timeout=_)`),
arithmetic on such values (`(time.time() + _)`), numbers, and a local assigned once inlined;
anything else is `_`, a keyword `name=...`, and `*`/`**` an argument list that cannot be read."""
from __future__ import annotations

import ast
import binascii
import json
import zlib
from typing import Dict, List, NamedTuple, Optional, Tuple, Union

from deadline_lint.semantics import store
from deadline_lint.semantics.arguments import describe_arguments
from deadline_lint.semantics.local.children import child_nodes
from deadline_lint.semantics.local.resolve import unwrap_optional
from deadline_lint.semantics.local.scopes import ASSIGN, IMPORT, OTHER, PARAM, Scope
from deadline_lint.semantics.modules import ModuleSource
from deadline_lint.semantics.session import current
from deadline_lint.semantics.summary import CLASS, HeldTrees, FUNCTIONS, content_key, summary_of

VERSION = 4
UNKNOWN = "?"


class Site(NamedTuple):
    """One use of a name in a module (a call of it, or a load of it as a value)."""

    within: Tuple[str, ...]  # the def it sits in: () module level, ("f",), ("C", "m"), ("f", "g")
    receiver: str  # "q:<name>" absolute, "s:<Class>", "c:<name of a class>", "a:<Class>:<attr>", "?"
    called: bool  # False: the function is handed on as a value
    handed: str  # the last name of the call taking the use (or its call) as an argument, "=X" for
    # an alias `X = f` in a class body or at module level, or ""
    dropped: bool  # ... and that call's result is dropped or kept on an attribute
    awaited: bool  # the use is an argument (at any depth of calls) of a call awaited there
    line: int  # where the use is
    arguments: Tuple[str, ...]  # a call's arguments as `describe` spells them; () for a value


# -- one module's uses, by last name ----------------------------------------------------------
# A module's table is kept packed, one text the same object in the memo and in the store's
# entry: a line per name (`name<TAB>sites as JSON`), compressed. Only the few names a family
# asks about are ever read back, and a large module's table as objects (a tuple a site) took
# hundreds of kilobytes, held for the rest of the run; packed it is a tenth of its JSON.
Table = str


class Uses:
    """The run's memo of `uses_of`, by content."""


def sites_of(module: ModuleSource, name: str) -> List[Site]:
    """Every call of `name` and load of it as a value in the module."""
    found = _sites(uses_of(module), name)
    if found is None:  # a stored entry of another shape: read from the tree again
        found = _sites(uses_of(module, fresh=True), name) or []
    return found


def _sites(table: Table, name: str) -> Optional[List[Site]]:
    try:
        text = zlib.decompress(binascii.a2b_base64(table)).decode("utf-8")
        at = text.find(f"\n{name}\t")
        if at == -1:
            return []
        start = at + len(name) + 2
        end = text.find("\n", start)
        return [
            Site(tuple(str(w) for w in s[0]), str(s[1]), bool(s[2]), str(s[3]), bool(s[4]), bool(s[5]), int(s[6]),
                 tuple(str(a) for a in s[7]))
            for s in json.loads(text[start:end if end != -1 else len(text)])
        ]
    except (binascii.Error, zlib.error, TypeError, IndexError, ValueError):
        return None


def _packed(uses: Dict[str, List[Site]]) -> Table:
    lines = "".join(
        f"\n{name}\t" + json.dumps(
            [[list(s.within), s.receiver, int(s.called), s.handed, int(s.dropped), int(s.awaited), s.line,
              list(s.arguments)] for s in sites],
            separators=(",", ":"),
        )
        for name, sites in uses.items()
    )
    return binascii.b2a_base64(zlib.compress(lines.encode("utf-8")), newline=False).decode("ascii")


def uses_of(module: ModuleSource, fresh: bool = False) -> Table:
    """Every call and value load in the module, by the last name it spells (once per content):
    packed as one text (`sites_of` reads a name's `Site`s). `fresh`: read from the tree, not
    the store."""
    key = content_key(module)
    memo: Dict[str, Table] = current().memo(Uses)
    found = memo.get(key) if not fresh else None
    if found is not None:
        return found
    field = f"callers@{VERSION}"
    stored = store.entry(key) if not fresh else None
    held = stored.get(field) if stored is not None else None
    if isinstance(held, str):
        found = held
    if found is None:
        parsed = getattr(module, "_parsed", True)
        tree = module.tree
        table = _Table(module, tree) if tree is not None else None
        uses = table.uses if table is not None else {}
        if table is not None:
            table.release()
        found = _packed(uses)
        if not parsed and module.rereadable and not _held(module):
            module.forget_tree()  # parsed for this table only: a held tree slows the collector
        store.put(key, field, found)
    memo[key] = found
    return found


class _Table:
    def __init__(self, module: ModuleSource, tree: ast.Module) -> None:
        self.summary = summary_of(module)
        self.uses: Dict[str, List[Site]] = {}
        self._parents: Dict[int, ast.AST] = {}
        self._scopes: List[Scope] = []
        self._walk(tree, self._scope(tree, None), (), None)

    def _scope(self, node: ast.AST, parent: Optional[Scope]) -> Scope:
        scope = Scope(node, parent)
        self._scopes.append(scope)
        return scope

    def release(self) -> None:
        """Each scope's bindings point back at it: cleared, the tree goes now, not when the
        cyclic collector (paused during a check) gets to it."""
        for scope in self._scopes:
            scope.clear_caches()
        self._scopes.clear()
        self._parents.clear()

    def _walk(self, node: ast.AST, scope: Scope, within: Tuple[str, ...], klass: Optional[str]) -> None:
        for child in child_nodes(node):
            self._parents[id(child)] = node
            self._node(child, scope, within, klass)

    def _node(self, node: ast.AST, scope: Scope, within: Tuple[str, ...], klass: Optional[str]) -> None:
        if isinstance(node, FUNCTIONS):
            for part in (*node.decorator_list, *_defaults(node.args)):
                self._parents[id(part)] = node
                self._node(part, scope, within, klass)
            method_of = klass if scope.kind == CLASS else None
            self._body(node, self._scope(node, scope), (*within, node.name), method_of)
        elif isinstance(node, ast.ClassDef):
            for part in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
                self._parents[id(part)] = node
                self._node(part, scope, within, klass)
            top = node.name if not within and scope.parent is None else None
            self._body(node, self._scope(node, scope), (*within, node.name), top)
        elif isinstance(node, ast.Lambda):
            self._walk(node, self._scope(node, scope), within, None)
        else:
            self._visit(node, scope, within, klass)
            self._walk(node, scope, within, klass)

    def _body(
        self, node: Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef], scope: Scope, within: Tuple[str, ...],
        klass: Optional[str],
    ) -> None:
        for stmt in node.body:
            self._parents[id(stmt)] = node
            self._node(stmt, scope, within, klass)

    def _visit(self, node: ast.AST, scope: Scope, within: Tuple[str, ...], klass: Optional[str]) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            name = node.id
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            name = node.attr
        else:
            return
        parent = self._parents.get(id(node))
        called = isinstance(parent, ast.Call) and parent.func is node
        if not called and not isinstance(parent, _HANDING_ON):
            return  # `a.b` on the way to `a.b.c`, or a value read, compared, printed: not handed on
        if isinstance(node, ast.Name) and not _module_level_or_unbound(node.id, scope, called):
            return  # a local variable: a function reaches it only through a use recorded elsewhere
        used: ast.AST = parent if called and parent is not None else node
        handed, dropped = self._argument_of(used)
        arguments = describe_arguments(parent, scope, self.summary) if called and isinstance(parent, ast.Call) else ()
        site = Site(
            within, self._receiver(node, scope, klass), called, handed, dropped, self._awaited(used), node.lineno,
            arguments,
        )
        self.uses.setdefault(name, []).append(site)

    def _awaited(self, node: ast.AST) -> bool:
        """`await run(partial(f, x))`: the use is handed to a call the code waits for."""
        inside = False
        while True:
            parent = self._parents.get(id(node))
            if isinstance(parent, ast.keyword):
                node, parent = parent, self._parents.get(id(parent))
            if isinstance(parent, ast.Await):
                return inside
            if not isinstance(parent, ast.Call) or parent.func is node:
                return False
            node, inside = parent, True

    def _argument_of(self, node: ast.AST) -> Tuple[str, bool]:
        parent = self._parents.get(id(node))
        if (
            isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1
            and isinstance(parent.targets[0], ast.Name)
            and isinstance(self._parents.get(id(parent)), (ast.Module, ast.ClassDef))
        ):
            return f"={parent.targets[0].id}", False
        if isinstance(parent, ast.keyword):
            parent = self._parents.get(id(parent))
        if not isinstance(parent, ast.Call) or parent.func is node:
            return "", False
        func = parent.func
        last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        holder = self._parents.get(id(parent))
        dropped = isinstance(holder, ast.Expr) or (
            isinstance(holder, (ast.Assign, ast.AnnAssign))
            and all(
                isinstance(t, ast.Attribute)
                for t in (holder.targets if isinstance(holder, ast.Assign) else [holder.target])
            )
        )
        return last, dropped

    def _receiver(self, node: Union[ast.Name, ast.Attribute], scope: Scope, klass: Optional[str]) -> str:
        summary = self.summary
        if summary is None:
            return UNKNOWN
        if isinstance(node, ast.Name):
            bindings = scope.lookup(node.id)
            if bindings and len(bindings) == 1 and bindings[0].scope.parent is None:
                found = summary.qualname_of(node)
                return f"q:{found}" if found else UNKNOWN
            return UNKNOWN
        head = node.value
        if isinstance(head, ast.Call):  # `App().run()`
            return _class_named(summary.qualname_of(head.func))
        if isinstance(head, ast.Name):
            bindings = scope.lookup(head.id)
            if not bindings or len(bindings) != 1:
                return UNKNOWN
            binding = bindings[0]
            if binding.scope.parent is None and binding.kind in (IMPORT, OTHER, ASSIGN):
                found = summary.qualname_of(node)
                return f"q:{found}" if found else UNKNOWN
            if klass is not None and _is_self(head.id, scope, binding):
                return f"s:{klass}"
            annotation = _declared(binding.annotation)
            if binding.kind == PARAM and annotation is not None:
                return _class_named(summary.qualname_of(unwrap_optional(annotation)))
            if binding.kind == ASSIGN and isinstance(binding.value, ast.expr):
                if annotation is not None:
                    return _class_named(summary.qualname_of(unwrap_optional(annotation)))
                built = _built(binding.value)
                return _class_named(summary.qualname_of(built.func)) if built is not None else UNKNOWN
            return UNKNOWN
        if isinstance(head, ast.Attribute) and isinstance(head.value, ast.Name) and klass is not None:
            bindings = scope.lookup(head.value.id)
            if bindings and len(bindings) == 1 and _is_self(head.value.id, scope, bindings[0]):
                return f"a:{klass}:{head.attr}"
        return UNKNOWN


def _held(module: ModuleSource) -> bool:
    known = current().state(HeldTrees).get(id(module))
    return known is not None and known[0] is module


def _defaults(args: ast.arguments) -> List[ast.expr]:
    return [d for d in (*args.defaults, *args.kw_defaults) if d is not None]


# Where a function read as a value goes on to be called by someone else.
_HANDING_ON = (
    ast.Call, ast.keyword, ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.Return, ast.Yield, ast.Tuple, ast.List,
    ast.Set, ast.Dict, ast.Starred, ast.IfExp, ast.Lambda, ast.BoolOp,
)


def _module_level_or_unbound(name: str, scope: Scope, called: bool) -> bool:
    bindings = scope.lookup(name)
    if not bindings:
        return called  # a builtin, or a star import: only a call might be ours
    return bindings[0].scope.parent is None


def _declared(annotation: Optional[ast.expr]) -> Optional[ast.expr]:
    """The type an annotation declares: `Final[T]` -> `T`; a bare `Final` declares none."""
    if isinstance(annotation, ast.Subscript):
        head = annotation.value
        if (head.attr if isinstance(head, ast.Attribute) else getattr(head, "id", "")) in ("Final", "ClassVar"):
            return annotation.slice
    bare = annotation.attr if isinstance(annotation, ast.Attribute) else getattr(annotation, "id", "")
    if bare in ("Final", "ClassVar"):
        return None
    return annotation


def _class_named(qualname: Optional[str]) -> str:
    return f"c:{qualname}" if qualname else UNKNOWN


def _built(value: ast.expr) -> Optional[ast.Call]:
    """`App(...)`, or the fallback of `given or App(...)`."""
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        value = value.values[-1]
    return value if isinstance(value, ast.Call) else None


def _is_self(name: str, scope: Scope, binding) -> bool:
    """`name` is the first parameter of the method (or classmethod) the use sits in."""
    function: Optional[Scope] = scope
    while function is not None and function.kind != "function":
        function = function.parent
    if function is None or function.enclosing_class is None or binding.scope is not function:
        return False
    node = function.node
    if not isinstance(node, FUNCTIONS) or not node.args.args or node.args.args[0].arg != name:
        return False
    return not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)


# -- the project's modules ------------------------------------------------------------------


def forget_call_sites() -> None:
    current().forget(Uses)
