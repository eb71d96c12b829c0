"""Callers of a function in other modules of one `fix` run (thread_callers.py asks).

A function named in another project file may take a required `budget_s` only when every place
that file names it is accounted for: the import that brings it in, and calls that a later pass
of this run (thread_project.py) forwards to: from a function that has a budget, or from one
that is threaded itself in that pass (with DL503's unsafe fixes), judged by the same rules one
module further, at most MAX_HOPS modules up. Anything else that spells the name (an alias, a
value, a string, a parameter, a file outside the run, a non-Python file) keeps the signature.

The LibCST codemod fixes one file at a time, and between two of its runs a caller in another
module would lack the keyword: it never threads a function another module names (its run is
empty here).
"""
from __future__ import annotations

import ast
import os
import re
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, Optional, Tuple

from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.engine.edits import insert_keyword
from deadline_lint.families.outbound.fixes.thread_index import (
    DEFS,
    PARAMETER,
    ModuleIndex,
    has_threaded_parameter,
    suppressed,
)
from deadline_lint.semantics.local.scopes import FUNCTION, Scope
from deadline_lint.semantics.modules import absolute_name, place_of, read_module_text
from deadline_lint.support.source import SourceFile

if TYPE_CHECKING:
    from deadline_lint.engine.checker import Checker

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Files whose words may name a function: code, stubs, and the configs that name entry points.
_SCANNED = (".py", ".pyi", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".json")
_SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".venv", "venv", "env", "node_modules", "__pycache__", ".tox", ".nox",
    ".mypy_cache", ".ruff_cache", ".pytest_cache", "build", "dist", "site-packages",
    ".deadline_lint_cache",  # our own cache spells every name it saw: a `check` must not change what `fix` threads
})
_REPOSITORY_MARKERS = (".git", ".hg")
MAX_PROJECT_FILES = 20000  # past this the project is not read: every name counts as used elsewhere
MAX_FILE_BYTES = 2 * 1024 * 1024


class ProjectWords:
    """The identifiers each file of a project (the whole repository that holds it) spells.
    Each use walks the project and stats its files, and re-reads only the files whose size or
    time changed since (an editor session or a later pass of one run sees the project as it
    is now)."""

    def __init__(self) -> None:
        self._known: Dict[str, Tuple[int, int, FrozenSet[str]]] = {}
        self._roots: Dict[str, Optional[List[str]]] = {}
        self._repositories: Dict[str, str] = {}  # project root: the repository above it

    def start(self) -> None:
        """A new question: the project may have changed since the last one."""
        self._roots.clear()

    def files_naming(self, path: str, name: str) -> Optional[List[str]]:
        """The project files other than `path` that spell `name`; None when the project
        cannot be read. A text with no file on disk (stdin, an in-memory fix) is its own
        project."""
        if not path or not os.path.isfile(path):
            return []
        place = place_of(path)
        if place is None:
            return None
        here = os.path.abspath(path)
        root = self._repositories.get(place[1])
        if root is None:
            root = self._repositories[place[1]] = _repository(place[1])
        if root not in self._roots:
            self._roots[root] = self._read(root)
        files = self._roots[root]
        if files is None:
            return None
        return [other for other in files if other != here and name in self._known[other][2]]

    def _read(self, root: str) -> Optional[List[str]]:
        found: List[str] = []
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS and not d.endswith(".egg-info")]
            for name in names:
                if not name.endswith(_SCANNED):
                    continue
                if len(found) >= MAX_PROJECT_FILES:
                    return None
                path = os.path.abspath(os.path.join(folder, name))
                try:
                    status = os.stat(path)
                    if status.st_size > MAX_FILE_BYTES:
                        return None  # cannot be read: its words are unknown
                    known = self._known.get(path)
                    if known is None or known[:2] != (status.st_mtime_ns, status.st_size):
                        with open(path, "rb") as handle:
                            text = handle.read().decode("utf-8", "replace")
                        self._known[path] = (status.st_mtime_ns, status.st_size, frozenset(_WORD.findall(text)))
                except OSError:
                    return None
                found.append(path)
        # Files no longer there are forgotten (a long-lived session outlives its files).
        inside, present = root + os.sep, set(found)
        for gone in [p for p in self._known if p.startswith(inside) and p not in present]:
            del self._known[gone]
        return found


