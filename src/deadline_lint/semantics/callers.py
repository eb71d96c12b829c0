"""Who calls a project function or method, within its project (family-neutral).

A family asks `Callers(names).of(symbol)` about one project def (`pkg.db.Client.connect`) and
gets every place in the project's modules (test modules left out) that calls it or may: the
def the call sits in (its path in that module: `("f",)`, `("C", "m")`, `()` for module-level
code), whether it is a call or the function handed on as a value (which escapes: anyone may
call it later), and the call that takes it as an argument (`create_task(self._run())`).

What a module says is read from its `ast` alone, never importing it: for every call and every
load of a name or attribute, how its callee is spelled, resolved as far as the module itself
can (a module-level name to its absolute name, `self.m()` / `cls.m()` in a method to the
class, `x.m()` for a local built by `App()` or a parameter annotated `App`, `self.app.m()`).
That table is keyed by the module's content, like the facts, and only modules whose text holds
the method's name are parsed. The query resolves the spellings across modules: one that names
another def is no caller; one that cannot be resolved (`obj.connect()` on an unknown
receiver) may be, and is kept, so that a family deciding "only start-up code calls this" never
overlooks a caller it could not type.

None answers "cannot be known": the file is in no project, or the project has more than
`MAX_FILES` modules to look through. The answer depends on every module of the project, so
the folders listed and the files read are recorded for the results cache (`consulted`).
"""
from __future__ import annotations

import ast
import os
from bisect import bisect_right
from typing import Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

from deadline_lint.semantics import store
from deadline_lint.semantics.local.children import child_nodes
from deadline_lint.semantics.local.resolve import unwrap_optional
from deadline_lint.semantics.local.scopes import ASSIGN, IMPORT, OTHER, PARAM, Scope
from deadline_lint.semantics.modules import ModuleSource, ProjectModules, place_of, read_module_text
from deadline_lint.semantics.receivers import Receivers
from deadline_lint.semantics.summary import _TREES, CLASS, FUNCTIONS, Names, Symbol, content_key, summary_of

MAX_FILES = 5000  # a project with more modules than this: callers unknown
VERSION = 2
_SKIPPED_FOLDERS = frozenset({
    "node_modules", "__pycache__", "site-packages", "venv", "env", "build", "dist",
    "tests", "test", "testing",
})
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


class Caller(NamedTuple):
    module: ModuleSource
    site: Site
    certain: bool  # resolved to the def asked about (False: a spelling that may reach it)


def is_test_path(path: str) -> bool:
    parts = path.replace(os.sep, "/").split("/")
    name = parts[-1]
    return (
        name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py")
        or any(p in ("tests", "test", "testing") for p in parts[:-1])
    )


# -- one module's uses, by last name ----------------------------------------------------------
# Kept as plain tuples of strings and bools: the cyclic collector untracks those, where it
# would walk a NamedTuple (or a list) after every file for the rest of the run.
Table = Dict[str, Tuple[Tuple[object, ...], ...]]
_TABLES: Dict[str, Table] = {}


def uses_of(module: ModuleSource) -> Table:
    """Every call and value load in the module, by the last name it spells (once per content):
    each a `Site`'s fields."""
    key = content_key(module)
    found = _TABLES.get(key)
    if found is not None:
        return found
    field = f"callers@{VERSION}"
    stored = store.entry(key)
    if stored is not None and isinstance(stored.get(field), dict):
        try:
            found = {str(n): tuple((tuple(s[0]), str(s[1]), bool(s[2]), str(s[3]), bool(s[4]), bool(s[5])) for s in v)
                     for n, v in stored[field].items()}
        except (TypeError, IndexError, ValueError):
            found = None
    if found is None:
        parsed = getattr(module, "_parsed", True)
        tree = module.tree
        table = _Table(module, tree) if tree is not None else None
        uses = table.uses if table is not None else {}
        if table is not None:
            table.release()
        found = {n: tuple(tuple(s) for s in v) for n, v in uses.items()}
        if not parsed and module.rereadable and not _held(module):
            module.forget_tree()  # parsed for this table only: a held tree slows the collector
        store.put(key, field, {n: [[list(s[0]), *s[1:]] for s in v] for n, v in found.items()})  # type: ignore[call-overload]
    _TABLES[key] = found
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

    def _body(self, node: ast.AST, scope: Scope, within: Tuple[str, ...], klass: Optional[str]) -> None:
        for stmt in node.body:  # type: ignore[attr-defined]
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
        site = Site(within, self._receiver(node, scope, klass), called, handed, dropped, self._awaited(used))
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

    def _receiver(self, node: ast.expr, scope: Scope, klass: Optional[str]) -> str:
        summary = self.summary
        if summary is None:
            return UNKNOWN
        if isinstance(node, ast.Name):
            bindings = scope.lookup(node.id)
            if bindings and len(bindings) == 1 and bindings[0].scope.parent is None:
                found = summary.qualname_of(node)
                return f"q:{found}" if found else UNKNOWN
            return UNKNOWN
        head = node.value  # type: ignore[attr-defined]
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
    known = _TREES.get(id(module))
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
            return annotation.slice  # type: ignore[return-value]
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
class _Listing(NamedTuple):
    files: Tuple[str, ...]  # every module file (test modules left out)
    folders: Tuple[str, ...]  # every folder listed


