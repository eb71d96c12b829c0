"""Issue 34: `adopt` and `fix --thread-budget` (with and without unsafe fixes) never break a call
that dispatches. A method is threaded with every override and implementation the project holds,
or not at all, and a name a package exports keeps its signature. Each case writes a small
project, fixes it three ways, then imports and runs the fixed code (with a recording `requests`)
and checks what was written. tests/test_thread_dispatch.py holds the issue's own case."""
from __future__ import annotations

import ast
import importlib
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Dict, List, Tuple

import pytest

from deadline_lint.frontends.cli import main

MODES = {
    "adopt": ["adopt"],
    "thread": ["fix", "--thread-budget"],
    "unsafe": ["fix", "--thread-budget", "--unsafe-fixes"],
}

# The base class, with the entries every mode reaches: a `budget` object for `fix`, an AWS
# Lambda handler (an edge) for `adopt`.
CHAIN = """\
import requests


class Repo:
    def get(self, key):
        return requests.get(f"http://store/{key}")

    def load(self, key, budget):
        return self.get(key)

    def load_edge(self, key):
        return self.get(key)


REPO = Repo()


def handler(key, budget):
    return REPO.load(key, budget)


def lambda_handler(event, context):
    return REPO.load_edge(event["key"])
"""


class Budget:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def timeout(self) -> float:
        return self.seconds - 0.05


class Context:
    def get_remaining_time_in_millis(self) -> int:
        return 2000


def _fixed(
    root: Path, files: Dict[str, str], mode: str, monkeypatch, target: str = ".", profile: str = "",
) -> Dict[str, str]:
    """The project's files after the mode's command on `target`, run twice (the second changes
    nothing); the project is then importable, with nothing of an earlier case left in
    `sys.modules`."""
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n" + profile)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    monkeypatch.chdir(root)
    assert main([*MODES[mode], target]) in (0, 1)
    after = {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")}
    assert main([*MODES[mode], target]) in (0, 1)
    assert {str(p.relative_to(root)): p.read_text() for p in root.rglob("*.py")} == after
    for text in after.values():
        compile(text, "fixed", "exec")
        assert "budget_s: float =" not in text  # no default budget: nothing mints time below the edge
    tops = {part.removesuffix(".py") for name in files for part in Path(name).parts}
    monkeypatch.syspath_prepend(str(root))
    for name in list(sys.modules):
        if name.split(".")[0] in tops:
            monkeypatch.delitem(sys.modules, name)
    importlib.invalidate_caches()
    return after


def _signatures(text: str, name: str) -> List[str]:
    """Each def of `name` in the text, as `name(params)`."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            found.append(f"{name}({ast.unparse(node.args)})")
    return found


def _run(module: ModuleType, calls: List[Dict[str, object]], entry: str = "handler") -> None:
    """Both entries run, and every outbound call they make has a timeout."""
    getattr(module, entry)("k", Budget(1.0))
    module.lambda_handler({"key": "k"}, Context())
    assert calls and all(call.get("timeout") is not None for call in calls)


# -- an override the defining module cannot see ---------------------------------------------
OVERRIDES: Dict[str, Tuple[Dict[str, str], str]] = {
    "same package": ({
        "pkg/__init__.py": "",
        "pkg/chain.py": CHAIN,
        "pkg/sub.py": "from .chain import Repo\n\n\nclass CachedRepo(Repo):\n    def get(self, key):\n"
                      "        return {'cached': key}\n",
    }, "pkg.sub"),
    "sibling package": ({
        "repos/__init__.py": "", "repos/chain.py": CHAIN,
        "caches/__init__.py": "",
        "caches/sub.py": "from repos.chain import Repo\n\n\nclass CachedRepo(Repo):\n    def get(self, key):\n"
                         "        return {'cached': key}\n",
    }, "caches.sub"),
    "namespace package": ({
        "repos/chain.py": CHAIN,
        "caches/sub.py": "from repos.chain import Repo\n\n\nclass CachedRepo(Repo):\n    def get(self, key):\n"
                         "        return {'cached': key}\n",
    }, "caches.sub"),
    "alias import": ({
        "pkg/__init__.py": "",
        "pkg/chain.py": CHAIN,
        "pkg/sub.py": "from .chain import Repo as R\n\n\nclass CachedRepo(R):\n    def get(self, key):\n"
                      "        return {'cached': key}\n",
    }, "pkg.sub"),
    "module attribute base": ({
        "pkg/__init__.py": "",
        "pkg/chain.py": CHAIN,
        "pkg/sub.py": "from pkg import chain\n\n\nclass CachedRepo(chain.Repo):\n    def get(self, key):\n"
                      "        return {'cached': key}\n",
    }, "pkg.sub"),
    "super call elsewhere": ({
        "pkg/__init__.py": "",
        "pkg/chain.py": CHAIN,
        "pkg/sub.py": "from .chain import Repo\n\n\nclass CachedRepo(Repo):\n    def get(self, key):\n"
                      "        return super().get(key)\n",
    }, "pkg.sub"),
}


@pytest.mark.parametrize("whole", [True, False], ids=["project", "file"])
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("case", sorted(OVERRIDES))
def test_an_override_elsewhere_keeps_the_family_unthreaded(
    tmp_path: Path, monkeypatch, calls, case: str, mode: str, whole: bool,
) -> None:
    """The run holds the whole project, or only the base's file (the issue's command)."""
    files, sub = OVERRIDES[case]
    chain_path = next(name for name in files if name.endswith("chain.py"))
    fixed = _fixed(tmp_path, files, mode, monkeypatch, "." if whole else chain_path)
    sub_path = next(name for name in files if name.endswith("sub.py"))
    assert _signatures(fixed[chain_path], "get") == ["get(self, key)"]
    assert _signatures(fixed[sub_path], "get") == ["get(self, key)"]
    assert "timeout=" in fixed[chain_path]  # the hop is still bounded, by its own fix
    cached = importlib.import_module(sub).CachedRepo()
    cached.load("k", Budget(1.0))  # no TypeError: `self.get` dispatches to the override
    threaded = _signatures(fixed[chain_path], "load_edge") == ["load_edge(self, key, *, budget_s: float)"]
    cached.load_edge("k", **({"budget_s": 1.0} if threaded else {}))
    _run(importlib.import_module(chain_path.removesuffix(".py").replace("/", ".")), calls)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_with_no_override_the_method_is_threaded(tmp_path: Path, monkeypatch, calls, mode: str) -> None:
    """The control for the cases above: the same base alone in its package. Forwarding on
    `self` is an unsafe fix, so plain `fix --thread-budget` leaves it."""
    fixed = _fixed(tmp_path, {"pkg/__init__.py": "", "pkg/chain.py": CHAIN}, mode, monkeypatch)
    threaded = mode != "thread"
    expected = "get(self, key, *, budget_s: float)" if threaded else "get(self, key)"
    assert _signatures(fixed["pkg/chain.py"], "get") == [expected]
    _run(importlib.import_module("pkg.chain"), calls)


# -- abstract bases and protocols --------------------------------------------------------------
ABSTRACT_BASE = """\
import abc


