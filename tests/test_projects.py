"""Multi-module fixture projects (`fixtures/projects/<name>/`, each with its own
pyproject.toml): names imported from the project's own modules resolve through the project
index. Every file must get exactly its `# expect:` markers whether it is checked alone (a
fresh process per file, as pre-commit passes changed files), with its folder, or by flake8 or
pylint, which check file by file."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Set, Tuple

import pytest

from deadline_lint.engine import Checker
from deadline_lint.profile import pyproject_profile
from deadline_lint.pylint_plugin import symbol
from fixture_cases import FIXTURES, expected_markers

PROJECTS = sorted(p for p in (FIXTURES / "projects").iterdir() if (p / "pyproject.toml").exists())
CODES = ("DL101", "DL102", "DL103", "DL104", "DL201", "DL301", "DL302", "DL304", "DL403", "DL501")
FLAKE8_FORMAT = "%(path)s\t%(row)d\t%(code)s"

Found = Set[Tuple[str, int, str]]  # relative path, line, code


def _files(root: Path) -> List[Path]:
    return sorted(root.rglob("*.py"))


def _expected(root: Path) -> Found:
    return {
        (path.relative_to(root).as_posix(), line, code)
        for path in _files(root)
        for line, code in expected_markers(path.read_text(encoding="utf-8"))
    }


def _run(command: List[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)


def _cli(root: Path, paths: List[str]) -> Found:
    result = _run([sys.executable, "-m", "deadline_lint", "check", "--format", "json", "--jobs", "1",
                   "--select", ",".join(CODES), *paths], root)
    assert result.returncode in (0, 1), result.stderr
    return {
        ((root / item["path"]).resolve().relative_to(root).as_posix(), item["line"], item["code"])
        for item in json.loads(result.stdout)
    }


def _flake8(root: Path) -> Found:
    result = _run([sys.executable, "-m", "flake8", "--isolated", "--select", ",".join(CODES),
                   f"--format={FLAKE8_FORMAT}", "."], root)
    assert result.returncode in (0, 1) and not result.stderr.strip(), result.stderr + result.stdout
    found: Found = set()
    for line in result.stdout.splitlines():
        path, row, code = line.split("\t")
        found.add((Path(root, path).resolve().relative_to(root).as_posix(), int(row), code))
    return found


def _pylint(root: Path) -> Found:
    rcfile = root / "pylintrc"
    rcfile.write_text("[MAIN]\n")
    files = [str(p.relative_to(root)) for p in _files(root)]
    result = _run([sys.executable, "-m", "pylint", f"--rcfile={rcfile}", "--persistent=n", "--score=n",
                   "--load-plugins=deadline_lint.pylint_plugin", "--disable=all",
                   "--enable=" + ",".join(symbol(code) for code in CODES), "--output-format=json2", *files], root)
    assert result.returncode & 32 == 0 and not result.stderr.strip(), result.stderr
    return {
        (Path(m["absolutePath"]).resolve().relative_to(root).as_posix(), m["line"], m["message"].split(" ", 1)[0])
        for m in json.loads(result.stdout)["messages"]
    }


@pytest.fixture(scope="module", params=PROJECTS, ids=lambda p: p.name)
def project(request, tmp_path_factory) -> Tuple[Path, Found]:
    """A copy of the project somewhere else: its own pyproject.toml makes it the root."""
    copy = tmp_path_factory.mktemp("projects") / request.param.name
    shutil.copytree(request.param, copy)
    return copy.resolve(), _expected(copy.resolve())


def test_fixture_projects_exist_and_expect_findings() -> None:
    assert len(PROJECTS) >= 2
    for root in PROJECTS:
        assert _expected(root), root.name


def test_each_file_checked_alone_gets_its_markers(project) -> None:
    root, expected = project
    found: Found = set()
    for path in _files(root):
        found |= _cli(root, [str(path.relative_to(root))])
    assert found == expected


def test_the_folder_checked_at_once_gets_the_markers(project) -> None:
    root, expected = project
    assert _cli(root, ["."]) == expected


def test_the_engine_in_process_gets_the_markers(project) -> None:
    root, expected = project
    checker = Checker(pyproject_profile(root / "pyproject.toml"), select=list(CODES))
    found = {
        (path.relative_to(root).as_posix(), d.line, d.code)
        for path in reversed(_files(root))  # another order than the CLI's: no order dependence
        for d in checker.check_path(str(path))
    }
    assert found == expected


def test_flake8_gets_the_markers(project) -> None:
    root, expected = project
    assert _flake8(root) == expected


def test_pylint_gets_the_markers(project) -> None:
    root, expected = project
    assert _pylint(root) == expected
