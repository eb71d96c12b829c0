"""tests/goldens/thread_modules/: `fix --unsafe-fixes --thread-budget` threads a budget along a
chain that crosses modules (api -> service -> clients) in one run, with no default anywhere;
a function whose caller is outside the run keeps its signature, so that caller still works;
the codemod (one file at a time) never threads a function another module names; and the
fixed package keeps the contract when it runs."""
from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from deadline_lint.run import api

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "goldens" / "thread_modules"
MODULES = ("__init__", "api", "clients", "service")
OPTIONS = api.Options(unsafe_fixes=True, thread_budget=True, jobs=1)
sys.path.insert(0, str(ROOT / "bench"))

import sim_runtime as rt  # noqa: E402


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(GOLDEN / "before", root)
    return root


def _texts(folder: Path) -> dict:
    return {name: (folder / "shop" / f"{name}.py").read_text(encoding="utf-8") for name in MODULES}


def _paths(root: Path, *names: str) -> list:
    return [str(root / "shop" / f"{name}.py") for name in (names or MODULES)]


def test_one_run_threads_the_chain_across_modules_and_a_second_changes_nothing(project: Path) -> None:
    results = list(api.fix_paths(_paths(project), OPTIONS))
    assert _texts(project) == _texts(GOLDEN / "after")
    assert sum(r.threaded for r in results) == 3  # two clients and the service
    assert "budget_s: float =" not in "".join(_texts(project).values())  # no default mints time
    assert [r.remaining for r in results] == [[], [], [], []]
    again = list(api.fix_paths(_paths(project), OPTIONS))
    assert not any(r.changed for r in again) and _texts(project) == _texts(GOLDEN / "after")


def test_the_diff_shows_the_whole_chain_and_writes_nothing(project: Path) -> None:
    results = list(api.fix_paths(_paths(project), api.Options(unsafe_fixes=True, thread_budget=True, write=False)))
    assert _texts(project) == _texts(GOLDEN / "before")
    after = _texts(GOLDEN / "after")
    changed = {Path(r.path).stem: r for r in results if r.changed}
    assert sorted(changed) == ["api", "clients", "service"]
    for name, result in changed.items():
        assert result.text == after[name]
        assert b"+++ " in result.diff and not result.written


def test_a_module_whose_callees_are_outside_the_run_is_left_alone(project: Path) -> None:
    """The service has no outbound call of its own: it is threaded only once a callee takes
    `budget_s`, and its callees are not in this run (nor threaded on disk)."""
    results = list(api.fix_paths(_paths(project, "service"), OPTIONS))
    assert not results[0].changed


def test_a_caller_outside_the_run_keeps_the_chain_unthreaded_and_working(project: Path) -> None:
    """api.py calls the service but is not in the run: a required `budget_s` would break it,
    so neither the service nor the clients it calls are threaded (their own fixes bound
    each hop by the edge total), and the untouched caller still runs."""
    list(api.fix_paths(_paths(project, "clients", "service"), OPTIONS))
    texts = _texts(project)
    before = _texts(GOLDEN / "before")
    assert "budget_s" not in "".join(texts.values())
    assert texts["api"] == before["api"] and texts["service"] == before["service"]
    assert texts["clients"].count("timeout=10.0") == 2
    calls = _run(texts, total=10.0)
    assert calls and all(call.timeout is not None and call.timeout <= 10.0 for call in calls)


def test_the_codemod_never_threads_a_function_another_module_names(project: Path) -> None:
    """LibCST runs a codemod one file at a time: between two runs a caller in another module
    would lack a required keyword, so it threads nothing across modules (a run settles)."""
    # LibCST's codemod machinery, imported here: at the module's top it is a second of every
    # xdist worker's collection, whichever worker runs this test.
    from libcst.codemod import CodemodContext, TransformSuccess, transform_module

    from deadline_lint.run import api
    from deadline_lint.frontends.codemod import InsertBudget

    for _ in range(4):
        api.reset()  # each `python -m libcst.tool codemod` is a new process
        changed = False
        for path in _paths(project):
            before = Path(path).read_text(encoding="utf-8")
            command = InsertBudget(CodemodContext(filename=path), unsafe_fixes=True, thread_budget=True)
            result = transform_module(command, before)
            assert isinstance(result, TransformSuccess)
            if result.code != before:
                Path(path).write_text(result.code, encoding="utf-8")
                changed = True
        if not changed:
            break
    texts = _texts(project)
    assert "budget_s" not in "".join(texts.values()) and texts["clients"].count("timeout=10.0") == 2
    assert _run(texts, total=1.0)


