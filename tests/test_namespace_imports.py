"""Imports of project modules whose folders have no `__init__.py` (PEP 420 namespace
packages, common in services run from a folder of the repository: `from utils.retry import
retry`), issue 32: the module answers when exactly one folder Python may have on its path
holds it, never for a standard library name, and the results cache follows the same answer."""
from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Dict, List, Tuple

from deadline_lint.cache.dependencies import project_reach
from deadline_lint.catalog import load_catalog
from deadline_lint.engine.checker import Checker
from deadline_lint.run.api import Options, lint_paths
from deadline_lint.semantics.modules import forget_projects, project_of
from deadline_lint.settings.profile import build_profile

DEFAULT = build_profile({}, "test")

RETRY_HELPER = """
    from tenacity import retry, retry_if_exception_type, stop_after_attempt


    def retry_builder(tries=3, exceptions=(Exception,)):
        def decorate(func):
            return retry(retry=retry_if_exception_type(exceptions), stop=stop_after_attempt(tries))(func)

        return decorate
    """

RETRY_USE = """
    import requests

    from {module} import retry_builder


    @retry_builder(tries=3)
    def search(query):
        return requests.get("http://search", params={{"q": query}}, timeout=5)
    """

WRAPPER = """
    import requests


    def fetch(url, timeout=None):
        return requests.get(url, timeout=timeout)
    """

FACTORY = """
    import requests


    def make_session():
        return requests.Session()
    """