def _repository(root: str) -> str:
    """The repository holding the project root, else the root: another project of the same
    repository (its own `pyproject.toml`) may subclass or call what this one defines."""
    folder = root
    while True:
        if any(os.path.exists(os.path.join(folder, marker)) for marker in _REPOSITORY_MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return root
        folder = parent


Judge = Callable[[ModuleIndex, Function, "Elsewhere", int], Optional[bool]]
# Whether thread_budget's forwarding step gives `call` (in `scope`) the keyword, with these
# functions threaded: the one predicate the choice and the edits share, so they cannot differ.
Forwards = Callable[[ModuleIndex, ast.Call, Scope, Dict[int, Function]], bool]
# The expression a caller forwards (None: it has none), as thread_budget writes it.
CallerBudget = Callable[[Scope, Dict[int, Function], ModuleIndex], Optional[str]]

# Each module a budget crosses is one more pass of the run (thread_project.MAX_PASSES is 5:
# the first pass threads the callee, then one per module up, and the edge's own forward).
MAX_HOPS = 3


class Elsewhere:
    """One file's view of the run: which paths it holds and the other modules, read once."""

    def __init__(
        self, checker: "Checker", run: FrozenSet[str], threads_callers: bool, words: ProjectWords,
        public_api: Tuple[str, ...], judge: "Judge", forwards: "Forwards", caller_budget: "CallerBudget",
    ) -> None:
        self.checker = checker
        self.run = run
        self.threads_callers = threads_callers
        self.words = words
        self.public_api = public_api
        self.judge = judge  # thread_callers.caller_would_thread (passed in: no import cycle)
        self.forwards = forwards
        self.caller_budget = caller_budget
        self.mint = False  # `adopt`: a caller that is an edge mints the budget it forwards
        self._indexes: Dict[str, Optional[Tuple[ModuleIndex, str]]] = {}
        self._judged: Dict[Tuple[str, str], Optional[bool]] = {}  # None: being judged (a cycle)

    def callers_forward(self, path: str, function: Function, files: List[str], depth: int = 0) -> Optional[bool]:
        """Whether every other file naming `function` (defined at module level in `path`)
        passes it the budget after this run: None when one cannot, else whether some caller
        there has a budget of its own (the function is then reached from an edge)."""
        qualname = _qualified(path, function.name)
        if qualname is None or depth > MAX_HOPS or not self.run:
            return None
        reached = False
        for other in files:
            if other not in self.run or not other.endswith(".py"):
                return None
            verdict = self._file_forwards(other, qualname, function.name, depth)
            if verdict is None:
                return None
            reached = reached or verdict
        return reached

    def _file_forwards(self, path: str, qualname: str, name: str, depth: int) -> Optional[bool]:
        loaded = self._index(path)
        if loaded is None:
            return None
        module, module_name = loaded
        reached = False
        for node in ast.walk(module.tree):
            spelled = _spells(node, name)
            if spelled is None:
                continue
            if isinstance(node, ast.alias) and spelled:
                if not _imports(node, module, module_name, path, qualname):
                    return None
                continue
            if not isinstance(node, (ast.Name, ast.Attribute)):
                return None  # a string, a parameter, a def of the same name: not ours to judge
            verdict = self._reference_forwards(node, module, module_name, qualname, depth)
            if verdict is None:
                return None
            reached = reached or verdict
        return reached

    def _reference_forwards(
        self, node: ast.expr, module: ModuleIndex, module_name: str, qualname: str, depth: int,
    ) -> Optional[bool]:
        scope = module.scope_at.get(id(node))
        if scope is None:
            return None
        found = module.resolver.qualified_name(node, scope)
        if found is None or absolute_name(module_name, module.source.path.endswith("__init__.py"), found) != qualname:
            return None  # the name means something else here, or cannot be told
        call = module.callee_of.get(id(node))
        if call is None or any(kw.arg is None for kw in call.keywords):
            return None
        if any(isinstance(a, ast.Starred) for a in call.args):
            return None
        if suppressed(module.source, call.lineno) or scope.kind != FUNCTION or not isinstance(scope.node, DEFS):
            return None
        if not _reaches(module, call, scope, qualname):
            return None  # the later pass finds its callee through the semantics layer: so must this
        caller = scope.node
        value = self.caller_budget(scope, {}, module)
        if not any(kw.arg == PARAMETER for kw in call.keywords) and insert_keyword(
            module.source, call, PARAMETER, value or PARAMETER,
        ) is None:
            return None
        if has_threaded_parameter(caller) or value is not None:
            return True
        if not self.threads_callers:
            return None
        return self._caller_threads(module, caller, depth)

    def _caller_threads(self, module: ModuleIndex, caller: Function, depth: int) -> Optional[bool]:
        """The caller has no budget: the next pass threads it when its own module would, by
        the same rules (thread_callers.required_parameter_set)."""
        key = (module.source.path, caller.name)
        if key in self._judged:
            return self._judged[key] or None  # a cycle counts as not reached through itself
        self._judged[key] = None
        verdict = self.judge(module, caller, self, depth + 1)
        self._judged[key] = verdict
        return verdict

    def _index(self, path: str) -> Optional[Tuple[ModuleIndex, str]]:
        if path not in self._indexes:
            self._indexes[path] = self._load(path)
        return self._indexes[path]

    def _load(self, path: str) -> Optional[Tuple[ModuleIndex, str]]:
        place = place_of(path)
        text = read_module_text(path)
        if place is None or text is None:
            return None
        try:
            tree = ast.parse(text, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return ModuleIndex(self.checker, SourceFile(text, path), tree, unsafe=True, mint=self.mint), place[0]


def _reaches(module: ModuleIndex, call: ast.Call, scope: Scope, qualname: str) -> bool:
    """The semantics layer, which the forwarding pass asks (thread_index.OtherModules), finds
    the function this call names."""
    from deadline_lint.semantics.file import FileSemantics

    symbol = FileSemantics(module).callee(call.func, scope)
    return symbol is not None and symbol.qualname == qualname


def _qualified(path: str, name: str) -> Optional[str]:
    place = place_of(path)
    if place is None or not place[0]:
        return None
    return f"{place[0]}.{name}"


def _spells(node: ast.AST, name: str) -> Optional[bool]:
    """Whether the node spells `name` (None: it does not); for an import alias, True when
    the name is what it imports (an `as` name spelled alone is a different name)."""
    if isinstance(node, ast.Name):
        return True if node.id == name else None
    if isinstance(node, ast.Attribute):
        return True if node.attr == name else None
    if isinstance(node, ast.alias):
        if node.name.split(".")[-1] == name and node.asname in (None, name):
            return True
        return False if name in (node.asname, node.name) else None
    if isinstance(node, (*DEFS, ast.ClassDef)):
        return False if node.name == name else None
    if isinstance(node, ast.arg):
        return False if node.arg == name else None
    if isinstance(node, ast.keyword):
        return False if node.arg == name else None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return False if name in node.value else None
    return None


def _imports(alias: ast.alias, module: ModuleIndex, module_name: str, path: str, qualname: str) -> bool:
    """`from pkg.mod import name` bringing in the function itself."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ImportFrom) and alias in node.names:
            base = "." * node.level + (node.module or "")
            full = absolute_name(module_name, os.path.basename(path) == "__init__.py", f"{base}.{alias.name}")
            return full == qualname
        if isinstance(node, ast.Import) and alias in node.names:
            return False  # `import name` of a module spelled like the function
    return False
