import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Dict, List

# The fixture helpers live beside the tests; make them importable without packaging tests.
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest

# Every rule registers itself when its family is imported; tests build checkers directly.
from deadline_lint.families import registry  # noqa: E402,F401


def pytest_configure(config):
    """The processes tests start (the command line, pre-commit's hook, worker pools, xdist's
    workers) compile the package once between them: under PYTHONDONTWRITEBYTECODE each would
    compile every module it imports again. They write bytecode beside the sources, as Python
    does by default (`__pycache__/` is git-ignored), where pip already wrote the installed
    packages' when it installed them: a PYTHONPYCACHEPREFIX folder would hide those, and every
    xdist worker of a fresh clone would compile LibCST, pylint, Hypothesis and the others again."""
    import os

    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


@pytest.fixture(autouse=True)
def _own_results_cache(tmp_path_factory, monkeypatch):
    """Each test's command-line checks (and the processes it starts) get a results cache of
    their own, outside the checkout: no test reads what another test checked, so each passes
    alone and in any order. tests/test_cache.py shows what the cache itself does."""
    from deadline_lint.cache.results import CACHE_DIR_ENV

    folder = tmp_path_factory.mktemp("results-cache")
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    return folder


@pytest.fixture
def calls(monkeypatch) -> List[Dict[str, object]]:
    """A `requests` that records each call (its URL and keywords) instead of sending it: the
    fixed code of a threading test runs against it (tests/test_thread_*.py)."""
    recorded: List[Dict[str, object]] = []
    fake = ModuleType("requests")

    def get(url, **kwargs):
        recorded.append({"url": url, **kwargs})
        return SimpleNamespace(url=url)

    fake.get = get  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "requests", fake)
    return recorded
