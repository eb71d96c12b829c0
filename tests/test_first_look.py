"""The prefilter's declared vocabulary (`requires.py`) as the engine applies it: a file is
walked only for the rules whose file need it holds, a visit only where its visit need also
holds, a function or class only for the rules whose body need its text holds; rules
declaring the same first look are visited behind one test per node, and a test that raises
fails every rule behind it. Then rule state per scope and the dropping of repeated findings."""
from __future__ import annotations

import ast
from typing import Dict, List, Type

import pytest

import deadline_lint.engine.checker as engine
from deadline_lint.engine.checker import Checker
from deadline_lint.engine.requires import Look, Project, Text, Words, in_body, in_file, on_visits
from deadline_lint.engine.rule import Rule

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

    def visit(self, node, ctx):
        ctx.report(self, node, f"{self.code} saw {getattr(node.func, 'id', '?')}")


def _rules(*classes: Type[Rule]) -> Dict[str, Type[Rule]]:
    return {cls.code: cls for cls in classes}


def _probe(code: str, look=_calls_named_go, **needs) -> Type[Rule]:
    first_looks = {ast.Call: Look(look)} if look else {}
    return type(f"Probe{code}", (_Probe,), {"code": code, "first_looks": first_looks, **needs})


def _found(rules, text: str, checker=None):
    checker = checker or Checker()
    return [(d.code, d.line) for d in checker.check_text(text, "m.py")]


@pytest.fixture(autouse=True)
def _clear() -> None:
    del _asked[:]


# -- first looks ----------------------------------------------------------------------------
def test_one_shared_look_per_node_and_visits_only_where_it_passes(monkeypatch) -> None:
    monkeypatch.setattr(engine, "registered_rules", lambda: _rules(_probe("DL901"), _probe("DL902")))
    assert _found(None, "stop()\ngo()\nwait()\n") == [("DL901", 2), ("DL902", 2)]
    assert _asked == ["stop", "go", "wait"]  # once per call, not once per rule


def test_rules_without_a_look_see_every_node(monkeypatch) -> None:
    monkeypatch.setattr(engine, "registered_rules", lambda: _rules(_probe("DL901"), _probe("DL902", look=None)))
    assert _found(None, "stop()\ngo()\n") == [("DL902", 1), ("DL901", 2), ("DL902", 2)]


def test_a_failing_look_fails_each_rule_behind_it_once(monkeypatch) -> None:
    rules = _rules(_probe("DL901", look=_explodes), _probe("DL902", look=_explodes), _probe("DL903"))
    monkeypatch.setattr(engine, "registered_rules", lambda: rules)
    found = Checker().check_text("go()\ngo()\n", "m.py")
    failures = [d for d in found if d.code == "DL003"]
    assert [d.line for d in failures] == [1, 1]  # then dropped for the rest of the file
    assert {d.message.split(" (")[0] for d in failures} == {"internal error in DL901", "internal error in DL902"}
    assert [(d.code, d.line) for d in found if d.code != "DL003"] == [("DL903", 1), ("DL903", 2)]


# -- what a file must hold ------------------------------------------------------------------
_text_asked: List[str] = []


def _says_yes_to_urls(text: str) -> bool:
    _text_asked.append(text)
    return "http://" in text


def test_a_file_is_walked_only_for_the_rules_whose_needs_it_holds(monkeypatch) -> None:
    urls = Text(lambda rule: _says_yes_to_urls)
    rules = _rules(
        _probe("DL901", look=None, needs=(in_file(Words("retry")),)),
        _probe("DL902", look=None, needs=(in_file(Words("requests")),)),
        _probe("DL903", look=None, needs=(in_file(Words("requests") & urls),)),
        _probe("DL904", look=None, needs=(in_file(Words("requests") & urls),)),
    )
    monkeypatch.setattr(engine, "registered_rules", lambda: rules)
    del _text_asked[:]
    checker = Checker()
    assert _found(rules, "import requests\nretry()\n", checker) == [("DL901", 2), ("DL902", 2)]
    assert len(_text_asked) == 1  # one answer for both rules declaring it
    assert not checker.could_fire("import os\n")
    checker.prefilter = False  # the benchmark's "every rule on every node of every file"
    found = _found(rules, "import requests\nretry()\n", checker)
    assert [code for code, _ in found] == ["DL901", "DL902", "DL903", "DL904"]


def test_the_project_is_asked_only_where_the_text_says_no(monkeypatch) -> None:
    asked: List[str] = []

    def through_project(text: str, path: str) -> bool:
        asked.append(text)
        return "sibling" in text

    through = Project(lambda rule: through_project)
    rules = _rules(_probe("DL901", look=None, needs=(in_file(Words("requests") | through),)))
    monkeypatch.setattr(engine, "registered_rules", lambda: rules)
    checker = Checker()
    assert _found(rules, "import requests\nf()\n", checker) == [("DL901", 2)]
    assert asked == []
    assert _found(rules, "from . import sibling\nf()\n", checker) == [("DL901", 2)]
    assert _found(rules, "g()\n", checker) == []
    assert len(asked) == 2


