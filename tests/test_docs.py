"""docs/rules/ is generated from the rules and must not go stale; the README points at it."""
from __future__ import annotations

import re
from pathlib import Path

from deadline_lint.engine.rule import DOC_SECTIONS
from deadline_lint.support.tool_codes import TOOL_CODES
from deadline_lint.families.registry import all_rules
from deadline_lint.frontends import docs

ROOT = Path(__file__).resolve().parent.parent
RULE_DOCS = ROOT / "docs" / "rules"


def test_generated_docs_are_up_to_date() -> None:
    stale = docs.stale_files(RULE_DOCS)
    assert stale == [], f"stale: {stale}; run `python -m deadline_lint.frontends.docs` and commit docs/rules/"


def test_every_rule_documents_every_section() -> None:
    for code, cls in all_rules().items():
        documentation = cls.documentation()
        for section in DOC_SECTIONS:
            assert f"## {section}" in documentation, f"{code} has no '## {section}' section"
        assert docs.doc_section(documentation, "What it does"), f"{code}: empty 'What it does'"


def test_pages_carry_the_registry_facts() -> None:
    for code, cls in all_rules().items():
        page = docs.rule_page(cls)
        assert page.splitlines()[1] == f"# {code}: {cls.name}"
        assert cls.documentation() in page
        assert f"`# noqa: {code}`" in page and f"`# pylint: disable={cls.name}`" in page
        assert ("| default | on |" in page) is cls.default_enabled
    index = docs.index_page()
    for code in [*TOOL_CODES, *all_rules()]:
        assert f"[{code}]({code}.md)" in index
    for link in re.findall(r"\]\(([^)]+\.md)\)", index):
        assert link in docs.generated_pages(), link


def test_check_and_write_round_trip(tmp_path) -> None:
    folder = tmp_path / "rules"
    assert docs.main(["--check", "--dir", str(folder)]) == 1
    assert docs.main(["--dir", str(folder)]) == 0
    assert docs.main(["--check", "--dir", str(folder)]) == 0
    first = sorted(all_rules())[0]
    (folder / f"{first}.md").write_text("edited by hand\n")
    (folder / "DL999.md").write_text("a rule that no longer exists\n")
    (folder / "notes.md").write_text("not ours\n")
    assert docs.stale_files(folder) == sorted([f"{first}.md", "DL999.md"])
    assert docs.main(["--check", "--dir", str(folder)]) == 1
    docs.main(["--dir", str(folder)])
    assert docs.stale_files(folder) == []
    assert not (folder / "DL999.md").exists() and (folder / "notes.md").exists()


def test_readme_links_the_index_and_shows_every_front_end() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/rules/index.md" in readme
    for command in (
        "deadline-lint check",
        "deadline-lint fix",
        "flake8 --select DL",
        "pylint --load-plugins deadline_lint.pylint_plugin",
        "pre-commit",
        "--format sarif",
        "--format github",
    ):
        assert command in readme, command


def test_readme_rule_table_is_generated_and_current() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert docs.readme_with_table(readme) == readme, "run `python -m deadline_lint.frontends.docs`"
    for code in all_rules():
        assert f"[{code}](docs/rules/{code}.md)" in readme


def test_pylint_ids_come_from_the_registry_not_the_pylint_adapter() -> None:
    import subprocess
    import sys

    probe = "import sys, deadline_lint.frontends.docs; print('deadline_lint.pylint_plugin' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    from deadline_lint.frontends import pylint_plugin, rule_ids

    assert pylint_plugin.message_id is rule_ids.message_id and rule_ids.message_id("DL101") == "W9101"