class Store(abc.ABC):
    @abc.abstractmethod
    def get(self, key): ...

    def load(self, key, budget):
        return self.get(key)

    def load_edge(self, key):
        return self.get(key)
"""

ABSTRACT_IMPL = """\
import requests

from {base} import Store


class HttpStore(Store):
    def get(self, key):
        return requests.get(f"http://store/{{key}}")


def handler(key, budget):
    return HttpStore().load(key, budget)


def lambda_handler(event, context):
    return HttpStore().load_edge(event["key"])
"""


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("undecorated", [False, True])
def test_an_abstract_base_implemented_elsewhere(
    tmp_path: Path, monkeypatch, calls, mode: str, undecorated: bool,
) -> None:
    """`HttpStore.get` is what `Store.load`'s `self.get` runs: threading it alone would leave the
    call without the keyword, threading the base would break other implementations. An ABC's
    method with no decorator (a default body) is a base all the same."""
    base = ABSTRACT_BASE.replace("    @abc.abstractmethod\n", "") if undecorated else ABSTRACT_BASE
    fixed = _fixed(tmp_path, {"base.py": base, "impl.py": ABSTRACT_IMPL.format(base="base")}, mode, monkeypatch)
    assert _signatures(fixed["base.py"], "get") == ["get(self, key)"]
    assert _signatures(fixed["impl.py"], "get") == ["get(self, key)"]
    assert "timeout=" in fixed["impl.py"]
    _run(importlib.import_module("impl"), calls)


PROTOCOL = """\
from typing import Protocol


class Getter(Protocol):
    def get(self, key): ...
"""

PROTOCOL_USER = """\
import requests

from {proto} import Getter


class HttpGetter:
    def get(self, key):
        return requests.get(f"http://store/{{key}}")


def use(getter: Getter, key):
    return getter.get(key)


def handler(key, budget):
    return use(HttpGetter(), key)


def lambda_handler(event, context):
    return use(HttpGetter(), event["key"])
"""


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_protocol_implemented_in_another_package(tmp_path: Path, monkeypatch, calls, mode: str) -> None:
    fixed = _fixed(tmp_path, {
        "api/__init__.py": "", "api/proto.py": PROTOCOL,
        "impl/__init__.py": "", "impl/http.py": PROTOCOL_USER.format(proto="api.proto"),
    }, mode, monkeypatch)
    assert _signatures(fixed["api/proto.py"], "get") == ["get(self, key)"]
    assert _signatures(fixed["impl/http.py"], "get") == ["get(self, key)"]
    assert "timeout=" in fixed["impl/http.py"]
    _run(importlib.import_module("impl.http"), calls)


# -- what the rule still threads ---------------------------------------------------------------
SUPER_IN_MODULE = CHAIN + """

