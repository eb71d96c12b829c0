"""The hooks in .pre-commit-hooks.yaml, run by the real pre-commit against a scratch repository.

`pre-commit try-repo` installs deadline-lint from a repository into its own virtualenv (from
PyPI: network). It installs what is committed, so the test commits a snapshot of this working
tree into a temporary repository first: uncommitted work is tested too. One pre-commit
invocation runs both hooks (in id order: check, then fix).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from front_ends import run_in_process

ROOT = Path(__file__).resolve().parent.parent
BAD = "import requests\n\n\ndef fetch(url, budget):\n    return requests.get(url)\n"
# The edge default where no budget is in scope is an unsafe fix: the fix hook leaves it.
EDGE = "import requests\n\n\ndef health():\n    return requests.get('http://inventory/health')\n"
MONOREPO = ROOT / "fixtures" / "monorepo"
GIT_IDENTITY = ["-c", "user.name=deadline-lint tests", "-c", "user.email=tests@example.invalid"]

pytestmark = pytest.mark.network  # installs from PyPI; deselect with -m "not network"


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *GIT_IDENTITY, *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def snapshot_of_this_tree(target: Path) -> Path:
    target.mkdir()
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, target / name)
    shutil.copytree(ROOT / "src", target / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    git("init", "-q", cwd=target)
    git("add", "-A", cwd=target)
    git("commit", "-q", "-m", "snapshot", cwd=target)
    return target


@pytest.fixture(scope="module")
def hook_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("precommit")
    hooks_repo = snapshot_of_this_tree(base / "deadline-lint")
    project = base / "project"
    project.mkdir()
    (project / "svc.py").write_text(BAD)
    (project / "edge.py").write_text(EDGE)
    shutil.copytree(MONOREPO, project / "monorepo")
    # What the CLI reports for the monorepo, walked as one folder, before the fix hook runs
    # (through its entry point in this process: the hooks are the commands under test here).
    run_in_process("deadline_lint", ["check", "--output-file", str(base / "walked.txt"), "monorepo"], project)
    (project / "notes.txt").write_text("requests.get(url)\n")  # not Python: never passed to a hook
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRE_COMMIT", "GIT_"))}
    env["PRE_COMMIT_HOME"] = str(base / "cache")
    # pip byte-compiles every module it installs (all of LibCST): about 2 CPU seconds of the
    # install that the two hook runs, which import none of LibCST and a fraction of the rest,
    # never use. The hook is still installed by pre-commit, by pip, from the committed
    # repository. pip reads a `--no-` option's variable as the option's value, not as the
    # flag: `PIP_NO_COMPILE=0` is `--no-compile` (`=1`, as this said until stop 27, compiles).
    env["PIP_NO_COMPILE"] = "0"
    # The hook's virtualenv comes with a setuptools that builds this project (virtualenv
    # seeds one, 84.x, above build-system.requires' >=77): pip builds with it instead of
    # making a second, isolated environment and installing setuptools into it, about 3 CPU
    # seconds. (pip reads `PIP_NO_BUILD_ISOLATION=0` as --no-build-isolation.) The fresh
    # `pip install -e` of .ci/run still builds in isolation, from build-system.requires.
    env["PIP_NO_BUILD_ISOLATION"] = "0"
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hooks_repo), "--all-files", "--verbose",
         "--color=never"],
        cwd=project, env=env, capture_output=True, text=True, timeout=900,
    )
    return result, project, (base / "walked.txt").read_text()


def test_manifest_declares_both_hooks() -> None:
    hooks = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"deadline-lint", "deadline-lint-fix"}
    assert hooks["deadline-lint"]["entry"] == "deadline-lint check"
    assert hooks["deadline-lint-fix"]["entry"] == "deadline-lint fix"
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["types"] == ["python"]


def test_check_hook_reports_findings_and_fails(hook_run) -> None:
    result, _, _ = hook_run
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "svc.py:5:12: DL101" in output, output
    assert "notes.txt" not in output
    check_section = output.split("- hook id: deadline-lint\n", 1)[1].split("- hook id:", 1)[0]
    assert "- exit code: 1" in check_section, output


def test_fix_hook_applies_the_safe_fix(hook_run) -> None:
    result, project, _ = hook_run
    output = result.stdout + result.stderr
    assert "- hook id: deadline-lint-fix" in output, output
    assert "files were modified by this hook" in output, output
    assert "requests.get(url, timeout=budget.timeout())" in (project / "svc.py").read_text()
    assert (project / "edge.py").read_text() == EDGE  # unsafe: not applied by the hook


def test_check_hook_resolves_each_files_profile_like_a_folder_walk(hook_run) -> None:
    """pre-commit passes batches of file names: each file still gets its own monorepo profile."""
    result, _, walked = hook_run
    output = result.stdout + result.stderr
    check_section = output.split("- hook id: deadline-lint\n", 1)[1].split("- hook id:", 1)[0]
    from_hook = sorted(line for line in check_section.splitlines() if line.startswith("monorepo/"))
    from_walk = sorted(line for line in walked.splitlines() if line.startswith("monorepo/"))
    assert from_walk and from_hook == from_walk
