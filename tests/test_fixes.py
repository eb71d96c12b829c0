"""The proof that fixes are safe, for every fixture of every rule, plus the fix loop's own
behaviour: overlapping fixes, non-convergence, imports, suppressions, the CLI and
`--thread-budget`."""
from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest
from fixture_cases import FIXTURES, FixtureCase, fixture_cases
from fixture_fixing import (
    ALL_FIXED,
    SAFE_FIXED,
    SERVICE,
    apply_unified_diff,
    checker_for,
    fix_case,
    golden_path,
    read_exact,
)

from deadline_lint.engine.checker import Checker
from deadline_lint.engine.edits import replace_node
from deadline_lint.engine.rule import REGISTRY, Rule
from deadline_lint.families.registry import all_rules
from deadline_lint.fixes.loop import MAX_ROUNDS, FixMode, add_imports, apply_edits, fix_text, parse_import
from deadline_lint.frontends.cli import main
from deadline_lint.support.diagnostics import Applicability

CASES = fixture_cases()
IDS = [c.id for c in CASES]


# -- the harness: every fixture ----------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fixed_fixture_parses_and_has_no_fixable_finding_left(case: FixtureCase) -> None:
    result = fix_case(case)
    ast.parse(result.text)
    assert not result.gave_up, result.remaining
    left = [d for d in checker_for(case).check_text(result.text, str(case.path)) if d.code == case.code]
    assert [d for d in left if d.fix is not None] == [], "a finding that has a fix survived fixing"
    if not case.expected():
        assert result.text == result.original, "a fixture without findings must not change"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fixing_twice_changes_nothing(case: FixtureCase) -> None:
    once = fix_case(case)
    twice = fix_case(case, once.text)
    assert twice.text == once.text
    assert twice.fixed == 0


@pytest.mark.parametrize("case", [c for c in CASES if golden_path(c).exists()], ids=lambda c: c.id)
def test_fixed_fixture_equals_its_golden_file(case: FixtureCase) -> None:
    assert fix_case(case).text == read_exact(golden_path(case))


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("pragma", ["noqa", "deadline-lint"])
def test_suppressed_fixture_is_not_changed(case: FixtureCase, pragma: str) -> None:
    text = case.suppressed_text(pragma)
    result = fix_case(case, text)
    assert result.text == text
    assert result.fixed == 0


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_diff_matches_what_fix_writes(case: FixtureCase, tmp_path: Path, capsysbinary) -> None:
    original = read_exact(case.path)
    shown, written = tmp_path / "shown" / case.path.name, tmp_path / "written" / case.path.name
    for copy in (shown, written):
        copy.parent.mkdir()
        shutil.copyfile(case.path, copy)
    profile = ["--profile", str(case.profile)] if case.profile else []
    options = ["--unsafe-fixes", "--select", case.code, *profile]
    capsysbinary.readouterr()

    diff_exit = main(["fix", "--diff", *options, str(shown)])
    diff = capsysbinary.readouterr().out.decode("utf-8")
    main(["fix", *options, str(written)])

    assert read_exact(shown) == original, "--diff must write nothing"
    fixed = read_exact(written)
    assert apply_unified_diff(original, diff) == fixed
    assert diff_exit == (1 if fixed != original else 0)
    assert fixed == fix_case(case).text


def test_every_fixable_rule_has_a_golden_fixed_file() -> None:
    for code, cls in all_rules().items():
        if cls.fix_applicability is None:
            continue
        goldens = sorted((FIXTURES / code).glob("*.py.fixed"))
        assert goldens, f"{code} has a fix but no fixtures/{code}/*.py.fixed golden file"
        for golden in goldens:
            assert golden.with_suffix("").exists(), f"{golden.name} has no fixture beside it"


# -- the loop, with rules made up for the purpose -------------------------------------------
class _Unwrap(Rule):
    """`wrap(x)` -> `x`: nested calls give overlapping edits."""

    code, name, summary = "DL990", "test-unwrap", "test only"
    fix_applicability = Applicability.SAFE
    node_types = (ast.Call,)

    def visit(self, node, ctx):
        if isinstance(node.func, ast.Name) and node.func.id == "wrap" and len(node.args) == 1:
            ctx.report(self, node, "unwrap", [replace_node(ctx.source, node, ctx.source.segment(node.args[0]))])


class _CountUp(Rule):
    """`n` -> `n + 1` as a literal: never converges."""

    code, name, summary = "DL991", "test-count-up", "test only"
    fix_applicability = Applicability.SAFE
    node_types = (ast.Constant,)

    def visit(self, node, ctx):
        if type(node.value) is int:
            ctx.report(self, node, "count", [replace_node(ctx.source, node, str(node.value + 1))])


