"""A project's modules: where a file's project starts, which file holds a dotted module name, and
its text (an editor's unsaved buffer stands for the file on disk). Modules are read on demand
and never imported or executed."""
from __future__ import annotations

import ast
import hashlib
import os
import sys
from collections import OrderedDict
from typing import Callable, Dict, List, Optional, Tuple, TypeVar

from deadline_lint.semantics.roots import root_above
from deadline_lint.semantics.session import current
from deadline_lint.support.regular_files import open_regular
from deadline_lint.support.source import DecodeError, decode_source

# Larger project modules are not followed: the same bound as a file checked (the engine's
# reading.MAX_FILE_BYTES, held equal by tests/test_file_limits.py; this layer is below it).
MAX_MODULE_BYTES = 2 * 1024 * 1024

# A standard library package is a regular one: Python finds it before any namespace folder
# of that name, so a project folder `email/` never answers `email.utils`.
_STDLIB = frozenset(sys.stdlib_module_names)


class Unsaved(Dict[str, str]):
    """Texts that stand for files on disk (the editor server's unsaved buffers), by absolute
    path: a module open in the editor is read as it is there, not as it was last saved."""


class Place:
    """The run's memo of `place_of`, by absolute path."""


def use_unsaved_text(path: str, text: Optional[str]) -> None:
    """Read `path` as `text` from now on (None: from disk again), in the active session. The
    caller invalidates the answers that may hold the old text (run/buffers)."""
    unsaved = current().state(Unsaved, lasting=True)
    if text is None:
        unsaved.pop(path, None)
    else:
        unsaved[path] = text


def read_module_text(path: str) -> Optional[str]:
    """The module's text, or None when it cannot be read, decoded, or is too large."""
    unsaved = current().state(Unsaved, lasting=True).get(path)
    if unsaved is not None:
        return unsaved
    try:
        if os.path.getsize(path) > MAX_MODULE_BYTES:
            return None
        with open_regular(path) as handle:
            return decode_source(handle.read())
    except (OSError, DecodeError):
        return None


