"""The outbound prefilter's project half: a file that imports no listed module may still import
a project name that leads to a client (one its module's facts say is, gives or holds one, or
wraps an outbound call), or a project module that re-exports a listed one. Answered from the
modules' facts and import lines, once per file (the prefilter and the walk both ask)."""
from __future__ import annotations

import re
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from deadline_lint.catalog import Catalog
from deadline_lint.families.outbound.analysis.outbound_facts import facts_for
from deadline_lint.semantics.imported import imports_fact_holder
from deadline_lint.semantics.modules import ModuleSource, absolute_name, project_of
from deadline_lint.semantics.scan import import_table
from deadline_lint.semantics.session import current
from deadline_lint.semantics.summary import MAX_CHAIN, Names
from deadline_lint.semantics.summary import _import_table_of as import_lines
from deadline_lint.support.collector import collector_paused


class Answers:
    """The run's memo of `leads_to_a_client`, by path, text and catalog."""


def leads_to_a_client(path: str, text: str, catalog: Catalog) -> bool:
    """The file imports a project name that is or gives a client, a class holding one or a
    wrapper of an outbound call (`IsClient`, `ForwardsTimeout`), or a listed module or object
    re-exported by a project module. Once per file (the prefilter and the walk both ask)."""
    key = (path, hash(text), id(catalog))
    answers: Dict[Tuple[str, int, int], Tuple[Catalog, bool]] = current().memo(Answers)
    known = answers.get(key)
    if known is None or known[0] is not catalog:
        if len(answers) > 4096:
            answers.clear()
        is_client, forwards = facts_for(catalog)
        with collector_paused():  # it may parse project modules: see `collector_paused`
            found = (
                reexports_listed(text, path, catalog)
                or imports_fact_holder(is_client, text, path)
                or imports_fact_holder(forwards, text, path)
            )
        known = answers[key] = (catalog, found)
    return known[1]


def reexports_listed(text: str, path: str, catalog: Catalog) -> bool:
    """A name the file imports from the project, or an attribute of an imported project
    module it spells (`compat.http`), stands for a listed module or object."""
    found = project_of(path)
    if found is None:
        return False
    modules, name, is_package = found
    names = Names(modules, ModuleSource(name, path, is_package, text))
    module_names: List[Tuple[str, str]] = []  # (bound name, project module) of `import pkg.compat`
    for bound, target in import_table(text).items():
        target = absolute_name(name, is_package, target)
        if not names.is_project_name(target):
            continue
        if _reexports_listed(names, target, catalog):
            return True
        split = names.split(target)
        if split is not None and not split[1]:  # a module: judge the attributes this file spells
            module_names.append((bound, target))
    if not module_names:
        return False
    spelled = attributes_spelled(text, frozenset(b for b, _ in module_names if b.isidentifier()))
    for bound, target in module_names:
        if bound.isidentifier():
            attrs = spelled.get(bound, set())
        else:  # what the import-line scan took for a name (text in a docstring, say)
            attrs = set(re.findall(rf"\b{re.escape(bound)}\.([A-Za-z_]\w*)", text))
        for attr in sorted(attrs):
            if _reexports_listed(names, f"{target}.{attr}", catalog):
                return True
    return False


# `name.attr` wherever the text spells it (comments and strings too), chains included: the
# attribute is matched inside a lookahead, so `a.b.c` gives (a, b) and then (b, c).
_NAME_DOT_ATTR = re.compile(r"\b([^\W\d]\w*)(?=\.([A-Za-z_]\w*))")
_NAME = re.compile(r"[^\W\d]\w*")


def attributes_spelled(text: str, only: Optional[FrozenSet[str]] = None) -> Dict[str, Set[str]]:
    """Every name the text spells followed by `.attr` (of the names in `only`, when given),
    with those attributes, as a search for `\\bNAME\\.([A-Za-z_]\\w*)` per name finds them (one
    scan of the text, where one search per imported project module was 1.3 CPU s of a cold
    check of the services corpus). That search consumes what it matched, so in `NAME.NAME.x`
    it finds only `NAME.NAME`: a pair starting inside the name's previous match is left out
    here too. A match is a whole word followed by a dot, so looking for `only`'s names finds
    the same pairs of them as looking for every name does."""
    pattern = _NAME_DOT_ATTR
    if only is not None:
        only = frozenset(n for n in only if _NAME.fullmatch(n))  # what the full pattern can match
        if not only:
            return {}
        # Longest first: where one name is a prefix of another, the longer is tried first.
        words = "|".join(re.escape(n) for n in sorted(only, key=lambda n: (-len(n), n)))
        pattern = re.compile(rf"\b({words})(?=\.([A-Za-z_]\w*))")
    found: Dict[str, Set[str]] = {}
    ends: Dict[str, int] = {}
    for match in pattern.finditer(text):
        name, attr = match[1], match[2]
        start = match.start()
        if start < ends.get(name, 0):
            continue
        ends[name] = start + len(name) + 1 + len(attr)
        attrs = found.get(name)
        if attrs is None:
            attrs = found[name] = set()
        attrs.add(attr)
    return found


def _reexports_listed(names: Names, qualname: str, catalog: Catalog) -> bool:
    """`qualname` is bound by import lines, through project modules, to a listed name outside
    the project: judged from the modules' import lines alone (no parse; a name an import
    binds twice counts too, which only lets a file in)."""
    for _ in range(MAX_CHAIN):
        split = names.split(qualname)
        if split is None or not split[1]:
            return False
        module, rest = split
        table = import_lines(module)
        if rest[0] not in table:
            return False
        qualname = ".".join((absolute_name(module.name, module.is_package, table[rest[0]]), *rest[1:]))
        if not names.is_project_name(qualname):
            return listed(catalog, qualname)
    return False


def listed(catalog: Catalog, qualname: str) -> bool:
    """A module or object outside the project that is, holds or leads to a listed name
    (`requests`, `requests.Session`, `urllib.request`); `requests.exceptions` does not."""
    leading, names = catalog.derived(_prefixes_of)
    parts = catalog.canonical(qualname).split(".")
    if ".".join(parts) in leading:
        return True  # the name itself, or a module on the way to one
    return any(".".join(parts[:cut]) in names for cut in range(1, len(parts)))  # an attribute of one


def _prefixes_of(catalog: Catalog) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    names = [*catalog.apis, *catalog.classes, *catalog.factories, *catalog.timeout_objects, *catalog.aliases]
    leading: Set[str] = set()
    for qualname in names:
        parts = qualname.split(".")
        leading.update(".".join(parts[:cut]) for cut in range(1, len(parts) + 1))
    return frozenset(leading), frozenset(names)