class _Monotonic(Rule):
    """`clock()` -> `time.monotonic()`, which needs `import time`."""

    code, name, summary = "DL992", "test-monotonic", "test only"
    fix_applicability = Applicability.SAFE
    node_types = (ast.Call,)

    def visit(self, node, ctx):
        if isinstance(node.func, ast.Name) and node.func.id == "clock" and not node.args:
            ctx.report(self, node, "clock", [replace_node(ctx.source, node, "time.monotonic()")], imports=("time",))


@pytest.fixture
def made_up_rules(monkeypatch):
    all_rules()  # register the real ones first, so the made-up ones are simply added
    for cls in (_Unwrap, _CountUp, _Monotonic):
        monkeypatch.setitem(REGISTRY, cls.code, cls)


def test_overlapping_fixes_are_applied_in_later_rounds(made_up_rules) -> None:
    result = fix_text(Checker(select=["DL990"]), "x = wrap(wrap(wrap(1)))\n", "m.py")
    assert result.text == "x = 1\n"
    assert result.fixed == 3
    assert result.remaining == ()


def test_a_fix_that_never_converges_leaves_the_file_unchanged_with_dl005(made_up_rules) -> None:
    text = "x = 1\n"
    result = fix_text(Checker(select=["DL991"]), text, "pkg/m.py")
    assert result.text == text and result.gave_up and result.fixed == 0
    (reason,) = [d for d in result.remaining if d.code == "DL005"]
    assert reason.path == "pkg/m.py" and reason.name == "fix-did-not-converge"
    assert f"after {MAX_ROUNDS} rounds" in reason.message


