"""DL504's durable queues: the catalog as data, the text prefilter (a file that mentions no
queue is not parsed for the rule), and tasks defined in another module of the project."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from deadline_lint.catalog import load_catalog
from deadline_lint.engine.checker import Checker
from deadline_lint.families.spawn.queue_catalog import queue_catalog
from deadline_lint.semantics.facts import forget_facts
from deadline_lint.settings.profile import build_profile

DEFAULT = build_profile({}, "test")


def _write(root: Path, files: dict) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


# -- the catalog -----------------------------------------------------------------------------
def test_every_library_names_the_options_a_message_suggests() -> None:
    queues = queue_catalog(load_catalog())
    names = {lib.library for lib in queues.libraries}
    assert {"celery", "rq", "arq", "dramatiq", "huey", "taskiq", "kombu", "Cloud Tasks", "SQS"} <= names
    assert all(lib.options for lib in queues.libraries)
    assert {"delay", "apply_async", "enqueue", "enqueue_job", "kiq", "publish", "send_message"} <= queues.words


def test_the_profile_adds_its_own_enqueue_functions() -> None:
    queues = queue_catalog(load_catalog(), ("acme.jobs.submit",))
    assert "acme.jobs.submit" in queues.functions and "submit" in queues.words


# -- the prefilter: no queue, no parse ----------------------------------------------------------
@pytest.mark.parametrize(
    "text, parsed",
    [
        ("def handler(request, budget):\n    return fetch(budget)\n", False),  # a budget, no queue
        ("def start(user_id):\n    build.delay(user_id)\n", False),  # a queue, no budget
        ("def start(user_id, budget):\n    build.delay(user_id)\n", True),
        ("def start(q, budget):\n    q.enqueue(f)\n", True),
    ],
)
def test_a_file_is_parsed_for_dl504_only_when_it_spells_an_enqueue_and_a_budget(text: str, parsed: bool) -> None:
    assert Checker(DEFAULT, select=["DL504"]).could_fire(text) is parsed


# -- tasks of other project modules ------------------------------------------------------------
ROUTE = """\
    from pkg.tasks import build_report


    def start(user_id, budget):
        build_report.delay(user_id, deadline=budget.deadline)
"""


@pytest.mark.parametrize(
    "tasks, worker, flagged",
    [
        ("from celery import shared_task\n\n@shared_task\ndef build_report(user_id, deadline=None):\n    ...\n",
         "", True),
        # `@app.task` on the Celery app another project module builds.
        ("from pkg.worker import app\n\n@app.task\ndef build_report(user_id, deadline=None):\n    ...\n",
         "from celery import Celery\n\napp = Celery('pkg')\n", True),
        # An app nothing shows to be a queue's: not taken for Celery.
        ("from pkg.worker import app\n\n@app.task\ndef build_report(user_id, deadline=None):\n    ...\n",
         "app = make_app()\n", False),
        ("def build_report(user_id, deadline=None):\n    ...\n", "", False),
    ],
)
def test_a_task_of_another_module_is_known_by_its_decorator(
    tmp_path: Path, tasks: str, worker: str, flagged: bool
) -> None:
    forget_facts()
    _write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/tasks.py": tasks,
        "pkg/worker.py": worker,
        "pkg/api.py": ROUTE,
    })
    found = Checker(DEFAULT, select=["DL504"]).check_path(str(tmp_path / "pkg/api.py"))
    assert [d.line for d in found] == ([5] if flagged else [])
    if flagged:
        assert "`build_report.delay()`" in found[0].message and "`deadline`" in found[0].message
