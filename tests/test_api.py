"""api.py: what every front end (and the editor server) relies on."""
from __future__ import annotations

from pathlib import Path

import pytest

from deadline_lint.frontends.cli import main
from deadline_lint.run import api
from deadline_lint.settings.profile import ProfileError

BAD = "import requests\n\n\ndef f(url):\n    return requests.get(url)\n"
PYPROJECT = (
    "[tool.deadline-lint]\n"
    "edge_total_ms = 2500\n"
    'per-path-ignores = {"scripts/*" = ["DL1", "DL001"]}\n'
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    api.reset()
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    for folder in ("app", "scripts"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "svc.py").write_text(BAD)
    return tmp_path


def cli_rows(capsys, *args: str):
    main(["check", "--no-cache", "--format", "json", *args])
    import json

    return [(d["path"], d["line"], d["column"], d["code"], d["message"]) for d in json.loads(capsys.readouterr().out)]


def rows(diagnostics):
    return [(d.path, d.line, d.column, d.code, d.message) for d in diagnostics]


def test_lint_text_answers_what_check_answers_on_disk(project: Path, capsys) -> None:
    on_disk = cli_rows(capsys, "app/svc.py")
    result = api.lint_text(BAD, "app/svc.py")
    assert result.path == "app/svc.py"
    assert rows(result.diagnostics) == on_disk and on_disk  # the pyproject's profile: 2.5 s
    assert "2.5" in result.diagnostics[0].message
    assert result.diagnostics[0].fix is not None
    # the buffer, not the file: an unsaved edit is what is checked
    assert api.lint_text("x = 1\n", "app/svc.py").diagnostics == []


def test_a_buffer_need_not_exist_on_disk(project: Path) -> None:
    assert [d.code for d in api.lint_text(BAD, "app/new_module.py").diagnostics] == ["DL101"]


def test_per_path_ignores_are_the_files_selection(project: Path, capsys) -> None:
    assert cli_rows(capsys, "scripts/svc.py") == []
    assert api.lint_text(BAD, "scripts/svc.py").diagnostics == []
    assert api.lint_text("import requests\ndef f(:\n", "scripts/svc.py").diagnostics == []  # DL001 named too
    assert [d.code for d in api.lint_text("import requests\ndef f(:\n", "app/svc.py").diagnostics] == ["DL001"]
    session = api.Session()
    assert "DL101" not in session.checker("scripts/svc.py").codes  # not run, not filtered
    assert "DL101" in session.checker("app/svc.py").codes


def test_fix_text_gives_the_fixed_text_and_what_remains(project: Path) -> None:
    result = api.fix_text(BAD, "app/svc.py", api.Options(unsafe_fixes=True))
    assert result.changed and result.fixed == 1
    assert result.text is not None and "timeout=2.5" in result.text
    assert result.diagnostics == []
    assert api.lint_text(result.text, "app/svc.py").diagnostics == []
    untouched = api.fix_text(BAD, "scripts/svc.py", api.Options(unsafe_fixes=True))
    assert untouched.text == BAD and not untouched.changed


def test_lint_paths_yields_one_result_per_file_in_order(project: Path) -> None:
    paths = ["scripts/svc.py", "app/svc.py"]
    results = list(api.lint_paths(paths))
    assert [r.path for r in results] == paths
    assert [len(r.diagnostics) for r in results] == [0, 1]


def test_fix_paths_writes_or_only_diffs(project: Path) -> None:
    (result,) = api.fix_paths(["app/svc.py"], api.Options(unsafe_fixes=True, write=False))
    assert result.changed and not result.written and b"timeout=2.5" in result.diff
    assert (project / "app/svc.py").read_text() == BAD
    (result,) = api.fix_paths(["app/svc.py"], api.Options(unsafe_fixes=True))
    assert result.written and "timeout=2.5" in (project / "app/svc.py").read_text()


def test_bad_options_are_one_profile_error(project: Path) -> None:
    with pytest.raises(ProfileError, match="DL999"):
        api.lint_text(BAD, "app/svc.py", api.Options(select=("DL999",)))
