"""The bounded run of bench/simulate.py: randomized call trees, fixed by `fix --unsafe-fixes
--thread-budget` (and compared with the codemod's result), then executed under a virtual clock
with recording fake transports. The seed is printed; rerun a failure with
`python bench/simulate.py --seed SEED --trees N --show 3`."""
from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import sim_runtime as rt  # noqa: E402
import simulate  # noqa: E402

SEED = int(os.environ.get("DEADLINE_LINT_SIM_SEED", random.Random().randrange(100000)))
TREES = 30


@pytest.fixture(scope="module")
def totals():
    print(f"simulation seed {SEED} ({TREES} trees, and {TREES} flat ones)")
    nested = simulate.simulate(TREES, SEED)
    flat = simulate.simulate(TREES, SEED, flat=True, start=TREES)
    return nested, flat


def test_every_tree_is_fixed_the_same_by_the_codemod_and_never_given_up(totals) -> None:
    for run in totals:
        assert run.problems == [], run.problems


def test_fixed_trees_import_and_run_without_a_crash(totals) -> None:
    for run in totals:
        assert run.trees == TREES and run.calls > 0
        assert run.silent["crash"] == 0 and run.reported["crash"] == 0


def test_no_fixed_call_waits_forever(totals) -> None:
    for run in totals:
        assert run.silent["infinite"] == 0, run.causes


def _run_texts(texts, total, entry="f", seed=1, **kwargs):
    fakes = rt.fakes()
    tree = rt.Tree("simtest", texts, fakes)
    module = tree.module("m0")
    request = rt.Request(deadline=total, rng=random.Random(seed), package="simtest")
    rt.STATE.request = request
    try:
        rt._now.set(0.0)
        try:
            getattr(module, entry)(**kwargs)
        except rt.Simulated:
            pass
    finally:
        rt.STATE.request = None
    return request.calls


def test_the_oracle_sees_a_budget_that_grows() -> None:
    """A seconds budget spent twice: the second hop is given more than is left."""
    text = (
        "import requests\n"
        "def f(*, budget_s: float = 10.0):\n"
        "    requests.get('a', timeout=max(0.001, budget_s - 0.05))\n"
        "    requests.get('b', timeout=max(0.001, budget_s - 0.05))\n"
    )
    calls = []
    for attempt in range(20):  # until the first hop succeeds and takes some time
        calls = _run_texts({"m0": text}, 10.0, seed=attempt, budget_s=10.0)
        if len(calls) == 2:
            break
    assert len(calls) == 2
    second = calls[1]
    assert second.start > 0 and second.timeout > second.remaining - rt.HOP_MARGIN_S


def test_the_oracle_records_the_library_defaults() -> None:
    text = "import requests, httpx\ndef f():\n    requests.get('a')\n"
    calls = _run_texts({"m0": text}, 10.0)
    assert calls and calls[0].timeout is None and calls[0].library == "requests"


def test_a_call_records_the_retried_functions_running_it_again() -> None:
    """`Call.retried` names a decorated function only on its attempts after the first, and a
    retry finding left in it accounts for what those attempts did below it, nothing else."""
    text = (
        "import requests, tenacity\n"
        "def g():\n"
        "    requests.get('b', timeout=1.0)\n"
        "@tenacity.retry(stop=tenacity.stop_after_attempt(3),\n"
        "                retry=tenacity.retry_if_exception_type(requests.ConnectionError))\n"
        "def f():\n"
        "    g()\n"
        "    requests.get('a', timeout=1.0)\n"
    )
    calls = []
    for seed in range(40):  # until an attempt fails and `f` runs again
        calls = _run_texts({"m0": text}, 10.0, seed=seed)
        if any(c.attempt > 1 for c in calls):
            break
    assert calls[0].retried == ()  # the first attempt
    again = [c for c in calls if c.attempt > 1]
    assert again and all(c.retried == ("m0.f",) for c in again)

    request = rt.Request(deadline=0.0, rng=random.Random(0), package="simtest")
    request.calls = [rt.Call("b", "requests", 1.0, 0.5, 0.0, ["m0.f", "m0.g"], 2, None, ("m0.f",)),
                     rt.Call("b", "requests", 1.0, 0.5, 0.0, ["m0.f", "m0.g"], 1)]
    generator = simulate.Generator(random.Random(0), 0)
    left = {"m0": {"f": {"DL303", "DL101"}}}
    judged = simulate._judge(0, request, left, generator, {"m0": text})
    assert {(v.kind, v.reported) for v in judged if v.detail.endswith("attempt 2 via m0.f > m0.g")} == {
        ("after-deadline", ("DL303",)), ("exceeds", ("DL303",))}
    assert all(v.reported == () for v in judged if "attempt 1" in v.detail)


