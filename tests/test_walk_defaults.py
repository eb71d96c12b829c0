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
