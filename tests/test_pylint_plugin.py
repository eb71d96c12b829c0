"""The pylint plugin as pylint runs it (in process): one message per rule, the engine's
findings at the engine's positions, pylint's own switches and pragmas, one engine run per module."""
from __future__ import annotations

import ast
import json
import pkgutil
import re
from io import StringIO
from pathlib import Path
from typing import List, Tuple

import pylint.extensions as pylint_extensions
import pytest
from pylint.lint import PyLinter, Run
from pylint.reporters import JSON2Reporter
from rule_codes import unused_code

from deadline_lint.engine.checker import Checker
from deadline_lint.engine.rule import REGISTRY, Rule
from deadline_lint.families.registry import all_rules
from deadline_lint.frontends import pylint_plugin
from deadline_lint.run import api
from deadline_lint.frontends.pylint_plugin import checker_classes, mapping, message_id, symbol
from deadline_lint.support.tool_codes import TOOL_CODES

BAD = (
    "import requests\n"
    "requests.get('u')\n"
    "requests.get('u', timeout=None)\n"
    "x = 'é'; requests.get('u')\n"
)


@pytest.fixture(autouse=True)
def fresh_plugin_state(monkeypatch):
    monkeypatch.setattr(api, "_SESSIONS", {})
    monkeypatch.setattr(pylint_plugin._ModuleFindings, "module", None)


def run_pylint(tmp_path: Path, *args: str) -> Tuple[List[dict], int]:
    # Each run stands for a pylint process of its own. astroid keeps the module nodes it built
    # between runs in one process, so the findings the plugin keeps for the last node would
    # answer a later run of the same file under another selection.
    pylint_plugin._ModuleFindings.module = None
    (tmp_path / "pylintrc").write_text("[MAIN]\n")
    output = StringIO()
    run = Run(
        [f"--rcfile={tmp_path / 'pylintrc'}", "--persistent=n", "--load-plugins=deadline_lint.pylint_plugin", *args],
        reporter=JSON2Reporter(output),
        exit=False,
    )
    return json.loads(output.getvalue())["messages"], run.linter.msg_status


def findings(messages: List[dict]) -> List[Tuple[int, int, str, str]]:
    """(line, 1-based column, code, message) from pylint's messages."""
    rows = []
    for m in messages:
        code, text = m["message"].split(" ", 1)
        rows.append((m["line"], m["column"] + 1, code, text))
    return sorted(rows)


def test_message_ids_are_the_code_digits_behind_a_9() -> None:
    assert message_id("DL101") == "W9101"
    assert message_id("DL203") == "W9203"
    assert message_id("DL001") == "E9001"
    rows = mapping()
    assert [code for code, _, _ in rows] == [*TOOL_CODES, *all_rules()]
    for code, msgid, name in rows:
        assert re.fullmatch(r"[EW]9\d{3}", msgid) and msgid[2:] == code[2:]
        assert name == (all_rules()[code].name if code in all_rules() else f"deadline-lint-{TOOL_CODES[code].name}")
    assert len({msgid for _, msgid, _ in rows}) == len({name for _, _, name in rows}) == len(rows)


def test_one_checker_per_family_default_on_and_opt_in_under_their_own_names() -> None:
    classes = checker_classes()
    rules = all_rules()
    expected = {("deadline-lint", "0")}
    expected |= {
        ("deadline-lint" if cls.default_enabled else "deadline-lint-opt-in", code[2]) for code, cls in rules.items()
    }
    assert sorted((cls.name, cls.family) for cls in classes) == sorted(expected)
    for cls in classes:
        assert {msgid[1:3] for msgid in cls.msgs} == {f"9{cls.family}"}  # pylint's checker-id rule
        for msgid, (template, name, *_rest) in cls.msgs.items():
            code = "DL" + msgid[2:]
            assert template == f"{code} %s" and name == symbol(code)
            if code in rules:
                assert (cls.name == "deadline-lint-opt-in") == (not rules[code].default_enabled)


def test_registers_beside_every_pylint_checker_and_extension() -> None:
    """pylint refuses a duplicate message id or symbol: ours must clash with none of its own."""
    linter = PyLinter()
    linter.load_default_plugins()
    extensions = [
        f"pylint.extensions.{m.name}"
        for m in pkgutil.iter_modules(pylint_extensions.__path__)
        if not m.name.startswith("_")
    ]
    linter.load_plugin_modules(extensions)
    pylint_plugin.register(linter)
    for _code, msgid, name in mapping():
        assert linter.msgs_store.get_message_definitions(name)[0].msgid == msgid
        assert linter.msgs_store.get_message_definitions(msgid)[0].symbol == name


def test_same_findings_as_the_engine_with_explicit_positions(tmp_path) -> None:
    path = tmp_path / "svc.py"
    path.write_text(BAD, encoding="utf-8")
    messages, _ = run_pylint(tmp_path, "--disable=all", "--enable=deadline-lint", str(path))
    engine = Checker().check_text(BAD, str(path))
    assert findings(messages) == sorted((d.line, d.column, d.code, d.message) for d in engine)
    by_line = {m["line"]: m for m in messages}
    assert by_line[2]["symbol"] == "outbound-call-without-budget" and by_line[2]["messageId"] == "W9101"
    assert (by_line[2]["endLine"], by_line[2]["endColumn"]) == (2, 17)
    assert by_line[4]["column"] == 9  # characters, after the two-byte `é`