_LISTINGS: Dict[Tuple[str, Tuple[str, ...]], Optional[_Listing]] = {}
_MATCHES: Dict[Tuple[str, Tuple[str, ...], str, bool], Tuple[str, ...]] = {}
_CONSULTED: List[Set[Tuple[str, Tuple[str, ...]]]] = [set()]


def _listing(modules: ProjectModules) -> Optional[_Listing]:
    key = (modules.root, modules.search_paths)
    if key in _LISTINGS:
        return _LISTINGS[key]
    files: List[str] = []
    folders: List[str] = []
    seen: Set[str] = set()
    found: Optional[_Listing] = None
    try:
        for top in (modules.root, *modules.search_paths):
            for folder, subfolders, names in os.walk(top):
                if folder in seen:
                    subfolders[:] = []
                    continue
                seen.add(folder)
                folders.append(folder)
                subfolders[:] = sorted(
                    s for s in subfolders if not s.startswith(".") and s not in _SKIPPED_FOLDERS
                    and os.path.join(folder, s) not in seen
                )
                files.extend(
                    os.path.join(folder, n) for n in sorted(names) if n.endswith(".py") and not is_test_path(n)
                )
                if len(files) > MAX_FILES:
                    raise OverflowError
        found = _Listing(tuple(files), tuple(folders))
    except (OSError, OverflowError):
        found = None
    _LISTINGS[key] = found
    return found


class _Texts(NamedTuple):
    """Every module text of one project joined, to find a name in all at once: as UTF-8 (one
    byte per character of most code, where a text holding one emoji takes four per
    character as a `str`)."""

    joined: bytes
    starts: List[int]  # where each file's text begins in `joined`
    files: Tuple[str, ...]


_TEXTS: List[Optional[Tuple[Tuple[str, Tuple[str, ...]], _Texts]]] = [None]  # one project at a time
MAX_HELD_TEXT = 64 * 1024 * 1024  # a larger project's texts are read again for each name


def _texts(key: Tuple[str, Tuple[str, ...]], listing: _Listing) -> Optional[_Texts]:
    held = _TEXTS[0]
    if held is not None and held[0] == key:
        return held[1]
    parts: List[bytes] = []
    starts: List[int] = []
    size = 0
    for path in listing.files:
        data = (read_module_text(path) or "").encode("utf-8", "surrogatepass")
        starts.append(size)
        parts.append(data)
        size += len(data) + 1
        if size > MAX_HELD_TEXT:
            return None
    found = _Texts(b"\0".join(parts), starts, listing.files)
    _TEXTS[0] = (key, found)
    return found


def _holding(modules: ProjectModules, listing: _Listing, name: str, method: bool) -> Tuple[str, ...]:
    """The project's module files whose text spells `name` as a word (`.name` for a method)."""
    key = (modules.root, modules.search_paths, name, method)
    found = _MATCHES.get(key)
    if found is None:
        texts = _texts(key[:2], listing)
        spelled = name.encode("utf-8", "surrogatepass")
        held: List[str] = []
        if texts is not None:
            for at in _spelled(texts.joined, spelled, method):
                index = bisect_right(texts.starts, at) - 1
                if not held or held[-1] != texts.files[index]:
                    held.append(texts.files[index])
        else:
            for path in listing.files:
                text = read_module_text(path)
                if text is None or name not in text:
                    continue
                if next(_spelled(text.encode("utf-8", "surrogatepass"), spelled, method), None) is not None:
                    held.append(path)
        found = _MATCHES[key] = tuple(held)
    return found


def _spelled(data: bytes, name: bytes, method: bool) -> Iterator[int]:
    """Where UTF-8 `data` spells `name` as a whole word (after a `.` for a method; a byte of
    a non-ASCII character counts as a letter): `bytes.find`, as a regular expression starting
    with `\\b` scans far slower."""
    at = data.find(name)
    size = len(name)
    while at != -1:
        back = at - 1
        while method and back >= 0 and data[back] in _BLANK_BYTES:
            back -= 1
        before = data[back] if back >= 0 else 32
        after = data[at + size] if at + size < len(data) else 32
        whole = not _word_byte(after)
        if whole and (before == 46 if method else not _word_byte(before)):  # 46: "."
            yield at
        at = data.find(name, at + size)