def _fix(text: str, ambient: bool = True) -> str:
    from deadline_lint.fixes.loop import FixMode, fix_text

    return fix_text(_checker(ambient), text, "simtest/m0.py", FixMode(unsafe=True, thread_budget=True)).text


def _checker(ambient: bool = True):
    """The simulator's checker; without `ambient`, its profile minus `fix.context_accessor`
    (what a project with no ambient budget gets)."""
    if ambient:
        return simulate.Fixer(codemod=False).checker
    from deadline_lint.engine.checker import Checker
    from deadline_lint.settings.profile import build_profile

    return Checker(build_profile({k: v for k, v in simulate.PROFILE.items() if k != "fix"}, "<no ambient>"))


def _keeps_the_contract(text: str, total: float, **kwargs) -> None:
    for seed in range(20):
        for call in _run_texts({"m0": text}, total, seed=seed, **kwargs):
            assert call.timeout is not None
            assert call.timeout <= max(rt.TIMEOUT_FLOOR_S, call.remaining - rt.HOP_MARGIN_S) + 1e-9, (seed, call)


def test_a_seconds_parameter_spent_twice_is_fixed_to_spend_what_is_left() -> None:
    """The oracle's case above, fixed (DL107): every hop gets at most what is left."""
    text = (
        "import requests\n"
        "def f(*, budget_s: float = 10.0):\n"
        "    requests.get('a', timeout=max(0.001, budget_s - 0.05))\n"
        "    g(budget_s=max(0.001, budget_s - 0.05))\n"
        "def g(*, budget_s: float = 10.0):\n"
        "    requests.get('b', timeout=max(0.001, budget_s - 0.05))\n"
    )
    fixed = _fix(text)
    assert "budget_deadline_s = time.monotonic() + budget_s" in fixed
    _keeps_the_contract(fixed, 1.0, budget_s=1.0)


def test_a_method_reached_through_its_instance_and_self_is_forwarded_the_budget() -> None:
    text = (
        "import requests\n"
        "from simbudget import Budget\n"
        "class Repo:\n"
        "    def load(self, key):\n"
        "        requests.get(key)\n"
        "    def load_two(self, a, b):\n"
        "        self.load(a)\n"
        "        self.load(b)\n"
        "REPO = Repo()\n"
        "def f(budget: Budget):\n"
        "    REPO.load_two('a', 'b')\n"
    )
    fixed = _fix(text)
    assert "REPO.load_two('a', 'b', budget_s=budget.timeout())" in fixed
    fakes = rt.fakes()
    for seed in range(20):
        module = rt.Tree("simtest", {"m0": fixed}, fakes).module("m0")
        request = rt.Request(deadline=1.0, rng=random.Random(seed), package="simtest")
        rt.STATE.request = request
        try:
            rt._now.set(0.0)
            try:
                module.f(fakes["simbudget"].Budget(1.0))
            except rt.Simulated:
                pass
        finally:
            rt.STATE.request = None
        for call in request.calls:
            assert call.timeout <= max(rt.TIMEOUT_FLOOR_S, call.remaining - rt.HOP_MARGIN_S) + 1e-9, (seed, call)


def test_a_gather_child_left_running_by_a_failed_sibling_hops_within_its_own_request() -> None:
    """`asyncio.gather` raises the first child's error and leaves the other children running:
    their hops belong to the request that started them, not to whatever request (or tree)
    the event loop runs next, where no generated frame is on the stack (the IndexError of
    `_judge` on a 3,000-tree run)."""
    import asyncio

    text = (
        "import asyncio\n"
        "import requests\n"
        "import httpx\n"
        "ACLIENT = httpx.AsyncClient()\n"
        "async def fails():\n"
        "    raise requests.ConnectionError()\n"
        "async def hop():\n"
        "    await ACLIENT.get('late', timeout=0.5)\n"
        "async def slow():\n"
        "    await asyncio.gather(hop(), hop())\n"
        "    await ACLIENT.get('after', timeout=0.5)\n"
        "async def mid():\n"
        "    await asyncio.gather(slow(), slow())\n"  # tasks of tasks: still running when f ends
        "async def f():\n"
        "    await asyncio.gather(fails(), mid())\n"
    )
    module = rt.Tree("simtest", {"m0": text}, rt.fakes()).module("m0")
    loop = asyncio.new_event_loop()
    try:
        for seed in range(5):
            request = rt.Request(deadline=1.0, rng=random.Random(seed), package="simtest")
            rt.STATE.request = request
            assert simulate._run(module.f, [], {}, True, loop) is None
            assert not asyncio.all_tasks(loop), seed  # nothing left to hop into the next request
            assert [c.site for c in request.calls][:4] == ["late"] * 4, seed
    finally:
        rt.STATE.request = None
        loop.close()


