"""Regression tests for hostile input, edge cases and scale (issue 12): each case here was
found by a newcomer's first hour or a fuzzer, and failed before its fix."""
from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from typing import Optional

import pytest

from deadline_lint.engine.checker import Checker
from deadline_lint.fixes.loop import FixMode, fix_text
from deadline_lint.run import api
from deadline_lint.settings.profile import TIMEOUT_FLOOR_S


def fixed(text: str, unsafe: bool = True, select=None) -> str:
    checker = Checker(select=select or [])
    return fix_text(checker, textwrap.dedent(text), "service.py", FixMode(unsafe=unsafe)).text


def _timeout_values(text: str, remainder: Optional[float] = 0.0):
    """Each `timeout=` value in `text`, evaluated with every remainder read into a local set to
    `remainder` (0 s left, or None: a gRPC client that set no deadline)."""
    spent = {"remaining": remainder, "left": remainder, "budget_s": 0.0, "max": max, "min": min}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.keyword) and node.arg == "timeout":
            yield eval(compile(ast.Expression(node.value), "<timeout>", "eval"), spent)  # noqa: S307


# -- item 3: every timeout a fix derives from a budget has a positive floor -----------------
def test_a_spent_budget_never_becomes_an_invalid_timeout() -> None:
    source = """\
        import grpc
        import httpx
        import requests

        def handler(url, context: grpc.ServicerContext):
            remaining = context.time_remaining()
            requests.get(url)
            httpx.get(url, timeout=2.0)
            return requests.post(url, timeout=remaining)

        def threaded(url, *, budget_s: float = 10.0):
            requests.get(url)
    """
    text = fixed(source)
    # Spent (0.0), and no deadline at all (None: the edge total stands in, never a TypeError).
    for remaining, value in (("float(0)", 0.0), ("None", None)):
        values = [v for v in _timeout_values(text.replace("context.time_remaining()", remaining), value)]
        assert len(values) == 4 and all(v >= TIMEOUT_FLOOR_S for v in values), text


# -- item 4: DL103 bounds only the unbounded part of a (connect, read) tuple ---------------
def test_unbounded_read_timeout_keeps_the_connect_timeout() -> None:
    source = """\
        import requests
        requests.get("http://x", timeout=(3.05, None))
        requests.get("http://x", timeout=(None, 27))
    """
    checker = Checker(select=["DL103"])
    found = checker.check_text(textwrap.dedent(source), "a.py")
    assert [d.message.split(": pass ")[1] for d in found] == ["`(3.05, 10.0)` instead", "`(10.0, 27)` instead"]
    out = fixed(source, select=["DL103"])
    assert 'timeout=(3.05, 10.0))' in out and 'timeout=(10.0, 27))' in out


# -- item 2: a fix uses the name bound where it goes, or bails ------------------------------
def test_a_fix_uses_the_alias_the_module_is_imported_under() -> None:
    source = """\
        import aiohttp as ah

        async def main(url):
            async with ah.ClientSession() as session:
                return await session.get(url)
    """
    out = fixed(source, select=["DL101"])
    assert "session.get(url, timeout=ah.ClientTimeout(total=10.0))" in out
    assert "import aiohttp\n" not in out


def test_a_fix_bails_when_the_name_is_rebound_at_module_level() -> None:
    source = """\
        from aiohttp import ClientSession
        aiohttp = None

        async def main(url):
            async with ClientSession() as session:
                return await session.get(url)
    """
    checker = Checker(select=["DL101"])
    found = checker.check_text(textwrap.dedent(source), "a.py")
    assert [d.code for d in found] == ["DL101"] and found[0].fix is None
    assert fixed(source, select=["DL101"]) == textwrap.dedent(source)


def test_a_fix_bails_when_a_local_shadows_the_module() -> None:
    source = """\
        import asyncio

        async def main(host, asyncio=asyncio):
            return await asyncio.open_connection(host, 80)

        async def other(host):
            aiohttp = "shadow"
            from aiohttp import ClientSession
            async with ClientSession() as session:
                return await session.get(host)
    """
    out = fixed(source, select=["DL101"])
    assert "import aiohttp" not in out.split("async def")[0]
    assert "session.get(host)" in out