@pytest.mark.parametrize("total", [0.2, 1.0, 10.0])
@pytest.mark.parametrize("seed", range(10))
def test_the_fixed_chain_never_gives_a_hop_more_than_is_left(total: float, seed: int) -> None:
    calls = _run(_texts(GOLDEN / "after"), total, seed)
    assert calls  # a hop that fails or times out ends the request
    assert all(call.frames[:2] == ["api.handler", "service.load_profile"] for call in calls)
    for call in calls:
        assert call.timeout is not None
        assert call.timeout <= max(rt.TIMEOUT_FLOOR_S, call.remaining - rt.HOP_MARGIN_S) + 1e-9, call


def _run(texts: dict, total, seed: int = 0):
    """Call `api.handler` as one request; its calls."""
    fakes = rt.fakes()
    tree = rt.Tree("shop", {name: text for name, text in texts.items()}, fakes)
    module = tree.module("api")
    request = rt.Request(deadline=total, rng=random.Random(seed), package="shop")
    rt.STATE.request = request
    try:
        rt._now.set(0.0)
        try:
            module.handler(SimpleNamespace(user_id="u"), fakes["simbudget"].Budget(total))
        except rt.Simulated:
            pass
    finally:
        rt.STATE.request = None
    return request.calls


@pytest.mark.parametrize("path, threaded", [
    ("tests/test_pages.py", False), ("app/test_pages.py", False), ("app/pages_test.py", False),
    ("app/pages.py", True),  # `test_page` is only a name here: its caller passes a budget
])
def test_a_test_function_in_a_test_file_is_not_threaded(path: str, threaded: bool) -> None:
    text = (
        "import requests\n\n\n"
        "def test_page():\n"
        "    requests.get('http://pages/1')\n\n\n"
        "def handler(budget):\n"
        "    test_page()\n"
    )
    result = api.fix_text(text, path, OPTIONS)
    assert result.text is not None and ("timeout=" in result.text)
    assert ("budget_s" in result.text) is threaded


def test_a_caller_elsewhere_with_an_unforwardable_budget_keeps_the_callee_unthreaded(tmp_path: Path) -> None:
    """`f1` in api.py holds a budget it cannot forward (a remainder read from the ambient
    accessor and spent by hand): its pass neither threads it nor passes `budget_s`, so the
    callee in clients.py must keep its signature, or `await load()` raises TypeError."""
    package = tmp_path / "shop"
    package.mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "shop"\nversion = "0"\n')
    (tmp_path / "profile.yaml").write_text(
        "budget: {accessors: [simbudget.remaining_seconds]}\nfix: {context_accessor: simbudget.remaining_seconds}\n"
    )
    (package / "__init__.py").write_text("")
    (package / "clients.py").write_text(
        "from simbudget import Budget\n"
        "import requests\n\n\n"
        "def load():\n"
        "    fetch()\n\n\n"
        "def fetch(*, budget_s: float = 10.0):\n"
        "    requests.get('x', timeout=None)\n\n\n"
        "def handler(budget: Budget):\n"
        "    load()\n"
    )
    (package / "api.py").write_text(
        "from .clients import load\n"
        "from simbudget import Budget\n"
        "from simbudget import remaining_seconds\n\n\n"
        "def edge(budget: Budget):\n"
        "    f1()\n\n\n"
        "def f1():\n"
        "    t = remaining_seconds() - 0.05\n"
        "    load()\n"
    )
    options = api.Options(unsafe_fixes=True, thread_budget=True, jobs=1, profile=str(tmp_path / "profile.yaml"))
    list(api.fix_paths([str(package / "clients.py"), str(package / "api.py")], options))
    clients = (package / "clients.py").read_text()
    calls = (package / "api.py").read_text().count("load(budget_s=")
    assert "def load():" in clients or calls == 1, clients


def test_the_checkers_own_cache_does_not_count_as_a_file_naming_a_function(project: Path) -> None:
    """A `check` leaves `.deadline_lint_cache/` in the project, whose entries spell every name
    the checker saw; a `fix` run afterwards must thread the chain all the same."""
    cache = project / ".deadline_lint_cache" / "v2"
    cache.mkdir(parents=True)
    names = " ".join(word for text in _texts(project).values() for word in text.split())
    (cache / "entry.json").write_text('{"names": "%s"}' % names.replace('"', ""))
    list(api.fix_paths(_paths(project), OPTIONS))
    assert _texts(project) == _texts(GOLDEN / "after")
