"""Adoption aids: `check --add-noqa` and `--baseline` / `--write-baseline`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from deadline_lint.engine.checker import Checker
from deadline_lint.frontends.cli import main
from deadline_lint.frontends.noqa import add_noqa


def noqa(text: str) -> str:
    return add_noqa(text, Checker().check_text(text, "m.py")).text


def test_add_noqa_appends_and_extends_directives() -> None:
    text = (
        "import requests\n"
        "requests.get('u')\n"
        "requests.get('u', timeout=None)  # noqa: E501\n"
        "requests.get('u')  # keep this comment\n"
        "requests.get('u'); requests.get('v', timeout=None)\n"
    )
    assert noqa(text) == (
        "import requests\n"
        "requests.get('u')  # noqa: DL101\n"
        "requests.get('u', timeout=None)  # noqa: E501, DL103\n"
        "requests.get('u')  # keep this comment  # noqa: DL101\n"
        "requests.get('u'); requests.get('v', timeout=None)  # noqa: DL101, DL103\n"
    )


def test_add_noqa_result_is_silent_and_idempotent() -> None:
    text = "import requests\r\nrequests.get('u')\r\nx = requests.get(\r\n    'u',\r\n)\r\n"
    once = noqa(text)
    assert Checker().check_text(once, "m.py") == []
    assert noqa(once) == once
    assert once.count("\r\n") == text.count("\r\n")


def test_add_noqa_skips_lines_that_cannot_take_a_comment() -> None:
    text = (
        'import requests\n'
        'requests.get("""http://a\n'  # the line ends inside a string
        '""")\n'
        'x = requests.get("u") + \\\n'  # the line ends in a backslash continuation
        '    1\n'
        'requests.get("u")\n'
    )
    found = Checker().check_text(text, "m.py")
    assert [d.line for d in found] == [2, 4, 6]
    result = add_noqa(text, found)
    assert (result.added, result.skipped) == (1, 2)
    assert result.text == text.replace('requests.get("u")\n', 'requests.get("u")  # noqa: DL101\n')


def test_add_noqa_on_the_command_line(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "svc.py").write_text("import requests\nrequests.get('u')\n")
    assert main(["check", "--add-noqa", "."]) == 0
    assert "Added 1 noqa directive in 1 file." in capsys.readouterr().err
    assert (tmp_path / "svc.py").read_text() == "import requests\nrequests.get('u')  # noqa: DL101\n"
    assert main(["check", "."]) == 0


def test_baseline_reports_only_new_findings_and_survives_moves(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    svc = tmp_path / "svc.py"
    svc.write_text("import requests\nrequests.get('a')\nrequests.get('a')\nrequests.get('b', timeout=None)\n")
    assert main(["check", "--write-baseline", "baseline.json", "."]) == 0
    assert len(json.loads((tmp_path / "baseline.json").read_text())["findings"]) == 3
    capsys.readouterr()
    assert main(["check", "--baseline", "baseline.json", "."]) == 0
    # Moved down, re-indented, with one of the twins gone and a new line added:
    svc.write_text(
        "import requests\n\n\nif True:\n    requests.get('a')\n"
        "requests.get('b', timeout=None)\nrequests.get('c')\n"
    )
    capsys.readouterr()
    assert main(["check", "--format", "json", "--baseline", "baseline.json", "--statistics", "."]) == 1
    out, err = capsys.readouterr()
    assert [(d["line"], d["code"]) for d in json.loads(out)] == [(7, "DL101")]
    assert "1 stale entry in baseline.json" in err
    assert "svc.py: DL101 requests.get('a') (occurrence 2)" in err


def test_a_third_identical_line_is_new(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "svc.py").write_text("import requests\nrequests.get('a')\n")
    main(["check", "--write-baseline", "b.json", "."])
    (tmp_path / "svc.py").write_text("import requests\nrequests.get('a')\nrequests.get('a')\n")
    capsys.readouterr()
    assert main(["check", "--format", "json", "--baseline", "b.json", "."]) == 1
    assert [d["line"] for d in json.loads(capsys.readouterr().out)] == [3]


@pytest.mark.parametrize("content, words", [(None, "baseline file not found"), ("{", "invalid JSON"),
                                            ('{"version": 7, "findings": []}', "not a deadline-lint baseline")])
def test_a_bad_baseline_is_exit_2_one_line(tmp_path: Path, monkeypatch, capsys, content, words) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "svc.py").write_text("import requests\nrequests.get('a')\n")
    if content is not None:
        (tmp_path / "b.json").write_text(content)
    assert main(["check", "--baseline", "b.json", "."]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err
