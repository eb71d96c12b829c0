"""Shared first looks: rules offering the same `first_look` callable are visited behind one
test per node, in the engine's walk; a test that raises fails every rule behind it."""
from __future__ import annotations

import ast
from typing import Dict, List, Type

import pytest

import deadline_lint.engine as engine
from deadline_lint.engine import Checker
from deadline_lint.rules.base import Rule

_asked: List[str] = []


def _calls_named_go(node: ast.AST, ctx) -> bool:
    _asked.append(getattr(node.func, "id", "?"))  # type: ignore[attr-defined]
    return isinstance(node.func, ast.Name) and node.func.id == "go"  # type: ignore[attr-defined]


def _explodes(node: ast.AST, ctx) -> bool:
    raise ValueError("look failed")


class _Probe(Rule):
    """A test rule: reports every call it is visited on."""

    name = "probe"
    summary = "probe"
    node_types = (ast.Call,)
    look = staticmethod(_calls_named_go)

    def first_look(self, node_type):
        return type(self).look

    def visit(self, node, ctx):
        ctx.report(self, node, f"{self.code} saw {node.func.id}")


def _rules(*classes: Type[Rule]) -> Dict[str, Type[Rule]]:
    return {cls.code: cls for cls in classes}


def _probe(code: str, look=_calls_named_go) -> Type[Rule]:
    return type(f"Probe{code}", (_Probe,), {"code": code, "look": staticmethod(look) if look else None})


@pytest.fixture(autouse=True)
def _clear() -> None:
    del _asked[:]


def test_one_shared_look_per_node_and_visits_only_where_it_passes(monkeypatch) -> None:
    monkeypatch.setattr(engine, "all_rules", lambda: _rules(_probe("DL901"), _probe("DL902")))
    found = Checker().check_text("stop()\ngo()\nwait()\n", "m.py")
    assert _asked == ["stop", "go", "wait"]  # once per call, not once per rule
    assert [(d.code, d.line) for d in found] == [("DL901", 2), ("DL902", 2)]


def test_rules_without_a_look_see_every_node(monkeypatch) -> None:
    monkeypatch.setattr(engine, "all_rules", lambda: _rules(_probe("DL901"), _probe("DL902", look=None)))
    found = Checker().check_text("stop()\ngo()\n", "m.py")
    assert [(d.code, d.line) for d in found] == [("DL902", 1), ("DL901", 2), ("DL902", 2)]


def test_a_failing_look_fails_each_rule_behind_it_once(monkeypatch) -> None:
    rules = _rules(_probe("DL901", look=_explodes), _probe("DL902", look=_explodes), _probe("DL903"))
    monkeypatch.setattr(engine, "all_rules", lambda: rules)
    found = Checker().check_text("go()\ngo()\n", "m.py")
    failures = [d for d in found if d.code == "DL003"]
    assert [d.line for d in failures] == [1, 1]  # then dropped for the rest of the file
    assert {d.message.split(" (")[0] for d in failures} == {"internal error in DL901", "internal error in DL902"}
    assert [(d.code, d.line) for d in found if d.code != "DL003"] == [("DL903", 1), ("DL903", 2)]