def test_non_convergence_through_the_cli_names_the_file_and_exits_1(made_up_rules, tmp_path, capsys) -> None:
    path = tmp_path / "m.py"
    path.write_text("x = 1\n")
    assert main(["fix", "--select", "DL991", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:1:1: DL005" in out
    assert path.read_text() == "x = 1\n"


class _Break(Rule):
    """A buggy fix: `broken` -> `(`."""

    code, name, summary = "DL994", "test-break", "test only"
    fix_applicability = Applicability.SAFE
    node_types = (ast.Name,)

    def visit(self, node, ctx):
        if node.id == "broken":
            ctx.report(self, node, "break", [replace_node(ctx.source, node, "(")])


def test_a_fix_that_breaks_the_code_leaves_the_file_unchanged_with_dl003(monkeypatch) -> None:
    all_rules()
    monkeypatch.setitem(REGISTRY, _Break.code, _Break)
    text = "x = broken\n"
    result = fix_text(Checker(select=["DL994"]), text, "m.py")
    assert result.text == text and result.gave_up and result.fixed == 0
    (reason,) = [d for d in result.remaining if d.code == "DL003"]
    assert "DL994" in reason.message and "does not parse" in reason.message


IMPORT_PLACEMENT = {
    "docstring": ('"""Doc."""\nx = clock()\n', '"""Doc."""\nimport time\n\nx = time.monotonic()\n'),
    "future": (
        '"""Doc."""\nfrom __future__ import annotations\n\nx = clock()\n',
        '"""Doc."""\nfrom __future__ import annotations\nimport time\n\nx = time.monotonic()\n',
    ),
    "shebang-and-coding": (
        "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\nx = clock()\n",
        "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\nimport time\n\nx = time.monotonic()\n",
    ),
    "already-imported": ("import time\nx = clock()\n", "import time\nx = time.monotonic()\n"),
    "crlf": ('"""Doc."""\r\nx = clock()\r\n', '"""Doc."""\r\nimport time\r\n\r\nx = time.monotonic()\r\n'),
}


@pytest.mark.parametrize("before, after", IMPORT_PLACEMENT.values(), ids=IMPORT_PLACEMENT.keys())
def test_needed_imports_are_added_in_the_right_place(made_up_rules, before: str, after: str) -> None:
    result = fix_text(Checker(select=["DL992"]), before, "m.py")
    assert result.text == after
    assert ast.get_docstring(ast.parse(result.text)) == ast.get_docstring(ast.parse(before))


def test_import_specs() -> None:
    assert parse_import("time") == ("time", None, None)
    assert parse_import("import os.path") == ("os.path", None, None)
    assert parse_import("from time import monotonic as now") == ("time", "monotonic", "now")
    assert parse_import("not an import!") is None
    assert add_imports("x = 1\n", ["from time import monotonic"]) == "from time import monotonic\n\nx = 1\n"
    assert add_imports("x = (\n", ["time"]) is None  # LibCST cannot parse it: bail


def test_apply_edits_keeps_everything_else() -> None:
    from deadline_lint.support.diagnostics import Edit

    assert apply_edits("abcdef", [Edit(4, 5, "E"), Edit(0, 0, ">"), Edit(2, 2, "|")]) == ">ab|cdEf"


# -- suppressions and per-path ignores --------------------------------------------------------
def test_noqa_findings_are_never_fixed() -> None:
    text = (
        "import requests\n"
        "requests.get('a')  # noqa: DL101\n"
        "requests.get('b')  # deadline-lint: ignore[DL101]\n"
        "requests.get('c')  # noqa\n"
        "requests.get('d')\n"
    )
    result = fix_text(Checker(), text, "m.py", FixMode(unsafe=True))
    assert result.text == text.replace("get('d')", "get('d', timeout=10.0)")
    assert result.fixed == 1


def test_per_path_ignores_are_never_fixed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "job.py").write_text("import requests\nrequests.get('a')\n")
    (tmp_path / "profile.yaml").write_text('per_path_ignores:\n  "scripts/*": [DL101]\n')
    assert main(["fix", "--profile", "profile.yaml", "scripts"]) == 0
    assert (tmp_path / "scripts" / "job.py").read_text() == "import requests\nrequests.get('a')\n"


# -- the command line -------------------------------------------------------------------------


def test_fix_applies_safe_fixes_and_reports_what_remains(tmp_path: Path, capsys) -> None:
    path = tmp_path / "svc.py"
    path.write_text(SERVICE)
    assert main(["fix", str(path)]) == 1  # the unsafe DL103 remains
    assert path.read_text() == SAFE_FIXED
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{path}:4:") and "DL103" in out[0]
    assert out[-1] == "Fixed 1 problem in 1 file, 1 remaining (1 fixable with `--unsafe-fixes`)."

    assert main(["fix", "--unsafe-fixes", str(path)]) == 0
    assert path.read_text() == ALL_FIXED
    assert capsys.readouterr().out.splitlines()[-1] == "Fixed 1 problem in 1 file, 0 remaining."

    assert main(["fix", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "Nothing to fix (1 file checked)."
    assert main(["fix", "--exit-non-zero-on-fix", str(path)]) == 0  # nothing was fixed


def test_exit_non_zero_on_fix(tmp_path: Path) -> None:
    path = tmp_path / "svc.py"
    path.write_text(SERVICE)
    assert main(["fix", "--unsafe-fixes", "--exit-non-zero-on-fix", str(path)]) == 1
    assert path.read_text() == ALL_FIXED


def test_diff_writes_nothing_and_exits_1_only_when_something_would_change(tmp_path: Path, capsysbinary) -> None:
    path = tmp_path / "svc.py"
    path.write_text(SERVICE)
    assert main(["fix", "--diff", str(path)]) == 1
    captured = capsysbinary.readouterr()
    diff = captured.out.decode()
    assert diff.startswith(f"--- {path}\n+++ {path}\n@@ ")
    assert "+    return requests.get('http://inventory/health', timeout=budget.timeout()).ok\n" in diff
    assert "Would fix 1 problem in 1 file, 1 would remain" in captured.err.decode()
    assert path.read_text() == SERVICE
    assert apply_unified_diff(SERVICE, diff) == SAFE_FIXED

    path.write_text(ALL_FIXED)
    assert main(["fix", "--diff", str(path)]) == 0
    assert capsysbinary.readouterr().out == b""


def test_check_fix_is_an_alias_with_check_output(tmp_path: Path, capsys) -> None:
    path = tmp_path / "svc.py"
    path.write_text(SERVICE)
    assert main(["check", "--fix", "--unsafe-fixes", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["All checks passed (1 file checked).", "Fixed 2 problems in 1 file, 0 remaining."]
    assert path.read_text() == ALL_FIXED


def test_check_fix_json_output_stays_a_document(tmp_path: Path, capsys) -> None:
    import json

    path = tmp_path / "svc.py"
    path.write_text(SERVICE)
    assert main(["check", "--fix", "--format", "json", str(path)]) == 1
    captured = capsys.readouterr()
    assert [d["code"] for d in json.loads(captured.out)] == ["DL103"]
    assert "Fixed 1 problem" in captured.err


def test_files_with_syntax_errors_are_reported_and_left_alone(tmp_path: Path, capsys) -> None:
    path = tmp_path / "broken.py"
    path.write_text("import requests\nrequests.get(\n")
    assert main(["fix", str(path)]) == 1
    assert "DL001" in capsys.readouterr().out
    assert path.read_text() == "import requests\nrequests.get(\n"


def test_parallel_fix_matches_single_process(tmp_path: Path) -> None:
    one, many = tmp_path / "one", tmp_path / "many"
    for folder in (one, many):
        folder.mkdir()
        for index in range(6):
            (folder / f"svc{index}.py").write_text(SERVICE)
    assert main(["fix", "--jobs", "1", str(one)]) == 1
    assert main(["fix", "--jobs", "2", str(many)]) == 1
    for index in range(6):
        assert (many / f"svc{index}.py").read_text() == (one / f"svc{index}.py").read_text() == SAFE_FIXED


# -- --thread-budget ------------------------------------------------------------------------
def thread(text: str, **options) -> str:
    result = fix_text(Checker(**options), text, "m.py", FixMode(thread_budget=True))
    assert not result.gave_up
    return result.text


THREADED_BEFORE = '''\
import requests


def fetch(url):
    return requests.get(url)


def handler(url, budget):
    return fetch(url)


class Client:
    def get(self, url):
        return requests.get(url)

    @staticmethod
    def ping(
        url,
    ):
        requests.head(url)


CLIENT = Client()


def client_handler(url, budget):
    CLIENT.ping(url)
    return CLIENT.get(url)
'''

THREADED_AFTER = '''\
import requests


def fetch(url, *, budget_s: float):
    return requests.get(url, timeout=max(0.001, budget_s - 0.05))


def handler(url, budget):
    return fetch(url, budget_s=budget.timeout())


class Client:
    def get(self, url, *, budget_s: float):
        return requests.get(url, timeout=max(0.001, budget_s - 0.05))

    @staticmethod
    def ping(
        url,
        *,
        budget_s: float,
    ):
        requests.head(url, timeout=max(0.001, budget_s - 0.05))


CLIENT = Client()


def client_handler(url, budget):
    CLIENT.ping(url, budget_s=budget.timeout())
    return CLIENT.get(url, budget_s=budget.timeout())
'''


def test_thread_budget_adds_the_parameter_uses_it_and_forwards_it() -> None:
    assert thread(THREADED_BEFORE) == THREADED_AFTER
    assert thread(THREADED_AFTER) == THREADED_AFTER  # idempotent
    result = fix_text(Checker(), THREADED_AFTER, "m.py")
    assert result.remaining == ()  # and the plain check is clean
    assert "budget_s: float =" not in THREADED_AFTER  # no threaded function mints time


NOT_EVERY_CALLER_FORWARDS = {
    "a caller without a budget": "def other(url):\n    return fetch(url)\n",
    "called at module level": "RESULT = fetch('u')\n",
    "passed as a value": "def handler2(budget):\n    return list(map(fetch, ['u']))\n",
    "listed in __all__": "__all__ = ['fetch']\n",
}


@pytest.mark.parametrize("extra", NOT_EVERY_CALLER_FORWARDS.values(), ids=NOT_EVERY_CALLER_FORWARDS.keys())
def test_a_function_is_threaded_only_when_every_call_of_it_is_forwarded(extra: str) -> None:
    """The parameter has no default, so one call that would not pass it keeps the function
    as it is (its own fix bounds it by the edge total): the fixed module still runs."""
    text = "import requests\n\ndef fetch(url):\n    return requests.get(url)\n\n" + (
        "def handler(url, budget):\n    return fetch(url)\n\n" + extra
    )
    fixed = fix_text(Checker(), text, "m.py", FixMode(unsafe=True, thread_budget=True)).text
    assert "budget_s" not in fixed and "requests.get(url, timeout=10.0)" in fixed


def test_a_function_no_budgeted_function_reaches_is_not_threaded() -> None:
    """Threading a chain whose top has no budget only moves the minting up: left alone."""
    text = "import requests\n\ndef fetch(url):\n    return requests.get(url)\n\ndef top(url):\n    return fetch(url)\n"
    fixed = fix_text(Checker(), text, "m.py", FixMode(unsafe=True, thread_budget=True)).text
    assert "budget_s" not in fixed


def test_a_function_named_in_another_project_file_keeps_its_signature(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "m.py").write_text(
        "import requests\n\ndef fetch(url):\n    return requests.get(url)\n\n"
        "def handler(url, budget):\n    return fetch(url)\n"
    )
    (tmp_path / "other.py").write_text("from m import fetch\n\ndef job():\n    return fetch('u')\n")
    assert main(["fix", "--thread-budget", "--unsafe-fixes", str(tmp_path / "m.py")]) == 0
    assert "budget_s" not in (tmp_path / "m.py").read_text()
    (tmp_path / "other.py").write_text("def job():\n    return 1\n")
    (tmp_path / "m.py").write_text(
        "import requests\n\ndef fetch(url):\n    return requests.get(url)\n\n"
        "def handler(url, budget):\n    return fetch(url)\n"
    )
    assert main(["fix", "--thread-budget", "--unsafe-fixes", str(tmp_path / "m.py")]) == 0
    assert "def fetch(url, *, budget_s: float):" in (tmp_path / "m.py").read_text()


def test_public_api_keeps_its_signature(tmp_path: Path) -> None:
    from deadline_lint.settings.profile import build_profile

    text = (
        "import requests\n\ndef fetch(url):\n    return requests.get(url)\n\n"
        "def handler(url, budget):\n    return fetch(url)\n"
    )
    listed = build_profile({"fix": {"public_api": ["pkg.m.fetch"]}}, "p.yaml")
    assert "budget_s" not in fix_text(Checker(listed), text, "m.py", FixMode(unsafe=True, thread_budget=True)).text
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text(text)
    assert main(["fix", "--thread-budget", "--unsafe-fixes", str(package / "__init__.py")]) == 0
    assert "budget_s" not in (package / "__init__.py").read_text()


def test_thread_budget_forwards_between_threaded_functions() -> None:
    before = (
        "import requests\n\n"
        "def inner(url):\n    return requests.get(url)\n\n"
        "def outer(url):\n    requests.post(url)\n    return inner(url)\n\n"
        "def handler(url, budget):\n    return outer(url)\n"
    )
    # `outer` spends its budget on a hop and then forwards it: what it forwards is what is
    # left after that hop (bench/simulate.py found `budget_s=budget_s` giving `inner` the time
    # the first hop had already used).
    assert thread(before) == (
        "import requests\nimport time\n\n"
        "def inner(url, *, budget_s: float):\n"
        "    return requests.get(url, timeout=max(0.001, budget_s - 0.05))\n\n"
        "def outer(url, *, budget_s: float):\n"
        "    budget_deadline_s = time.monotonic() + budget_s\n"
        "    requests.post(url, timeout=max(0.001, (budget_deadline_s - time.monotonic()) - 0.05))\n"
        "    return inner(url, budget_s=max(0.001, (budget_deadline_s - time.monotonic()) - 0.05))\n\n"
        "def handler(url, budget):\n    return outer(url, budget_s=budget.timeout())\n"
    )


def test_a_threaded_function_that_spends_its_budget_twice_spends_what_is_left() -> None:
    """Two hops, or a hop in a loop: each timeout is what is left of the deadline the
    parameter gave on entry, never the whole parameter again. One hop keeps the plain form."""
    before = (
        "import requests\n\n"
        "def two(url):\n    requests.get(url)\n    return requests.get(url)\n\n"
        "def looped(urls):\n    for url in urls:\n        requests.get(url)\n\n"
        "def one(url):\n    return requests.get(url)\n\n"
        "def handler(url, budget):\n    two(url)\n    looped([url])\n    one(url)\n"
    )
    fresh = "max(0.001, (budget_deadline_s - time.monotonic()) - 0.05)"
    assert thread(before) == (
        "import requests\nimport time\n\n"
        "def two(url, *, budget_s: float):\n"
        "    budget_deadline_s = time.monotonic() + budget_s\n"
        f"    requests.get(url, timeout={fresh})\n    return requests.get(url, timeout={fresh})\n\n"
        "def looped(urls, *, budget_s: float):\n"
        "    budget_deadline_s = time.monotonic() + budget_s\n"
        f"    for url in urls:\n        requests.get(url, timeout={fresh})\n\n"
        "def one(url, *, budget_s: float):\n    return requests.get(url, timeout=max(0.001, budget_s - 0.05))\n\n"
        "def handler(url, budget):\n    two(url, budget_s=budget.timeout())\n"
        "    looped([url], budget_s=budget.timeout())\n    one(url, budget_s=budget.timeout())\n"
    )
    assert thread(thread(before)) == thread(before)


def test_a_hop_after_other_work_spends_what_is_left() -> None:
    """`budget_s` is the time left at entry: one hop after an `await` or a call of this module's
    own function (which may take most of it) gets what is left then. A hop after a call of
    something else (a builtin, another object's method) keeps the plain form."""
    before = (
        "import requests\n\n"
        "def prepare(url):\n    return url.strip()\n\n"
        "def after_work(url):\n    url = prepare(url)\n    return requests.get(url)\n\n"
        "def after_a_builtin(url):\n    url = str(url)\n    return requests.get(url)\n\n"
        "def handler(url, budget):\n    after_work(url)\n    after_a_builtin(url)\n"
    )
    fresh = "max(0.001, (budget_deadline_s - time.monotonic()) - 0.05)"
    assert thread(before) == (
        "import requests\nimport time\n\n"
        "def prepare(url):\n    return url.strip()\n\n"
        "def after_work(url, *, budget_s: float):\n"
        "    budget_deadline_s = time.monotonic() + budget_s\n"
        f"    url = prepare(url)\n    return requests.get(url, timeout={fresh})\n\n"
        "def after_a_builtin(url, *, budget_s: float):\n"
        "    url = str(url)\n    return requests.get(url, timeout=max(0.001, budget_s - 0.05))\n\n"
        "def handler(url, budget):\n    after_work(url, budget_s=budget.timeout())\n"
        "    after_a_builtin(url, budget_s=budget.timeout())\n"
    )
    assert thread(thread(before)) == thread(before)


def test_spending_from_a_deadline_needs_the_time_module() -> None:
    """Where `time` names something else, the plain parameter stays (prove or bail)."""
    before = "import requests\nfrom time import time\n\ndef two(url):\n    requests.get(url)\n    requests.get(url)\n"
    assert "budget_deadline_s" not in thread(before)


def test_forwarding_reaches_functions_threaded_in_an_earlier_run() -> None:
    before = (
        "import requests\n\n"
        "def fetch(url, *, budget_s: float = 10.0):\n    return requests.get(url, timeout=budget_s)\n\n"
        "def handler(url, budget):\n    return fetch(url)\n"
    )
    assert thread(before) == before.replace("fetch(url)\n", "fetch(url, budget_s=budget.timeout())\n")


BAILS = {
    "unknown decorator": "@app.route('/')\ndef f(url):\n    requests.get(url)\n",
    "star args": "def f(url, *args):\n    requests.get(url)\n",
    "star kwargs": "def f(url, **kwargs):\n    requests.get(url)\n",
    "name in use": "def f(url):\n    budget_s = 3\n    requests.get(url)\n",
    "defined twice": "def f(url):\n    requests.get(url)\n\ndef f(url):\n    requests.get(url)\n",
    "dunder": "class C:\n    def __call__(self, url):\n        requests.get(url)\n",
    "lambda": "f = lambda url: requests.get(url)\n",
    "positional-only marker last": "def f(url, /):\n    requests.get(url)\n",
    "module level": "requests.get('u')\n",
}


@pytest.mark.parametrize("body", BAILS.values(), ids=BAILS.keys())
def test_thread_budget_bails_where_it_cannot_prove_the_change(body: str) -> None:
    text = "import requests\n\n" + body
    assert "budget_s: float" not in thread(text)
    # ...and the ordinary fix still applies: the edge default (--thread-budget inserts budgets)
    assert thread(text) == fix_text(Checker(), text, "m.py", FixMode(insert_budgets=True)).text
    assert "timeout=10.0" in thread(text)


def test_thread_budget_leaves_suppressed_lines_alone() -> None:
    text = (
        "import requests\n\n"
        "def fetch(url):\n    return requests.get(url)\n\n"
        "def handler(url, budget):\n    return fetch(url)  # noqa\n\n"
        "def silenced(url):  # noqa: DL101\n    return requests.get(url)  # noqa: DL101\n"
    )
    fixed = thread(text)
    # the suppressed call cannot be given the keyword, so `fetch` keeps its signature
    assert "def fetch(url):" in fixed
    assert "return fetch(url)  # noqa\n" in fixed
    assert fixed.endswith("def silenced(url):  # noqa: DL101\n    return requests.get(url)  # noqa: DL101\n")


def test_thread_budget_does_not_forward_to_methods_or_through_kwargs() -> None:
    text = (
        "import requests\n\n"
        "class C:\n    def get(self, url):\n        return requests.get(url)\n\n"
        "    def run(self, url, budget):\n        return self.get(url)\n\n"
        "def fetch(url):\n    return requests.get(url)\n\n"
        "def handler(url, budget, options):\n    return fetch(url, **options)\n"
    )
    fixed = thread(text)
    assert "return self.get(url)\n" in fixed
    assert "return fetch(url, **options)\n" in fixed
    assert "def fetch(url):" in fixed and "def get(self, url):" in fixed  # a call that cannot forward


def test_thread_budget_default_and_timeout_follow_the_profile(tmp_path: Path) -> None:
    from deadline_lint.settings.profile import build_profile

    profile = build_profile(
        {"edge_total_ms": 2500, "hop_margin_ms": 20, "fix": {"seconds_expression": "{budget} * 0.9"}}, "p.yaml"
    )
    text = "import requests\n\ndef f(url):\n    requests.get(url)\n\ndef h(budget):\n    f('u')\n"
    assert thread(text, profile=profile) == (
        "import requests\n\ndef f(url, *, budget_s: float):\n    requests.get(url, timeout=budget_s * 0.9)\n\n"
        "def h(budget):\n    f('u', budget_s=budget.timeout())\n"
    )
    unreached = "import requests\n\ndef f(url):\n    requests.get(url)\n"
    assert thread(unreached, profile=profile).endswith("requests.get(url, timeout=2.5)\n")  # the edge total


def test_thread_budget_reuses_each_rules_own_fix_shape_and_imports() -> None:
    """A client whose timeout is an object (and needs an import): the rule builds the fix, the
    plan only swaps the edge default for `budget_s`."""
    from deadline_lint.settings.profile import build_profile

    client = {
        "library": "acme-rpc", "default_timeout": None, "keyword": "deadline",
        "timeout_template": "acme.rpc.Deadline(seconds={timeout})", "imports": ["acme.rpc"],
        "functions": ["acme.rpc.call"],
    }
    profile = build_profile({"outbound": [client]}, "p.yaml")
    text = "from acme.rpc import call\n\ndef f(name):\n    return call(name)\n\ndef h(budget):\n    return f('n')\n"
    assert thread(text, profile=profile) == (
        "from acme.rpc import call\nimport acme.rpc\n\ndef f(name, *, budget_s: float):\n"
        "    return call(name, deadline=acme.rpc.Deadline(seconds=max(0.001, budget_s - 0.05)))\n\n"
        "def h(budget):\n    return f('n', budget_s=budget.timeout())\n"
    )


def test_thread_budget_with_unsafe_fixes_also_bounds_unbounded_timeouts() -> None:
    text = (
        "import requests\n\ndef refund(url):\n    requests.post(url, timeout=None)\n    requests.get(url)\n\n"
        "def h(budget):\n    refund('u')\n"
    )
    safe = thread(text)
    assert "requests.post(url, timeout=None)" in safe  # DL103 is unsafe: not without --unsafe-fixes
    result = fix_text(Checker(), text, "m.py", FixMode(unsafe=True, thread_budget=True))
    fresh = "max(0.001, (budget_deadline_s - time.monotonic()) - 0.05)"  # two hops: see above
    assert result.text == (
        "import requests\nimport time\n\ndef refund(url, *, budget_s: float):\n"
        "    budget_deadline_s = time.monotonic() + budget_s\n"
        f"    requests.post(url, timeout={fresh})\n"
        f"    requests.get(url, timeout={fresh})\n\n"
        "def h(budget):\n    refund('u', budget_s=budget.timeout())\n"
    )
    assert result.remaining == () and result.fixed == 2 and result.threaded == 1
    # ...and a later --unsafe-fixes run finishes a function threaded by a safe-only run (with
    # the rules' own fixes, from the parameter as it is: turning an existing `budget_s` into a
    # deadline is not done yet, see bench/README.md "Simulating the fixes")
    later = fix_text(Checker(), safe, "m.py", FixMode(unsafe=True, thread_budget=True))
    assert later.remaining == () and "timeout=None" not in later.text


def test_a_function_whose_only_finding_is_an_unbounded_timeout_is_threaded_with_unsafe_fixes() -> None:
    """`timeout=None` is bounded by the edge default otherwise: threaded, the function gets its
    caller's remainder, and its fixed timeout is then capped by it too (DL102)."""
    text = (
        "import requests\n\n"
        "def audit(url):\n    requests.get(url, timeout=30.0)\n    requests.post(url, timeout=None)\n\n"
        "def handler(url, budget):\n    audit(url)\n"
    )
    assert "budget_s" not in thread(text)  # DL103's fix is unsafe: nothing to thread without it
    result = fix_text(Checker(), text, "m.py", FixMode(unsafe=True, thread_budget=True))
    assert "def audit(url, *, budget_s: float):" in result.text
    assert "    audit(url, budget_s=budget.timeout())\n" in result.text
    assert "timeout=None" not in result.text and "min(30.0, " in result.text
    assert result.remaining == ()
    again = fix_text(Checker(), result.text, "m.py", FixMode(unsafe=True, thread_budget=True))
    assert again.text == result.text


def test_thread_budget_through_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(THREADED_BEFORE)
    assert main(["fix", "--thread-budget", str(path)]) == 0
    assert path.read_text() == THREADED_AFTER


# -- --thread-budget with DL503: whole call chains ------------------------------------------
GOLDENS = Path(__file__).resolve().parent / "goldens"


def test_thread_budget_with_dl503_threads_a_three_level_call_chain(tmp_path: Path) -> None:
    """fetch_user <- load_profile <- build_page <- handler(budget): one run threads `budget_s`
    up the chain and forwards it at every level (golden: goldens/thread_chain.py.fixed)."""
    path = tmp_path / "thread_chain.py"
    shutil.copyfile(GOLDENS / "thread_chain.py", path)
    assert main(["fix", "--thread-budget", "--unsafe-fixes", str(path)]) == 0
    golden = read_exact(GOLDENS / "thread_chain.py.fixed")
    assert read_exact(path) == golden
    assert main(["fix", "--thread-budget", "--unsafe-fixes", str(path)]) == 0
    assert read_exact(path) == golden  # idempotent
    assert Checker().check_text(golden, str(path)) == []  # and the plain check is clean


def test_callers_are_threaded_only_with_dl503_and_unsafe_fixes() -> None:
    text = read_exact(GOLDENS / "thread_chain.py")
    safe_only = thread(text)
    without_dl503 = fix_text(Checker(ignore=["DL503"]), text, "m.py", FixMode(unsafe=True, thread_budget=True)).text
    for fixed in (safe_only, without_dl503):
        # `load_profile` is not threaded up the chain, so it could not pass a required
        # `budget_s`: `fetch_user` keeps its signature and its own fix
        assert "def fetch_user(user_id):" in fixed and "timeout=10.0" in fixed
        assert "def load_profile(user_id):" in fixed


def test_dl503_findings_settled_by_forwarding_are_counted_once() -> None:
    text = (
        "import requests\n\n"
        "def fetch(url, *, budget_s: float = 10.0):\n"
        "    return requests.get(url, timeout=max(0.001, budget_s - 0.05))\n\n"
        "def handler(url, budget):\n    return fetch(url)\n"
    )
    result = fix_text(Checker(), text, "m.py", FixMode(unsafe=True, thread_budget=True))
    assert result.text == text.replace("fetch(url)\n", "fetch(url, budget_s=budget.timeout())\n")
    assert result.fixed == 1 and result.remaining == ()


def test_dl503_forwarding_to_functions_is_a_budget_insertion_but_not_to_methods() -> None:
    """The codemod's job and --thread-budget's: forwarding to a module function. A method on
    `self` may be overridden elsewhere without the parameter (`TypeError` there): it is never
    given the keyword, not even with --unsafe-fixes, and the finding says why."""
    text = (
        "def load(key, budget=None):\n    return key\n\n"
        "class C:\n    def get(self, key, budget=None):\n        return key\n\n"
        "    def run(self, key, budget):\n        load(key)\n        return self.get(key)\n"
    )
    inserted = fix_text(Checker(select=["DL503"]), text, "m.py", FixMode(insert_budgets=True)).text
    assert "load(key, budget=budget)" in inserted and "self.get(key)\n" in inserted
    unsafe = fix_text(Checker(select=["DL503"]), text, "m.py", FixMode(unsafe=True))
    assert "load(key, budget=budget)" in unsafe.text and "self.get(key)\n" in unsafe.text
    [left] = unsafe.remaining
    assert left.fix is None and "a subclass may override `get` without `budget`" in left.message


def test_dl503_never_breaks_an_override() -> None:
    """What the keyword would do: the subclass's override has no `budget`."""
    text = (
        "class Base:\n    def get(self, key, budget=None):\n        return key\n\n"
        "    def run(self, key, budget):\n        return self.get(key)\n\n"
        "class Cached(Base):\n    def get(self, key):\n        return key\n"
    )
    fixed = fix_text(Checker(select=["DL503"]), text, "m.py", FixMode(unsafe=True, thread_budget=True)).text
    namespace: dict = {}
    exec(compile(fixed, "m.py", "exec"), namespace)
    assert namespace["Cached"]().run("k", budget=object()) == "k"
