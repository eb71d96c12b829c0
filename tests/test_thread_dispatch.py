"""`fix --thread-budget --unsafe-fixes` never breaks a call that dispatches: a method is threaded
together with every override and implementation the project holds, or not at all, and a
function or method with a caller the run cannot update keeps its signature. Each case fixes a
small project on disk, then imports and runs the fixed code (with a recording `requests`)."""
from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Dict

import pytest

from deadline_lint.frontends.cli import main

CHAIN = """\
import requests


class Repo:
    def get(self, key):
        return requests.get(f"http://store/{key}")

    def load(self, key, budget):
        return self.get(key)


def handler(key, budget):
    return Repo().load(key, budget)
"""

CACHED = """\
{import_line}


class CachedRepo(Repo):
    def get(self, key):
        return {{"cached": key}}
"""


class Budget:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def timeout(self) -> float:
        return self.seconds - 0.05


def _project(root: Path, files: Dict[str, str]) -> None:
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _fix(root: Path, monkeypatch) -> Dict[str, str]:
    before = {p: p.read_text() for p in root.rglob("*.py")}
    assert main(["fix", "--thread-budget", "--unsafe-fixes", str(root)]) in (0, 1)
    after = {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")}
    assert main(["fix", "--thread-budget", "--unsafe-fixes", str(root)]) in (0, 1)
    assert {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")} == after  # twice == once
    assert "budget_s: float =" not in "".join(after.values())  # nothing threaded mints time
    assert before  # the project was there
    monkeypatch.syspath_prepend(str(root))
    for name in list(sys.modules):
        if name.split(".")[0] in {"chain", "sub", "repos", "caches", "base", "impl", "proto", "service"}:
            monkeypatch.delitem(sys.modules, name)
    return after


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


def test_an_override_in_another_module_is_never_given_a_keyword_it_lacks(tmp_path: Path, monkeypatch, calls) -> None:
    """The issue's case: `Repo.get` threaded would pass `budget_s=` to `self.get(...)`, which
    `CachedRepo(Repo).get(self, key)` in sub.py does not take (a TypeError when run)."""
    _project(tmp_path, {"chain.py": CHAIN, "sub.py": CACHED.format(import_line="from chain import Repo")})
    fixed = _fix(tmp_path, monkeypatch)
    assert "def get(self, key):" in fixed["chain.py"]  # not threaded: sub.py overrides it
    assert _module("sub").CachedRepo().load("k", Budget(1.0)) == {"cached": "k"}
    _module("chain").handler("k", Budget(1.0))
    assert calls and all(call["timeout"] is not None for call in calls)


def test_an_override_in_another_package(tmp_path: Path, monkeypatch, calls) -> None:
    _project(tmp_path, {
        "repos/__init__.py": "", "repos/chain.py": CHAIN,
        "caches/__init__.py": "", "caches/sub.py": CACHED.format(import_line="from repos.chain import Repo"),
    })
    fixed = _fix(tmp_path, monkeypatch)
    assert "def get(self, key):" in fixed["repos/chain.py"]
    assert _module("caches.sub").CachedRepo().load("k", Budget(1.0)) == {"cached": "k"}
    _module("repos.chain").handler("k", Budget(1.0))
    assert calls


def test_an_implementation_of_an_abstract_base_in_another_module(tmp_path: Path, monkeypatch, calls) -> None:
    _project(tmp_path, {
        "base.py": """\
            import abc


            class Store(abc.ABC):
                @abc.abstractmethod
                def get(self, key): ...

                def load(self, key, budget):
                    return self.get(key)
            """,
        "impl.py": """\
            import requests

            from base import Store


            class HttpStore(Store):
                def get(self, key):
                    return requests.get(f"http://store/{key}")


            def handler(key, budget):
                return HttpStore().load(key, budget)
            """,
    })
    fixed = _fix(tmp_path, monkeypatch)
    assert "def get(self, key):" in fixed["impl.py"]
    _module("impl").handler("k", Budget(1.0))
    assert calls and calls[0]["timeout"] is not None


def test_an_abstract_base_in_the_same_module(tmp_path: Path, monkeypatch, calls) -> None:
    _project(tmp_path, {"impl.py": """\
        import abc

        import requests


        class Store(abc.ABC):
            @abc.abstractmethod
            def get(self, key): ...

            def load(self, key, budget):
                return self.get(key)


        class HttpStore(Store):
            def get(self, key):
                return requests.get(f"http://store/{key}")


        def handler(key, budget):
            return HttpStore().load(key, budget)
        """})
    fixed = _fix(tmp_path, monkeypatch)
    assert "budget_s" not in fixed["impl.py"]  # the abstract member is decorated: the family stays
    _module("impl").handler("k", Budget(1.0))
    assert calls


@pytest.mark.parametrize("same_module", [False, True])
def test_a_protocol_implementation(tmp_path: Path, monkeypatch, calls, same_module: bool) -> None:
    protocol = """\
        from typing import Protocol


        class Getter(Protocol):
            def get(self, key): ...
        """
    implementation = """\
        import requests


        class HttpGetter:
            def get(self, key):
                return requests.get(f"http://store/{key}")


        def use(getter: "Getter", budget):
            return getter.get("k")


        def handler(budget):
            return use(HttpGetter(), budget)
        """
    if same_module:
        files = {"impl.py": textwrap.dedent(protocol) + "\n\n" + textwrap.dedent(implementation)}
    else:
        files = {"proto.py": protocol, "impl.py": "from proto import Getter\n" + textwrap.dedent(implementation)}
    _project(tmp_path, files)
    fixed = _fix(tmp_path, monkeypatch)
    assert "def get(self, key):" in fixed["impl.py"]  # `getter.get` may run any implementation
    _module("impl").handler(Budget(1.0))
    assert calls


def test_the_whole_family_in_one_module_is_threaded_and_runs(tmp_path: Path, monkeypatch, calls) -> None:
    """With every override in the module and the name nowhere else, the family is threaded
    together, and both classes run with the budget their caller passes."""
    _project(tmp_path, {"chain.py": CHAIN.replace("def get", "def fetch").replace("self.get", "self.fetch") + """

class CachedRepo(Repo):
    def fetch(self, key):
        return {"cached": key}


def cached_handler(key, budget):
    return CachedRepo().load(key, budget)
"""})
    fixed = _fix(tmp_path, monkeypatch)
    assert fixed["chain.py"].count("def fetch(self, key, *, budget_s: float):") == 2
    assert "return self.fetch(key, budget_s=budget.timeout())" in fixed["chain.py"]
    chain = _module("chain")
    assert chain.cached_handler("k", Budget(1.0)) == {"cached": "k"}
    chain.handler("k", Budget(1.0))
    assert calls[0]["timeout"] == pytest.approx(max(0.001, 0.95 - 0.05))
