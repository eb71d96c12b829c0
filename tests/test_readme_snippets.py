"""The README's snippets, run as written: the try-it command and its output, the fix example
before and after, the pre-commit configuration's `rev`, the quoted tool messages; and
example.yaml's comments about which rules read what."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import yaml

from deadline_lint.engine.checker import parse_source
from deadline_lint.families.registry import all_rules
from deadline_lint.frontends.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
EXAMPLE = (ROOT / "example.yaml").read_text(encoding="utf-8")


def blocks(language: str):
    """Fenced code blocks of one language, in order (indented ones too), dedented."""
    found = []
    for match in re.finditer(r"^( *)```" + language + r"\n(.*?)^\1```", README, re.MULTILINE | re.DOTALL):
        indent = len(match.group(1))
        found.append("".join(line[indent:] + "\n" for line in match.group(2).splitlines()))
    return found


def block_after(marker: str, language: str) -> str:
    at = README.index(marker)
    match = re.compile(r"^ *```" + language + r"\n(.*?)^ *```", re.MULTILINE | re.DOTALL).search(README, at)
    assert match is not None, marker
    return match.group(1)


def test_try_it_prints_what_the_readme_shows(monkeypatch, capsys) -> None:
    command = block_after("## Try it", "sh").strip()
    assert command.endswith("&& .venv/bin/deadline-lint check examples/")
    monkeypatch.chdir(ROOT)
    assert main(["check", "--no-cache", "examples/"]) == 1
    assert capsys.readouterr().out == block_after("## Try it", "text")


def test_the_fix_example_is_what_fix_writes(tmp_path: Path, monkeypatch, capsys) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    assert main(["fix", "--unsafe-fixes", "examples/"]) == 1  # DL105 and others remain, as the README says
    out = capsys.readouterr()
    fixed = (tmp_path / "examples" / "checkout_service" / "clients.py").read_text()
    start = README.index("`deadline-lint fix --unsafe-fixes examples/`")
    python = re.findall(r"```python\n(.*?)```", README[start:], re.DOTALL)[:2]
    before_text, after_text = python
    original = (ROOT / "examples" / "checkout_service" / "clients.py").read_text()
    for line in before_text.splitlines()[1:]:
        assert line in original, line
    for line in after_text.splitlines()[1:]:
        assert line in fixed, line
    summary = re.findall(r"```text\n(.*?)```", README[start:], re.DOTALL)[0]
    printed = (out.out + out.err).splitlines()
    assert summary.splitlines()[-1] in printed
    assert summary.splitlines()[-2] in printed


def test_what_it_catches_quotes_the_example() -> None:
    """Each family's snippet names its example file on its first line; every other line is in it."""
    start = README.index("## What it catches")
    section = README[start:README.index("\n## ", start + 1)]
    snippets = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(snippets) == 6
    for snippet in snippets:
        first, *lines = snippet.splitlines()
        source = (ROOT / first.removeprefix("# ")).read_text(encoding="utf-8")
        for line in lines:
            assert line in source, line


def test_the_pre_commit_rev_exists() -> None:
    [config] = [b for b in blocks("yaml") if "repos:" in b]
    repo = yaml.safe_load(config)["repos"][0]
    rev = repo["rev"]
    tags = subprocess.run(["git", "tag"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    if rev not in tags:
        assert re.fullmatch(r"[0-9a-f]{40}", rev), f"rev {rev!r} is neither a tag of this repository nor a commit sha"
        exists = subprocess.run(["git", "cat-file", "-e", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True)
        assert exists.returncode == 0, f"rev {rev} is not a commit of this repository"
    hooks = {hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert {hook["id"] for hook in repo["hooks"]} <= hooks


def test_the_quoted_deep_nesting_message_is_the_tools() -> None:
    diagnostic = parse_source("x = " + "(" * 250 + "1" + ")" * 250 + "\n", "deep.py")
    assert f"`{diagnostic.code} {diagnostic.message}`" in " ".join(README.split())


def test_example_yaml_lists_every_opt_in_rule_and_no_rule_family_as_missing() -> None:
    opt_in = sorted(code for code, rule in all_rules().items() if not rule.default_enabled)
    [comment] = re.findall(r"Opt-in rules \(([^)]*)\)", EXAMPLE)
    assert [code.strip() for code in comment.split(",")] == opt_in
    assert "not installed" not in EXAMPLE


def test_example_yaml_sets_nothing_no_rule_reads_but_statuses(capsys) -> None:
    """Loading it warns only about what another change is settling (statuses, issue 19's
    defect 4); spawn_helpers and retry_decorators are read."""
    main(["check", "--no-cache", "--profile", str(ROOT / "example.yaml"), str(ROOT / "examples")])
    warnings = [line for line in capsys.readouterr().err.splitlines() if "not used yet" in line]
    assert not any("spawn_helpers" in line or "retry_decorators" in line for line in warnings)
