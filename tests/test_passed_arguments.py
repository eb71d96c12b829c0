"""Values that cross a function through a parameter, across modules (issue 32): the call-site
index keeps what each call passes (`semantics/arguments`); DL201 reads the wall-clock instants
every caller passes, DL101 the clients every caller builds without a timeout. The markers of
`fixtures/projects/params` are held by test_projects through every front end; here, what the
index keeps, what the messages name, and that a cached answer follows a caller's edit."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from deadline_lint.semantics.call_sites import sites_of
from deadline_lint.semantics.modules import ModuleSource, project_of
from deadline_lint.semantics.session import Session
from tests.test_cache import aged, check

PARAMS = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "params"

CALLER = """\
import time
import requests
from requests import Session as S


def run(*args, **kw):
    pass


def job(args, kw):
    started = time.time() + 30
    run(started, int(time.time() * 1000), S(), requests.Session(timeout=kw), until=time.monotonic())
    run(*args)
    run(**kw)
    run(lambda: 1, "text", 2.5, True, args.x)
    run(retry_on=ERRORS)


ERRORS = (TimeoutError,)
"""


def _arguments(text: str) -> list:
    module = ModuleSource("caller", "", False, text)
    with Session().active():
        return [site.arguments for site in sites_of(module, "run")]


def test_the_index_keeps_what_each_call_passes() -> None:
    assert _arguments(CALLER) == [
        (
            "(time.time() + 30)", "int((time.time() * 1000))", "requests.Session()",
            "requests.Session(timeout=_)", "until=time.monotonic()",
        ),
        (),  # `*args`, `**kw` and values no call of the module built: nothing worth keeping
        (),
        (),
        ("retry_on=caller.ERRORS",),  # a module-level value, by its absolute name
    ]


def test_a_long_argument_is_unread() -> None:
    keywords = ", ".join(f"option_{n}={n}" for n in range(20))
    text = f"import requests, time\nrun(requests.Session({keywords}), time.time())\n"
    assert _arguments(text) == [("_", "time.time()")]


def _messages(*args: str) -> list:
    return sorted((Path(f["path"]).name, f["line"], f["code"], f["message"]) for f in args)


def test_the_messages_name_each_caller_file_and_line(capsys) -> None:
    found = json.loads(check(capsys, str(PARAMS), "--no-cache", "--format", "json")[1])
    messages = {(Path(f["path"]).name, f["line"]): f["message"] for f in found}
    assert "(passed from params/jobs.py:8, read with `time.time()`)" in messages[("waits.py", 9)]
    assert "(passed from params/jobs.py:16, read with `time.time()`)" in messages[("waits.py", 15)]
    assert "every caller passes (params/app.py:10, params/app.py:12)" in messages[("clients.py", 11)]
    assert "`session` is the `aiohttp.ClientSession()` every caller passes (params/app.py:24)" in (
        messages[("clients.py", 15)]
    )
    assert "`self.session` is the `aiohttp.ClientSession()` every caller passes (params/app.py:19)" in (
        messages[("clients.py", 24)]
    )


PROJECT = {
    "pyproject.toml": "[project]\nname = 'svc'\n",
    "waits.py": (
        "import time\n\n\ndef wait_until(probe, until_ts):\n    while time.time() < until_ts:\n        probe()\n"
    ),
    "jobs.py": (
        "import time\n\nfrom waits import wait_until\n\n\n"
        "def job(probe):\n    wait_until(probe, time.time() + 5)\n"
    ),
}


def test_a_cached_answer_follows_what_a_caller_passes(tmp_path, capsys) -> None:
    root = tmp_path / "svc"
    root.mkdir()
    for name, text in PROJECT.items():
        (root / name).write_text(text)
    aged(root)
    args = [str(root / "waits.py"), "--cache-dir", str(tmp_path / "cache"), "--format", "json"]
    first = json.loads(check(capsys, *args)[1])
    assert [(f["code"], f["line"]) for f in first] == [("DL201", 5)]
    jobs = root / "jobs.py"
    jobs.write_text(jobs.read_text().replace("time.time() + 5", "time.monotonic() + 5"))
    assert json.loads(check(capsys, *args)[1]) == []  # the caller now passes a monotonic deadline
    jobs.write_text(jobs.read_text().replace("time.monotonic() + 5", "time.time() + 5"))
    assert json.loads(check(capsys, *args)[1]) == first


SPELLINGS = {
    "a.py": "db.connect()\n",
    "b.py": "db.\\\n    connect()\n",  # a method spelled past a line continuation
    "c.py": "connect()\n",
    "d.py": "reconnect()\nconnect_all()\n# connects\n",
    "e.py": "db.éconnect()\nconnecté = 1\n",  # a non-ASCII letter is part of the word
    "f.py": "from db import connect\n",
}


@pytest.mark.parametrize("indexed", [True, False])
def test_the_word_index_finds_what_reading_every_file_finds(tmp_path, monkeypatch, indexed) -> None:
    from deadline_lint.semantics import callers

    if not indexed:
        monkeypatch.setattr(callers, "MAX_INDEXED_WORDS", 0)  # a project past the bound: read per name
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in SPELLINGS.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    with Session().active():
        project = project_of(str(tmp_path / "a.py"))
        assert project is not None
        listing = callers._listing(project[0])
        assert listing is not None

        def spelling(method: bool) -> list:
            return [Path(p).name for p in callers._holding(project[0], listing, "connect", method)]

        assert spelling(True) == ["a.py", "b.py"]
        assert spelling(False) == ["a.py", "b.py", "c.py", "f.py"]


def test_one_listing_serves_every_search_path_set_of_a_root(tmp_path) -> None:
    from deadline_lint.semantics import callers

    (tmp_path / "pyproject.toml").write_text("")  # one root above two libraries, as the corpus
    for folder in ("lib1/one", "lib2/two", "lib1/tests"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "mod.py").write_text("")
    (tmp_path / "lib1/one/__init__.py").write_text("")
    (tmp_path / "lib2/two/__init__.py").write_text("")
    with Session().active():
        one, two, tests = (project_of(str(tmp_path / p / "mod.py")) for p in ("lib1/one", "lib2/two", "lib1/tests"))
        assert one is not None and two is not None and tests is not None
        assert one[0].search_paths != two[0].search_paths
        shared = callers._listing(one[0])
        assert shared is not None and callers._listing(two[0]) is shared  # not a copy per search-path set
        walked = callers._listing(tests[0])  # `tests/` is a search path the root's walk skips
        assert walked is not None and walked.files[: len(shared.files)] == shared.files
        assert str(tmp_path / "lib1/tests/mod.py") in walked.files and walked.files != shared.files


def test_a_def_in_a_test_module_is_not_judged_by_its_callers(tmp_path, capsys) -> None:
    root = tmp_path / "svc"
    (root / "tests").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / "tests" / "helpers.py").write_text(
        "import requests\n\n\ndef fetch(session: requests.Session, url):\n    return session.get(url)\n"
    )
    # The index leaves test modules out, so this caller passing anything else is not seen:
    (root / "tests" / "test_fetch.py").write_text(
        "from tests.helpers import fetch\n\n\ndef test_fetch(given):\n    fetch(given, 'u')\n"
    )
    (root / "app.py").write_text(
        "import requests\n\nfrom tests.helpers import fetch\n\n\ndef go():\n    fetch(requests.Session(), 'u')\n"
    )
    found = json.loads(check(capsys, str(root / "tests" / "helpers.py"), "--no-cache", "--format", "json")[1])
    assert [f for f in found if f["code"] == "DL101" and "every caller passes" in f["message"]] == []
