"""Does a text import something the outbound catalog lists? One answer for the outbound rules'
prefilter, the outbound analysis and the outbound facts of project modules alike."""
from __future__ import annotations

import re
import sys
from typing import Dict, FrozenSet, Iterable, Optional, Set, Tuple

from deadline_lint.catalog import Catalog
from deadline_lint.semantics.scan import from_import_pattern, plain_import_pattern

STDLIB_MODULES = frozenset(getattr(sys, "stdlib_module_names", ())) | {"asyncio", "socket", "http", "urllib"}


def catalog_imports(catalog: Catalog) -> "ImportTextFilter":
    """The catalog's one `ImportTextFilter`."""
    return catalog.derived(ImportTextFilter)


class ImportTextFilter:
    """True when the text imports something the catalog lists (and, for the standard library,
    also spells one of the listed names: `import asyncio` alone is everywhere). Code that
    uses a listed API has to import it: `import os, requests`, `from requests.api import get`
    and `from redis import asyncio` count; `from requests.exceptions import Timeout` does not,
    since nothing it binds leads to a listed name. Generated gRPC stub modules are recognised
    by their suffix. Anything unusual (a backslash continuation) counts, to stay safe."""

    def __init__(self, catalog: Catalog) -> None:
        self._canonical = catalog.canonical
        self._leads_somewhere = _prefixes([*catalog.apis, *catalog.classes, *catalog.factories,
                                           *catalog.timeout_objects, *catalog.aliases])
        needs: Dict[str, Set[Optional[str]]] = {}
        names = [*catalog.apis, *catalog.classes, *catalog.factories, *catalog.timeout_objects]
        for qualname in names:
            if not is_method(qualname, catalog):
                module = qualname.split(".")[0]
                needs.setdefault(module, set()).add(qualname.rpartition(".")[2] if module in STDLIB_MODULES else None)
        for alias in catalog.aliases:
            module = alias.split(".")[0]
            if module not in STDLIB_MODULES:
                needs.setdefault(module, set()).add(None)
        self._needs = tuple((module, frozenset(n for n in wanted if n)) for module, wanted in sorted(needs.items()))
        self._anywhere = frozenset(module for module, wanted in needs.items() if None in wanted)
        self._suffixes = tuple(pattern.module_suffix for pattern in catalog.stubs)
        self._patterns: Dict[str, Tuple["re.Pattern[str]", "re.Pattern[str]"]] = {}
        # The prefilter and the analyses (`OutboundSites`, the outbound facts) ask in turn.
        self._last: Tuple[Optional[str], bool] = (None, False)

    def __call__(self, text: str) -> bool:
        if text is self._last[0]:
            return self._last[1]
        answer = self._answer(text)
        self._last = (text, answer)
        return answer

    def _answer(self, text: str) -> bool:
        if any(suffix in text for suffix in self._suffixes):
            return True
        for module, names in self._needs:
            if module not in text:
                continue
            if module not in self._anywhere and not any(name in text for name in names):
                continue
            if self._imports(module, text):
                return True
        return False

    def _imports(self, module: str, text: str) -> bool:
        patterns = self._patterns.get(module)
        if patterns is None:
            patterns = self._patterns[module] = (plain_import_pattern(module), from_import_pattern(module))
        plain, from_import = patterns
        if plain.search(text):
            return True  # `import redis` binds the module: anything in it can follow
        for match in from_import.finditer(text):
            source, names = match.group(1), match.group(2)
            if "\\" in names or "*" in names:
                return True
            for item in re.sub(r"#[^\n]*", "", names).strip("() \t\r\n").split(","):
                imported = item.split(" as ")[0].strip()
                if imported and self._canonical(f"{source}.{imported}") in self._leads_somewhere:
                    return True
        return False


def _prefixes(qualnames: Iterable[str]) -> FrozenSet[str]:
    """Every dotted prefix of every name: `redis.asyncio` leads to `redis.asyncio.Redis`."""
    found: Set[str] = set()
    for qualname in qualnames:
        parts = qualname.split(".")
        found.update(".".join(parts[:cut]) for cut in range(1, len(parts) + 1))
    return frozenset(found)


def is_method(qualname: str, catalog: Catalog) -> bool:
    # A method is reached through an instance, whose class or factory already gave a word.
    return qualname.rpartition(".")[0] in catalog.classes
