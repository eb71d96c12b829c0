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


def _worded(code: str, words, text_filter=None) -> Type[Rule]:
    """A probe that reports every call, behind its own trigger words and text filter."""
    return type(f"Worded{code}", (_Probe,), {
        "code": code, "look": None,
        "trigger_words": lambda self: frozenset(words),
        "text_filter": lambda self: text_filter,
    })


def _says_yes_to_urls(text: str) -> bool:
    return "http://" in text


def test_a_file_let_in_for_one_rule_is_walked_only_for_the_rules_it_lets_in(monkeypatch) -> None:
    rules = _rules(_worded("DL901", {"retry"}), _worded("DL902", {"requests"}),
                   _worded("DL903", {"requests"}, _says_yes_to_urls))
    monkeypatch.setattr(engine, "all_rules", lambda: rules)
    checker = Checker()
    found = checker.check_text("import requests\nretry()\n", "m.py")
    assert [(d.code, d.line) for d in found] == [("DL901", 2), ("DL902", 2)]  # DL903's filter says no
    checker.per_rule_prefilter = False  # the benchmark's "every rule on every file"
    found = checker.check_text("import requests\nretry()\n", "m.py")
    assert [d.code for d in found] == ["DL901", "DL902", "DL903"]