def test_checker_name_switches_every_message(tmp_path) -> None:
    path = tmp_path / "svc.py"
    path.write_text(BAD, encoding="utf-8")
    assert len(run_pylint(tmp_path, "--disable=all", "--enable=deadline-lint", str(path))[0]) == 3
    everything_else, _ = run_pylint(tmp_path, "--disable=deadline-lint", str(path))
    assert everything_else and not [m for m in everything_else if m["message"].startswith("DL")]
    only = run_pylint(tmp_path, "--disable=all", "--enable=unbounded-timeout", str(path))[0]
    assert [m["symbol"] for m in only] == ["unbounded-timeout"]


def test_pylint_pragmas_and_the_engine_suppressions(tmp_path) -> None:
    path = tmp_path / "svc.py"
    path.write_text(
        "import requests\n"
        "requests.get('u')  # pylint: disable=outbound-call-without-budget\n"
        "requests.get('u')  # pylint: disable=unbounded-timeout\n"
        "requests.get('u')  # noqa: DL101\n"
        "requests.get('u')  # deadline-lint: ignore[DL101]\n",
        encoding="utf-8",
    )
    messages, _ = run_pylint(tmp_path, "--disable=all", "--enable=deadline-lint", str(path))
    assert [(m["line"], m["symbol"]) for m in messages] == [(3, "outbound-call-without-budget")]


def test_profile_option(tmp_path) -> None:
    path = tmp_path / "svc.py"
    path.write_text("import requests\nrequests.get('u')\n", encoding="utf-8")
    (tmp_path / "profile.yaml").write_text("edge_total_ms: 2500\n", encoding="utf-8")
    messages, _ = run_pylint(
        tmp_path, "--disable=all", "--enable=deadline-lint", f"--deadline-profile={tmp_path / 'profile.yaml'}",
        str(path),
    )
    assert "pass `timeout=2.5` from the edge default" in messages[0]["message"]


def test_broken_profile_is_a_usage_error(tmp_path, capsys) -> None:
    path = tmp_path / "svc.py"
    path.write_text("import requests\n", encoding="utf-8")
    (tmp_path / "profile.yaml").write_text("hop_margin_ms: soon\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        run_pylint(tmp_path, f"--deadline-profile={tmp_path / 'profile.yaml'}", str(path))
    assert exit_info.value.code == 32
    assert "hop_margin_ms: expected" in capsys.readouterr().err


def test_engine_runs_once_per_module_whatever_the_family_count(tmp_path, monkeypatch) -> None:
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(BAD, encoding="utf-8")
    runs = []
    original = Checker.check_bytes

    def counting(self, data, path):
        runs.append(path)
        return original(self, data, path)

    monkeypatch.setattr(Checker, "check_bytes", counting)
    paths = [str(tmp_path / "a.py"), str(tmp_path / "b.py")]
    messages, _ = run_pylint(tmp_path, "--disable=all", "--enable=deadline-lint", *paths)
    assert len(messages) == 6
    assert sorted(Path(p).name for p in runs) == ["a.py", "b.py"]


class _EveryCall(Rule):
    """Test-only opt-in rule in a family of its own: reports every call."""

    code = unused_code()  # never a real rule's: registering it must not hide one
    name = "test-every-call"
    summary = "every call"
    default_enabled = False
    node_types = (ast.Call,)

    def visit(self, node, ctx):
        ctx.report(self, node, "a call")


def test_the_documented_command_gives_the_cli_default_set(tmp_path) -> None:
    path = tmp_path / "svc.py"
    # DL106 (opt-in): the handler forwards its budget without a refuse check.
    path.write_text(
        "import requests\n\ndef handler(url, budget):\n    url = url.strip()\n"
        "    return requests.get(url, timeout=budget.timeout())\n\nrequests.get('u')\n",
        encoding="utf-8",
    )
    messages, _ = run_pylint(tmp_path, "--disable=all", "--enable=deadline-lint", str(path))
    cli = Checker().check_text(path.read_text(encoding="utf-8"), str(path))
    assert findings(messages) == sorted((d.line, d.column, d.code, d.message) for d in cli)
    opt_in, _ = run_pylint(tmp_path, "--disable=all", "--enable=deadline-lint,deadline-lint-opt-in", str(path))
    assert "DL106" in {m["message"].split()[0] for m in opt_in} - {m["message"].split()[0] for m in messages}


def test_rules_run_only_when_one_of_their_messages_is_enabled(tmp_path, monkeypatch) -> None:
    path = tmp_path / "svc.py"
    path.write_text(BAD, encoding="utf-8")
    built = []
    original = Checker.__init__

    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        built.append(self.codes)

    monkeypatch.setattr(Checker, "__init__", recording)
    run_pylint(tmp_path, "--disable=all", "--enable=unbounded-timeout", str(path))
    assert built and all(codes == ["DL103"] for codes in built)


def test_opt_in_rules_are_disabled_until_enabled(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(REGISTRY, _EveryCall.code, _EveryCall)
    path = tmp_path / "svc.py"
    path.write_text("print('x')\n", encoding="utf-8")
    assert [m for m in run_pylint(tmp_path, str(path))[0] if m["symbol"] == "test-every-call"] == []
    messages, _ = run_pylint(tmp_path, "--disable=all", "--enable=test-every-call", str(path))
    code = _EveryCall.code
    assert [(m["messageId"], m["message"]) for m in messages] == [(f"W9{code[2:]}", f"{code} a call")]
