"""The folder walk skips what ruff skips by default, and the README's way of excluding other
folders (a `.semgrep/` of deliberately bad rule fixtures) works as shown (issue 35)."""
from __future__ import annotations

import json
import re
from pathlib import Path

from deadline_lint.frontends.cli import main
from deadline_lint.run import api
from deadline_lint.run.files import RUFF_DEFAULT_EXCLUDE, discover

BAD = "import requests\nrequests.get('u')\n"
# ruff's `exclude` default (crates/ruff_workspace settings, `EXCLUDE`), as documented for
# `exclude` on docs.astral.sh/ruff/settings.
RUFF = {
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache", ".nox",
    ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv", ".vscode",
    "__pypackages__", "_build", "buck-out", "dist", "node_modules", "site-packages", "venv",
}


def test_the_walk_skips_every_folder_ruff_skips(tmp_path: Path) -> None:
    assert RUFF_DEFAULT_EXCLUDE == RUFF
    for folder in sorted(RUFF) + [".semgrep"]:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.py").write_text(BAD)
    (tmp_path / "app.py").write_text(BAD)
    found = sorted(Path(p).relative_to(tmp_path).as_posix() for p in discover([str(tmp_path)]))
    assert found == [".semgrep/x.py", "app.py"]  # a hidden folder ruff does not list is walked, as ruff does


def test_the_readme_exclude_snippet_leaves_semgrep_fixtures_out(tmp_path: Path, monkeypatch, capsys) -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    snippet = re.search(r"```toml\n *(\[tool\.deadline-lint\])\n *(exclude = [^\n]*\.semgrep/[^\n]*)\n *```", readme)
    assert snippet, "the adoption section shows how to exclude .semgrep/"
    (tmp_path / "pyproject.toml").write_text(f"{snippet.group(1)}\n{snippet.group(2)}\n")
    (tmp_path / ".semgrep").mkdir()
    (tmp_path / ".semgrep" / "rule_fixture.py").write_text(BAD)
    (tmp_path / "svc.py").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    api.reset()
    main(["check", "--no-cache", "--format", "json", "."])
    assert [d["path"] for d in json.loads(capsys.readouterr().out)] == ["svc.py"]
    main(["check", "--no-cache", "--format", "json", "--exclude", ".semgrep/", ".semgrep", "svc.py"])
    assert [d["path"] for d in json.loads(capsys.readouterr().out)] == ["svc.py"]


def test_a_virtualenv_is_known_by_its_listing_and_a_named_one_is_walked(tmp_path: Path) -> None:
    for folder in ("env", "cfgdir", "pkg"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.py").write_text(BAD)
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "cfgdir" / "pyvenv.cfg").mkdir()  # a folder of that name makes no virtualenv
    found = sorted(Path(p).relative_to(tmp_path).as_posix() for p in discover([str(tmp_path)]))
    assert found == ["cfgdir/x.py", "pkg/x.py"]
    assert [Path(p).name for p in discover([str(tmp_path / "env")])] == ["x.py"]  # named: walked


def test_a_nested_profile_exclude_still_drops_files_without_cli_patterns(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "svc" / "gen").mkdir(parents=True)
    (tmp_path / "svc" / "pyproject.toml").write_text('[tool.deadline-lint]\nexclude = ["gen_*.py"]\n')
    for name in ("svc/app.py", "svc/gen_a.py", "svc/gen/gen_b.py", "svc/gen/keep.py", "top.py", "gen_top.py"):
        (tmp_path / name).write_text(BAD)
    monkeypatch.chdir(tmp_path)
    run = api.Session(api.Options(respect_gitignore=False))
    files, _ = run.files(["."])
    assert sorted(files) == ["gen_top.py", "svc/app.py", "svc/gen/keep.py", "top.py"]


def test_root_lookups_answered_from_the_walk_agree_with_the_disk(tmp_path: Path) -> None:
    from deadline_lint.semantics.roots import root_above
    from deadline_lint.semantics.session import Session as Memos

    (tmp_path / "proj" / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "proj" / "setup.cfg").write_text("")
    (tmp_path / "proj" / "pkg" / "sub" / "m.py").write_text(BAD)
    (tmp_path / "proj" / "pkg" / "setup.py").symlink_to(tmp_path / "missing")  # dangling: no marker
    folders = [str(tmp_path / "proj" / "pkg" / "sub"), str(tmp_path / "proj" / "pkg"), str(tmp_path / "proj")]
    with Memos().active():
        assert sorted(Path(p).name for p in discover([str(tmp_path / "proj")], respect_gitignore=False)) == [
            "m.py", "setup.py",
        ]
        walked = [root_above(folder) for folder in folders]
    with Memos().active():
        assert walked == [root_above(folder) for folder in folders] == [str(tmp_path / "proj")] * 3
