import sys
from pathlib import Path

# The fixture helpers live beside the tests; make them importable without packaging tests.
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest


@pytest.fixture(autouse=True, scope="session")
def _one_results_cache_for_the_session(tmp_path_factory):
    """Every command-line check in the suite goes through one results cache, so a later test
    that checks what an earlier one checked is answered from it: the whole suite then also
    shows that the cache never changes a result. It lives outside the checkout."""
    import os

    folder = str(tmp_path_factory.mktemp("results-cache"))
    previous = os.environ.get("DEADLINE_LINT_CACHE_DIR")
    os.environ["DEADLINE_LINT_CACHE_DIR"] = folder
    yield folder
    if previous is None:
        os.environ.pop("DEADLINE_LINT_CACHE_DIR", None)
    else:
        os.environ["DEADLINE_LINT_CACHE_DIR"] = previous
