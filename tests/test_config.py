"""Configuration as a large codebase meets it: .gitignore, one glob rule for `exclude` and
`per_path_ignores`, profile selection keys, relative profile paths in flake8 and pylint config
files, unknown codes, and profile keys no installed rule reads yet."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
from front_ends import run_cli

from deadline_lint.engine.rule import REGISTRY, Rule
from deadline_lint.settings.profile import ProfileError, build_profile
from deadline_lint.run.profile_checks import check_profile

BAD = "import requests\nrequests.get('u')\n"
PY = sys.executable


def run(*args: str, cwd: Path, env=None) -> subprocess.CompletedProcess:
    """The command in `cwd`: as a command under its own environment (`env`: git's HOME), else
    through its entry point in this process (tests/front_ends.py)."""
    if env is None:
        return run_cli(list(args), cwd)
    return subprocess.run([PY, "-m", "deadline_lint", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


def checked(result: subprocess.CompletedProcess, cwd: Path) -> List[str]:
    found = json.loads(result.stdout)
    return sorted({(cwd / d["path"]).resolve().relative_to(cwd.resolve()).as_posix() for d in found})


def git_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    return env


def test_folder_walks_respect_gitignore_info_exclude_and_global_excludes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("scratch_*.py\n")
    repo = tmp_path / "repo"
    for path in ("svc.py", "ignored/x.py", "gen_client.py", "pkg/keep_gen.py", "pkg/local.py",
                 "scratch_1.py", "pkg/sub/y.py"):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(BAD)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=git_env(home))
    (repo / ".gitignore").write_text("ignored/\n*_gen.py\ngen_*.py\n")
    (repo / "pkg" / ".gitignore").write_text("!keep_gen.py\nsub\n")  # a deeper file overrides
    (repo / ".git" / "info" / "exclude").write_text("pkg/local.py\n")
    env = git_env(home)
    result = run("check", "--format", "json", ".", cwd=repo, env=env)
    assert checked(result, repo) == ["pkg/keep_gen.py", "svc.py"], result.stderr
    result = run("check", "--format", "json", "--no-respect-gitignore", ".", cwd=repo, env=env)
    assert len(checked(result, repo)) == 7
    # A file named on the command line is checked whatever git ignores (pre-commit names files).
    result = run("check", "--format", "json", "ignored/x.py", cwd=repo, env=env)
    assert checked(result, repo) == ["ignored/x.py"]


def test_outside_a_git_repository_gitignore_files_are_not_read(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.py\n")
    (tmp_path / "svc.py").write_text(BAD)
    assert checked(run("check", "--format", "json", ".", cwd=tmp_path), tmp_path) == ["svc.py"]


def test_exclude_and_per_path_ignores_share_one_glob_rule_relative_to_the_profile(tmp_path: Path) -> None:
    project = tmp_path / "project"
    for path in ("tests/a.py", "tests/deep/b.py", "app/tests/c.py", "app/conftest.py", "migrations/m.py",
                 "app/migrations/n.py", "app/svc.py"):
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(BAD)
    (project / "pyproject.toml").write_text(
        "[tool.deadline-lint]\n"
        'exclude = ["/migrations", "conftest.py"]\n'
        'per_path_ignores = { "tests/*" = ["DL101"] }\n'
    )
    # Run from elsewhere: the globs are relative to the pyproject's folder, not the cwd.
    result = run("check", "--format", "json", str(project), cwd=tmp_path)
    assert checked(result, project) == ["app/migrations/n.py", "app/svc.py", "app/tests/c.py"], result.stderr


def test_command_line_select_replaces_the_profiles_and_extend_select_adds(tmp_path: Path) -> None:
    (tmp_path / "svc.py").write_text("import requests\nrequests.get('u')\nrequests.get('u', timeout=None)\n")
    (tmp_path / "pyproject.toml").write_text('[tool.deadline-lint]\nselect = ["DL103"]\n')
    codes = lambda *a: [d["code"] for d in json.loads(run("check", "--format", "json", *a, ".", cwd=tmp_path).stdout)]  # noqa: E731
    assert codes() == ["DL103"]
    assert codes("--select", "DL101") == ["DL101"]
    assert codes("--extend-select", "DL101") == ["DL101", "DL103"]


@pytest.mark.parametrize(
    "args, names",
    [
        (["--select", "DL190"], "--select: unknown rule code or prefix 'DL190' (nearest known code: DL1"),
        (["--ignore", "DL9"], "--ignore: unknown rule code or prefix 'DL9' (nearest known code: DL"),
        (["--extend-select", "XYZ"], "--extend-select: not a rule code or prefix: 'XYZ'"),
        (["--extend-safe-fixes", "DL7"], "--extend-safe-fixes: unknown rule code or prefix 'DL7'"),
    ],
)
def test_unknown_codes_on_the_command_line_exit_2_with_one_line(tmp_path: Path, args, names) -> None:
    (tmp_path / "svc.py").write_text(BAD)
    result = run("check", *args, ".", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and names in result.stderr, result.stderr


def test_unknown_codes_in_a_profile_exit_2_naming_the_key(tmp_path: Path) -> None:
    (tmp_path / "svc.py").write_text(BAD)
    (tmp_path / "pyproject.toml").write_text('[tool.deadline-lint]\nper_path_ignores = { "x/*" = ["DL109"] }\n')
    result = run("check", ".", cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "per_path_ignores: 'x/*'" in result.stderr and "DL109" in result.stderr
    assert "nearest known code: DL10" in result.stderr


class _LaterRule(Rule):
    """Stands for a rule a family adds later."""

    code = "DL999"
    name = "test-later-rule"
    summary = "test"


def test_known_codes_come_from_the_registry(monkeypatch) -> None:
    with pytest.raises(ProfileError, match="unknown rule code or prefix 'DL999'"):
        check_profile(build_profile({"select": ["DL999"]}, "p.yaml"))
    monkeypatch.setitem(REGISTRY, _LaterRule.code, _LaterRule)
    assert check_profile(build_profile({"select": ["DL999", "DL9"]}, "p.yaml")).select == ("DL999", "DL9")


def test_flake8_relative_profile_in_its_config_is_relative_to_the_config_file(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "conf").mkdir(parents=True)
    (project / "conf" / "deadline.yaml").write_text("edge_total_ms: 2500\n")
    (project / "setup.cfg").write_text("[flake8]\nselect = DL\ndeadline-profile = conf/deadline.yaml\n")
    (project / "svc.py").write_text(BAD)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = subprocess.run([PY, "-m", "flake8", f"--config={project / 'setup.cfg'}", str(project / "svc.py")],
                            cwd=elsewhere, capture_output=True, text=True, timeout=300)
    assert "pass `timeout=2.5` from the edge default" in result.stdout, result.stdout + result.stderr


def test_pylint_relative_profile_in_its_config_is_relative_to_the_config_file(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "conf").mkdir(parents=True)
    (project / "conf" / "deadline.yaml").write_text("edge_total_ms: 2500\n")
    (project / "pylintrc").write_text("[MAIN]\ndeadline-profile = conf/deadline.yaml\n")
    (project / "svc.py").write_text(BAD)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = subprocess.run(
        [PY, "-m", "pylint", f"--rcfile={project / 'pylintrc'}", "--load-plugins=deadline_lint.pylint_plugin",
         "--disable=all", "--enable=deadline-lint", "--persistent=n", str(project / "svc.py")],
        cwd=elsewhere, capture_output=True, text=True, timeout=300,
    )
    assert "pass `timeout=2.5` from the edge default" in result.stdout, result.stdout + result.stderr


def test_flake8_rejects_an_unknown_dl_code_in_its_selection(tmp_path: Path) -> None:
    (tmp_path / "svc.py").write_text(BAD)
    result = subprocess.run([PY, "-m", "flake8", "--isolated", "--extend-select", "DL999,E501", "svc.py"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert "flake8 --extend-select: unknown rule code or prefix 'DL999'" in result.stdout + result.stderr


def test_the_example_profile_loads_without_warnings() -> None:
    from deadline_lint.settings.profile import load_profile_file

    example = Path(__file__).resolve().parent.parent / "example.yaml"
    assert check_profile(build_profile(load_profile_file(example), "example.yaml")).warnings == ()