def test_request_state_budget_objects_are_generated_and_read_by_the_fixes() -> None:
    """Half the request-state functions read the state's budget object on entry (a ContextVar
    annotated with the budget type): the fixes then bound every call by it."""
    for index in range(200):
        generator = simulate.Generator(random.Random(f"{SEED}:{index}"), index)
        generator.build()
        reading = [f for f in generator.functions if f.state_object]
        if reading:
            break
    else:
        raise AssertionError("no request-state budget object in 200 trees")
    texts, fixed = simulate.tree_texts(index, SEED)
    function = reading[0]
    text = fixed[f"m{function.module}"]
    assert "REQUEST_BUDGET: contextvars.ContextVar[Budget]" in text
    assert "    budget = REQUEST_BUDGET.get()\n" in text


_RETRIED = (
    "import requests\n"
    "import tenacity\n"
    "from simbudget import Budget\n"
    "@tenacity.retry(stop=tenacity.stop_after_attempt(3), wait=tenacity.wait_fixed(0.2),"
    " retry=tenacity.retry_if_exception_type(requests.ConnectionError))\n"
    "def fetch():\n"
    "    requests.get('a')\n"
    "def handler(budget: Budget):\n"
    "    fetch()\n"
)


def test_a_finding_on_a_decorator_is_its_functions() -> None:
    """A retry policy's findings (DL302, DL303) are on the decorator line, above `def`."""
    from deadline_lint.engine.checker import Checker

    checker: Checker = simulate.Fixer(codemod=False).checker
    text = _RETRIED.replace("def fetch():", "def fetch(budget: Budget):")
    left = simulate._by_function(text, checker.check_text(text, "simtest/m0.py"))
    assert "DL303" in left["fetch"]  # `fetch` takes a budget, but `tenacity.retry` stops only at ...


def test_a_retried_function_left_unthreaded_says_why() -> None:
    """`--thread-budget` does not give a retried function `budget_s` (every attempt would spend
    it again): with no ambient budget its calls keep the edge default, which exceeds the
    caller's budget, and the fixed code still says so (DL303 on the decorator), so the
    violation is not silent. With one, each attempt's hop reads what is left."""
    from deadline_lint.fixes.loop import FixMode, fix_text

    ambient = fix_text(_checker(), _RETRIED, "simtest/m0.py", FixMode(unsafe=True, thread_budget=True)).text
    assert "def fetch():" in ambient and "timeout=max(0.001, simbudget.remaining_seconds() - 0.05)" in ambient
    checker = _checker(ambient=False)
    result = fix_text(checker, _RETRIED, "simtest/m0.py", FixMode(unsafe=True, thread_budget=True))
    assert "def fetch():" in result.text and "timeout=10.0" in result.text
    left = simulate._by_function(result.text, result.remaining)
    dl303 = [d for d in result.remaining if d.code == "DL303"]
    assert "DL303" in left["fetch"] and "`--thread-budget` does not thread a retried function" in dl303[0].message


def test_a_retried_function_spends_the_edge_default_once_per_attempt() -> None:
    """A retried function cannot take `budget_s` (each attempt would spend it again): its hops
    keep the edge default, and three hops each given the whole of it overspent the edge total.
    It now spends the edge default from a deadline taken on entry (one attempt here, so a run
    is one call of it); fixing twice is fixing once, and the codemod writes the same. Another
    unthreadable function (`*args`) keeps the plain edge default: on the corpora those were
    lifespans building long-lived clients, cleanup waits and background loops."""
    from deadline_lint.fixes.loop import FixMode, fix_text

    text = (
        "import requests\n"
        "import tenacity\n"
        "@tenacity.retry(stop=tenacity.stop_after_attempt(1))\n"
        "def f():\n"
        "    for url in ('a', 'b', 'c'):\n"
        "        requests.get(url)\n"
        "def g(*args):\n"
        "    for url in args:\n"
        "        requests.get(url)\n"
    )
    fixed = _fix(text, ambient=False)
    assert "def f():\n    edge_deadline_s = time.monotonic() + 10.0\n" in fixed and "import time\n" in fixed
    assert "def g(*args):\n    for url in args:\n        requests.get(url, timeout=10.0)\n" in fixed
    _keeps_the_contract(fixed, rt.EDGE_TOTAL_S)
    assert _fix(fixed, ambient=False) == fixed
    checker = _checker(ambient=False)
    codemod = fix_text(checker, text, "simtest/m0.py", FixMode(unsafe=True, thread_budget=True, insert_budgets=True))
    assert codemod.text == fixed


