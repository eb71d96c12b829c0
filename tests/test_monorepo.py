"""The two-service monorepo fixture (fixtures/monorepo): every front end resolves each file's
profile the same way (the nearest pyproject.toml with [tool.deadline-lint], walking up from
the file), so the CLI in any argument order or working directory, pre-commit's batches of
named files, flake8, pylint and the codemod all give the same result."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
MONOREPO = ROOT / "fixtures" / "monorepo"
PY = sys.executable

Finding = Tuple[str, int, int, str, str]  # path relative to the monorepo root, line, column, code, message

# What the profiles make of the fixture, by hand: orders (edge 2 s, DL103 ignored, `generated`
# excluded, DL101 ignored under tests/), search (edge 5 s, select DL101 + extend_select DL103),
# tools (the root profile, edge 8 s).
EXPECTED_CODES = [
    ("services/orders/orders/api.py", 5, "DL101"),
    ("services/orders/orders/api.py", 13, "DL101"),
    ("services/search/search/api.py", 9, "DL103"),
    ("services/search/search/api.py", 13, "DL101"),
    ("tools/script.py", 3, "DL101"),
    ("tools/script.py", 4, "DL103"),
]


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    target = tmp_path / "monorepo"
    shutil.copytree(MONOREPO, target)
    return target


def run(args: List[str], cwd: Path) -> subprocess.CompletedProcess:
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> List[Finding]:
    """What the CLI reports for the whole fixture, walked as one folder from its root: what
    every other front end and argument order must reproduce (checked against the profiles by
    hand in the first test)."""
    target = tmp_path_factory.mktemp("monorepo-reference") / "monorepo"
    shutil.copytree(MONOREPO, target)
    return cli(target, ".")


def relative(repo: Path, cwd: Path, path: str) -> str:
    return (cwd / path).resolve().relative_to(repo.resolve()).as_posix()


def cli(repo: Path, *paths: str, cwd: Path = None) -> List[Finding]:
    cwd = cwd or repo
    result = run([PY, "-m", "deadline_lint", "check", "--format", "json", *paths], cwd)
    assert result.returncode in (0, 1), result.stderr
    return sorted(
        (relative(repo, cwd, d["path"]), d["line"], d["column"], d["code"], d["message"])
        for d in json.loads(result.stdout)
    )


def in_process(repo: Path, cwd: Path, monkeypatch, capsys, *paths: str) -> List[Finding]:
    """`cli` as one run of the command line in this process (the reference is a process of its
    own): what each run resolves starts afresh, as in a new process."""
    from deadline_lint.frontends.cli import main

    monkeypatch.chdir(cwd)
    code = main(["check", "--format", "json", *paths])
    assert code in (0, 1)
    return sorted(
        (relative(repo, cwd, d["path"]), d["line"], d["column"], d["code"], d["message"])
        for d in json.loads(capsys.readouterr().out)
    )


def python_files(repo: Path) -> List[str]:
    return sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*.py"))


def test_the_profiles_apply_per_file(reference: List[Finding]) -> None:
    found = reference
    assert [(path, line, code) for path, line, _, code, _ in found] == EXPECTED_CODES
    messages = {(path, line): message for path, line, _, _, message in found}
    assert "pass `timeout=2.0` from the edge default" in messages[("services/orders/orders/api.py", 13)]
    assert "pass `timeout=5.0` from the edge default" in messages[("services/search/search/api.py", 13)]
    assert "pass `timeout=8.0` from the edge default" in messages[("tools/script.py", 3)]


def test_cli_argument_order_and_working_directory_do_not_matter(
    repo: Path, reference: List[Finding], monkeypatch, capsys
) -> None:
    def run_in(cwd: Path, *paths: str) -> List[Finding]:
        return in_process(repo, cwd, monkeypatch, capsys, *paths)

    assert run_in(repo, ".") == reference  # a copy of its own: the same as the reference's
    assert run_in(repo, "services/orders", "services/search", "tools") == reference
    assert run_in(repo, "tools", "services/search", "services/orders") == reference
    assert run_in(repo / "services" / "orders", "../search", "../../tools", ".") == reference
    files = python_files(repo)
    assert run_in(repo, *files) == reference
    assert run_in(repo, *reversed(files)) == reference


def test_pre_commit_batches_of_named_files_give_the_same_findings(
    repo: Path, reference: List[Finding], monkeypatch, capsys
) -> None:
    """pre-commit hands the hook's entry batches of file names, in any order and split
    anywhere: each batch must give each of its files the findings a folder walk gives."""
    files = python_files(repo)
    for split in range(1, len(files)):
        batches = [files[split:], files[:split]]
        found = [f for batch in batches for f in in_process(repo, repo, monkeypatch, capsys, *batch)]
        assert sorted(found) == reference


def test_flake8_gives_the_same_findings(repo: Path, reference: List[Finding]) -> None:
    result = run([PY, "-m", "flake8", "--select", "DL", "--format=%(path)s\t%(row)d\t%(col)d\t%(code)s\t%(text)s",
                  "."], repo)
    assert result.returncode in (0, 1) and not result.stderr.strip(), result.stderr
    found = sorted(
        (relative(repo, repo, path), int(row), int(col), code, text)
        for path, row, col, code, text in (line.split("\t", 4) for line in result.stdout.splitlines())
    )
    assert found == reference


def test_pylint_gives_the_same_findings(repo: Path, reference: List[Finding]) -> None:
    (repo / "pylintrc").write_text("[MAIN]\n")
    result = run([PY, "-m", "pylint", "--rcfile=pylintrc", "--persistent=n", "--score=n",
                  "--load-plugins=deadline_lint.pylint_plugin", "--disable=all", "--enable=deadline-lint",
                  "--output-format=json2", *python_files(repo)], repo)
    assert result.returncode & 32 == 0 and not result.stderr.strip(), result.stderr
    found = sorted(
        (Path(m["absolutePath"]).resolve().relative_to(repo.resolve()).as_posix(), m["line"], m["column"] + 1,
         *m["message"].split(" ", 1))
        for m in json.loads(result.stdout)["messages"]
    )
    assert found == reference


def tree_text(repo: Path) -> dict:
    return {path: (repo / path).read_text(encoding="utf-8") for path in python_files(repo)}


def test_codemod_fixes_each_file_under_its_own_profile_as_fix_does(repo: Path, tmp_path: Path, monkeypatch) -> None:
    from deadline_lint.frontends.cli import main

    by_fix = tmp_path / "by-fix"
    shutil.copytree(repo, by_fix)
    monkeypatch.chdir(by_fix)
    assert main(["fix", "--unsafe-fixes", "."]) in (0, 1)
    # One job: the codemod in worker processes is test_hostile_input's.
    result = run([PY, "-m", "libcst.tool", "codemod", "-x", "deadline_lint.codemod.InsertBudget", "--no-format",
                  "--hide-progress", "-j", "1", "--unsafe-fixes", "."], repo)
    assert result.returncode == 0, result.stderr
    fixed = tree_text(repo)
    assert fixed == tree_text(by_fix)
    assert fixed != tree_text(MONOREPO)
    assert "timeout=2.0" in fixed["services/orders/orders/api.py"]
    assert "timeout=5.0" in fixed["services/search/search/api.py"]
    assert "timeout=8.0" in fixed["tools/script.py"]
    # Excluded by the orders profile: left alone by both.
    generated = "services/orders/generated/client_pb2.py"
    assert fixed[generated] == (MONOREPO / generated).read_text()


def test_the_fixture_tree_is_unchanged_by_the_tests() -> None:
    assert "timeout=2.0" not in (MONOREPO / "services/orders/orders/api.py").read_text()
    assert os.path.exists(MONOREPO / "services/search/deadline.yaml")