def test_a_visit_need_keeps_a_rule_off_one_node_type(monkeypatch) -> None:
    class Both(_Probe):
        code = "DL901"
        node_types = (ast.Call, ast.Return)
        needs = (on_visits(Words("tenacity"), ast.Call),)

        def visit(self, node, ctx):
            ctx.report(self, node, type(node).__name__)

    monkeypatch.setattr(engine, "registered_rules", lambda: _rules(Both))
    text = "def f():\n    g()\n    return 1\n"
    assert _found(None, text) == [("DL901", 3)]  # the return, not the call
    assert _found(None, "import tenacity\n" + text) == [("DL901", 3), ("DL901", 4)]


def test_the_old_declarations_are_refused() -> None:
    with pytest.raises(TypeError, match="declares requires, body_requires: declare `needs`"):
        type("Old", (_Probe,), {"requires": Words("a"), "body_requires": Words("b")})


def test_a_scope_is_declared_once(monkeypatch) -> None:
    twice = _probe("DL901", look=None, needs=(in_file(Words("a")), in_file(Words("b"))))
    monkeypatch.setattr(engine, "registered_rules", lambda: _rules(twice))
    with pytest.raises(TypeError, match="two file needs"):
        Checker()


# -- what a function or class must hold -----------------------------------------------------
def test_a_body_without_a_rules_words_is_not_walked_for_it(monkeypatch) -> None:
    rules = _rules(_probe("DL901", look=None, needs=(in_body(Words("async")),)), _probe("DL902", look=None))
    monkeypatch.setattr(engine, "registered_rules", lambda: rules)
    text = (
        "top()\n"  # module level: no body to ask
        "def sync():\n    a()\n"
        "async def run():\n    b()\n    def inner():\n        c()\n"  # decided once: inner too
        "@deco(async_=1)\ndef decorated():\n    d()\n"  # decorators are part of its text
    )
    assert _found(rules, text) == [
        ("DL901", 1), ("DL902", 1), ("DL902", 3), ("DL901", 5), ("DL902", 5), ("DL901", 7), ("DL902", 7),
        ("DL901", 8), ("DL902", 8), ("DL901", 10), ("DL902", 10),
    ]


def test_a_body_no_rule_needs_is_not_walked_at_all(monkeypatch) -> None:
    visited: List[str] = []

    class Named(_Probe):
        code = "DL901"
        node_types = (ast.Call, ast.FunctionDef)
        leave_node_types = (ast.FunctionDef,)
        needs = (in_body(Words("go")),)

        def visit(self, node, ctx):
            visited.append(getattr(node, "name", None) or node.func.id)

        def leave(self, node, ctx):
            visited.append("left " + node.name)

    monkeypatch.setattr(engine, "registered_rules", lambda: _rules(Named))
    checker = Checker()
    checker.check_text("def idle():\n    wait()\ndef busy():\n    go()\n", "m.py")
    assert visited == ["busy", "go", "left busy"]
    assert checker.stats.skipped == 1


# -- rule state and repeated findings --------------------------------------------------------
def test_rule_state_lives_as_long_as_its_scope(monkeypatch) -> None:
    class Counter(_Probe):
        """Reports, when each function ends, how many calls it made itself, and at the end of
        the file how many calls the whole module made."""

        code = "DL901"
        node_types = (ast.Call,)
        leave_node_types = (ast.FunctionDef,)

        def visit(self, node, ctx):
            ctx.state(self, list).append(node)
            ctx.state(self, list, ctx.module_scope).append(node)

        def leave(self, node, ctx):
            ctx.report(self, node, f"{node.name}: {len(ctx.state(self, list))} calls")

    monkeypatch.setattr(engine, "registered_rules", lambda: _rules(Counter))
    text = "def f():\n    a()\n    def g():\n        b()\n        c()\n    d()\ndef h():\n    pass\n"
    messages = [d.message for d in Checker().check_text(text, "m.py")]
    assert messages == ["f: 2 calls", "g: 2 calls", "h: 0 calls"]


def test_a_repeated_identical_finding_is_reported_once(monkeypatch) -> None:
    class Twice(_Probe):
        code = "DL901"

        def visit(self, node, ctx):
            target = ctx.tree.body[0]  # the same node, judged from every call
            ctx.report(self, target, "shared")
            ctx.report(self, target, "shared")
            ctx.report(self, node, "own")

    monkeypatch.setattr(engine, "registered_rules", lambda: _rules(Twice))
    found = Checker().check_text("x = 1\nf()\ng()\n", "m.py")
    assert [(d.line, d.message) for d in found] == [(1, "shared"), (2, "own"), (3, "own")]