# -- the gate: a fixed seed and count, the counts pinned ----------------------------------
GATE_SEED, GATE_TREES, GATE_CODEMOD = 34, 100, 10


@pytest.fixture(scope="module")
def gate():
    return simulate.simulate(GATE_TREES, GATE_SEED, codemod_sample=GATE_CODEMOD)


def test_the_gate_run_has_no_crash_no_problem_and_no_call_that_waits_forever(gate) -> None:
    assert gate.trees == GATE_TREES and gate.requests > 0 and gate.calls > 0
    assert gate.codemod_trees > 0  # the sample compared the codemod on some one-module trees
    assert gate.problems == []
    assert gate.silent["crash"] == 0 and gate.reported["crash"] == 0
    assert gate.silent["infinite"] == 0 and gate.reported["infinite"] == 0


def test_the_gate_runs_silent_violations_are_what_they_are(gate) -> None:
    """None over the gate's trees (longer runs still find some: bench/results/ has them by
    kind); the reported count is pinned, so a change that adds or removes one says so here."""
    assert dict(gate.silent) == {}, gate.causes.most_common()
    assert sum(gate.reported.values()) == 50, dict(gate.reported)


def test_a_run_split_over_jobs_reports_what_one_process_does() -> None:
    one = simulate.simulate(20, GATE_SEED, codemod=False, start=GATE_TREES)
    two = simulate.simulate(20, GATE_SEED, codemod=False, start=GATE_TREES, jobs=2)
    assert (one.trees, one.requests, one.calls) == (two.trees, two.requests, two.calls)
    assert (one.silent, one.reported, one.causes, one.reported_by) == (
        two.silent, two.reported, two.causes, two.reported_by
    )


def test_a_run_keeps_nothing_of_the_trees_it_has_run() -> None:
    """A million trees run in one process: no module, project index or request state of a
    tree outlives it (each tree's memos grew the run ~55 KB a tree)."""
    import asyncio
    import contextvars
    import gc

    from deadline_lint.semantics.modules import ModuleSource

    fixer = simulate.Fixer(codemod=False)
    loop = asyncio.new_event_loop()
    variables = len(contextvars.copy_context())
    try:
        for index in range(6):
            simulate.run_tree(index, 34, fixer, simulate.Totals(), loop)
    finally:
        loop.close()
    gc.collect()
    assert len(contextvars.copy_context()) == variables
    held = [o.path for o in gc.get_objects() if isinstance(o, ModuleSource) and str(fixer.folder) in o.path]
    assert held == []


def test_the_words_of_a_removed_file_are_forgotten(tmp_path) -> None:
    from deadline_lint.families.outbound.fixes.thread_elsewhere import ProjectWords

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "a.py").write_text("def fetch(): pass\n")
    gone = tmp_path / "b.py"
    gone.write_text("fetch()\n")
    words = ProjectWords()
    assert words.files_naming(str(tmp_path / "a.py"), "fetch") == [str(gone)]
    gone.unlink()
    words.start()
    assert words.files_naming(str(tmp_path / "a.py"), "fetch") == []
    assert str(gone) not in words._known


def test_every_entry_point_is_given_the_inbound_deadline() -> None:
    """The edge, explicit: no request enters through a function with no budget."""
    kinds = set()
    for index in range(60):
        generator = simulate.Generator(random.Random(f"{GATE_SEED}:{index}"), index)
        texts = generator.build()
        for function in generator.functions:
            if function.entry:
                assert function.style != "none", (index, function.name)
            if function.name.startswith("h"):
                kinds.add(function.style)
                callee = generator.by_name("f" + function.name[1:])
                assert callee is not None and callee.style == "none" and not callee.entry
                assert f"def {function.name}(" in texts[f"m{function.module}"]
    assert kinds == set(simulate.EDGE_KINDS)


@pytest.mark.parametrize("tree", [1821, 4014, 4597, 5081])
def test_the_trees_whose_fixed_code_raised_type_error_now_run(tree: int) -> None:
    """Seed 34's four crashes over 10,000 trees: a function was threaded because a caller in
    another module was judged to be threaded too, but that caller reads the ambient budget
    (`t = remaining_seconds() - 0.05`), so its own pass neither threaded it nor forwarded,
    and the fixed call raised `TypeError: missing 1 required keyword-only argument`."""
    run = simulate.simulate(1, 34, start=tree, codemod=False)
    assert run.trees == 1 and run.problems == []
    assert run.silent["crash"] == 0 and run.reported["crash"] == 0
