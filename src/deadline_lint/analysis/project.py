"""The project index: what the project's own modules bind, so that a name imported from one
of them resolves to what it stands for there (a re-exported module or client, a class, a
function).

The root is found the way users expect: the nearest folder above the file holding a
`pyproject.toml`, `setup.cfg`, `setup.py` or `.git`; modules are searched under it, under its
`src/` and beside the file's top package (packages by `__init__.py`). Modules are read on
demand with `ast`, never imported or executed, and only under the root. Everything here is
derived from the files alone, so a file checked by itself gets the answer it gets when its
whole project is checked.
"""
from __future__ import annotations

import ast
import os
import re
from collections import OrderedDict
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from deadline_lint.analysis.catalog_imports import catalog_imports
from deadline_lint.analysis.resolve import Definition, Resolver
from deadline_lint.analysis.scopes import IMPORT, OTHER, Scope
from deadline_lint.catalog import Catalog
from deadline_lint.semantics.scan import _scan_imports, import_table  # noqa: F401  (import_table: re-exported)
from deadline_lint.semantics.modules import candidates, longest_prefix, place_of, read_module_text, use_unsaved_text

_MAX_CHAIN = 8  # re-export chains longer than this stay unknown
MAX_HOPS = 3  # project definitions between a call and the client it reaches, at most