class LoggingRepo(Repo):
    def get(self, key):
        return super().get(key)


def logged_handler(key, budget):
    return LoggingRepo().load(key, budget)
"""


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_super_call_in_the_module(tmp_path: Path, monkeypatch, calls, mode: str) -> None:
    """The override calls the base through `super()`: either both take the parameter and the
    super call forwards it, or neither does."""
    fixed = _fixed(tmp_path, {"chain.py": SUPER_IN_MODULE}, mode, monkeypatch)
    signatures = set(_signatures(fixed["chain.py"], "get"))
    assert len(signatures) == 1
    chain = importlib.import_module("chain")
    _run(chain, calls, entry="logged_handler")
    _run(chain, calls)
    if signatures == {"get(self, key, *, budget_s: float)"}:
        assert "super().get(key, budget_s=budget_s)" in fixed["chain.py"]


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_family_in_one_module_is_threaded_whole(tmp_path: Path, monkeypatch, calls, mode: str) -> None:
    """The control: the name nowhere else, every override in the module. Forwarding on `self`
    is an unsafe fix, so plain `fix --thread-budget` leaves the family alone."""
    text = CHAIN.replace("def get(", "def fetch(").replace("self.get(", "self.fetch(") + """

class CachedRepo(Repo):
    def fetch(self, key):
        return {"cached": key}
"""
    fixed = _fixed(tmp_path, {"chain.py": text}, mode, monkeypatch)
    threaded = "fetch(self, key, *, budget_s: float)"
    expected = ["fetch(self, key)"] * 2 if mode == "thread" else [threaded] * 2
    assert _signatures(fixed["chain.py"], "fetch") == expected
    chain = importlib.import_module("chain")
    _run(chain, calls)
    assert chain.CachedRepo().load("k", Budget(1.0)) == {"cached": "k"}


# -- public API ---------------------------------------------------------------------------------
API = """\
import requests


def fetch_items(key):
    return requests.get(f"http://items/{key}")


class Client:
    def fetch(self, key):
        return requests.get(f"http://client/{key}")
"""

SERVICE = """\
from .api import Client, fetch_items


def handler(key, budget):
    fetch_items(key)
    return Client().fetch(key)


def lambda_handler(event, context):
    fetch_items(event["key"])
    return Client().fetch(event["key"])
"""


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("export", ["import", "__all__"])
def test_a_name_a_package_exports_keeps_its_signature(
    tmp_path: Path, monkeypatch, calls, mode: str, export: str,
) -> None:
    init = "from .api import Client, fetch_items\n"
    if export == "__all__":
        init = (
            "from . import api\n\n__all__ = ['fetch_items', 'Client']\n"
            "fetch_items = api.fetch_items\nClient = api.Client\n"
        )
    fixed = _fixed(tmp_path, {"pkg/__init__.py": init, "pkg/api.py": API, "pkg/service.py": SERVICE}, mode, monkeypatch)
    assert _signatures(fixed["pkg/api.py"], "fetch_items") == ["fetch_items(key)"]
    assert _signatures(fixed["pkg/api.py"], "fetch") == ["fetch(self, key)"]
    assert "timeout=" in fixed["pkg/api.py"]
    pkg = importlib.import_module("pkg")
    pkg.fetch_items("k")  # a user of the package calls it as documented
    pkg.Client().fetch("k")
    _run(importlib.import_module("pkg.service"), calls)


@pytest.mark.parametrize("mode", ["adopt", "unsafe"])
def test_the_same_names_unexported_are_threaded(tmp_path: Path, monkeypatch, calls, mode: str) -> None:
    """The control for the test above: with an empty `__init__` the function takes the budget."""
    fixed = _fixed(tmp_path, {"pkg/__init__.py": "", "pkg/api.py": API, "pkg/service.py": SERVICE}, mode, monkeypatch)
    assert _signatures(fixed["pkg/api.py"], "fetch_items") == ["fetch_items(key, *, budget_s: float)"]
    _run(importlib.import_module("pkg.service"), calls)


CLIENT_API = """\
import requests


class Client:
    def fetch(self, key):
        return requests.get(f"http://client/{key}")


CLIENT = Client()


def handler(key, budget):
    return CLIENT.fetch(key)


def lambda_handler(event, context):
    return CLIENT.fetch(event["key"])