def place_of(path: str) -> Optional[Tuple[str, str, Tuple[str, ...]]]:
    """(module name, root, search paths) for a file, or None when it is not a `.py` file
    on disk. The root is the nearest folder with a `pyproject.toml`, `setup.cfg`, `setup.py`
    or `.git`; modules are searched beside the file's top package (climbing through namespace
    portions inside a package), in a package folder holding Django's `manage.py` (`from
    core.utils import x` inside `label_studio/`), at the root and its `src/`."""
    if not path or path == "-" or not path.endswith(".py"):
        return None
    path = os.path.abspath(path)
    places: Dict[str, Tuple[str, str, Tuple[str, ...]]] = current().memo(Place)
    known = places.get(path)
    if known is not None:
        return known
    folder = os.path.dirname(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    parts = [] if stem == "__init__" else [stem]
    top = folder
    django_roots = []  # a package folder holding manage.py is on sys.path when Django runs
    while _in_package(top):
        if os.path.isfile(os.path.join(top, "manage.py")):
            django_roots.append(top)
        parts.insert(0, os.path.basename(top))
        parent = os.path.dirname(top)
        if parent == top:
            break
        top = parent
    root = root_above(folder) or top
    paths = [top]
    if folder != top and not os.path.isfile(os.path.join(folder, "__init__.py")):
        paths.append(folder)  # a namespace portion's siblings, as a test runner may import them
    for extra in (*django_roots, root, os.path.join(root, "src")):
        if os.path.isdir(extra) and extra not in paths:
            paths.append(extra)
    if not (top == root or top.startswith(root + os.sep)):
        root = top  # the package sits above the marker: index only what is beside it
    place = (".".join(p for p in parts if p.isidentifier()), root, tuple(paths))
    places[path] = place
    return place


def _in_package(folder: str) -> bool:
    """The folder is a package, or a namespace portion inside one (open-webui's
    `open_webui/routers/` has no `__init__.py`, `open_webui/` has): its modules are named
    from the package above, `open_webui.routers.openai`."""
    if os.path.isfile(os.path.join(folder, "__init__.py")):
        return True
    parent = os.path.dirname(folder)
    return parent != folder and os.path.isfile(os.path.join(parent, "__init__.py"))


def candidates(search_paths: Tuple[str, ...], name: str) -> List[Tuple[str, bool]]:
    """The files that could hold module `name`, in the order they are tried."""
    if not name or not all(part.isidentifier() for part in name.split(".")):
        return []
    relative = name.replace(".", os.sep)
    return [
        candidate
        for base in search_paths
        for candidate in (
            (os.path.join(base, relative, "__init__.py"), True),
            (os.path.join(base, relative + ".py"), False),
        )
    ]


def absolute_name(module_name: str, is_package: bool, qualname: str) -> str:
    """`..client.get` imported in `pkg.sub.mod` -> `pkg.client.get`."""
    if not qualname.startswith("."):
        return qualname
    level = len(qualname) - len(qualname.lstrip("."))
    parts = module_name.split(".") if module_name else []
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    rest = qualname[level:]
    return ".".join([*parts, rest] if rest else parts)


M = TypeVar("M")


def longest_prefix(qualname: str, module: Callable[[str], Optional[M]]) -> Optional[Tuple[M, List[str]]]:
    """The longest prefix of `qualname` that `module` finds, and the rest of the name."""
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        found = module(".".join(parts[:cut]))
        if found is not None:
            return found, parts[cut:]
    return None


class ModuleSource:
    """One project module's text, its content hash and (parsed on first need) its tree."""

    __slots__ = ("name", "path", "is_package", "_text", "_digest", "_tree", "_parsed", "_reread")

    def __init__(
        self, name: str, path: str, is_package: bool, text: str, tree: Optional[ast.Module] = None,
        reread: bool = False,
    ):
        self.name = name
        self.path = path
        self.is_package = is_package
        self._text: Optional[str] = text
        self._digest: Optional[str] = None
        self._tree = tree
        self._parsed = tree is not None
        # Read from its file (not the text being checked): its text may be dropped with its
        # tree and read again when asked for, so a run does not hold every module's text.
        self._reread = reread
        if reread:
            _held_text(self)

    @property
    def rereadable(self) -> bool:
        """Read from its file: its text and tree may be dropped and read again."""
        return self._reread

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = read_module_text(self.path) or ""
            if self._reread:
                _held_text(self)
        return self._text

    def forget_text(self) -> None:
        """Drop the text of a module read from its file (its tree too), keeping its hash."""
        if self._reread and self._text is not None and not self._parsed:
            self.digest  # noqa: B018 - kept: what the module's answers are stored under
            self._text = None

    @property
    def digest(self) -> str:
        if self._digest is None:
            self._digest = hashlib.blake2b(self.text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        return self._digest

    @property
    def tree(self) -> Optional[ast.Module]:
        if not self._parsed:
            self._parsed = True
            try:
                self._tree = ast.parse(self.text, filename=self.path)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._tree = None  # a module we cannot read says nothing
        return self._tree

    def forget_tree(self) -> None:
        self._tree, self._parsed = None, False
        if self._reread:
            self.digest  # noqa: B018 - kept: what the module's answers are stored under
            self._text = None


# Texts of modules read from their files, least recently read first: most questions about a
# module are answered from memos keyed by its hash, so holding every text read in a run (a
# large corpus's texts are many times its size on disk) buys little.
KEEP_TEXTS = 256


class HeldTexts(OrderedDict):  # type: ignore[type-arg]
    """The texts a run holds (see KEEP_TEXTS), by id of their module."""


def _held_text(module: ModuleSource) -> None:
    held: "OrderedDict[int, ModuleSource]" = current().state(HeldTexts)
    held[id(module)] = module
    held.move_to_end(id(module))
    while len(held) > KEEP_TEXTS:
        _, oldest = held.popitem(last=False)
        oldest.forget_text()


class ProjectModules:
    """The modules of one project (a root and its search paths), by dotted name."""

    def __init__(self, root: str, search_paths: Tuple[str, ...]) -> None:
        self.root = root
        self.search_paths = search_paths
        self._modules: Dict[str, Optional[ModuleSource]] = {}
        self._folders: Dict[str, bool] = {}
        self._consulting = current().state(Consulting, lasting=True)  # asked on every lookup

    def module(self, name: str) -> Optional[ModuleSource]:
        self._consulting.consulted = True
        if name in self._modules:
            return self._modules[name]
        found = None
        for path, is_package in candidates(self.search_paths, name):
            if os.path.isfile(path):
                text = read_module_text(path)
                if text is not None:
                    found = ModuleSource(name, path, is_package, text, reread=True)
                    break
        if found is None:
            found = self._namespaced(name)
        self._modules[name] = found
        return found

    def _namespaced(self, name: str) -> Optional[ModuleSource]:
        """`utils.retry` in a folder above the file's own that Python may have on its path
        (see `namespace_bases`), when exactly one of them holds it: services run from a folder
        whose packages have no `__init__.py` (rocketwatch's `rocketwatch/utils/retry.py`,
        imported from `rocketwatch/plugins/forum/`). Two folders answering is a guess: None."""
        head = name.partition(".")[0]
        if not self._may_namespace(name) or self.module(head) is not None:
            return None  # a module or regular package of that name is found first
        answers = []
        for base in self.namespace_bases(head):
            if os.path.isdir(os.path.join(base, head)):
                answer = next((c for c in candidates((base,), name) if os.path.isfile(c[0])), None)
                if answer is not None:
                    answers.append(answer)
        if len(answers) != 1:
            return None
        path, is_package = answers[0]
        text = read_module_text(path)
        return None if text is None else ModuleSource(name, path, is_package, text, reread=True)

    def _may_namespace(self, name: str) -> bool:
        """A dotted name whose head is a folder somewhere it is searched, and no standard
        library package (which Python finds before a namespace folder)."""
        head, dot, _ = name.partition(".")
        if not dot or head in _STDLIB or not head.isidentifier():
            return False
        known = self._folders.get(head)
        if known is None:
            known = self._folders[head] = any(
                os.path.isdir(os.path.join(base, head)) for base in (*self.search_paths, *self.namespace_bases(head))
            )
        return known

    def namespace_bases(self, head: str) -> Tuple[str, ...]:
        """Folders beyond the search paths that a service's entry point may have put on
        Python's path, nearest first: each folder between the file's top and the root (the
        script's folder when it is run from there), and the folder holding an enclosing
        folder named `head` (onyx's `backend/`, for `onyx.utils.x` imported in
        `backend/onyx/tools/...` whose folders have no `__init__.py`)."""
        top = self.search_paths[0] if self.search_paths else self.root
        inside = top.startswith(self.root + os.sep)
        bases: List[str] = []
        folder = top
        while True:
            parent = os.path.dirname(folder)
            if inside and folder not in (top, self.root):
                bases.append(folder)
            if folder == self.root:
                inside = False
            if os.path.basename(folder) == head and parent != folder:
                bases.append(parent)
            if parent == folder:
                break
            folder = parent
        return tuple(dict.fromkeys(b for b in bases if b not in self.search_paths))

    def probes(self, name: str) -> Tuple[List[str], List[str]]:
        """The paths whose presence decides `module(name)`: those tried in order (the first
        found answers), then those of the namespace bases (any two found: no answer)."""
        first = [path for path, _ in candidates(self.search_paths, name)]
        head, dot, _ = name.partition(".")
        if not dot or head in _STDLIB or not first:
            return first, []
        # Whatever the folders hold now: one appearing there may make the name a module.
        return first, [path for path, _ in candidates(self.namespace_bases(head), name)]

    def split(self, qualname: str) -> Optional[Tuple[ModuleSource, List[str]]]:
        return longest_prefix(qualname, self.module)

    def is_project_name(self, qualname: str) -> bool:
        """A name whose head is a project module, or that names a module in a project folder
        without `__init__.py` (`utils.retry.retry_async`; `utils` alone is no module)."""
        if not qualname:
            return False
        if self.module(qualname.split(".")[0]) is not None:
            return True
        return self._may_namespace(qualname) and self.split(qualname) is not None


class Consulting:
    """Whether the file being checked looked into its project (found a module there or not):
    its answer then depends on other files, which the results cache must record."""

    def __init__(self) -> None:
        self.consulted = False


def start_consulting() -> None:
    current().state(Consulting, lasting=True).consulted = False


def consulted() -> bool:
    return current().state(Consulting, lasting=True).consulted


def project_of(path: str) -> Optional[Tuple[ProjectModules, str, bool]]:
    """The project a file belongs to, its module name and whether it is a package."""
    place = place_of(path)
    if place is None:
        return None
    name, root, paths = place
    key = (root, paths)
    projects: Dict[Tuple[str, Tuple[str, ...]], ProjectModules] = current().memo(ProjectModules)
    found = projects.get(key)
    if found is None:
        found = projects[key] = ProjectModules(root, paths)
    return found, name, os.path.basename(path) == "__init__.py"


def forget_projects() -> None:
    """Forget every project's modules and places (an editor saw files change)."""
    current().forget(ProjectModules, Place, HeldTexts)