_BLANK_BYTES = frozenset(b" \t\r\n\\")


def _word_byte(byte: int) -> bool:
    return byte >= 128 or chr(byte).isalnum() or byte == 95  # 95: "_"


def consulted() -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """The files and folders the callers asked about since `start` depend on."""
    files: Set[str] = set()
    folders: Set[str] = set()
    for key in _CONSULTED[0]:
        listing = _LISTINGS.get(key)
        if listing is not None:
            files.update(listing.files)
            folders.update(listing.folders)
    return tuple(sorted(files)), tuple(sorted(folders))


def start() -> None:
    _CONSULTED[0] = set()


def forget_callers() -> None:
    _TABLES.clear()
    _LISTINGS.clear()
    _MATCHES.clear()
    _TEXTS[0] = None


# -- the question -----------------------------------------------------------------------------
class Callers:
    """Per file: who calls a project def, across its project."""

    def __init__(self, names: Names) -> None:
        self.names = names
        self.receivers = Receivers(names)

    def of(self, symbol: Symbol) -> Optional[List[Caller]]:
        if not symbol.is_function or not symbol.path:
            return None
        name = symbol.path[-1]
        if name.startswith("__") and name.endswith("__"):
            return None  # called by the language (`App()`, `a + b`), not by name
        project = self.names.modules
        if project is None:
            return None
        listing = _listing(project)
        if listing is None:
            return None
        _CONSULTED[0].add((project.root, project.search_paths))
        from deadline_lint.semantics import modules as places

        places._CONSULTED[0] = True  # the answer depends on other files
        found: List[Caller] = []
        for module in self._modules(project, listing, symbol):
            for raw in uses_of(module).get(name, ()):
                site = Site(*raw)  # type: ignore[arg-type]
                verdict = self._reaches(module, site, symbol)
                if verdict is not False:
                    found.append(Caller(module, site, verdict is True))
        return found

    def _modules(self, project: ProjectModules, listing: _Listing, symbol: Symbol) -> Iterator[ModuleSource]:
        """The modules that may use the def: a method is called as `x.name(...)` outside its
        class; a function, and anything in the def's own module (a class-body alias
        `other = name`), by the name alone."""
        name = symbol.path[-1]
        own = self.names.own
        located = os.path.abspath(own.path) if own.path else ""
        defining = symbol.module.path
        for path in _holding(project, listing, name, len(symbol.path) == 2):
            if path in (located, defining):
                continue
            place = place_of(path)
            module = project.module(place[0]) if place is not None and place[0] else None
            if module is not None and module.path == path:
                yield module
        if symbol.module is not own and name in symbol.module.text:
            yield symbol.module
        if name in own.text:
            yield own  # the text being checked, which may differ from the file

    def _reaches(self, module: ModuleSource, site: Site, symbol: Symbol) -> Optional[bool]:
        """True: the spelling names `symbol`; False: something else; None: it may."""
        kind, _, rest = site.receiver.partition(":")
        if kind == "q":
            target = self.names.resolve(rest)
            if isinstance(target, Symbol):
                if _same(target, symbol):
                    return True
                return False if target.is_function or target.is_class else None  # a value: may hold it
            return None if target is None else False  # outside the project, or a module
        if len(symbol.path) != 2:
            return None if kind == UNKNOWN else False  # a plain function is not reached as `x.f()`
        if kind == "s":
            klass: Optional[Symbol] = Symbol(module, (rest,), CLASS)
        elif kind == "c":
            found = self.names.symbol(rest)
            if found is None or not found.is_class:
                return None  # outside the project, or what a function returns: may be one of ours
            klass = found
        elif kind == "a":
            owner, _, attr = rest.partition(":")
            klass = self.receivers.attribute(Symbol(module, (owner,), CLASS), attr)
        else:
            return None
        if klass is None:
            return None
        member = self.names.member(klass, symbol.path[-1])
        if member is not None and _same(member, symbol):
            return True
        declaring = Symbol(symbol.module, symbol.path[:1], CLASS)
        if any(_same(base, klass) for base in self.names.mro(declaring)):
            return None  # a base class's instance may be one of the def's class
        return False if member is not None else None


def _same(a: Symbol, b: Symbol) -> bool:
    return a.module.path == b.module.path and a.path == b.path
