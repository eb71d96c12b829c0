"""The spawn section of the catalog (spawn.yaml) as a typed value, with the profile's
`spawn_helpers` merged in. Built once per catalog and profile, validated on the way: a
malformed built-in file is a packaging bug and fails loudly."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, FrozenSet, Iterable, Mapping

from deadline_lint.catalog import Catalog
from deadline_lint.catalog.names import name_set


@dataclass(frozen=True)
class SpawnCatalog:
    tasks: FrozenSet[str]  # qualified names of functions returning a task to own
    loop_factories: FrozenSet[str]
    loop_types: FrozenSet[str]
    loop_task_methods: FrozenSet[str]
    owners: FrozenSet[str]
    threads: FrozenSet[str]
    executor_classes: FrozenSet[str]
    executor_methods: FrozenSet[str]
    loop_executor_methods: FrozenSet[str]
    thread_offloads: FrozenSet[str]
    cancel_tokens: FrozenSet[str]
    discarding_callbacks: FrozenSet[str] = frozenset()  # methods that drop their callback's result

    @property
    def task_words(self) -> FrozenSet[str]:
        """Words a file must contain for a task spawn to be in it."""
        return frozenset(name.rpartition(".")[2] for name in self.tasks) | self.loop_task_methods

    @property
    def child_words(self) -> FrozenSet[str]:
        """Words a file must contain for a thread or executor job to be started in it."""
        names = [*self.threads, *self.thread_offloads]
        return frozenset(n.rpartition(".")[2] for n in names) | self.executor_methods | self.loop_executor_methods


def _names(section: Mapping[str, Any], key: str) -> FrozenSet[str]:
    return name_set(section, key, "spawn.yaml")


def spawn_catalog(catalog: Catalog, spawn_helpers: Iterable[str] = ()) -> SpawnCatalog:
    helpers = tuple(sorted(spawn_helpers))
    return catalog.cached(SpawnCatalog, lambda: _build(catalog.data.get("spawn") or {}, helpers), helpers)


def _build(section: Mapping[str, Any], helpers: Iterable[str]) -> SpawnCatalog:
    executors = section.get("executors") or {}
    if not isinstance(executors, dict):
        raise RuntimeError("spawn.yaml: executors: expected a mapping with classes and methods")
    return SpawnCatalog(
        tasks=_names(section, "tasks") | frozenset(helpers),
        loop_factories=_names(section, "loop_factories"),
        loop_types=_names(section, "loop_types"),
        loop_task_methods=_names(section, "loop_task_methods"),
        owners=_names(section, "owners"),
        threads=_names(section, "threads"),
        executor_classes=_names(executors, "classes"),
        executor_methods=_names(executors, "methods"),
        loop_executor_methods=_names(section, "loop_executor_methods"),
        thread_offloads=_names(section, "thread_offloads"),
        cancel_tokens=_names(section, "cancel_tokens"),
        discarding_callbacks=_names(section, "discarding_callbacks"),
    )