# -- item 12: a fix round applies every non-overlapping edit in one pass --------------------
def test_non_overlapping_choice_is_greedy_in_order_and_complete() -> None:
    from deadline_lint.fixes.loop import _Group, _non_overlapping
    from deadline_lint.support.diagnostics import Edit

    groups = [
        _Group((Edit(0, 0, "a"),)),
        _Group((Edit(10, 12, "b"), Edit(30, 30, "c"))),
        _Group((Edit(12, 14, "touches b"),)),
        _Group((Edit(20, 25, "d"),)),
        _Group((Edit(24, 40, "overlaps d and c"),)),
        _Group((Edit(5, 6, "e"), Edit(50, 51, "f"))),
        _Group((Edit(31, 31, "g"),)),
        _Group((Edit(41, 45, "h"),)),
    ]
    chosen = _non_overlapping(groups, 60)
    assert [g.edits[0].text for g in chosen] == ["a", "b", "d", "e", "g", "h"]


def test_many_fixes_in_one_file_take_one_round() -> None:
    """17,000 findings once took minutes (every edit compared with every taken one); the
    round count is what stays linear: all of them go in the first round."""
    lines = ["import requests\n", "def f(u):\n"] + ["    requests.get(u)\n"] * 3000
    text = "".join(lines)
    checker = Checker(select=["DL101"])
    rounds = []
    original = Checker.check_text

    def counting(self, *args, **kwargs):
        rounds.append(1)
        return original(self, *args, **kwargs)

    Checker.check_text = counting  # type: ignore[method-assign]
    try:
        result = fix_text(checker, text, "big.py", FixMode(unsafe=True))
    finally:
        Checker.check_text = original  # type: ignore[method-assign]
    assert result.fixed == 3000 and len(rounds) == 2


def test_choosing_edits_does_not_compare_every_pair(monkeypatch) -> None:
    """Counted, not timed: choosing among n single-edit fixes costs O(n log n), never n²."""
    from deadline_lint.fixes import loop as fixes
    from deadline_lint.support.diagnostics import Edit

    calls = []
    real_touch = fixes._touch
    monkeypatch.setattr(fixes, "_touch", lambda a, b: calls.append(1) or real_touch(a, b))
    groups = [fixes._Group((Edit(i * 10, i * 10 + 2, "x"),)) for i in range(2000)]
    assert len(fixes._non_overlapping(groups, 20000)) == 2000
    assert len(calls) < 4 * 2000


# -- item 15: CPython's own nesting limit is not a syntax error, and analyses do not recurse --
_MAX_DEPTH_SCRIPT = r"""
import sys
def source(n):
    return "import httpx\ndef f(budget):\n    x = " + "-" * n + "httpx.get(u, timeout=2.0)\n"
def accepted(n):
    try:
        compile(source(n), "deep.py", "exec")
        return True
    except (RecursionError, MemoryError, SyntaxError):
        return False
low, high = 100, 20000
while low < high:
    middle = (low + high + 1) // 2
    low, high = (middle, high) if accepted(middle) else (low, middle - 1)
print(low)
"""


