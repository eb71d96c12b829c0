"""The outbound family's view of the project (on by default): where a project starts, how its
modules are named, that they are read and never imported, what its facts say (clients and
wrappers in other modules), and that the prefilter lets through files that reach a client only
through the project."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from deadline_lint.catalog import load_catalog
from deadline_lint.engine.checker import Checker
from deadline_lint.families.outbound.analysis.outbound_facts import facts_for
from deadline_lint.families.outbound.analysis.project_prefilter import leads_to_a_client
from deadline_lint.semantics.facts import forget_facts, locals_of
from deadline_lint.semantics.modules import absolute_name, place_of, project_of
from deadline_lint.semantics.summary import Names
from deadline_lint.settings.profile import build_profile

DEFAULT = build_profile({}, "test")


def _write(root: Path, files: dict) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def test_the_root_is_the_nearest_marker_and_src_layouts_are_searched(tmp_path: Path) -> None:
    _write(tmp_path, {
        "svc/pyproject.toml": "",
        "svc/src/app/__init__.py": "",
        "svc/src/app/views.py": "",
        "svc/tools/run.py": "",
    })
    name, root, paths = place_of(str(tmp_path / "svc/src/app/views.py"))
    assert (name, root) == ("app.views", str(tmp_path / "svc"))
    assert str(tmp_path / "svc/src") in paths
    name, root, _ = place_of(str(tmp_path / "svc/tools/run.py"))
    assert (name, root) == ("run", str(tmp_path / "svc"))
    assert place_of("-") is None and place_of("notes.txt") is None


def test_relative_imports_resolve_from_the_importing_module(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/sub/__init__.py": "",
        "pkg/sub/mod.py": "",
        "pkg/http.py": "import requests as client\n",
    })
    modules, name, is_package = project_of(str(tmp_path / "pkg/sub/mod.py"))
    assert absolute_name(name, is_package, "..http.client") == "pkg.http.client"
    assert absolute_name(name, is_package, ".mod") == "pkg.sub.mod"
    own = modules.module(name)
    assert Names(modules, own).reexport("pkg.http.client").qualname == "requests"


def test_modules_are_read_never_imported(tmp_path: Path) -> None:
    marker = tmp_path / "imported"
    _write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/side.py": f"""
            import pathlib
            import requests
            pathlib.Path({str(marker)!r}).write_text("ran")

            def get(url, timeout=None):
                return requests.get(url, timeout=timeout)
            """,
        "pkg/use.py": "from pkg.side import get\n\nget('http://x')  # no client import here\n",
    })
    found = Checker(DEFAULT, select=["DL101"]).check_path(str(tmp_path / "pkg/use.py"))
    assert [(d.line, d.code) for d in found] == [(3, "DL101")]
    assert not marker.exists()


def test_a_module_that_cannot_be_parsed_resolves_nothing(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/broken.py": "def get(url, timeout=None:\n",
        "pkg/use.py": "import requests\nfrom pkg.broken import get\n\nget('http://x')\n",
    })
    assert Checker(DEFAULT, select=["DL101"]).check_path(str(tmp_path / "pkg/use.py")) == []


def test_the_prefilter_skips_files_that_import_nothing_leading_to_a_client(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/util.py": "def slug(text):\n    return text.lower()\n",
        "pkg/http.py": (
            "import requests\n\ndef get(url, timeout=None):\n    return requests.get(url, timeout=timeout)\n"
        ),
        "pkg/a.py": "from pkg.util import slug\n",
        "pkg/b.py": "from pkg.http import get\n",
    })
    checker = Checker(DEFAULT, select=["DL101"])
    text_a = (tmp_path / "pkg/a.py").read_text()
    text_b = (tmp_path / "pkg/b.py").read_text()
    assert not checker.could_fire(text_a, str(tmp_path / "pkg/a.py"))
    assert checker.could_fire(text_b, str(tmp_path / "pkg/b.py"))


def test_a_wrapper_of_a_module_level_client_is_seen_from_a_file_that_imports_no_client(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/http.py": """
            import requests

            SESSION = requests.Session()


            def get(url, timeout=None):
                return SESSION.get(url, timeout=timeout)
            """,
        "pkg/use.py": "from pkg.http import get\n\nget('http://x')\nget('http://x', timeout=None)\n",
    })
    checker = Checker(DEFAULT, select=["DL101", "DL103"])
    found = checker.check_path(str(tmp_path / "pkg/use.py"))
    assert [(d.line, d.code) for d in found] == [(3, "DL101"), (4, "DL103")]


def test_a_definition_leads_out_only_through_a_listed_attribute_chain(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/aio.py": """
            import asyncio
            import urllib.request

            async def nap(delay):
                await asyncio.sleep(delay)

            async def bounded(aw, timeout=None):
                return await asyncio.wait_for(aw, timeout=timeout)

            def fetch(url, timeout=None):
                return urllib.request.urlopen(url, timeout=timeout)
            """,
    })
    modules, _, _ = project_of(str(tmp_path / "pkg/aio.py"))
    _, forwards = facts_for(load_catalog())
    wrappers = locals_of(forwards, modules.module("pkg.aio"))
    assert sorted(wrappers) == ["bounded", "fetch"]  # asyncio.sleep reaches no client
    assert wrappers["fetch"].payload[7] == "urllib.request.urlopen"  # `import urllib.request` binds `urllib`


def test_answers_under_an_import_cycle_do_not_depend_on_which_name_is_asked_first(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg.b import helper, loop\n\ndef run():\n    return helper()\n",
        "pkg/b.py": "from pkg.a import run, loop\n\ndef helper():\n    return run()\n\ndef other():\n    return 1\n",
        "pkg/c.py": (
            "from pkg.a import run\nimport requests\n\n"
            "def get(url, timeout=None):\n    return requests.get(url, timeout=timeout)\n"
        ),
        "pkg/d.py": "from pkg.a import run\nfrom pkg.c import get\n",
    }
    paths = ["pkg/a.py", "pkg/b.py", "pkg/c.py", "pkg/d.py"]
    answers = []
    for order in (paths, paths[::-1], paths[1:] + paths[:1]):
        root = tmp_path / f"p{len(answers)}"
        _write(root, files)
        catalog = load_catalog()
        found = {p: leads_to_a_client(str(root / p), (root / p).read_text(), catalog) for p in order}
        answers.append({p: found[p] for p in paths})
    assert answers[0] == answers[1] == answers[2]
    assert [p for p in paths if answers[0][p]] == ["pkg/d.py"]


def test_dropping_parsed_project_modules_between_files_changes_no_answer(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/http.py": """
            import requests

            def get_json(url, timeout=None):
                return requests.get(url, timeout=timeout).json()
            """,
        "pkg/use.py": "from pkg.http import get_json\n\nget_json('http://x')\nget_json('http://x', timeout=None)\n",
    })
    checker = Checker(DEFAULT, select=["DL101", "DL103"])
    first = checker.check_path(str(tmp_path / "pkg/use.py"))
    forget_facts()  # parsed again, the modules say the same
    again = checker.check_path(str(tmp_path / "pkg/use.py"))
    assert [(d.line, d.code) for d in first] == [(3, "DL101"), (4, "DL103")]
    assert again == first


def test_the_retired_project_index_key_is_accepted_without_a_warning() -> None:
    from deadline_lint.run.profile_checks import check_profile

    for value in (True, False):
        assert check_profile(build_profile({"project_index": value}, "p.yaml")).warnings == ()


def test_a_client_built_in_another_module_keeps_its_class_not_its_constructor(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "from .http import SESSION\n",
        "pkg/http.py": """
            import httpx
            import requests

            SESSION = requests.Session()
            UNBOUNDED = httpx.Client(timeout=None)  # judged here, where it is built
            """,
        "pkg/use.py": """
            from pkg import SESSION
            from pkg.http import UNBOUNDED

            SESSION.get("http://x")
            UNBOUNDED.get("http://x")
            """,
    })
    checker = Checker(DEFAULT, select=["DL101", "DL103"])
    assert [(d.line, d.code) for d in checker.check_path(str(tmp_path / "pkg/use.py"))] == [(5, "DL101")]
    assert [(d.line, d.code) for d in checker.check_path(str(tmp_path / "pkg/http.py"))] == [(6, "DL103")]


def test_facts_are_keyed_by_what_the_module_reexports(tmp_path: Path) -> None:
    """A wrapper through a re-export (`http.get`, `http` imported from compat) depends on
    compat's text as well as its own: a changed re-export is never answered from the memo."""
    files = {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/compat.py": "import requests as http\n",
        "pkg/wrappers.py": (
            "from pkg.compat import http\n\n\n"
            "def fetch(url, timeout=None):\n    return http.get(url, timeout=timeout)\n"
        ),
        "pkg/caller.py": "from pkg.wrappers import fetch\n\nfetch('http://x')\n",
    }
    _write(tmp_path, files)
    checker = Checker(DEFAULT, select=["DL101"])
    assert [d.line for d in checker.check_path(str(tmp_path / "pkg/caller.py"))] == [3]
    (tmp_path / "pkg/compat.py").write_text("import json as http\n")
    from deadline_lint.semantics.modules import forget_projects

    forget_projects()  # a new run (api.Session does this)
    assert Checker(DEFAULT, select=["DL101"]).check_path(str(tmp_path / "pkg/caller.py")) == []


@pytest.mark.parametrize("text, name, expected", [
    ("compat.http.get(url)\n", "compat", {"http"}),
    ("compat.http.get(url)\n", "http", {"get"}),
    # A search for `\bcompat\.(attr)` consumes `compat.compat`: the `.http` after it is not
    # an attribute of that `compat` (the one-scan table says what the search said).
    ("compat.compat.http\n", "compat", {"compat"}),
    ("compat.compat.compat.http\n", "compat", {"compat", "http"}),
    ("mycompat.http + compat2.x\n", "compat", set()),
    ("café.http\n", "café", {"http"}),
    ("compat . http\n", "compat", set()),
])
def test_attributes_spelled_are_what_a_search_per_name_finds(text, name, expected) -> None:
    import re

    from deadline_lint.families.outbound.analysis.project_prefilter import attributes_spelled

    assert attributes_spelled(text).get(name, set()) == expected
    # Looking only for some names (the ones bound to project modules) finds the same pairs.
    assert attributes_spelled(text, frozenset({name, "compat2", "comp", "mycompat"})).get(name, set()) == expected
    assert set(re.findall(rf"\b{re.escape(name)}\.([A-Za-z_]\w*)", text)) == expected