def _write(root: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    forget_projects()
    return root


def _found(path: Path, *codes: str) -> List[Tuple[int, str]]:
    return [(d.line, d.code) for d in Checker(DEFAULT, select=list(codes)).check_path(str(path))]


def test_a_retry_helper_in_a_namespace_folder_above_the_file_lends_its_default_filter(tmp_path: Path) -> None:
    """rocketwatch: `rocketwatch/plugins/forum/forum.py` imports `utils.retry`, which is
    `rocketwatch/utils/retry.py`; no folder has an `__init__.py`."""
    root = _write(tmp_path, {
        "pyproject.toml": "",
        "bot/main.py": "",
        "bot/utils/retry.py": RETRY_HELPER,
        "bot/plugins/forum/forum.py": RETRY_USE.format(module="utils.retry"),
    })
    assert _found(root / "bot/plugins/forum/forum.py", "DL302") == [(7, "DL302")]


def test_the_folder_holding_the_files_own_top_name_is_searched(tmp_path: Path) -> None:
    """onyx: `backend/onyx/setup.py` makes `backend/onyx/` the root, and a file in
    `backend/onyx/tools/web/` (no `__init__.py` there) imports `onyx.utils.retry_wrapper`,
    which Python finds from `backend/`."""
    root = _write(tmp_path, {
        "backend/onyx/setup.py": "",
        "backend/onyx/__init__.py": "",
        "backend/onyx/utils/__init__.py": "",
        "backend/onyx/utils/retry_wrapper.py": RETRY_HELPER,
        "backend/onyx/tools/web/client.py": RETRY_USE.format(module="onyx.utils.retry_wrapper"),
    })
    assert _found(root / "backend/onyx/tools/web/client.py", "DL302") == [(7, "DL302")]


def test_a_wrapper_and_a_client_factory_in_namespace_folders_are_followed(tmp_path: Path) -> None:
    root = _write(tmp_path, {
        "pyproject.toml": "",
        "svc/utils/http.py": WRAPPER,
        "svc/utils/clients.py": FACTORY,
        "svc/handlers/search.py": """
            from utils.clients import make_session
            from utils.http import fetch


            def handle(url):
                fetch(url)
                return make_session().get(url)
            """,
    })
    assert _found(root / "svc/handlers/search.py", "DL101") == [(7, "DL101"), (8, "DL101")]


def test_two_folders_answering_the_name_leave_it_unresolved(tmp_path: Path) -> None:
    """Both `utils/retry.py` at the root's child and at the service's folder could be the one
    Python imports: which depends on how the service is started, so no finding."""
    root = _write(tmp_path, {
        "pyproject.toml": "",
        "repo/utils/retry.py": RETRY_HELPER,
        "repo/svc/utils/retry.py": RETRY_HELPER,
        "repo/svc/plugins/forum.py": RETRY_USE.format(module="utils.retry"),
    })
    assert _found(root / "repo/svc/plugins/forum.py", "DL302") == []
    modules, _, _ = project_of(str(root / "repo/svc/plugins/forum.py"))
    assert modules.module("utils.retry") is None


def test_a_standard_library_name_is_not_taken_by_a_project_folder(tmp_path: Path) -> None:
    """Python finds the standard library's regular package `email` before any namespace
    folder of that name."""
    root = _write(tmp_path, {
        "pyproject.toml": "",
        "svc/email/utils.py": WRAPPER,
        "svc/handlers/mail.py": "from email.utils import fetch\n\n\ndef handle(url):\n    return fetch(url)\n",
    })
    assert _found(root / "svc/handlers/mail.py", "DL101") == []
    modules, _, _ = project_of(str(root / "svc/handlers/mail.py"))
    assert modules.module("email.utils") is None and not modules.is_project_name("email.utils.fetch")


def test_a_regular_module_of_the_top_name_is_found_first(tmp_path: Path) -> None:
    """`utils.py` beside the file is what `utils` is: a `utils/` folder above it is not
    consulted for `utils.retry`."""
    root = _write(tmp_path, {
        "pyproject.toml": "",
        "svc/utils/retry.py": RETRY_HELPER,
        "svc/plugins/utils.py": "",
        "svc/plugins/forum.py": RETRY_USE.format(module="utils.retry"),
    })
    assert _found(root / "svc/plugins/forum.py", "DL302") == []


def _aged(tree: Path, when: int) -> None:
    """Every file and folder under `tree` last changed at `when` (seconds): the cache trusts
    no stat taken within seconds of a change, so a fresh tree would be re-read every run."""
    for folder, _, files in os.walk(tree):
        for name in files:
            os.utime(os.path.join(folder, name), ns=(when * 10**9, when * 10**9))
    for folder, _, _ in sorted(os.walk(tree), reverse=True):
        os.utime(folder, ns=(when * 10**9, when * 10**9))


def test_the_cache_follows_a_namespace_module_to_its_importers(tmp_path: Path, monkeypatch) -> None:
    """The importer's entry holds while the namespace module and the folders that could
    answer its name are unchanged; an edit there, or a second folder answering, re-checks it."""
    from deadline_lint.run import api

    checked = []
    original = api.recorded

    def counted(checker, path, read, *rest):  # type: ignore[no-untyped-def]
        checked.append(path)
        return original(checker, path, read, *rest)

    monkeypatch.setattr(api, "recorded", counted)
    project = _write(tmp_path / "project", {
        "pyproject.toml": "",
        "svc/utils/retry.py": RETRY_HELPER,
        "svc/plugins/utils/cfg.py": "",
        "svc/plugins/forum/forum.py": RETRY_USE.format(module="utils.retry"),
    })
    user = project / "svc/plugins/forum/forum.py"
    options = Options(select=("DL302",), cache_dir=str(tmp_path / "cache"))

    def run(when: int) -> List[Tuple[int, str]]:
        _aged(project, when)
        forget_projects()
        checked.clear()
        return [(d.line, d.code) for r in lint_paths([str(user)], options) for d in r.diagnostics]

    assert run(1_700_000_000) == [(7, "DL302")] and checked
    assert run(1_700_000_000) == [(7, "DL302")] and not checked  # nothing changed: a hit
    helper = project / "svc/utils/retry.py"
    helper.write_text(textwrap.dedent(RETRY_HELPER).replace("(Exception,)", "(ConnectionError,)"), encoding="utf-8")
    assert run(1_700_000_100) == [] and checked
    helper.write_text(textwrap.dedent(RETRY_HELPER), encoding="utf-8")
    assert run(1_700_000_200) == [(7, "DL302")] and checked
    assert run(1_700_000_200) == [(7, "DL302")] and not checked
    # A second folder answering `utils.retry` (only `svc/plugins/utils/`'s listing changes):
    # the name is no longer known.
    _write(project, {"svc/plugins/utils/retry.py": RETRY_HELPER})
    assert run(1_700_000_300) == [] and checked


def test_the_reach_names_every_folder_that_could_answer_a_namespace_name(tmp_path: Path) -> None:
    """Recorded by the file's own reach, not only by a project-wide listing: a module
    appearing in `svc/plugins/utils/` (which exists) changes only that folder's listing."""
    project = _write(tmp_path, {
        "pyproject.toml": "",
        "svc/utils/retry.py": RETRY_HELPER,
        "svc/plugins/utils/cfg.py": "",
        "svc/plugins/forum/forum.py": RETRY_USE.format(module="utils.retry"),
    })
    user = project / "svc/plugins/forum/forum.py"
    reach = project_reach(str(user), user.read_text(encoding="utf-8"), load_catalog())
    assert reach is not None
    assert reach.own.follow == (str(project / "svc/utils/retry.py"),)
    assert str(project / "svc/plugins/utils") in reach.own.folders