def _deepest_accepted() -> int:
    """The deepest `- - - x` that `python script.py` accepts, measured in a fresh interpreter."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _MAX_DEPTH_SCRIPT], capture_output=True, text=True, check=True)
    return int(done.stdout)


def _deep(n: int) -> str:
    return "import httpx\ndef f(budget):\n    x = " + "-" * n + "httpx.get(u, timeout=2.0)\n"


def test_code_at_the_interpreters_nesting_limit_is_checked() -> None:
    depth = _deepest_accepted()
    found = Checker().check_text(_deep(depth), "deep.py")
    assert [d.code for d in found] == ["DL102"]
    beyond = Checker().check_text(_deep(depth + 200), "deep.py")
    assert [d.code for d in beyond] == ["DL007"] and "too deeply nested" in beyond[0].message


@pytest.mark.parametrize("shape", [
    "    httpx.get(u, timeout=" + "+".join(["2.0"] * 2500) + ")\n",  # is_fixed_timeout recursed
    "    x = " + "lambda: " * 900 + "httpx.get(u, timeout=2.0)\n",  # budget_of recursed
])
def test_shared_analyses_do_not_recurse_on_deep_code(shape: str) -> None:
    from deadline_lint.families.registry import all_rules

    text = "import httpx\ndef f(budget, u):\n" + shape
    found = Checker(select=list(all_rules())).check_text(text, "deep.py")
    assert not [d for d in found if d.code.startswith("DL0")], found


def test_a_rule_that_runs_out_of_stack_reports_dl007_not_an_internal_error(monkeypatch) -> None:
    from deadline_lint.families.outbound.fixed_timeout_ignores_budget import FixedTimeoutIgnoresBudget

    def overflow(self, node, ctx):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(FixedTimeoutIgnoresBudget, "visit_Call", overflow)
    found = Checker().check_text(_deep(10), "deep.py")
    assert [(d.code, d.message) for d in found] == [
        ("DL007", "too deeply nested to analyse; DL102 was skipped for this file")
    ]


# -- item 9: a fix that needs an import is applied without LibCST when LibCST cannot ---------
def test_an_import_is_added_without_libcst_when_libcst_fails() -> None:
    from deadline_lint.fixes.import_block import add_imports_plainly
    from deadline_lint.fixes.loop import add_imports

    text = (
        '"""Service."""\nfrom __future__ import annotations\n\nfrom aiohttp import ClientSession; import os\n'
        "BANNER = (\n" + '    "x"\n' * 400 + ")\n\n"
        "async def fetch(url):\n    async with ClientSession() as session:\n        return await session.get(url)\n"
    )
    assert add_imports(text, ["aiohttp"]) is None  # LibCST: RecursionError on the long concatenation
    assert add_imports_plainly(text, ["aiohttp"]) is None  # two statements on a line: not the plain case
    result = fix_text(Checker(), text, "service.py", FixMode(unsafe=True))
    assert result.fixed == 1 and not result.remaining
    assert result.text.startswith('"""Service."""\nfrom __future__ import annotations\n\nimport aiohttp\nfrom aiohttp')
    assert "session.get(url, timeout=aiohttp.ClientTimeout(total=10.0))" in result.text
    ast.parse(result.text)


def test_import_lines_go_after_docstring_future_imports_and_never_twice() -> None:
    from deadline_lint.fixes.loop import insert_import_lines

    assert insert_import_lines("@dec\ndef f(): pass\n", ["time"]) == "import time\n@dec\ndef f(): pass\n"
    assert insert_import_lines('"""d"""', ["time"]) == '"""d"""\nimport time\n'
    assert insert_import_lines("import time\nx = 1\n", ["time"]) == "import time\nx = 1\n"
    assert insert_import_lines('"""d"""; x = 1\n', ["time"]) is None  # no line of its own


def test_the_codemod_skips_files_libcst_would_crash_on_and_finishes_the_run(tmp_path) -> None:
    import subprocess
    import sys

    (tmp_path / "deep.py").write_text("import requests\nz = " + "(" * 10000 + "x" + ")" * 10000 + "\n")
    (tmp_path / "latin.py").write_bytes(b'import requests\nx = "\xe9"\n')
    (tmp_path / "svc.py").write_text("import requests\ndef f(u):\n    return requests.get(u)\n")
    done = subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", "-x", "deadline_lint.codemod.InsertBudget",
         "--no-format", "--hide-progress", "-j", "2", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "deep.py: deadline-lint DL007: too deeply nested to analyse" in done.stderr
    assert "latin.py: deadline-lint DL002: cannot decode file" in done.stderr
    assert "timeout=10.0)" in (tmp_path / "svc.py").read_text()


# -- item 6: the same file named twice is checked once ------------------------------------------
def test_one_file_named_three_ways_is_checked_and_fixed_once(tmp_path, monkeypatch, capsys) -> None:
    import os

    from deadline_lint.frontends.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("import requests\nrequests.get('u')\n")
    os.symlink("a.py", tmp_path / "link-to-a.py")
    assert main(["check", "a.py", "./a.py", "link-to-a.py"]) == 1
    out = capsys.readouterr().out
    assert out.count("DL101") == 1 and "Found 1 problem in 1 of 1 file checked" in out
    assert main(["fix", "--unsafe-fixes", "--jobs", "4", "a.py", "./a.py", "link-to-a.py"]) == 0
    captured = capsys.readouterr()
    assert "changed on disk" not in captured.err and "Fixed 1 problem in 1 file" in captured.out
    assert (tmp_path / "a.py").read_text() == "import requests\nrequests.get('u', timeout=10.0)\n"


# -- item 7: a pyproject.toml that is not UTF-8 ---------------------------------------------------
def test_a_pyproject_that_is_not_utf8_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys) -> None:
    from deadline_lint.frontends.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_bytes(b'[tool.deadline-lint]\nhop-margin-ms = 20 # \xe9\n')
    (tmp_path / "a.py").write_text("x = 1\n")
    assert main(["check", "a.py"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pyproject.toml: not valid TOML (not UTF-8" in err[0]


# -- item 8: folders that cannot be listed or searched ------------------------------------------
def test_an_unlistable_subfolder_is_reported_not_skipped(tmp_path, monkeypatch, capsys) -> None:
    import os

    from deadline_lint.frontends.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg" / "locked").mkdir(parents=True)
    (tmp_path / "pkg" / "ok.py").write_text("x = 1\n")
    real_scandir = os.scandir

    def scandir(path="."):  # root ignores permissions: refuse the listing the way a kernel would
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert main(["check", "pkg"]) == 1
    out = capsys.readouterr().out
    assert "pkg/locked:1:1: DL006 cannot list folder: Permission denied; its files were not checked" in out
    assert "All checks passed" not in out


def test_a_named_file_in_a_folder_that_cannot_be_searched(tmp_path, monkeypatch, capsys) -> None:
    import os
    from pathlib import Path

    from deadline_lint.frontends.cli import main

    monkeypatch.chdir(tmp_path)
    real_stat, real_is_file = os.stat, Path.is_file
    locked = str(tmp_path / "locked")

    def stat(path, *args, **kwargs):
        if str(path).startswith(locked) or str(path).startswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)

    real_open = os.open

    def open_(path, *args, **kwargs):  # the reader opens first (only regular files are read)
        if str(path).startswith(locked) or str(path).startswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "open", open_)
    assert main(["check", "locked/a.py"]) == 1
    captured = capsys.readouterr()
    assert "locked/a.py:1:1: DL006 cannot read file: Permission denied" in captured.out
    assert "Traceback" not in captured.err

    def is_file(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(os, "stat", real_stat)
    monkeypatch.setattr(Path, "is_file", is_file)
    (tmp_path / "a.py").write_text("x = 1\n")
    assert main(["check", "a.py"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot look for pyproject.toml: Permission denied" in err[0]
    monkeypatch.setattr(Path, "is_file", real_is_file)


# -- item 13: --jobs is positive and capped ------------------------------------------------------
@pytest.mark.parametrize("value", ["0", "-1", "many"])
def test_non_positive_jobs_are_a_usage_error(value, capsys) -> None:
    from deadline_lint.frontends.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["check", "--jobs", value, "."])
    assert exit_info.value.code == 2
    assert "expected a whole number of processes from 1" in capsys.readouterr().err


def test_jobs_never_exceed_files_or_cpus(monkeypatch) -> None:
    import os

    from deadline_lint.run.api import resolve_jobs

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert resolve_jobs(1000, 4) == 2
    assert resolve_jobs(1000, 1) == 1
    assert resolve_jobs(2, 100) == 2


# -- item 10: every output path keeps the file's own encoding -----------------------------------
LATIN1 = "# -*- coding: latin-1 -*-\nimport requests\nGREETING = 'héllo'\nrequests.get('u')\n".encode("latin-1")


def _run_cli(args, stdin: bytes, cwd) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "deadline_lint", *args], input=stdin, cwd=cwd, capture_output=True)


def test_fix_stdin_writes_the_input_encoding_and_bom(tmp_path) -> None:
    done = _run_cli(["fix", "--unsafe-fixes", "-"], LATIN1, tmp_path)
    assert done.stdout == LATIN1.replace(b"get('u')", b"get('u', timeout=10.0)")
    with_bom = b"\xef\xbb\xbfimport requests\nrequests.get('\xc3\xa9')\n"
    done = _run_cli(["fix", "--unsafe-fixes", "-"], with_bom, tmp_path)
    assert done.stdout == with_bom.replace(b"')\n", b"', timeout=10.0)\n")


def _patch_applies(diff: bytes, cwd) -> None:
    import shutil
    import subprocess

    if shutil.which("patch") is None:
        pytest.skip("no patch program")
    subprocess.run(["patch", "-p0", "--batch", "--quiet"], input=diff, cwd=cwd, check=True, capture_output=True)


def test_a_diff_of_a_latin1_file_applies_with_patch(tmp_path) -> None:
    (tmp_path / "svc.py").write_bytes(LATIN1)
    done = _run_cli(["fix", "--unsafe-fixes", "--diff", "svc.py"], b"", tmp_path)
    assert done.returncode == 1
    _patch_applies(done.stdout, tmp_path)
    assert (tmp_path / "svc.py").read_bytes() == LATIN1.replace(b"get('u')", b"get('u', timeout=10.0)")


def test_a_diff_of_an_absolute_path_below_the_folder_applies_with_patch(tmp_path) -> None:
    (tmp_path / "pkg").mkdir()
    target = tmp_path / "pkg" / "svc.py"
    target.write_bytes(b"\xef\xbb\xbfimport requests\nrequests.get('u')\n")
    done = _run_cli(["fix", "--unsafe-fixes", "--diff", str(target)], b"", tmp_path)
    assert done.stdout.startswith(b"--- pkg/svc.py\n+++ pkg/svc.py\n")
    _patch_applies(done.stdout, tmp_path)
    assert target.read_bytes() == b"\xef\xbb\xbfimport requests\nrequests.get('u', timeout=10.0)\n"
    done = _run_cli(["fix", "--unsafe-fixes", "--diff", "-"], LATIN1, tmp_path)
    assert "héllo".encode("latin-1") in done.stdout and "héllo".encode("utf-8") not in done.stdout


# -- item 16: smaller ones ------------------------------------------------------------------------
def test_the_summary_counts_files_with_problems_and_files_checked() -> None:
    from deadline_lint.engine.checker import tool_diagnostic
    from deadline_lint.frontends.output import summary_line

    found = [tool_diagnostic("a.py", "DL001", "x"), tool_diagnostic("a.py", "DL006", "y")]
    assert summary_line(found, 4) == "Found 2 problems in 1 of 4 files checked."


NOQA_CASES = (
    "import requests\n"
    "requests.get('a')  # NOQA: dl101\n"
    "requests.get('b')  # noqa: DL101\n"
    "requests.get('c')  # noqa:dl101,E501\n"
)


def test_lowercase_noqa_codes_silence_nothing_under_every_front_end(tmp_path, monkeypatch, capsys) -> None:
    """flake8 compares `# noqa` codes as written; the CLI and pylint now do the same."""
    import json
    from io import StringIO

    from flake8.main.application import Application
    from pylint.lint import Run
    from pylint.reporters import JSON2Reporter

    from deadline_lint.frontends import pylint_plugin

    monkeypatch.chdir(tmp_path)
    (tmp_path / "svc.py").write_text(NOQA_CASES)
    engine = sorted(d.line for d in Checker().check_text(NOQA_CASES, "svc.py"))

    monkeypatch.setattr(api, "_SESSIONS", {})
    app = Application()
    app.run(["--isolated", "--jobs=1", "--select=DL", "--format=%(row)d %(code)s", "svc.py"])
    flake8_lines = sorted(int(line.split()[0]) for line in capsys.readouterr().out.splitlines() if "DL101" in line)

    monkeypatch.setattr(api, "_SESSIONS", {})
    monkeypatch.setattr(pylint_plugin._ModuleFindings, "module", None)
    (tmp_path / "pylintrc").write_text("[MAIN]\n")
    output = StringIO()
    Run(["--rcfile=pylintrc", "--persistent=n", "--load-plugins=deadline_lint.pylint_plugin",
         "--disable=all", "--enable=deadline-lint", "svc.py"], reporter=JSON2Reporter(output), exit=False)
    pylint_lines = sorted(m["line"] for m in json.loads(output.getvalue())["messages"])

    assert engine == flake8_lines == pylint_lines == [2, 4]


def test_flake8_reports_dl002_for_a_file_python_cannot_decode(tmp_path, monkeypatch, capsys) -> None:
    from flake8.main.application import Application


    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(api, "_SESSIONS", {})
    (tmp_path / "lat.py").write_bytes(b'import requests\nx = "\xe9"\nrequests.get("u")\n')
    app = Application()
    app.run(["--isolated", "--jobs=1", "--select=DL", "--format=%(row)d %(code)s %(text)s", "lat.py"])
    out = capsys.readouterr().out.splitlines()
    assert out == ["1 DL002 cannot decode file: cannot be decoded as utf-8: invalid continuation byte"]


@pytest.mark.parametrize("code", ["DL101", "DL106", "DL001", "DL007"])
def test_explain_prints_the_documentation_page(code, capsys) -> None:
    from pathlib import Path

    from deadline_lint.frontends.cli import main

    assert main(["explain", code.lower()]) == 0
    page = (Path(__file__).parent.parent / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8")
    assert capsys.readouterr().out == page.split("\n", 1)[1]


@pytest.mark.parametrize("pattern", ["examples/x", "./examples/x", "examples/x/", "./examples/x/", "x"])
@pytest.mark.parametrize("root", ["examples", "./examples", "."])
def test_exclude_matches_however_the_folder_is_spelled(pattern, root, tmp_path, monkeypatch) -> None:
    from deadline_lint.run.files import discover

    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples" / "x").mkdir(parents=True)
    (tmp_path / "examples" / "x" / "skip.py").write_text("")
    (tmp_path / "examples" / "keep.py").write_text("")
    found = [p.replace("\\", "/") for p in discover([root], [pattern])]
    assert [p.rsplit("/", 1)[-1] for p in found] == ["keep.py"]


@pytest.mark.parametrize("argv, flag", [
    (["check", "--stdin-filename", "a.py", "a.py"], "--stdin-filename"),
    (["fix", "--stdin-filename", "a.py", "a.py"], "--stdin-filename"),
    (["check", "--unsafe-fixes", "a.py"], "--unsafe-fixes"),
    (["check", "--thread-budget", "a.py"], "--thread-budget"),
])
def test_flags_that_would_do_nothing_are_usage_errors(argv, flag, tmp_path, monkeypatch, capsys) -> None:
    from deadline_lint.frontends.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("x = 1\n")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"deadline-lint: {flag}: only applies")


def test_the_license_is_an_spdx_string_not_the_deprecated_table() -> None:
    """A `project.license` table makes setuptools print a deprecation warning on every install."""
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["license"] == "MIT"
    assert "setuptools>=77" in project["build-system"]["requires"]  # the first to read PEP 639


# -- item 5: DL102 and DL104 messages and misses ---------------------------------------------------
def test_dl102_does_not_call_a_config_without_timeouts_a_fixed_timeout() -> None:
    source = """\
        import boto3
        from botocore.config import Config
        def f(budget):
            return boto3.client("s3", config=Config(retries={"max_attempts": 3}))
    """
    found = Checker(select=["DL102"]).check_text(textwrap.dedent(source), "a.py")
    assert len(found) == 1 and "fixed timeout" not in found[0].message
    assert "waits the library default (60 s)" in found[0].message


def test_dl102_does_not_call_an_attribute_taken_from_the_budget_fixed() -> None:
    source = """\
        import httpx
        class Client:
            def __init__(self, budget):
                self.remaining = budget.remaining()
                self.timeout = 5.0
            def get(self, url, budget):
                httpx.get(url, timeout=self.remaining)
                httpx.get(url, timeout=self.deadline_left)
                return httpx.get(url, timeout=self.timeout)  # configuration: still DL102
    """
    found = Checker(select=["DL102"]).check_text(textwrap.dedent(source), "a.py")
    assert [d.line for d in found] == [9]


def test_dl104_sees_a_remainder_bound_by_a_walrus() -> None:
    source = """\
        import grpc, httpx
        def f(url, context: grpc.ServicerContext):
            if (left := context.time_remaining()) > 0.1:
                return httpx.get(url, timeout=left)
            while (spare := context.time_remaining() - 0.05) > 0:
                httpx.get(url, timeout=spare)  # has its margin: quiet
    """
    found = Checker(select=["DL104"]).check_text(textwrap.dedent(source), "a.py")
    assert [(d.line, d.code) for d in found] == [(4, "DL104")]
    assert "max(0.001, (10.0 if left is None else left) - 0.05)" in fixed(source, select=["DL104"])


# -- item 11: profile templates, names and numbers are validated when the profile loads ----------
@pytest.mark.parametrize("yaml_text, message", [
    ('fix:\n  budget_expression: "{budget}.timeout("\n', "fix.budget_expression: expected a template that fills in"),
    ('fix:\n  edge_expression: "import os"\n', "fix.edge_expression: expected a template that fills in"),
    ("outbound:\n  - library: acme\n    keyword: not a name\n    functions: [acme.get]\n",
     "outbound[0].keyword: expected a Python parameter name, got 'not a name'"),
    ("outbound:\n  - library: acme\n    functions: [{name: acme.get, keyword: class}]\n",
     "outbound[0].functions[0].keyword: expected a Python parameter name"),
    ('outbound:\n  - library: acme\n    timeout_template: "Timeout(total={timeout}"\n    functions: [acme.get]\n',
     "outbound[0].timeout_template: expected a template that fills in to one Python expression"),
    ("edge_total_ms: 100000000000000000000\n", "edge_total_ms: expected a whole number of milliseconds"),
    ("hop_margin_ms: 20\nhop_margin_ms: 30\n", "line 2: hop_margin_ms: given twice"),
])
def test_a_bad_profile_names_the_key_at_load_time(yaml_text, message, tmp_path, capsys) -> None:
    from deadline_lint.frontends.cli import main

    (tmp_path / "profile.yaml").write_text(yaml_text)
    (tmp_path / "a.py").write_text("x = 1\n")
    assert main(["check", "--profile", str(tmp_path / "profile.yaml"), str(tmp_path / "a.py")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


@pytest.mark.parametrize("table, message", [
    ('hop-margin-ms = 20\nhop_margin_ms = 30\n', "hop_margin_ms: given twice (also as hop-margin-ms)"),
    ('profile = ""\n', "profile: expected the path of a profile YAML file, got ''"),
])
def test_a_bad_pyproject_table_names_the_key(table, message, tmp_path, monkeypatch, capsys) -> None:
    from deadline_lint.frontends.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.deadline-lint]\n" + table)
    (tmp_path / "a.py").write_text("x = 1\n")
    assert main(["check", "a.py"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


# -- item 14: the declared Python is the one tested ----------------------------------------------
def test_the_declared_oldest_python_is_the_one_ci_also_runs() -> None:
    import re
    import sys
    import tomllib
    from pathlib import Path

    root = Path(__file__).parent.parent
    declared = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    oldest = re.fullmatch(r">=(\d+)\.(\d+)", declared)
    assert oldest, declared
    version = f"{oldest.group(1)}.{oldest.group(2)}"
    assert f"OLDEST={version}" in (root / ".ci" / "run").read_text(encoding="utf-8")
    assert sys.version_info[:2] >= (int(oldest.group(1)), int(oldest.group(2)))
    assert version == "3.11"  # 3.9 and 3.10 are past end of life; 3.9 failed the suite


def test_where_libcst_fails_on_a_plain_module_the_import_goes_where_it_would_have_put_it() -> None:
    text = (
        '"""Service."""\nfrom __future__ import annotations\n\nfrom aiohttp import ClientSession\n'
        "BANNER = (\n" + '    "x"\n' * 400 + ")\n\n"
        "async def fetch(url):\n    async with ClientSession() as session:\n        return await session.get(url)\n"
    )
    result = fix_text(Checker(), text, "service.py", FixMode(unsafe=True))
    assert result.fixed == 1 and not result.remaining
    assert result.text.startswith(
        '"""Service."""\nfrom __future__ import annotations\n\n'
        'from aiohttp import ClientSession\nimport aiohttp\n\nBANNER'
    )
