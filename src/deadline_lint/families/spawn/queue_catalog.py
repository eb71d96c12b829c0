"""The durable-queue section of the catalog (queues.yaml) as a typed value, with the profile's
`durable_enqueues` merged in. Built once per catalog and profile; a malformed built-in file is
a packaging bug and fails loudly."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Iterable, Mapping, Optional, Tuple

from deadline_lint.catalog import Catalog
from deadline_lint.catalog.names import canonical_name, name_set

_FILE = "queues.yaml"
PROFILE_LIBRARY = "durable queue"  # how messages name an enqueue the profile lists


@dataclass(frozen=True)
class QueueClass:
    qualname: str
    library: str
    methods: FrozenSet[str]
    factories: FrozenSet[str]
    service: Optional[str]  # a generic factory builds this queue only for this first argument


@dataclass(frozen=True)
class QueueLibrary:
    library: str
    imports: FrozenSet[str]
    task_decorators: FrozenSet[str]
    app_classes: FrozenSet[str]
    app_decorators: FrozenSet[str]
    app_methods: FrozenSet[str]
    task_methods: FrozenSet[str]
    wrappers: FrozenSet[str]
    builders: FrozenSet[str]
    options: Tuple[str, ...]
    waits: FrozenSet[str] = frozenset()  # methods of a job's handle that wait for its result

    @property
    def enqueue_methods(self) -> FrozenSet[str]:
        return self.task_methods | self.app_methods


@dataclass(frozen=True)
class QueueCatalog:
    libraries: Tuple[QueueLibrary, ...]
    queues: Tuple[QueueClass, ...]
    aliases: Mapping[str, str]
    functions: FrozenSet[str]  # the profile's own enqueue functions, by qualified name

    def canonical(self, qualname: str) -> str:
        return canonical_name(self.aliases, qualname)

    def library(self, name: str) -> Optional[QueueLibrary]:
        return next((lib for lib in self.libraries if lib.library == name), None)

    def decorator_library(self, qualname: str) -> Optional[str]:
        return next((lib.library for lib in self.libraries if qualname in lib.task_decorators), None)

    def app_library(self, qualname: str) -> Optional[str]:
        return next((lib.library for lib in self.libraries if qualname in lib.app_classes), None)

    def builder_library(self, qualname: str) -> Optional[str]:
        return next((lib.library for lib in self.libraries if qualname in lib.builders), None)

    def queue_with(self, method: str) -> Tuple[QueueClass, ...]:
        return tuple(queue for queue in self.queues if method in queue.methods)

    def options_of(self, library: str) -> Tuple[str, ...]:
        found = self.library(library)
        return found.options if found is not None else ()

    @property
    def key(self) -> str:
        """What the catalog's answers depend on, for naming the project fact built from it."""
        parts = [lib.library for lib in self.libraries] + sorted(self.functions)
        decorators = sorted(d for lib in self.libraries for d in (*lib.task_decorators, *lib.app_classes))
        return ",".join(parts + decorators)

    @property
    def words(self) -> FrozenSet[str]:
        """Every enqueue spells one of these as a whole identifier (a method or a function's
        last name): a file or body without any holds no durable enqueue."""
        found = set(self.functions_last_names)
        for lib in self.libraries:
            found.update(lib.enqueue_methods)
        for queue in self.queues:
            found.update(queue.methods)
        return frozenset(found)

    @property
    def functions_last_names(self) -> FrozenSet[str]:
        return frozenset(name.rpartition(".")[2] for name in self.functions)


def queue_catalog(catalog: Catalog, durable_enqueues: Iterable[str] = ()) -> QueueCatalog:
    functions = tuple(sorted(durable_enqueues))
    return catalog.cached(QueueCatalog, lambda: _build(catalog.data.get("queues") or [], functions), functions)


def _build(groups: Any, functions: Iterable[str]) -> QueueCatalog:
    if not isinstance(groups, list):
        raise RuntimeError(f"{_FILE}: expected a list of library groups")
    libraries = []
    queues = []
    aliases: Dict[str, str] = {}
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("library"), str):
            raise RuntimeError(f"{_FILE}: expected each group to be a mapping with a library name")
        library = group["library"]
        options = name_set(group, "options", _FILE)
        libraries.append(
            QueueLibrary(
                library=library,
                imports=name_set(group, "imports", _FILE),
                task_decorators=name_set(group, "task_decorators", _FILE),
                app_classes=name_set(group, "app_classes", _FILE),
                app_decorators=name_set(group, "app_decorators", _FILE),
                app_methods=name_set(group, "app_methods", _FILE),
                task_methods=name_set(group, "task_methods", _FILE),
                wrappers=name_set(group, "wrappers", _FILE),
                builders=name_set(group, "builders", _FILE),
                options=tuple(group.get("options") or ()) if options else (),
                waits=name_set(group, "waits", _FILE),
            )
        )
        for qualname, spec in (group.get("queues") or {}).items():
            if not isinstance(spec, dict):
                raise RuntimeError(f"{_FILE}: queues: {qualname}: expected a mapping with methods")
            service = spec.get("service")
            queues.append(
                QueueClass(
                    qualname=qualname,
                    library=library,
                    methods=name_set(spec, "methods", _FILE),
                    factories=name_set(spec, "factories", _FILE),
                    service=service if isinstance(service, str) else None,
                )
            )
        aliases.update(group.get("aliases") or {})
    return QueueCatalog(tuple(libraries), tuple(queues), aliases, frozenset(functions))
