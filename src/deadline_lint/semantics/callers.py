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

None answers "cannot be known": the file is in no project, or its root cannot be listed.
There is no limit on how many modules a project may have: a limit there would give a file
other findings in a large project than in a small one (issue 35). What a large project
costs is bounded instead: no text is held, only the words each file spells (`WordIndex`),
and past `MAX_INDEXED_WORDS` the other files are read again per name asked, which changes
the time taken, never the answer. The answer depends on
every module of the project, so the folders listed and the files read are recorded for the
results cache (`consulted`).
"""
from __future__ import annotations

import os
from array import array
from bisect import bisect_left
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

from deadline_lint.semantics import modules as places
from deadline_lint.semantics.call_sites import UNKNOWN, Site, forget_call_sites, sites_of
from deadline_lint.semantics.modules import ModuleSource, ProjectModules, place_of, read_module_text
from deadline_lint.semantics.receivers import Receivers
from deadline_lint.semantics.session import current
from deadline_lint.semantics.summary import CLASS, Names, Symbol, summary_of

VERSION = 2
_SKIPPED_FOLDERS = frozenset({
    "node_modules", "__pycache__", "site-packages", "venv", "env", "build", "dist",
    "tests", "test", "testing",
})


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


class _Listing(NamedTuple):
    files: Tuple[str, ...]  # every module file (test modules left out)
    folders: Tuple[str, ...]  # every folder listed


class Matches:
    """The run's memo of which files spell a name, by project and name."""


class Consulted(Set[Tuple[str, Tuple[str, ...]]]):
    """The projects (root, search paths) whose callers the file being checked asked for."""


def _listings() -> Dict[Tuple[str, Tuple[str, ...]], Optional[_Listing]]:
    return current().memo(_Listing)


def _listing(modules: ProjectModules) -> Optional[_Listing]:
    key = (modules.root, modules.search_paths)
    listings = _listings()
    if key in listings:
        return listings[key]
    # Every file of a root holds search paths inside it (a package's folder, `src/`), which
    # its walk lists: one listing serves them all, rather than a copy per search-path set.
    whole = listings.get((modules.root, ()), _UNLISTED)
    if whole is _UNLISTED:
        whole = listings[(modules.root, ())] = _walk((modules.root,))
    found = whole
    if whole is not None and modules.search_paths:
        walked = set(whole.folders)
        if not all(path in walked for path in modules.search_paths):
            found = _walk(modules.search_paths, whole, walked)  # a search path the walk skips (`tests/`)
    listings[key] = found
    return found


_UNLISTED = _Listing((), ())


def _walk(
    tops: Tuple[str, ...], after: Optional[_Listing] = None, seen: Optional[Set[str]] = None,
) -> Optional[_Listing]:
    """The module files under `tops`, after those of `after` (whose folders are `seen`)."""
    files: List[str] = list(after.files) if after is not None else []
    folders: List[str] = list(after.folders) if after is not None else []
    seen = seen if seen is not None else set()
    try:
        for top in tops:
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
    except OSError:
        return None
    return _Listing(tuple(files), tuple(folders))


class WordIndex:
    """Which words each module file spells, by path: the hashes of its maximal runs of word
    bytes (see `_word_byte`), sorted. One index serves every project of the run, so files
    seen under two search-path sets of one root are read and held once, and a name is found
    without holding any text: a hash answers "may spell it", and only those files are read
    again to see how (`_spelled`), so a collision costs a read, never an answer."""

    def __init__(self) -> None:
        self.words: Dict[str, "array[int]"] = {}
        self.size = 0  # hashes held, to bound the index (MAX_INDEXED_WORDS)

    def add(self, path: str, data: bytes) -> "array[int]":
        found = array("H", sorted({hash(w) & _HASH_MASK for w in set(data.translate(_WORDS_ONLY).split())}))
        self.words[path] = found
        self.size += len(found)
        return found


# Past this many words held (2 bytes each), a project's other files are read again for each
# name asked instead of indexed: the time taken changes, never the answer.
MAX_INDEXED_WORDS = 32 * 1024 * 1024
# Two bytes a word: a file of a few hundred words answers "may spell it" wrongly for well
# under one name in a hundred, and a wrong "may" costs one read of that file.
_HASH_MASK = 0xFFFF


