"""The README's pre-commit pin names a published release that reports what the README shows
(issue 35, item 8). The pin went stale once: it named a commit that found 17 of the example's
23 findings. ruff-pre-commit keeps its README's `rev` on the release it mirrors; here:

- the `rev` is `v` + this version (pyproject.toml and `deadline_lint.__version__` agree), so a
  version bump without the README (or the reverse) fails on any checkout, tags or not;
- the tag exists and its tree is that version, with the hooks the snippet names, and the
  deadline-lint it holds reports on its `examples/` exactly the README's "Try it" output.

The second needs the tag in the clone. A shallow clone (CI's usual `fetch-depth: 1`) has no
tags, and a clone of the submitted commits may have none either: there it is skipped with the
command that fetches them, never failed, since tags travel apart from commits. An archive with
no git at all (an sdist) skips it too.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path
from typing import Optional

import pytest
import yaml

import deadline_lint

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def readme_pin() -> dict:
    [config] = [
        match.group(2) for match in re.finditer(r"^( *)```yaml\n(.*?)^\1```", README, re.MULTILINE | re.DOTALL)
        if "repos:" in match.group(2)
    ]
    (repo,) = yaml.safe_load(re.sub(r"^ {2}", "", config, flags=re.MULTILINE))["repos"]
    return repo


def try_it_output() -> str:
    at = README.index("## Try it")
    match = re.compile(r"^```text\n(.*?)^```", re.MULTILINE | re.DOTALL).search(README, at)
    assert match is not None
    return match.group(1)


def version_in(pyproject: Path) -> str:
    return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]


def hook_ids(manifest: Path) -> set:
    return {hook["id"] for hook in yaml.safe_load(manifest.read_text(encoding="utf-8"))}


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def test_the_pin_is_this_versions_release_tag() -> None:
    repo = readme_pin()
    version = version_in(ROOT / "pyproject.toml")
    assert deadline_lint.__version__ == version
    assert repo["rev"] == f"v{version}", "the README's pre-commit `rev` must be this version's tag"
    assert {hook["id"] for hook in repo["hooks"]} <= hook_ids(ROOT / ".pre-commit-hooks.yaml")


def _tagged_commit(tag: str) -> Optional[str]:
    found = git("rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}")
    return found.stdout.strip() if found.returncode == 0 else None


def test_the_pinned_release_exists_and_reports_what_the_readme_shows(tmp_path) -> None:
    if shutil.which("git") is None or git("rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout: no tags to look at")
    tag = readme_pin()["rev"]
    commit = _tagged_commit(tag)
    if commit is None:
        if git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
            pytest.skip(f"{tag}: a shallow clone without its tags (`git fetch --tags --unshallow` to check it)")
        pytest.skip(f"the README pins {tag}, which is not a tag of this clone: tags travel apart from "
                    f"commits (`git fetch --tags`, or `git tag {tag} <commit>` when releasing)")
    archive = tmp_path / "release.tar"
    with open(archive, "wb") as out:
        subprocess.run(["git", "archive", commit, "pyproject.toml", ".pre-commit-hooks.yaml", "src", "examples"],
                       cwd=ROOT, stdout=out, check=True)
    release = tmp_path / "release"
    with tarfile.open(archive) as tar:
        tar.extractall(release, filter="data")
    assert version_in(release / "pyproject.toml") == tag.removeprefix("v")
    assert {hook["id"] for hook in readme_pin()["hooks"]} <= hook_ids(release / ".pre-commit-hooks.yaml")
    # The released deadline-lint, on the released example (its own sources first on the path).
    env = {**os.environ, "PYTHONPATH": str(release / "src")}
    done = subprocess.run([sys.executable, "-m", "deadline_lint", "check", "--no-cache", "examples/"],
                          cwd=release, env=env, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert done.stdout == try_it_output()