class Module:
    """One project module: its text, and (parsed on first need) its tree, scope and resolver."""

    def __init__(self, index: "ProjectIndex", name: str, path: str, is_package: bool, text: str) -> None:
        self.index = index
        self.name = name
        self.path = path
        self.is_package = is_package
        self.text = text
        self._resolver: Optional[Resolver] = None
        self._parsed = False
        self._import_names: Optional[Dict[str, str]] = None
        self._defined: Optional[Set[str]] = None
        self._imports_catalog: Optional[bool] = None
        self._bound: Optional[FrozenSet[str]] = None
        self._catalog_names: Optional[Dict[str, Optional[str]]] = None
        self._top_level: Optional[Dict[str, str]] = None
        self._words: Dict[Tuple[int, str], FrozenSet[str]] = {}
        self._names_client: Dict[Tuple[int, str], bool] = {}

    @property
    def import_names(self) -> Dict[str, str]:
        """Names some import line of the module binds (a scan of the text, no parse)."""
        if self._import_names is None:
            self._import_names = _scan_imports(self.text)
        return self._import_names

    @property
    def imports_catalog(self) -> bool:
        if self._imports_catalog is None:
            self._imports_catalog = catalog_import_filter(self.index.catalog)(self.text)
        return self._imports_catalog

    def words_of(self, body: str) -> FrozenSet[str]:
        """The identifiers in a part of the text (a definition's, or the whole)."""
        key = (len(body), body[:80])
        found = self._words.get(key)
        if found is None:
            found = self._words[key] = frozenset(_WORD.findall(body))
        return found

    @property
    def catalog_names(self) -> Dict[str, Optional[str]]:
        """Names the module's imports bind to a listed client library or object: for a name
        bound to a module on the way to listed names (`asyncio`, `urllib.request`), that
        module, whose attributes a text must spell for the name to count; else None."""
        if self._catalog_names is None:
            holder = _Named(self.name, self.is_package)
            catalog = self.index.catalog
            found: Dict[str, Optional[str]] = {}
            for bound, target in self.import_names.items():
                target = self.index.absolute(holder, target)  # type: ignore[arg-type]
                if self.index.module(target.split(".")[0]) is None and listed(catalog, target):
                    if target.split(".")[0] == bound:
                        target = bound  # `import urllib.request` binds `urllib`
                    found[bound] = target if is_module_on_the_way(catalog, target) else None
            self._catalog_names = found
        return self._catalog_names

    def names_client(self, body: str) -> bool:
        """The text names a listed client through the module's imports: a listed object
        by its bound name, a listed module by an attribute chain that leads to one
        (`asyncio.wait_for`, not `asyncio.get_running_loop`; a function touching only
        those can reach no client, whatever the rest of the module imports)."""
        key = (len(body), body[:80])
        known = self._names_client.get(key)
        if known is None:
            known = self._names_client[key] = self._spells_client(body)
        return known

    def _spells_client(self, body: str) -> bool:
        catalog_names = self.catalog_names
        for word in self.words_of(body).intersection(catalog_names):
            module = catalog_names[word]
            if module is None:
                return True
            for chain in set(re.findall(rf"\b{word}[ \t]*\.[ \t]*([A-Za-z_][\w.]*)", body)):
                if listed(self.index.catalog, f"{module}.{chain.rstrip('.')}"):
                    return True
        return False

    @property
    def bound_names(self) -> FrozenSet[str]:
        """Names the module imports or defines with `def` / `class` (by its text)."""
        if self._bound is None:
            self.may_define("")
            self.definition_text("")
            self._bound = (
                frozenset(self._defined or ()) | frozenset(self.import_names) | frozenset(self._top_level or ())
            )
        return self._bound

    def definition_text(self, name: str) -> str:
        """The lines of a top-level `def name` / `class name` (its header included); the
        whole text when the definition is not at the top level (inside an `if`, say)."""
        if self._top_level is None:
            self._top_level = top_level_definitions(self.text)
        return self._top_level.get(name, self.text)

    def may_define(self, name: str) -> bool:
        """`def name` / `class name` appears in the text, or an import binds it."""
        if self._defined is None:
            self._defined = set(_DEFINED.findall(self.text))
        return name in self._defined or name in self.import_names

    @property
    def resolver(self) -> Optional[Resolver]:
        if self._parsed:
            if self._resolver is not None:
                _PARSED.move_to_end(self)
            return self._resolver
        self._parsed = True
        try:
            tree = ast.parse(self.text, filename=self.path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None  # a module we cannot read resolves nothing
        scope = Scope(tree, None)
        self._resolver = Resolver(self.index.catalog, {id(tree): scope})
        self._resolver.text = self.text  # type: ignore[attr-defined]
        self._resolver.module_scope = scope  # type: ignore[attr-defined]
        self.index.attach(self._resolver, self.name, self.is_package)
        _PARSED[self] = None
        return self._resolver

    def forget_tree(self) -> None:
        """Drop the tree, scopes and resolver (and every answer cached on them); the text
        facts stay. Parsed again, the module gives the same answers: they derive from its
        text alone."""
        resolver, self._resolver, self._parsed = self._resolver, None, False
        if resolver is not None:
            # Scopes and their bindings, and cached answers holding definitions, refer to each
            # other: emptied, they go when the last reference does, not when the cyclic
            # collector next walks the whole heap. Only caches are emptied (a definition still
            # held elsewhere recomputes what it needs).
            for scope in list(resolver._scopes.values()):  # noqa: SLF001 - the module's own resolver
                scope.facts.clear()
                scope._bindings = None  # noqa: SLF001
            resolver._qualnames.clear()  # noqa: SLF001
            resolver._definitions.clear()  # noqa: SLF001


# Modules whose tree is held, least recently used first. A tree and its scopes weigh some
# 40 bytes per byte of source, and a library imports its siblings everywhere: holding every
# tree a run has parsed took gigabytes and made each pass of the cyclic collector walk them
# all. Between files only the most recently used are kept: a project's files are checked
# together, so what the next file asks about is mostly still here.
_PARSED: "OrderedDict[Module, None]" = OrderedDict()
KEEP_PARSED = 64


def release_parsed_modules(keep: int = KEEP_PARSED) -> None:
    """Forget the trees of all but the `keep` most recently used project modules. Called
    only between files (no answer for the file being checked is half-computed)."""
    while len(_PARSED) > keep:
        module, _ = _PARSED.popitem(last=False)
        module.forget_tree()


class ProjectIndex:
    """The modules of one project, by dotted name, for one catalog."""

    def __init__(self, root: str, search_paths: Tuple[str, ...], catalog: Catalog) -> None:
        self.root = root
        self.search_paths = search_paths
        self.catalog = catalog
        self._modules: Dict[str, Optional[Module]] = {}
        self._leads_out: Dict[Tuple[str, int], bool] = {}
        self._active: Dict[Tuple[str, int], int] = {}  # names being computed: their depth
        self._low = 0  # the least depth of an active name a cycle below has met
        self._pending: List[Tuple[str, int]] = []  # False under a cycle that is still open
        self._chain_cuts = 0

    # -- modules -------------------------------------------------------------
    def module(self, name: str) -> Optional[Module]:
        if name in self._modules:
            return self._modules[name]
        found = None
        for candidate, is_package in self.candidates(name):
            if os.path.isfile(candidate):
                found = self._read(name, candidate, is_package)
                if found is not None:
                    break
        self._modules[name] = found
        return found

    def candidates(self, name: str) -> List[Tuple[str, bool]]:
        """The files that could hold module `name`, in the order they are tried."""
        return candidates(self.search_paths, name)

    def _read(self, name: str, path: str, is_package: bool) -> Optional[Module]:
        text = read_module_text(path)
        return None if text is None else Module(self, name, path, is_package, text)

    def attach(self, resolver: Resolver, module_name: str, is_package: bool) -> None:
        resolver.project = self  # type: ignore[assignment]
        resolver.module_name = module_name  # type: ignore[attr-defined]
        resolver.is_package = is_package  # type: ignore[attr-defined]

    def absolute(self, resolver: Resolver, qualname: str) -> str:
        """`..client.get` imported in `pkg.sub.mod` -> `pkg.client.get`."""
        if not qualname.startswith("."):
            return qualname
        level = len(qualname) - len(qualname.lstrip("."))
        package = getattr(resolver, "module_name", "") or ""
        parts = package.split(".") if package else []
        if not getattr(resolver, "is_package", False):
            parts = parts[:-1]
        if level > 1:
            parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
        rest = qualname[level:]
        return ".".join([*parts, rest] if rest else parts)

    def split(self, qualname: str) -> Optional[Tuple[Module, List[str]]]:
        """The longest prefix of `qualname` that is a project module, and the rest."""
        return longest_prefix(qualname, self.module)

    # -- what a name stands for ----------------------------------------------------
    def lookup(self, resolver: Resolver, qualname: str, depth: int = 0):
        """What an imported project name binds where it is defined: ("external", name) for a
        module or object outside the project that it re-exports, ("definition", Definition)
        for a def or class, ("module", Module) for a project module, or None."""
        if depth > _MAX_CHAIN:
            return None
        qualname = self.absolute(resolver, qualname)
        found = self.split(qualname)
        if found is None:
            return None
        module, rest = found
        if not rest:
            return ("module", module)
        if not module.may_define(rest[0]):
            return None  # a constant or something else we do not follow: no parse needed
        module_resolver = module.resolver
        if module_resolver is None:
            return None
        scope: Scope = module_resolver.module_scope  # type: ignore[attr-defined]
        bindings = scope.bindings().get(rest[0])
        if not bindings or len(bindings) != 1:
            # `try: from asyncio import timeout / except ImportError: from async_timeout ...`
            return None
        binding = bindings[0]
        if binding.kind == IMPORT:
            target = self.absolute(module_resolver, binding.value)  # type: ignore[arg-type]
            dotted = ".".join([target, *rest[1:]])
            if self.split(target) is None:
                return ("external", dotted)
            return self.lookup(module_resolver, dotted, depth + 1)
        if binding.kind == OTHER and isinstance(binding.value, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            definition = Definition(binding.value, scope, module_resolver)
            for attr in rest[1:]:
                if not definition.is_class:
                    return None
                member = module_resolver.member(definition, attr, depth + 1)
                if member is None:
                    return None
                definition = member
            return ("definition", definition)
        return None

    def external_name(self, resolver: Resolver, qualname: str) -> Optional[str]:
        found = self.split(self.absolute(resolver, qualname))
        if found is None or not found[1] or found[1][0] not in found[0].import_names:
            return None  # only an import can re-export something from outside the project
        found = self.lookup(resolver, qualname)
        return found[1] if found is not None and found[0] == "external" else None

    def definition(self, resolver: Resolver, qualname: str, depth: int = 0) -> Optional[Definition]:
        """The def or class an imported project name stands for, when it can lead to a
        listed client at all (judged from the text first: most names cost no parse)."""
        if not self._name_leads(self.absolute(resolver, qualname), MAX_HOPS, 0):
            return None
        found = self.lookup(resolver, qualname, depth)
        return found[1] if found is not None and found[0] == "definition" else None

    def is_project_name(self, resolver: Resolver, qualname: str) -> bool:
        return qualname.startswith(".") or self.module(qualname.split(".")[0]) is not None

    # -- the text prefilter -------------------------------------------------------
    def text_leads_outbound(self, text: str, module_name: str, is_package: bool) -> bool:
        """Some name this text imports from the project can bring a listed client, a wrapper
        of one or a client subclass: judged name by name from the modules' import lines and
        definitions (a scan of their text, no parse), through at most MAX_HOPS definitions,
        the depth to which wrapper summaries compose."""
        holder = _Named(module_name, is_package)
        for target in import_table(text).values():
            target = self.absolute(holder, target)  # type: ignore[arg-type]
            if self.is_project_name(holder, target) and self._name_leads(target, MAX_HOPS, 0):  # type: ignore[arg-type]
                return True
        return False

    def name_leads(self, qualname: str) -> bool:
        """The text's answer for one absolute project name (see text_leads_outbound)."""
        return self._name_leads(qualname, MAX_HOPS, 0)

    def holder(self, module_name: str, is_package: bool) -> Resolver:
        """Something `absolute` and `lookup` accept for a module known only by its name."""
        return _Named(module_name, is_package)  # type: ignore[return-value]

    def _name_leads(self, qualname: str, hops: int, chain: int) -> bool:
        key = (qualname, hops)
        known = self._leads_out.get(key)
        if known is not None:
            return known
        if chain > _MAX_CHAIN:
            self._chain_cuts += 1  # what is computed above this cut depends on the chain so far
            return False
        depth = self._active.get(key)
        if depth is not None:
            self._low = min(self._low, depth)  # a cycle adds nothing by itself
            return False
        depth = self._active[key] = len(self._active)
        outer_low, self._low = self._low, depth + 1
        chain_cuts, pending = self._chain_cuts, len(self._pending)
        found = False
        split = self.split(qualname)
        if split is not None:
            module, rest = split
            holder = _Named(module.name, module.is_package)
            if not rest:
                found = self._text_leads(module, module.text, hops, chain)
            else:
                target = module.import_names.get(rest[0])
                if target is not None:
                    target = ".".join([self.absolute(holder, target), *rest[1:]])  # type: ignore[arg-type]
                    found = self._target_leads(target, hops, chain + 1)
                elif rest[0] in module.bound_names:
                    found = self._text_leads(module, module.definition_text(rest[0]), hops, chain)
        del self._active[key]
        low, self._low = self._low, outer_low
        self._low = min(self._low, low)
        # Memoised only when final, so that the answer is the same whichever file asked
        # first. True is final. False is final once every cycle met below closes here
        # (Tarjan's test: the names computed under it, all False, are then final too);
        # until then those names wait in `_pending`. A cut by chain length depends on
        # the chain so far: nothing computed under one is kept.
        if found:
            self._leads_out[key] = True
            del self._pending[pending:]
        elif self._chain_cuts != chain_cuts:
            del self._pending[pending:]
        elif low >= depth:
            for waiting in self._pending[pending:]:
                self._leads_out[waiting] = False
            del self._pending[pending:]
            self._leads_out[key] = False
        else:
            self._pending.append(key)
        return found

    def _target_leads(self, target: str, hops: int, chain: int) -> bool:
        if self.module(target.split(".")[0]) is not None:
            return self._name_leads(target, hops, chain)
        return listed(self.catalog, target)

    def _text_leads(self, module: Module, body: str, hops: int, chain: int) -> bool:
        """A definition (or a whole module) leads out when its module imports a listed client,
        or its text names an imported project name or another definition of the module that
        leads, one hop further."""
        if body is module.text:
            if module.imports_catalog:
                return True
        elif module.names_client(body):
            return True  # the definition names a client the module imports
        if hops <= 0:
            return False
        table = module.import_names
        holder = _Named(module.name, module.is_package)
        for word in module.words_of(body) & module.bound_names:
            target = table.get(word)
            if target is not None:
                target = self.absolute(holder, target)  # type: ignore[arg-type]
                if self.module(target.split(".")[0]) is not None and self._name_leads(target, hops - 1, 0):
                    return True
            elif body is not module.text:
                if self._name_leads(f"{module.name}.{word}", hops - 1, 0):
                    return True
        return False


_WORD = re.compile(r"[A-Za-z_]\w*")
_DEFINED = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.M)


_TOP_LEVEL_LINE = re.compile(r"^[^\s#)\]}]", re.M)
_TOP_LEVEL_DEF = re.compile(r"(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)|(\w+)[ \t]*(?::[^=\n]*)?=(?!=)")


def top_level_definitions(text: str) -> Dict[str, str]:
    """Name -> text of each top-level def, class or assignment (decorators aside), in one
    pass: `SESSION = requests.Session()` makes a function using SESSION lead to a client."""
    starts = [m.start() for m in _TOP_LEVEL_LINE.finditer(text)] + [len(text)]
    found: Dict[str, str] = {}
    for start, end in zip(starts, starts[1:]):
        match = _TOP_LEVEL_DEF.match(text, start)
        if match is not None:
            found[match.group(1) or match.group(2)] = text[start:end]
    return found


class _Named:
    """Stands in for a resolver when only a module's name is known."""

    def __init__(self, module_name: str, is_package: bool) -> None:
        self.module_name = module_name
        self.is_package = is_package


# -- finding a file's project ---------------------------------------------------------
_INDEXES: Dict[Tuple[str, Tuple[str, ...], int], Tuple[Catalog, ProjectIndex]] = {}


def index_for(path: str, catalog: Catalog) -> Optional[Tuple[ProjectIndex, str, bool]]:
    """The project index a file belongs to, its module name and whether it is a package."""
    place = place_of(path)
    if place is None:
        return None
    name, root, paths = place
    key = (root, paths, id(catalog))
    entry = _INDEXES.get(key)
    if entry is None or entry[0] is not catalog:
        entry = _INDEXES[key] = (catalog, ProjectIndex(root, paths, catalog))
    return entry[1], name, os.path.basename(path) == "__init__.py"


def attach_project(resolver: Resolver, path: str, text: str, catalog: Catalog) -> None:
    """Give a file's resolver its project index (nothing for stdin or a file outside one)."""
    release_parsed_modules()  # a new file: nothing is half-computed
    resolver.text = text  # type: ignore[attr-defined]
    found = index_for(path, catalog)
    if found is not None:
        index, name, is_package = found
        index.attach(resolver, name, is_package)


def imports_outbound_project_module(path: str, text: str, catalog: Catalog) -> bool:
    """The text prefilter's project half: the file imports a project module through which a
    listed client, a wrapper of one or a client subclass can arrive."""
    found = index_for(path, catalog)
    if found is None:
        return False
    index, name, is_package = found
    return index.text_leads_outbound(text, name, is_package)


def listed(catalog: Catalog, qualname: str) -> bool:
    """A module or object outside the project that is, holds or leads to a listed name
    (`requests`, `requests.Session`, `urllib.request`); `requests.exceptions` does not."""
    prefixes = catalog.cached("project.listed_prefixes", lambda: _prefixes_of(catalog))
    return _listed(prefixes, catalog.canonical(qualname).split("."))


def is_module_on_the_way(catalog: Catalog, qualname: str) -> bool:
    """`asyncio`, `urllib.request`: a prefix of listed names, neither one of them nor an
    attribute of one."""
    leading, names = catalog.cached("project.listed_prefixes", lambda: _prefixes_of(catalog))
    parts = catalog.canonical(qualname).split(".")
    return not any(".".join(parts[:cut]) in names for cut in range(1, len(parts) + 1))


def _prefixes_of(catalog: Catalog):
    names = [*catalog.apis, *catalog.classes, *catalog.factories, *catalog.timeout_objects, *catalog.aliases]
    leading: Set[str] = set()
    for qualname in names:
        parts = qualname.split(".")
        leading.update(".".join(parts[:cut]) for cut in range(1, len(parts) + 1))
    return frozenset(leading), frozenset(names)


def _listed(prefixes, parts) -> bool:
    leading, names = prefixes
    if ".".join(parts) in leading:
        return True  # the name itself, or a module on the way to one
    return any(".".join(parts[:cut]) in names for cut in range(1, len(parts)))  # an attribute of one


def catalog_import_filter(catalog: Catalog) -> Callable[[str], bool]:
    """True for a text with an import line naming a module the catalog lists (see
    `catalog_imports`): the outbound rules' own prefilter, so every question sees the same one."""
    return catalog_imports(catalog)


__all__ = [
    "ProjectIndex", "attach_project", "index_for", "imports_outbound_project_module", "place_of", "use_unsaved_text",
]