def _word_byte(byte: int) -> bool:
    return byte >= 128 or chr(byte).isalnum() or byte == 95  # 95: "_"


_WORDS_ONLY = bytes(b if _word_byte(b) else 32 for b in range(256))  # every other byte a space


def _holding(modules: ProjectModules, listing: _Listing, name: str, method: bool) -> Tuple[str, ...]:
    """The project's module files whose text spells `name` as a word (`.name` for a method)."""
    key = (modules.root, modules.search_paths, name, method)
    matches: Dict[Tuple[str, Tuple[str, ...], str, bool], Tuple[str, ...]] = current().memo(Matches)
    found = matches.get(key)
    if found is None:
        index = current().state(WordIndex)
        spelled = name.encode("utf-8", "surrogatepass")
        wanted = hash(spelled) & _HASH_MASK
        held: List[str] = []
        for path in listing.files:
            words = index.words.get(path)
            data: Optional[bytes] = None
            if words is None:
                data = _read(path)
                if index.size < MAX_INDEXED_WORDS:
                    words = index.add(path, data)
            if words is not None:
                at = bisect_left(words, wanted)
                if at == len(words) or words[at] != wanted:
                    continue
            if data is None:
                data = _read(path)
            if next(_spelled(data, spelled, method), None) is not None:
                held.append(path)
        found = matches[key] = tuple(held)
    return found


def _read(path: str) -> bytes:
    return (read_module_text(path) or "").encode("utf-8", "surrogatepass")


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


def consulted() -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """The files and folders the callers asked about since `start` depend on."""
    files: Set[str] = set()
    folders: Set[str] = set()
    listings = _listings()
    for key in current().state(Consulted, lasting=True):
        listing = listings.get(key)
        if listing is not None:
            files.update(listing.files)
            folders.update(listing.folders)
    return tuple(sorted(files)), tuple(sorted(folders))


def start() -> None:
    current().state(Consulted, lasting=True).clear()


def forget_callers() -> None:
    forget_call_sites()
    current().forget(_Listing, Matches, WordIndex)


# -- the question -----------------------------------------------------------------------------
class Callers:
    """Per file: who calls a project def, across its project."""

    def __init__(self, names: Names) -> None:
        self.names = names
        self.receivers = Receivers(names)

    def of(self, symbol: Symbol, require: Optional[Callable[[str], bool]] = None) -> Optional[List[Caller]]:
        """`require`: a family asking about every caller's arguments says what the text of a
        module holding a caller it could use must pass; a module that spells the name and
        fails it answers None before any module is parsed."""
        if not symbol.is_function or not symbol.path:
            return None
        name = symbol.path[-1]
        if name.startswith("__") and name.endswith("__"):
            return None  # called by the language (`App()`, `a + b`), not by name
        return self._uses(symbol, require)

    def constructions(self, klass: Symbol, require: Optional[Callable[[str], bool]] = None) -> Optional[List[Caller]]:
        """Where a project class is called (its `__init__`'s callers), or None when they
        cannot all be known: a project class derives from it (its instances are built under
        another name), or the project cannot be listed."""
        if not klass.is_class or len(klass.path) != 1:
            return None
        found = self._uses(klass, require)
        if found is None:
            return None
        project = self.names.modules
        assert project is not None
        listing = _listing(project)
        assert listing is not None
        for module in self._modules(project, listing, klass):
            summary = summary_of(module)
            if summary is None:
                return None
            for table in summary.classes.values():
                for base in table.bases:
                    target = self.names.resolve(base) if base is not None else None
                    if isinstance(target, Symbol) and _same(target, klass):
                        return None
        return found

    def _uses(self, symbol: Symbol, require: Optional[Callable[[str], bool]]) -> Optional[List[Caller]]:
        name = symbol.path[-1]
        project = self.names.modules
        if project is None:
            return None
        listing = _listing(project)
        if listing is None:
            return None
        session = current()
        session.state(Consulted, lasting=True).add((project.root, project.search_paths))
        session.state(places.Consulting, lasting=True).consulted = True  # the answer depends on other files
        found: List[Caller] = []
        modules = list(self._modules(project, listing, symbol))
        if require is not None and not all(require(module.text) for module in modules):
            return None
        for module in modules:
            for site in sites_of(module, name):
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
