"""The flake8 plugin as flake8 runs it (in process, one job): same findings as the engine,
flake8's own selection and noqa, options from flake8's config, one Checker per process."""
from __future__ import annotations

import ast
from importlib.metadata import entry_points
from pathlib import Path
from typing import List, Tuple

import pytest
from flake8.main.application import Application
from rule_codes import unused_code

from deadline_lint.engine import checker as engine
from deadline_lint.engine.checker import Checker
from deadline_lint.engine.rule import REGISTRY, Rule
from deadline_lint.frontends.flake8_plugin import DeadlineLintFlake8
from deadline_lint.run import api

BAD = (
    "import requests\n"
    "requests.get('u')\n"
    "requests.get('u', timeout=None)\n"
    "x = 'é'; requests.get('u')\n"
)


@pytest.fixture(autouse=True)
def fresh_plugin_state(monkeypatch):
    """Each test gets its own Checker cache, as a new flake8 process would."""
    monkeypatch.setattr(api, "_SESSIONS", {})
    monkeypatch.setattr(DeadlineLintFlake8, "profile_path", None)
    monkeypatch.setattr(DeadlineLintFlake8, "opt_ins", ())


def flake8(capsys, *args: str) -> Tuple[List[Tuple[int, int, str, str]], int]:
    """(line, column, code, message) as flake8 prints them, and flake8's exit code."""
    app = Application()
    app.run(["--isolated", "--jobs=1", "--format=%(row)d\t%(col)d\t%(code)s\t%(text)s", *args])
    out = capsys.readouterr().out
    rows = []
    for line in out.splitlines():
        if line.count("\t") == 3:
            row, col, code, text = line.split("\t")
            rows.append((int(row), int(col), code, text))
    return rows, app.exit_code()


def engine_findings(path: Path, **options) -> List[Tuple[int, int, str, str]]:
    found = Checker(**options).check_text(path.read_text(encoding="utf-8"), str(path))
    return [(d.line, d.column, d.code, d.message) for d in found]


def test_registered_as_the_dl_flake8_extension() -> None:
    (entry,) = [e for e in entry_points(group="flake8.extension") if e.name == "DL"]
    assert entry.load() is DeadlineLintFlake8


