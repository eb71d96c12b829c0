"""The `deadline-lint` command as users run it: output shapes, exit codes, bad input.

Where the process itself is part of what is shown (the bundled example as a user first runs
it, stdin, worker processes, deep nesting against a fresh interpreter's stack) it runs as a
command (`command`); the other runs go through the same entry point in this process (`run`,
tests/front_ends.py), with the same argv, working folder, exit code, stdout and stderr."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from front_ends import run_cli
from rule_codes import unused_code

from deadline_lint.families.registry import all_rules
from deadline_lint.frontends.cli import main

ROOT = Path(__file__).resolve().parent.parent


def command(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "deadline_lint", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return run_cli(list(args), cwd)


def test_bundled_example_reports_its_deliberate_bugs_with_positions() -> None:
    result = command("check", "examples/")
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    reported = [" ".join(line.split()[:2]) for line in lines[:-1]]  # path:line:column: code
    assert reported == [
        "examples/checkout_service/app.py:40:9: DL401",
        "examples/checkout_service/app.py:42:5: DL501",
        "examples/checkout_service/app.py:50:11: DL502",
        "examples/checkout_service/app.py:54:11: DL503",
        "examples/checkout_service/app.py:66:20: DL204",
        "examples/checkout_service/app.py:74:34: DL203",
        "examples/checkout_service/app.py:86:9: DL404",
        "examples/checkout_service/app.py:96:12: DL402",
        "examples/checkout_service/app.py:125:9: DL403",
        "examples/checkout_service/budget.py:36:34: DL201",
        "examples/checkout_service/clients.py:13:71: DL103",
        "examples/checkout_service/clients.py:24:18: DL101",
        "examples/checkout_service/clients.py:29:70: DL104",
        "examples/checkout_service/clients.py:41:62: DL102",
        "examples/checkout_service/clients.py:53:55: DL105",
        "examples/checkout_service/clients.py:60:56: DL107",
        "examples/checkout_service/clients.py:76:64: DL202",
        "examples/checkout_service/jobs.py:17:5: DL504",
        "examples/checkout_service/retries.py:11:59: DL301",
        "examples/checkout_service/retries.py:25:39: DL302",
        "examples/checkout_service/retries.py:34:26: DL303",
        "examples/checkout_service/retries.py:53:11: DL304",
        "examples/checkout_service/telemetry.py:14:5: DL602",
    ]
    assert lines[-1].startswith("Found 23 problems in 6 of 8 files checked")
    # Every code the example shows is a default rule; a new rule need not join the example.
    shown = {entry.split()[-1] for entry in reported}
    assert shown <= {code for code, rule in all_rules().items() if rule.default_enabled}


def test_json_output_shape(tmp_path: Path) -> None:
    (tmp_path / "svc.py").write_text("import requests\nrequests.get('u')\n")
    result = run("check", "--format", "json", str(tmp_path))
    assert result.returncode == 1
    (item,) = json.loads(result.stdout)
    assert set(item) == {"code", "name", "path", "line", "column", "end_line", "end_column", "message", "fix"}
    assert (item["code"], item["name"], item["line"], item["column"]) == ("DL101", "outbound-call-without-budget", 2, 1)
    assert (item["end_line"], item["end_column"]) == (2, 18)
    assert item["fix"]["applicability"] == "unsafe"  # the edge default: no budget in scope
    assert item["fix"]["inserts_budget"] is True


def test_fix_tags_are_spelled_alike_from_the_cache(tmp_path: Path) -> None:
    # A warm run loads no family, so the cached fix documents declare the tags themselves.
    (tmp_path / "svc.py").write_text("import requests\nrequests.get('u')\nrequests.get('u', timeout=None)\n")
    cache = str(tmp_path / "cache")
    cold = run("check", "--format", "json", "--cache-dir", cache, str(tmp_path / "svc.py"))
    warm = run("check", "--format", "json", "--cache-dir", cache, str(tmp_path / "svc.py"))
    assert cold.stdout == warm.stdout
    fixes = [item["fix"] for item in json.loads(warm.stdout)]
    assert [list(fix)[-1] for fix in fixes] == ["inserts_budget", "inserts_budget"]
    assert [fix["inserts_budget"] for fix in fixes] == [True, False]


def test_clean_tree_exits_zero(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("import requests\nrequests.get('u', timeout=1)\n")
    result = run("check", str(tmp_path))
    assert result.returncode == 0
    assert result.stdout.strip() == "All checks passed (1 file checked)."


def test_select_and_ignore(tmp_path: Path) -> None:
    (tmp_path / "svc.py").write_text("import requests\nrequests.get('u')\nrequests.get('u', timeout=None)\n")
    codes = lambda *a: [d["code"] for d in json.loads(run("check", "--format", "json", *a, str(tmp_path)).stdout)]  # noqa: E731
    assert codes() == ["DL101", "DL103"]
    assert codes("--select", "DL103") == ["DL103"]
    assert codes("--ignore", "DL1") == []
    assert codes("--select", "DL1", "--ignore", "DL101") == ["DL103"]


def test_skips_virtualenvs_caches_and_excludes(tmp_path: Path) -> None:
    bad = "import requests\nrequests.get('u')\n"
    for folder in (".venv", "build", "__pycache__", "node_modules", "generated"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.py").write_text(bad)
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "env" / "x.py").write_text(bad)
    (tmp_path / "real.py").write_text(bad)
    result = run("check", "--format", "json", "--exclude", "generated", str(tmp_path))
    assert [Path(d["path"]).name for d in json.loads(result.stdout)] == ["real.py"]


@pytest.mark.parametrize(
    "content, code, words",
    [
        (b"import requests\ndef f(:\n", "DL001", "syntax error"),
        (b"import requests\nx = '\xff\xfe'\n", "DL002", "cannot decode"),
        (b"import requests\nx = 1\x00\n", "DL002", "NUL byte"),
        (b"import requests\n" + b"x = " + b"(" * 300 + b"1" + b")" * 300 + b"\n", "DL007",
         "too deeply nested to analyse"),
    ],
)
def test_bad_input_is_one_line_and_the_run_goes_on(tmp_path: Path, content: bytes, code: str, words: str) -> None:
    (tmp_path / "a_bad.py").write_bytes(content)
    (tmp_path / "b_good.py").write_text("import requests\nrequests.get('u')\n")
    # Nesting is judged against a fresh interpreter's stack, not one under pytest's frames.
    result = (command if code == "DL007" else run)("check", str(tmp_path))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stdout.splitlines()
    bad = [line for line in lines if "a_bad.py" in line]
    assert len(bad) == 1 and f" {code} " in bad[0] and words in bad[0]
    assert any("b_good.py:2:1: DL101" in line for line in lines)


NEWER = [
    ((3, 14), 'x = t"hello {name}"\n'),
    ((3, 14), "try:\n    pass\nexcept ValueError, TypeError:\n    pass\n"),
    ((3, 12), "type Seconds = float\n"),
    ((3, 12), "def first[T](items: list[T]) -> T:\n    return items[0]\n"),
    ((3, 13), "def first[T = int](items):\n    return items[0]\n"),
]


@pytest.mark.parametrize("version, source", NEWER, ids=[s.split("\n")[0] for _, s in NEWER])
def test_newer_syntax_says_which_python_it_needs(tmp_path: Path, version, source: str) -> None:
    if sys.version_info[:2] >= version:
        pytest.skip("this interpreter parses it")
    (tmp_path / "new.py").write_text("import requests\n" + source)
    result = run("check", str(tmp_path))
    (line,) = [row for row in result.stdout.splitlines() if "new.py" in row]
    dotted = f"{version[0]}.{version[1]}"
    assert f" DL001 needs Python {dotted} to parse" in line and f"run deadline-lint under Python {dotted}" in line
    assert "syntax error" not in line


def test_a_real_syntax_error_is_still_called_one() -> None:
    from deadline_lint.engine.syntax_versions import newer_syntax_message

    assert newer_syntax_message("def f(:", (3, 9)) is None
    assert newer_syntax_message("x = t'a'", (3, 14)) is None  # parsed there: never asked
    assert newer_syntax_message("x = t'a'", (3, 12)).startswith("needs Python 3.14 to parse")


def test_deeply_nested_blocks_do_not_crash(tmp_path: Path) -> None:
    depth = 90  # below the compiler's limit of statically nested blocks, deep for a walker
    body = "".join("    " * i + "if x:\n" for i in range(depth)) + "    " * depth + "requests.get(u)\n"
    (tmp_path / "deep.py").write_text("import requests\n" + body)
    result = command("check", "--format", "json", str(tmp_path))
    assert "Traceback" not in result.stderr
    assert [d["code"] for d in json.loads(result.stdout)] == ["DL101"]


def test_huge_file_is_reported_not_read(tmp_path: Path, monkeypatch) -> None:
    from deadline_lint.engine import reading
    from deadline_lint.run import api

    monkeypatch.setattr(reading, "MAX_FILE_BYTES", 100)
    path = tmp_path / "big.py"
    path.write_text("import requests\n" + "x = 1\n" * 100)
    for run in (api.lint_paths, api.fix_paths):  # one reader for checking and fixing
        (result,) = run([str(path)], api.Options())
        assert [(d.code, d.line) for d in result.diagnostics] == [("DL004", 1)]


def test_malformed_profile_exit_2_one_line(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("hop_margin_ms: lots\n")
    result = run("check", "--profile", str(profile), "examples/")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip().count("\n") == 0
    assert f"{profile}: hop_margin_ms: expected" in result.stderr


def test_missing_path_is_exit_2() -> None:
    result = run("check", "no/such/dir")
    assert result.returncode == 2
    assert "no/such/dir: no such file or directory" in result.stderr


def test_rules_and_explain(capsys) -> None:
    assert main(["rules"]) == 0
    listing = capsys.readouterr().out
    assert "DL101   outbound-call-without-budget" in listing and "safe" in listing
    assert main(["explain", "dl103"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# DL103: unbounded-timeout")
    assert "## Why is this bad?" in text
    assert main(["explain", unused_code()]) == 2


def test_internal_error_becomes_a_diagnostic(monkeypatch, tmp_path: Path) -> None:
    from deadline_lint.engine.checker import Checker
    from deadline_lint.families.outbound.call_without_budget import OutboundCallWithoutBudget

    def explode(self, node, ctx):
        raise ValueError("boom")

    monkeypatch.setattr(OutboundCallWithoutBudget, "visit_Call", explode)
    checker = Checker()
    found = checker.check_text("import requests\nrequests.get(u)\nrequests.get(u, timeout=None)\n", "x.py")
    assert [(d.code, d.line) for d in found] == [("DL003", 2), ("DL103", 3)]
    assert "internal error in DL101 (ValueError: boom" in found[0].message


def test_parallel_run_matches_single_process(tmp_path: Path) -> None:
    for i in range(70):
        (tmp_path / f"m{i:02d}.py").write_text("import requests\nrequests.get('u')\n")
    single = run("check", "--format", "json", "-j", "1", str(tmp_path)).stdout
    double = command("check", "--format", "json", "-j", "2", str(tmp_path)).stdout
    assert json.loads(single) == json.loads(double)
    assert len(json.loads(single)) == 70


def test_positions_survive_form_feeds_and_unicode(tmp_path: Path) -> None:
    text = "import requests\n# page\x0cbreak \u2028 here\nx = 'é'; requests.get('ü')\n"
    (tmp_path / "odd.py").write_text(text, encoding="utf-8")
    (item,) = json.loads(run("check", "--format", "json", str(tmp_path)).stdout)
    assert (item["line"], item["column"], item["end_column"]) == (3, 10, 27)


def run_stdin(data: bytes, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "deadline_lint", *args], cwd=ROOT, input=data, capture_output=True, timeout=120
    )


def test_check_reads_stdin_for_editors() -> None:
    result = run_stdin(b"import requests\nrequests.get('u')\n", "check", "-", "--stdin-filename", "svc/api.py")
    assert result.returncode == 1
    assert result.stdout.decode().splitlines()[0].startswith("svc/api.py:2:1: DL101")


def test_fix_on_stdin_prints_the_fixed_source() -> None:
    text = b"import requests\nrequests.get('u', timeout=None)\ndef f(budget):\n    requests.get('u')\n"
    result = run_stdin(text, "fix", "-")
    assert result.stdout == text.replace(b"get('u')", b"get('u', timeout=budget.timeout())")
    assert b"-:2:27: DL103" in result.stderr  # unsafe: left, and reported
    assert result.returncode == 1


def test_stdin_cannot_mix_with_paths() -> None:
    result = run_stdin(b"", "check", "-", "examples/")
    assert result.returncode == 2
    assert b"stdin cannot be combined" in result.stderr
