"""`--thread-budget` through methods of this module's classes (thread_methods.py): a keyword is
added to `self.m(...)` or `INSTANCE.m(...)` only together with the parameter on every method
the call can run, and the fixed code is executed with the subclasses to show no override
breaks."""
from __future__ import annotations

import pytest

from deadline_lint.engine.checker import Checker
from deadline_lint.fixes.loop import FixMode, fix_text

UNSAFE = FixMode(unsafe=True, thread_budget=True)
SAFE = FixMode(thread_budget=True)

SELF_CALLS = '''\
import requests


class Base:
    def get(self, url):
        return requests.get(url)

    def run(self, url, budget):
        return self.get(url)


class Cached(Base):
    def get(self, url):
        return "cached"


class Deeper(Cached):
    def get(self, url):
        return "deeper"
'''


def fixed(text: str, mode: FixMode = UNSAFE) -> str:
    result = fix_text(Checker(), text, "m.py", mode)
    assert not result.gave_up
    again = fix_text(Checker(), result.text, "m.py", mode).text
    assert again == result.text  # fixing twice == once
    return result.text


def test_self_calls_are_threaded_through_every_override_in_the_module() -> None:
    text = fixed(SELF_CALLS)
    assert "        return self.get(url, budget_s=budget.timeout())\n" in text
    assert text.count("def get(self, url, *, budget_s: float):") == 3
    assert "requests.get(url, timeout=max(0.001, budget_s - 0.05))" in text
    namespace: dict = {}
    exec(compile(text, "m.py", "exec"), namespace)
    budget = type("B", (), {"timeout": lambda self: 1.0})()
    assert namespace["Cached"]().run("u", budget) == "cached"
    assert namespace["Deeper"]().run("u", budget) == "deeper"
    assert fix_text(Checker(), text, "m.py").remaining == ()  # and the re-check is clean


def test_self_calls_are_not_forwarded_by_safe_fixes() -> None:
    """An override in another module cannot be seen: forwarding on `self` is unsafe."""
    text = fixed(SELF_CALLS, SAFE)
    assert "return self.get(url)\n" in text


@pytest.mark.parametrize("override", [
    "    def get(self, url, **kwargs):\n        return 'kw'\n",  # cannot be threaded: left alone
    "    @functools.cache\n    def get(self, url):\n        return 'cached'\n",  # a decorator may read it
    "    get = staticmethod(lambda url: 'x')\n",  # not a def
    "    def get(self, url):  # noqa: DL503\n        return 'quiet'\n",  # suppressed
])
def test_a_family_with_a_member_that_cannot_take_the_parameter_is_not_forwarded(override: str) -> None:
    text = SELF_CALLS.split("class Deeper")[0] + "class Deeper(Cached):\n" + override
    text = "import functools\n" + text
    out = fixed(text)
    assert "return self.get(url)\n" in out
    namespace: dict = {}
    exec(compile(out, "m.py", "exec"), namespace)
    budget = type("B", (), {"timeout": lambda self: 1.0})()
    namespace["Deeper"]().run("u", budget)  # still runs: nothing was given a keyword it lacks


@pytest.mark.parametrize("twist", [
    "Alias = Base\n",  # a subclass elsewhere may name it differently
    "def patch(obj):\n    obj.get = None\n",  # an instance attribute may shadow the method
    "def patch(obj):\n    setattr(obj, 'get', None)\n",
])
def test_a_class_the_module_may_reshape_is_left_alone(twist: str) -> None:
    assert "return self.get(url)\n" in fixed(SELF_CALLS + "\n\n" + twist)


def test_a_module_level_instance_runs_exactly_its_class_method() -> None:
    text = '''\
import requests


class Repo:
    def load(self, key):
        return requests.get(key)


class Special(Repo):
    def load(self, key):
        return "special"


REPO = Repo()


def handler(key, budget):
    return REPO.load(key)
'''
    for mode in (SAFE, UNSAFE):  # the instance's class is known: no override can run
        out = fixed(text, mode)
        assert "    return REPO.load(key, budget_s=budget.timeout())\n" in out
        # every method of the name goes with it: an override takes the parameter too
        assert "class Special(Repo):\n    def load(self, key, *, budget_s: float):\n" in out
        namespace: dict = {}
        exec(compile(out, "m.py", "exec"), namespace)
        assert namespace["Special"]().load("k", budget_s=1.0) == "special"


def test_instances_not_built_here_or_rebound_are_left_alone() -> None:
    text = '''\
import requests


class Repo:
    def load(self, key):
        return requests.get(key)


REPO = Repo()
OTHER = make_repo()


def handler(key, budget, repo: Repo):
    global REPO
    repo.load(key)
    OTHER.load(key)
    return REPO.load(key)
'''
    out = fixed(text)
    assert "repo.load(key)\n" in out and "OTHER.load(key)\n" in out and "REPO.load(key)\n" in out


def test_callers_without_a_budget_are_threaded_through_methods_too() -> None:
    text = '''\
import requests


class Repo:
    def load(self, key):
        return requests.get(key)

    def load_all(self, keys):
        return [self.load(key) for key in keys]


REPO = Repo()


def handler(keys, budget):
    return REPO.load_all(keys)
'''
    out = fixed(text)
    assert "    def load_all(self, keys, *, budget_s: float):\n" in out
    assert "    return REPO.load_all(keys, budget_s=budget.timeout())\n" in out
    assert "self.load(key, budget_s=" in out