def test_same_lines_columns_codes_and_messages_as_the_engine(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "svc.py"
    path.write_text(BAD, encoding="utf-8")
    rows, status = flake8(capsys, "--select", "DL", str(path))
    assert rows == engine_findings(path)
    assert [code for _, _, code, _ in rows] == ["DL101", "DL103", "DL101"]
    assert rows[2][1] == 10  # a column in characters, after the two-byte `é`
    assert status == 1


def test_uses_the_tree_flake8_parsed(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "svc.py").write_text(BAD, encoding="utf-8")

    def no_second_parse(text, path):
        raise AssertionError("the plugin parsed the file again")

    monkeypatch.setattr(engine, "parse_source", no_second_parse)
    rows, _ = flake8(capsys, "--select", "DL", "svc.py")
    assert len(rows) == 3


def test_one_checker_per_process_for_many_files(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(BAD, encoding="utf-8")
    built = []
    original = Checker.__init__

    def counting_init(self, *args, **kwargs):
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(Checker, "__init__", counting_init)
    rows, _ = flake8(capsys, "--select", "DL", "a.py", "b.py", "c.py")
    assert len(rows) == 9
    assert len(built) == 1


def test_flake8_selects_ignores_and_handles_noqa_itself(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "svc.py").write_text(
        "import requests\nrequests.get('u')  # noqa: DL101\nrequests.get('u', timeout=None)  # noqa\n"
        "requests.get('u')  # deadline-lint: ignore[DL101]\n",
        encoding="utf-8",
    )
    assert flake8(capsys, "--select", "DL", "svc.py")[0] == []
    # The plugin does not pre-filter `# noqa`: with flake8's --disable-noqa the findings return.
    rows, _ = flake8(capsys, "--select", "DL", "--disable-noqa", "svc.py")
    assert [(line, code) for line, _, code, _ in rows] == [(2, "DL101"), (3, "DL103")]
    rows, _ = flake8(capsys, "--select", "DL", "--disable-noqa", "--extend-ignore", "DL103", "svc.py")
    assert [(line, code) for line, _, code, _ in rows] == [(2, "DL101")]


def test_profile_option_from_flake8_config(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "svc.py").write_text("import requests\nrequests.get('u')\n", encoding="utf-8")
    (tmp_path / "profile.yaml").write_text("edge_total_ms: 2500\n", encoding="utf-8")
    (tmp_path / "setup.cfg").write_text("[flake8]\nselect = DL\ndeadline-profile = profile.yaml\n")
    app = Application()
    app.run(["--jobs=1", "svc.py"])  # not --isolated: the config file is the point
    assert "pass `timeout=2.5` from the edge default" in capsys.readouterr().out


def test_broken_profile_is_one_clear_error(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "svc.py").write_text("import requests\n", encoding="utf-8")
    (tmp_path / "profile.yaml").write_text("hop_margin_ms: soon\n", encoding="utf-8")
    app = Application()
    app.run(["--isolated", "--jobs=1", "--deadline-profile", "profile.yaml", "svc.py"])
    out = capsys.readouterr().out
    assert "deadline-lint: profile.yaml: hop_margin_ms: expected" in out
    assert app.exit_code() == 1


def test_syntax_errors_are_flake8s_e999_not_ours(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.py").write_text("import requests\ndef f(:\n", encoding="utf-8")
    rows, _ = flake8(capsys, "--select", "DL,E999", "broken.py")
    assert [code for _, _, code, _ in rows] == ["E999"]


class _EveryCall(Rule):
    """Test-only opt-in rule: reports every call."""

    code = unused_code("1")  # in a real family (DL1 selects it), never a real rule's code
    name = "test-every-call"
    summary = "every call"
    default_enabled = False
    node_types = (ast.Call,)

    def visit(self, node, ctx):
        ctx.report(self, node, "a call")


@pytest.fixture
def opt_in_rule(monkeypatch):
    monkeypatch.setitem(REGISTRY, _EveryCall.code, _EveryCall)
    return _EveryCall.code


@pytest.mark.parametrize(
    "args, reported",
    [
        ([], False),  # flake8's default selection: opt-in rules are on its default ignore list
        (["--select", "DL"], False),  # a prefix does not switch an opt-in rule on (as in the CLI)
        (["--select", "DL1"], False),
        (["--select", _EveryCall.code], True),
        (["--extend-select", _EveryCall.code], True),
    ],
)
def test_opt_in_rules_need_their_exact_code(tmp_path, capsys, monkeypatch, opt_in_rule, args, reported) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "svc.py").write_text("print('x')\n", encoding="utf-8")
    rows, _ = flake8(capsys, *args, "svc.py")
    assert any(code == opt_in_rule for _, _, code, _ in rows) is reported


def test_an_unreadable_file_is_dl006_as_in_the_cli(tmp_path, capsys, monkeypatch) -> None:
    """flake8 runs no plugin on a file it cannot read (its own E902, which `--select DL`
    hides): the file must not pass silently."""
    from deadline_lint.frontends.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "gone.py").symlink_to(tmp_path / "missing.py")  # unreadable even for root
    assert main(["check", "--no-cache", "gone.py"]) == 1
    cli = [line.split(":", 3) for line in capsys.readouterr().out.splitlines() if "DL006" in line]
    rows, status = flake8(capsys, "--select", "DL", "gone.py")
    assert rows == [(int(line), int(column), *text.strip().split(" ", 1)) for _, line, column, text in cli]
    assert rows == [(1, 1, "DL006", "cannot read file: No such file or directory")] and status == 1
    # per-path ignores still decide, as in the CLI
    (tmp_path / "pyproject.toml").write_text('[tool.deadline-lint]\nper-path-ignores = {"gone.py" = ["DL0"]}\n')
    monkeypatch.setattr(api, "_SESSIONS", {})
    assert flake8(capsys, "--select", "DL", "gone.py")[0] == []