"""


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("exported", [True, False])
def test_a_method_of_an_exported_class_keeps_its_signature(
    tmp_path: Path, monkeypatch, calls, mode: str, exported: bool,
) -> None:
    """Users of the package call and subclass `pkg.Client`: its methods are its API. Unexported,
    the method is threaded (the control)."""
    init = "from .api import Client\n" if exported else ""
    fixed = _fixed(tmp_path, {"pkg/__init__.py": init, "pkg/api.py": CLIENT_API}, mode, monkeypatch)
    signatures = _signatures(fixed["pkg/api.py"], "fetch")
    assert signatures == (["fetch(self, key)"] if exported else ["fetch(self, key, *, budget_s: float)"])
    if exported:
        importlib.import_module("pkg").Client().fetch("k")
    _run(importlib.import_module("pkg.api"), calls)


# -- interfaces in one module ------------------------------------------------------------------
INTERFACE_IN_MODULE = """\
import abc
import typing

import requests


class Store({base}):
    def get(self, key):
        return requests.get(f"http://default/{{key}}")

    def load(self, key, budget):
        return self.get(key)

    def load_edge(self, key):
        return self.get(key)


class HttpStore(Store):
    def get(self, key):
        return requests.get(f"http://store/{{key}}")


STORE = HttpStore()


def handler(key, budget):
    return STORE.load(key, budget)


def lambda_handler(event, context):
    return STORE.load_edge(event["key"])
"""


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("base", ["abc.ABC", "typing.Protocol", "metaclass=abc.ABCMeta", "object"])
def test_an_interface_in_the_module_is_not_threaded(tmp_path: Path, monkeypatch, calls, mode: str, base: str) -> None:
    """Every implementation the module holds could take the parameter, but an abstract base or
    a protocol is there to be implemented elsewhere too: its methods keep their signature.
    A plain base (`object`) is the control: with unsafe fixes its family is threaded."""
    fixed = _fixed(tmp_path, {"store.py": INTERFACE_IN_MODULE.format(base=base)}, mode, monkeypatch)
    threaded = base == "object" and mode != "thread"
    expected = "get(self, key, *, budget_s: float)" if threaded else "get(self, key)"
    assert _signatures(fixed["store.py"], "get") == [expected] * 2
    store = importlib.import_module("store")
    _run(store, calls)
    if not threaded:
        assert store.Store.get.__code__.co_kwonlyargcount == 0


# -- a project inside a repository of several ---------------------------------------------------
@pytest.mark.parametrize("mode", sorted(MODES))
def test_an_override_in_another_project_of_the_repository(tmp_path: Path, monkeypatch, calls, mode: str) -> None:
    """Two distributions in one repository, each with its own `pyproject.toml`: the subclass in
    the other one is looked for all the same (the word test reads the whole repository)."""
    (tmp_path / ".git").mkdir()
    files = {
        "libs/repos/pyproject.toml": "[project]\nname = 'repos'\n",
        "libs/repos/repos/__init__.py": "", "libs/repos/repos/chain.py": CHAIN,
        "services/caches/pyproject.toml": "[project]\nname = 'caches'\n",
        "services/caches/caches/__init__.py": "",
        "services/caches/caches/sub.py": OVERRIDES["sibling package"][0]["caches/sub.py"],
    }
    fixed = _fixed(tmp_path, files, mode, monkeypatch)
    assert _signatures(fixed["libs/repos/repos/chain.py"], "get") == ["get(self, key)"]
    monkeypatch.syspath_prepend(str(tmp_path / "libs" / "repos"))
    monkeypatch.syspath_prepend(str(tmp_path / "services" / "caches"))
    importlib.import_module("caches.sub").CachedRepo().load("k", Budget(1.0))
    _run(importlib.import_module("repos.chain"), calls)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_an_exported_name_reads_the_ambient_budget(tmp_path: Path, monkeypatch, calls, mode: str) -> None:
    """The issue's words: public API keeps its signature and gets the ambient budget instead,
    where the profile names an accessor."""
    accessor = "appdeadlines.remaining_seconds"
    fake = ModuleType("appdeadlines")
    fake.remaining_seconds = lambda: 0.5  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "appdeadlines", fake)
    files = {"pkg/__init__.py": "from .api import fetch_items\n", "pkg/api.py": API, "pkg/service.py": SERVICE}
    profile = (
        f"\n[tool.deadline-lint.fix]\ncontext_accessor = '{accessor}'\n"
        f"\n[tool.deadline-lint.budget]\naccessors = ['{accessor}']\n"
    )
    fixed = _fixed(tmp_path, files, mode, monkeypatch, profile=profile)
    assert _signatures(fixed["pkg/api.py"], "fetch_items") == ["fetch_items(key)"]
    assert f"timeout=max(0.001, {accessor}() - 0.05)" in fixed["pkg/api.py"]
    importlib.import_module("pkg").fetch_items("k")
    assert calls[-1]["timeout"] == pytest.approx(0.45)
