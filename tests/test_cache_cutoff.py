"""Early cutoff (issue 31): a module's importers depend on what they read of it (its
interface: its text without its comment lines), not on its bytes. A comment edited in a
module leaves their cached answers valid, not recomputed; a change to a fact they read
invalidates them; a line that only looks like a comment (inside a string) is no comment."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from deadline_lint.cache.states import _blanked_lines_are_comments, interface_digest
from deadline_lint.run import cached
from tests.test_cache import aged, check, hits_and_misses

PROJECT = {
    "pyproject.toml": "[project]\nname = 'svc'\n",
    "clients.py": "import requests\n\n# The one session every handler shares.\nsession = requests.Session()\n",
    "app.py": "from clients import session\n\n\ndef handler(u):\n    return session.get(u)\n",
    "jobs.py": "from clients import session\n\n\ndef job(u):\n    return session.post(u)\n",
}


def project(tmp_path: Path) -> Path:
    root = tmp_path / "svc"
    root.mkdir()
    for name, text in PROJECT.items():
        (root / name).write_text(text)
    return aged(root)


def findings(capsys, *args: str) -> list:
    return json.loads(check(capsys, *args, "--format", "json")[1])


@pytest.mark.parametrize("settle", [False, True])
def test_a_comment_edited_in_a_module_leaves_its_importers_valid(tmp_path, capsys, monkeypatch, settle) -> None:
    """Both ways a run decides: entry by entry (a few files), or the changed set first (many)."""
    monkeypatch.setattr(cached, "SETTLE_FROM", 0 if settle else 10**9)
    root = project(tmp_path)
    args = [str(root), "--cache-dir", str(tmp_path / "cache")]
    first = findings(capsys, *args)
    assert sorted((Path(f["path"]).name, f["code"]) for f in first) == [("app.py", "DL101"), ("jobs.py", "DL101")]
    clients = root / "clients.py"
    clients.write_text(clients.read_text().replace("every handler shares", "all handlers share, edited"))
    counts = hits_and_misses(monkeypatch)
    assert findings(capsys, *args) == first
    assert counts["checked"] == 1  # clients.py itself; app.py and jobs.py answered from the cache
    assert findings(capsys, *args) == first and counts["checked"] == 1  # and the next run stats only

    clients.write_text(clients.read_text().replace("requests.Session()", "None"))  # the fact they read
    after = findings(capsys, *args)
    assert counts["checked"] == 1 + 3  # every importer checked again
    assert after == findings(capsys, *args[:1], "--no-cache") != first
    assert findings(capsys, *args) == after and counts["checked"] == 4  # the new answers are reused


def test_a_run_over_many_files_with_nothing_changed_walks_no_reach(tmp_path, capsys, monkeypatch) -> None:
    """The changed set is empty: entries known consistent with the records are answered by
    their own content alone; a module that appears where one was looked for still counts."""
    monkeypatch.setattr(cached, "SETTLE_FROM", 0)
    root = project(tmp_path)
    args = [str(root), "--cache-dir", str(tmp_path / "cache")]
    first = findings(capsys, *args)
    assert findings(capsys, *args) == first  # the first warm run walks and marks them consistent
    walked = []
    from deadline_lint.cache.states import Survey

    original = Survey.holds
    monkeypatch.setattr(Survey, "holds", lambda self, *rest: walked.append(1) or original(self, *rest))
    counts = hits_and_misses(monkeypatch)
    assert findings(capsys, *args) == first and counts["checked"] == 0 and walked == []
    (root / "requests.py").write_text("def get(url):\n    return None\n")  # shadows the library now
    after = findings(capsys, *args)
    assert after == findings(capsys, *args[:1], "--no-cache")
    assert counts["checked"] >= 3 and walked


def test_a_comment_like_line_inside_a_string_is_no_cutoff(tmp_path, capsys, monkeypatch) -> None:
    root = project(tmp_path)
    clients = root / "clients.py"
    clients.write_text('import requests\n\nNOTE = """\n# kept\n"""\nsession = requests.Session()\n')
    aged(root)
    args = [str(root), "--cache-dir", str(tmp_path / "cache")]
    first = findings(capsys, *args)
    clients.write_text(clients.read_text().replace("# kept", "# changed"))
    counts = hits_and_misses(monkeypatch)
    assert findings(capsys, *args) == first
    assert counts["checked"] == 3  # the string's value changed: its importers are checked again


def test_the_interface_blanks_comment_lines_only() -> None:
    text = b"# -*- coding: utf-8 -*-\nimport a\n# one\nx = 1  # two\n"
    assert interface_digest(text) == interface_digest(text.replace(b"# one", b"# other"))
    assert interface_digest(text) != interface_digest(text.replace(b"# two", b"# other"))  # not a line of its own
    assert interface_digest(text) != interface_digest(text.replace(b"utf-8", b"latin-1"))  # the encoding line
    assert interface_digest(text) != interface_digest(text.replace(b"# one\n", b""))  # lines below move
    assert interface_digest(text) != interface_digest(text.replace(b"# one", b"# a; import b"))
    assert _blanked_lines_are_comments(text)
    assert not _blanked_lines_are_comments(b"a = 1\nb = '''\n# in a string\n'''\n")
    assert not _blanked_lines_are_comments(b"a = 1\nfrom x import (\n    # f(y)\n    z,\n)\n")  # in brackets
