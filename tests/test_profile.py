"""Loading and validating the adoption profile: every mistake is one line naming file and key."""
from __future__ import annotations

from pathlib import Path

import pytest

from deadline_lint.settings.profile import ProfileError, build_profile, load_profile_file, resolve_profile

ROOT = Path(__file__).resolve().parent.parent


def write(tmp_path: Path, text: str, name: str = "profile.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_example_profile_is_valid_and_complete() -> None:
    data = load_profile_file(ROOT / "example.yaml")
    profile = build_profile(data, "example.yaml")
    assert profile.hop_margin_ms == 50
    assert profile.outbound[0]["library"] == "acme-http"
    from deadline_lint.settings.profile_settings import entries

    every = {entry.dotted for entry in entries()}
    set_here = {*data, *(f"{k}.{sub}" for k, v in data.items() if isinstance(v, dict) and k in every for sub in v)}
    set_here -= {f"per_path_ignores.{pattern}" for pattern in data["per_path_ignores"]}  # values, not keys
    assert set_here == every, f"example.yaml sets every setting: missing {sorted(every - set_here)}"


def test_example_yaml_documents_every_key() -> None:
    """Each setting's line has a comment above it in its block (no blank line between), or
    on the line itself: example.yaml is the commented reference."""
    from deadline_lint.settings.profile_settings import entries

    lines = (ROOT / "example.yaml").read_text(encoding="utf-8").splitlines()
    sections = {entry.dotted for entry in entries() if entry.check is None}

    def documented(index: int) -> bool:
        if "#" in lines[index]:
            return True
        for above in reversed(lines[:index]):
            if not above.strip():
                return False
            if above.lstrip().startswith("#"):
                return True
        return False

    for entry in entries():
        *parents, key = entry.path
        indent = "  " * len(parents)
        found = [i for i, line in enumerate(lines) if line.startswith(f"{indent}{key}:")]
        assert found, f"example.yaml does not set {entry.dotted}"
        assert entry.dotted in sections or documented(found[0]), f"example.yaml: {entry.dotted} has no comment"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("edge_totl_ms: 5\n", "edge_totl_ms: unknown key"),
        ("hop_margin_ms: fifty\n", "hop_margin_ms: expected a whole number of milliseconds"),
        ("hop_margin_ms: -5\n", "hop_margin_ms: expected a whole number of milliseconds, 0 or more"),
        ("edge_total_ms: 100\nhop_margin_ms: 200\n", "hop_margin_ms: expected less than edge_total_ms"),
        ("budget:\n  parameters: budget\n", "budget.parameters: expected a list of non-empty strings"),
        ("budget:\n  colour: red\n", "budget.colour: unknown key"),
        ("select: [XYZ1]\n", "select: expected a list of rule codes"),
        ("fix:\n  edge_expression: '{nope}'\n", "fix.edge_expression: expected a Python expression"),
        ("statuses:\n  expired: 999\n", "statuses.expired: expected an HTTP status"),
        ("trace_remaining_attribute: ''\n", "trace_remaining_attribute: expected a non-empty string"),
        ("spawn_helpers: acme.spawn\n", "spawn_helpers: expected a list of non-empty strings"),
        ("outbound:\n  - library: x\n    functions: [{position: 1}]\n", "outbound: expected each entry"),
        ("- just\n- a list\n", "profile: expected a mapping"),
        ("edge_total_ms: [\n", "not valid YAML"),
    ],
)
def test_malformed_profile_is_one_clear_line(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ProfileError) as info:
        build_profile(load_profile_file(path), str(path))
    message = str(info.value)
    assert message.startswith(str(path) + ": ")
    assert expected in message
    assert "\n" not in message


def test_missing_profile_file(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="file not found"):
        resolve_profile(str(tmp_path / "nope.yaml"), tmp_path)


def test_pyproject_profile_path_and_inline_keys(tmp_path: Path) -> None:
    write(tmp_path, "hop_margin_ms: 20\n", "team.yaml")
    write(tmp_path, '[tool.deadline-lint]\nprofile = "team.yaml"\nedge-total-ms = 3000\n', "pyproject.toml")
    sub = tmp_path / "src"
    sub.mkdir()
    profile = resolve_profile(None, sub)
    assert profile.hop_margin_ms == 20
    assert profile.edge_total_ms == 3000


def test_pyproject_inline_key_is_validated(tmp_path: Path) -> None:
    write(tmp_path, "[tool.deadline-lint]\nhop_margin_ms = -1\n", "pyproject.toml")
    with pytest.raises(ProfileError, match=r"pyproject.toml \[tool.deadline-lint\]: hop_margin_ms"):
        resolve_profile(None, tmp_path)


def test_no_configuration_means_built_in_defaults(tmp_path: Path) -> None:
    profile = resolve_profile(None, tmp_path)
    assert profile.edge_total_ms == 10000
    assert profile.render("edge_expression") == "10.0"
    assert profile.render("seconds_expression", "left") == "max(0.001, left - 0.05)"


def test_per_path_ignores_are_relative_to_the_pyproject(tmp_path: Path, monkeypatch) -> None:
    from deadline_lint.run.api import Options, lint_paths

    write(tmp_path, '[tool.deadline-lint]\nper-path-ignores = {"scripts/*" = ["DL101"]}\n', "pyproject.toml")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "app").mkdir()
    bad = "import requests\nrequests.get('u')\n"
    (tmp_path / "scripts" / "job.py").write_text(bad)
    (tmp_path / "app" / "svc.py").write_text(bad)
    monkeypatch.chdir(tmp_path / "app")  # run from a subfolder: patterns still mean the root's
    found = [d for r in lint_paths(["../scripts/job.py", "svc.py"], Options(jobs=1)) for d in r.diagnostics]
    assert [(d.path, d.code) for d in found] == [("svc.py", "DL101")]
