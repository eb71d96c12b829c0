"""The project index: where a project starts, how its modules are named, that they are read
and never imported, and that the prefilter lets through files that reach a client only
through the project."""
from __future__ import annotations

import textwrap
from pathlib import Path

from deadline_lint.analysis.project import index_for, place_of
from deadline_lint.catalog import load_catalog
from deadline_lint.engine import Checker
from deadline_lint.profile import build_profile


# The index is opt-in (profile `project_index`); these tests are about what it sees.
INDEXED = build_profile({"project_index": True}, "test")

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
    index, name, is_package = index_for(str(tmp_path / "pkg/sub/mod.py"), load_catalog())
    holder = index.holder(name, is_package)
    assert index.absolute(holder, "..http.client") == "pkg.http.client"
    assert index.absolute(holder, ".mod") == "pkg.sub.mod"
    assert index.external_name(holder, "..http.client") == "requests"


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
    found = Checker(INDEXED, select=["DL101"]).check_path(str(tmp_path / "pkg/use.py"))
    assert [(d.line, d.code) for d in found] == [(3, "DL101")]
    assert not marker.exists()


def test_a_module_that_cannot_be_parsed_resolves_nothing(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/broken.py": "def get(url, timeout=None:\n",
        "pkg/use.py": "import requests\nfrom pkg.broken import get\n\nget('http://x')\n",
    })
    assert Checker(INDEXED, select=["DL101"]).check_path(str(tmp_path / "pkg/use.py")) == []


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
    checker = Checker(INDEXED, select=["DL101"])
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
    checker = Checker(INDEXED, select=["DL101", "DL103"])
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
    index, _, _ = index_for(str(tmp_path / "pkg/aio.py"), load_catalog())
    assert not index.name_leads("pkg.aio.nap")  # asyncio.sleep reaches no client
    assert index.name_leads("pkg.aio.bounded")
    assert index.name_leads("pkg.aio.fetch")  # `import urllib.request` binds `urllib`


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
    }
    names = ["pkg.a.run", "pkg.b.helper", "pkg.a.loop", "pkg.c.get", "pkg.b.loop", "pkg.b.other", "pkg.a"]
    answers = []
    for order in (names, names[::-1], names[1:] + names[:1]):
        root = tmp_path / f"p{len(answers)}"
        _write(root, files)
        index, _, _ = index_for(str(root / "pkg/a.py"), load_catalog())
        answers.append({name: index.name_leads(name) for name in order})
        assert {name: index.name_leads(name) for name in names} == answers[-1]  # memoised as computed
    assert answers[0] == answers[1] == answers[2]
    assert [name for name in names if answers[0][name]] == ["pkg.c.get"]


def test_dropping_parsed_project_modules_between_files_changes_no_answer(tmp_path: Path) -> None:
    from deadline_lint.analysis.project import release_parsed_modules

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
    checker = Checker(INDEXED, select=["DL101", "DL103"])
    first = checker.check_path(str(tmp_path / "pkg/use.py"))
    release_parsed_modules(0)
    again = checker.check_path(str(tmp_path / "pkg/use.py"))
    assert [(d.line, d.code) for d in first] == [(3, "DL101"), (4, "DL103")]
    assert again == first
