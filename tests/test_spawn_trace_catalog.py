"""The spawn and trace catalog sections are typed and validated; the profile's spawn helpers
join the built-in task APIs."""
from __future__ import annotations

import pytest

from deadline_lint.catalog import load_catalog
from deadline_lint.families.spawn.spawn_catalog import _build as build_spawn
from deadline_lint.families.spawn.spawn_catalog import spawn_catalog
from deadline_lint.families.trace.trace_catalog import _build as build_trace
from deadline_lint.families.trace.trace_catalog import trace_catalog


def test_builtin_spawn_section() -> None:
    spawn = spawn_catalog(load_catalog())
    assert {"asyncio.create_task", "asyncio.ensure_future"} <= spawn.tasks
    assert "asyncio.get_running_loop" in spawn.loop_factories
    assert "asyncio.TaskGroup" in spawn.owners
    assert "threading.Thread" in spawn.threads and "asyncio.to_thread" in spawn.thread_offloads
    assert "submit" in spawn.executor_methods and "run_in_executor" in spawn.loop_executor_methods
    assert {"create_task", "ensure_future"} <= spawn.task_words


def test_profile_spawn_helpers_are_task_apis() -> None:
    catalog = load_catalog()
    spawn = spawn_catalog(catalog, ["acme.tasks.spawn"])
    assert "acme.tasks.spawn" in spawn.tasks and "spawn" in spawn.task_words
    assert "acme.tasks.spawn" not in spawn_catalog(catalog).tasks


@pytest.mark.parametrize(
    "section, problem",
    [
        ({"tasks": "asyncio.create_task"}, "tasks: expected a list of names"),
        ({"executors": ["concurrent.futures.ThreadPoolExecutor"]}, "executors: expected a mapping"),
        ({"cancel_tokens": [""]}, "cancel_tokens: expected a list of names"),
    ],
)
def test_malformed_spawn_section_fails_loudly(section, problem) -> None:
    with pytest.raises(RuntimeError, match=problem):
        build_spawn(section, ())


def test_builtin_trace_section() -> None:
    trace = trace_catalog(load_catalog())
    assert trace.span_methods == {"start_as_current_span", "start_span"}
    assert "opentelemetry.trace.get_tracer" in trace.tracer_factories
    assert trace.attributes_keyword == "attributes" and trace.attributes_position == 3
    assert "prometheus_client.Counter" in trace.prometheus_metrics and "labels" in trace.label_methods


def test_malformed_trace_section_fails_loudly() -> None:
    with pytest.raises(RuntimeError, match="tracers: expected a mapping"):
        build_trace({"tracers": ["opentelemetry.trace.get_tracer"]})
