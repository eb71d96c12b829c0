"""Values that cross a function through a parameter, across modules (issue 32): the call-site
index keeps what each call passes (`semantics/arguments`); DL201 reads the wall-clock instants
every caller passes, DL101 the clients every caller builds without a timeout. The markers of
`fixtures/projects/params` are held by test_projects through every front end; here, what the
index keeps, what the messages name, and that a cached answer follows a caller's edit."""
from __future__ import annotations

import json
from pathlib import Path

from deadline_lint.semantics.call_sites import Site, uses_of
from deadline_lint.semantics.modules import ModuleSource
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
        return [Site(*raw).arguments for raw in uses_of(module)["run"]]  # type: ignore[arg-type]


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
