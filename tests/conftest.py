import sys
from pathlib import Path

# The fixture helpers live beside the tests; make them importable without packaging tests.
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest

# Every rule registers itself when its family is imported; tests build checkers directly.
from deadline_lint.families import registry  # noqa: E402,F401


def pytest_configure(config):
    """The processes tests start (the command line, pre-commit's hook, worker pools, xdist's
    workers) compile the package once between them: under PYTHONDONTWRITEBYTECODE each would
    compile every module it imports again, about 0.3 s a process. They write bytecode beside
    the sources, as Python does by default (`__pycache__/` is git-ignored), where pip already
    wrote the installed packages' when it installed them: a PYTHONPYCACHEPREFIX folder would
    hide those, and every xdist worker of a fresh clone would compile LibCST, pylint,
    Hypothesis and the others again (about 6 CPU seconds each)."""
    import os

    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


@pytest.fixture(autouse=True, scope="session")
def _one_results_cache_for_the_session(tmp_path_factory):
    """Every command-line check in a test process goes through one results cache (one per
    pytest-xdist worker), so a later test that checks what an earlier one checked is answered
    from it: the suite then also shows that the cache never changes a result. It lives outside
    the checkout."""
    import os

    folder = str(tmp_path_factory.mktemp("results-cache"))
    previous = os.environ.get("DEADLINE_LINT_CACHE_DIR")
    os.environ["DEADLINE_LINT_CACHE_DIR"] = folder
    yield folder
    if previous is None:
        os.environ.pop("DEADLINE_LINT_CACHE_DIR", None)
    else:
        os.environ["DEADLINE_LINT_CACHE_DIR"] = previous


# The modules that take longest (their tests' wall time summed by module, measured under
# xdist with other work on the machine: sleeps and waits count too), slowest first. Under
# pytest-xdist (`--dist loadscope`, see pyproject.toml) each module runs on one worker in this
# order, so no long module is left to run alone at the end; the others follow in file order.
SLOWEST_MODULES = ("test_parity.py", "test_fixes.py", "test_codemod.py", "test_projects.py", "test_precommit.py",
                   "test_simulate.py", "test_cache.py", "test_hostile_input.py", "test_fuzz.py", "test_server.py",
                   "test_monorepo.py", "test_fixtures.py", "test_import_block.py", "test_cli.py", "test_config.py",
                   "test_workers.py", "test_profile_limits.py", "test_fix_permissions.py", "test_architecture.py")


def pytest_collection_modifyitems(items):
    rank = {name: place for place, name in enumerate(SLOWEST_MODULES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


# Modules that fix the same fixtures the same way run on one worker, one after the other, so
# the second reads the first's results from fixture_fixing's per-process memo instead of
# fixing all 97 fixtures again (test_codemod compares the codemod with `fix_case`, which
# test_fixes computed; about 2 CPU seconds). Each keeps its own tests and assertions.
SAME_WORKER_AS = {"tests/test_codemod.py": "tests/test_fixes.py"}


def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") != "loadscope":
        return None  # xdist's own scheduler for the other modes
    from xdist.scheduler import LoadScopeScheduling

    class SharedScopes(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SAME_WORKER_AS.get(scope, scope)

    return SharedScopes(config, log)
