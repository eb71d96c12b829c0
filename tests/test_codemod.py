"""The LibCST codemod command, run through LibCST's own machinery: the same result as
`deadline-lint fix`, and "prove or bail" (warn, leave the module unchanged) on failure."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fixture_cases import FixtureCase, fixture_cases
from fixture_fixing import ALL_FIXED, SAFE_FIXED, SERVICE, fix_case

from deadline_lint.engine.rule import REGISTRY, Rule
from deadline_lint.families.registry import all_rules
from deadline_lint.frontends.cli import main

ROOT = Path(__file__).resolve().parent.parent
CASES = fixture_cases()

# LibCST's codemod machinery and the codemod, imported by `_libcst` below in the process that
# runs these tests: importing them is a second of every xdist worker's collection otherwise.
libcst: Any = None
CodemodContext: Any = None
TransformFailure: Any = None
TransformSuccess: Any = None
exec_transform_with_prettyprint: Any = None
transform_module: Any = None
InsertBudget: Any = None


@pytest.fixture(autouse=True, scope="module")
def _libcst() -> None:
    global libcst, CodemodContext, TransformFailure, TransformSuccess, exec_transform_with_prettyprint
    global transform_module, InsertBudget
    import libcst
    from libcst.codemod import (
        CodemodContext,
        TransformFailure,
        TransformSuccess,
        exec_transform_with_prettyprint,
        transform_module,
    )

    from deadline_lint.frontends.codemod import InsertBudget


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_codemod_gives_the_same_result_as_fix_for_every_fixture(case: FixtureCase) -> None:
    command = InsertBudget(
        CodemodContext(), unsafe_fixes=True, profile=str(case.profile) if case.profile else None, select=[case.code]
    )
    original = case.path.read_bytes().decode("utf-8")
    result = transform_module(command, original)
    assert isinstance(result, TransformSuccess), getattr(result, "error", result)
    assert result.code == fix_case(case).text
    assert result.warning_messages == []


def test_exec_transform_with_prettyprint_applies_safe_and_budget_inserting_fixes() -> None:
    code = exec_transform_with_prettyprint(InsertBudget(CodemodContext()), SERVICE, format_code=False)
    assert code == SAFE_FIXED  # DL103 replaces an explicit value: unsafe, not applied


def test_codemod_inserts_edge_defaults_whatever_their_class_while_fix_does_not(tmp_path: Path) -> None:
    text = "import requests\n\ndef health():\n    return requests.get('http://inventory/health').ok\n"
    inserted = text.replace("/health')", "/health', timeout=10.0)")
    code = exec_transform_with_prettyprint(InsertBudget(CodemodContext()), text, format_code=False)
    assert code == inserted
    path = tmp_path / "svc.py"
    path.write_text(text)
    assert main(["fix", str(path)]) == 1  # unsafe: no budget in scope, so `fix` leaves it
    assert path.read_text() == text
    assert main(["fix", "--extend-safe-fixes", "DL101", str(path)]) == 0  # the escape hatch
    assert path.read_text() == inserted


def test_codemod_help_says_it_inserts_budgets_whatever_their_class() -> None:
    assert "whatever their safety class" in InsertBudget.DESCRIPTION
    command = InsertBudget(CodemodContext(), unsafe_fixes=True)
    unsafe = exec_transform_with_prettyprint(command, SERVICE, format_code=False)
    assert unsafe == ALL_FIXED


def test_codemod_thread_budget_option() -> None:
    before = (
        "import requests\n\ndef fetch(url):\n    return requests.get(url)\n\n"
        "def handler(url, budget):\n    return fetch(url)\n"
    )
    result = transform_module(InsertBudget(CodemodContext(), thread_budget=True), before)
    assert isinstance(result, TransformSuccess)
    assert result.code == (
        "import requests\n\ndef fetch(url, *, budget_s: float):\n"
        "    return requests.get(url, timeout=max(0.001, budget_s - 0.05))\n\n"
        "def handler(url, budget):\n    return fetch(url, budget_s=budget.timeout())\n"
    )


def test_a_bad_profile_warns_and_leaves_the_module_unchanged(tmp_path: Path) -> None:
    bad = tmp_path / "profile.yaml"
    bad.write_text("hop_margin_ms: lots\n")
    result = transform_module(InsertBudget(CodemodContext(), profile=str(bad)), SERVICE)
    assert isinstance(result, TransformSuccess)
    assert result.code == SERVICE
    (warning,) = result.warning_messages
    assert "hop_margin_ms" in warning and "left unchanged" in warning


class _CountUp(Rule):
    code, name, summary = "DL993", "test-codemod-count-up", "test only"
    node_types = (ast.Constant,)

    def visit(self, node, ctx):
        if type(node.value) is int:
            from deadline_lint.engine.edits import replace_node

            ctx.report(self, node, "count", [replace_node(ctx.source, node, str(node.value + 1))])


def test_a_fix_that_does_not_converge_warns_and_leaves_the_module_unchanged(monkeypatch) -> None:
    all_rules()
    monkeypatch.setitem(REGISTRY, _CountUp.code, _CountUp)
    result = transform_module(InsertBudget(CodemodContext(), unsafe_fixes=True, select=["DL993"]), "x = 1\n")
    assert isinstance(result, TransformSuccess)
    assert result.code == "x = 1\n"
    assert any("DL005" in w for w in result.warning_messages)


def test_a_crash_inside_fixing_warns_instead_of_failing(monkeypatch) -> None:
    from deadline_lint.run.api import Session

    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(Session, "fix_text", explode)
    result = transform_module(InsertBudget(CodemodContext()), SERVICE)
    assert isinstance(result, TransformSuccess) and not isinstance(result, TransformFailure)
    assert result.code == SERVICE
    assert any("RuntimeError: boom" in w for w in result.warning_messages)


def test_python_m_libcst_tool_codemod_runs_it_over_a_tree(tmp_path: Path) -> None:
    """The command as users type it. `-x` loads our class by module path (no
    .libcst.codemod.yaml needed) and the command must come before LibCST's own options (its
    first pass takes the first bare word as the command, so `-j 1 -x ...` would read `1`);
    `--no-format` keeps the file's formatting (LibCST's default formatter is black, which is
    not a dependency)."""
    codemodded, fixed = tmp_path / "codemodded", tmp_path / "fixed"
    for folder in (codemodded, fixed):
        (folder / "pkg").mkdir(parents=True)
        (folder / "pkg" / "svc.py").write_text(SERVICE)
        (folder / "pkg" / "clean.py").write_text("x = 1\n")
    result = subprocess.run(
        [
            sys.executable, "-m", "libcst.tool", "codemod", "-x", "deadline_lint.codemod.InsertBudget",
            "--no-format", "--hide-progress", "-j", "1", "--unsafe-fixes", ".",
        ],
        cwd=codemodded, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "Failed to codemod 0 files" in result.stderr
    assert main(["fix", "--unsafe-fixes", str(fixed)]) == 0
    for name in ("svc.py", "clean.py"):
        assert (codemodded / "pkg" / name).read_text() == (fixed / "pkg" / name).read_text()
    assert "timeout=budget.timeout()).ok" in (codemodded / "pkg" / "svc.py").read_text()


def test_codemod_keeps_libcst_module_settings() -> None:
    crlf = SERVICE.replace("\n", "\r\n")
    module = libcst.parse_module(crlf)
    result = transform_module(InsertBudget(CodemodContext()), crlf)
    assert isinstance(result, TransformSuccess)
    assert result.code == SAFE_FIXED.replace("\n", "\r\n")
    assert libcst.parse_module(result.code).default_newline == module.default_newline == "\r\n"


def test_codemod_threads_a_call_chain_like_fix() -> None:
    goldens = ROOT / "tests" / "goldens"
    before = (goldens / "thread_chain.py").read_text(encoding="utf-8")
    command = InsertBudget(CodemodContext(), unsafe_fixes=True, thread_budget=True)
    result = transform_module(command, before)
    assert isinstance(result, TransformSuccess)
    assert result.code == (goldens / "thread_chain.py.fixed").read_text(encoding="utf-8")
