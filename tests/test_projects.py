"""Multi-module fixture projects (`fixtures/projects/<name>/`, each with its own
pyproject.toml): names imported from the project's own modules resolve through the project
index. Every file must get exactly its `# expect:` markers whether it is checked alone (a run
given only that file, as pre-commit passes changed files), with its folder, or by flake8 or
pylint, which check file by file.

The folder checks run the command as users do, a fresh interpreter each, and so does the first
file checked alone in the first project; the other files alone, flake8 and pylint go
through the same entry points in this process (front_ends.py), a fresh run each: an
interpreter start and the front end's imports (a third of a CPU second) per file or project
saved. A single file given to the installed command in a fresh process is also what the
pre-commit hook does (test_precommit). flake8 and pylint are run as commands over a project in
test_monorepo and test_config."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Set, Tuple

import pytest
from fixture_cases import FIXTURES, expected_markers
from front_ends import run_in_process

from deadline_lint.engine.checker import Checker
from deadline_lint.frontends.pylint_plugin import symbol
from deadline_lint.settings.profile import pyproject_profile

PROJECTS = sorted(p for p in (FIXTURES / "projects").iterdir() if (p / "pyproject.toml").exists())
CODES = ("DL101", "DL102", "DL103", "DL104", "DL107", "DL201", "DL301", "DL302", "DL304", "DL403", "DL501", "DL503")
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


def _run(module: str, argv: List[str], root: Path, report: Path, fresh_process: bool) -> Tuple[int, str, str]:
    """(exit code, report, stderr) of `python -m <module> <argv>` run in `root`: a subprocess, or
    the same entry point in this process. The report goes to a file beside the project."""
    report.unlink(missing_ok=True)
    if fresh_process:
        result = subprocess.run([sys.executable, "-m", module, *argv], cwd=root, capture_output=True, text=True,
                                timeout=600)
        code, stderr = result.returncode, result.stderr
    else:
        code, stderr = run_in_process(module, argv, root)
    return code, report.read_text(encoding="utf-8") if report.exists() else "", stderr


def _cli(root: Path, paths: List[str], fresh_process: bool = True) -> Found:
    report = root.parent / "cli.json"
    code, output, stderr = _run("deadline_lint", ["check", "--format", "json", "--jobs", "1", "--select",
                                                  ",".join(CODES), "--output-file", str(report), *paths],
                                root, report, fresh_process)
    assert code in (0, 1), stderr
    return {
        ((root / item["path"]).resolve().relative_to(root).as_posix(), item["line"], item["code"])
        for item in json.loads(output)
    }


def _flake8(root: Path) -> Found:
    report = root.parent / "flake8.txt"
    code, output, stderr = _run("flake8", ["--isolated", "--select", ",".join(CODES), f"--format={FLAKE8_FORMAT}",
                                           f"--output-file={report}", "."], root, report, fresh_process=False)
    assert code in (0, 1) and not stderr.strip(), stderr + output
    found: Found = set()
    for line in output.splitlines():
        path, row, found_code = line.split("\t")
        found.add((Path(root, path).resolve().relative_to(root).as_posix(), int(row), found_code))
    return found


def _pylint(root: Path) -> Found:
    rcfile = root / "pylintrc"
    rcfile.write_text("[MAIN]\n")
    report = root.parent / "pylint.json"
    files = [str(p.relative_to(root)) for p in _files(root)]
    code, output, stderr = _run("pylint", [f"--rcfile={rcfile}", "--persistent=n", "--score=n",
                                           "--load-plugins=deadline_lint.pylint_plugin", "--disable=all",
                                           "--enable=" + ",".join(symbol(code) for code in CODES),
                                           "--output-format=json2", f"--output={report}", *files],
                                root, report, fresh_process=False)
    assert code & 32 == 0 and not stderr.strip(), stderr
    return {
        (Path(m["absolutePath"]).resolve().relative_to(root).as_posix(), m["line"], m["message"].split(" ", 1)[0])
        for m in json.loads(output)["messages"]
    }


@pytest.fixture(scope="module", params=PROJECTS, ids=lambda p: p.name)
def project(request, tmp_path_factory) -> Tuple[Path, Found]:
    """A copy of the project somewhere else: its own pyproject.toml makes it the root."""
    copy = tmp_path_factory.mktemp("projects") / request.param.name
    shutil.copytree(request.param, copy)
    return copy.resolve(), _expected(copy.resolve())


def _first_project(root: Path) -> bool:
    return root.name == PROJECTS[0].name


def test_fixture_projects_exist_and_expect_findings() -> None:
    assert len(PROJECTS) >= 2
    for root in PROJECTS:
        assert _expected(root), root.name


def test_each_file_checked_alone_gets_its_markers(project) -> None:
    root, expected = project
    found: Found = set()
    for place, path in enumerate(_files(root)):
        found |= _cli(root, [str(path.relative_to(root))], fresh_process=place == 0 and _first_project(root))
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
