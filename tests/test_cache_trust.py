"""Every cached artefact is checked before it is trusted (issue 35, item 2): the compiled
catalog, the kept `[tool.deadline-lint]` table, the results cache and the module summaries.
A file put in one's place (empty, wrongly shaped, another build's or project's, or sealed
for the right inputs but holding the wrong shape) is rebuilt: the findings are those of a
run without a cache, never "All checks passed", never a traceback."""
from __future__ import annotations

import json
import marshal
import subprocess
import sys
from pathlib import Path
from typing import Callable, List

import pytest

from deadline_lint.support import sealed

SERVICE = {
    "pyproject.toml": "[tool.deadline-lint]\nhop-margin-ms = 20\n",
    "clients.py": "import requests\n\nsession = requests.Session()\n",
    "app.py": "from clients import session\n\n\ndef handler(u):\n    return session.get(u)\n",
    "direct.py": "import requests\nrequests.get('u')\n",
}


def run(project: Path, cache: bool = True) -> subprocess.CompletedProcess:
    options = ["--cache-dir", str(project / "cache")] if cache else ["--no-cache"]
    return subprocess.run([sys.executable, "-m", "deadline_lint", "check", *options, "--format", "json", "."],
                          cwd=project, capture_output=True, text=True)


@pytest.fixture
def project(tmp_path) -> Path:
    for name, text in SERVICE.items():
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.fixture
def expected(project) -> List[dict]:
    done = run(project, cache=False)
    found = json.loads(done.stdout)
    # The project facts matter here: app.py's finding comes through clients.py's summary.
    assert sorted((f["path"], f["code"]) for f in found) == [("app.py", "DL101"), ("direct.py", "DL101")]
    first = run(project)  # fills the cache
    assert json.loads(first.stdout) == found
    return found


def replace_each(files: List[Path], make: Callable[[Path, bytes], bytes]) -> None:
    assert files, "the cache holds no such file"
    for path in files:
        path.write_bytes(make(path, path.read_bytes()))


def assert_rebuilt(project: Path, expected: List[dict]) -> None:
    done = run(project)
    assert done.stderr == ""
    assert json.loads(done.stdout) == expected
    again = run(project)  # and what the rebuild wrote is trusted again
    assert json.loads(again.stdout) == expected


def _inputs_of(data: bytes) -> str:
    from tests.test_cache import inputs_of

    return inputs_of(data)


CATALOG_FORGERIES = {
    "empty list": lambda path, data: marshal.dumps([]),
    "wrong shape": lambda path, data: marshal.dumps([("outbound", 5)]),
    "garbage": lambda path, data: b"\x00not marshal",
    "sealed for these inputs, empty": lambda path, data: sealed.seal(_inputs_of(data), marshal.dumps([])),
    "sealed, a document missing": lambda path, data: sealed.seal(
        _inputs_of(data), marshal.dumps(marshal.loads(sealed.unseal(data, _inputs_of(data)) or b"")[1:])
    ),
    "sealed for other inputs": lambda path, data: sealed.seal("0" * 32, sealed.unseal(data, _inputs_of(data)) or b""),
}


@pytest.mark.parametrize("forgery", sorted(CATALOG_FORGERIES))
def test_a_catalog_put_in_place_of_the_compiled_one_is_rebuilt(project, expected, forgery) -> None:
    replace_each(sorted((project / "cache" / "v2").glob("catalog-*.marshal")), CATALOG_FORGERIES[forgery])
    assert_rebuilt(project, expected)


@pytest.mark.parametrize("payload", [("a string",), ({1: "not a key"},), "no tuple", ({"profile": 5}, 2)])
def test_a_kept_pyproject_table_of_the_wrong_shape_is_parsed_again(project, expected, payload) -> None:
    replace_each(sorted((project / "cache" / "v2").glob("pyproject-*.marshal")),
                 lambda path, data: sealed.seal(_inputs_of(data), marshal.dumps(payload)))
    assert_rebuilt(project, expected)


def _results_document(data: bytes) -> dict:
    from tests.test_cache import results_document

    return results_document(data, _inputs_of(data))


def _with_found(data: bytes, found: object, seal: bool, key: str = "found") -> bytes:
    from tests.test_cache import sealed_results

    document = _results_document(data)
    document["files"] = {
        path: marshal.dumps({**marshal.loads(entry), key: found}) for path, entry in document["files"].items()
    }
    return sealed_results(_inputs_of(data), document) if seal else marshal.dumps(document)


def _damaged_head(data: bytes) -> bytes:
    magic, header, payload = data.split(b"\n", 2)
    return b"\n".join((magic, header, payload[:40] + b"\x00" * 7 + payload[47:]))


def _with_tail(data: bytes, tail: bytes) -> bytes:
    """The results file with its second part replaced, sealed for it: only the tail's own
    shape check stands between it and the run."""
    parts = sealed.unseal_head(data, _inputs_of(data))
    assert parts is not None
    return sealed.seal_parts(_inputs_of(data), bytes(parts[0]), tail)


RESULT_FORGERIES = {
    "unsealed, nothing found": lambda path, data: _with_found(data, [], seal=False),
    "sealed, a finding coerced from numbers": lambda path, data: _with_found(
        data, [{"code": 101, "name": 5, "line": "2", "column": 1, "end_line": 2, "end_column": 3,
                "message": "m", "fix": None}], seal=True),
    "sealed, found not a list": lambda path, data: _with_found(data, "DL101", seal=True),
    # Each finding's JSON report item is kept beside it: one of the wrong shape is no hit.
    "sealed, a report item of numbers": lambda path, data: _with_found(data, [[1, 2]], seal=True, key="report"),
    "sealed, a report item of three parts": lambda path, data: _with_found(
        data, [["a", "b", "c"]], seal=True, key="report"),
    "sealed, the report not a list": lambda path, data: _with_found(data, "[]", seal=True, key="report"),
    "sealed for another key": lambda path, data: data.replace(_inputs_of(data).encode(), b"0" * 32, 1),
    "unsealed, the old single seal": lambda path, data: sealed.seal(
        _inputs_of(data), marshal.dumps(_results_document(data))),
    "damaged": lambda path, data: data[:-7] + b"\x00" * 7,  # in the second part
    "damaged in the first part": lambda path, data: _damaged_head(data),
    "sealed, the second part not a document": lambda path, data: _with_tail(data, marshal.dumps([1, 2])),
    "sealed, the second part's paths not text": lambda path, data: _with_tail(data, marshal.dumps(
        {**{k: v for k, v in _results_document(data).items() if k in ("reaches", "modules", "pruned")},
         "paths": [1, 2]})),
}


@pytest.mark.parametrize("forgery", sorted(RESULT_FORGERIES))
def test_results_cache_entries_are_checked_before_they_are_trusted(project, expected, forgery) -> None:
    replace_each(sorted((project / "cache" / "v2").glob("*/*.marshal")), RESULT_FORGERIES[forgery])
    assert_rebuilt(project, expected)


@pytest.mark.parametrize("forgery", [
    "damaged", "sealed, the second part not a document", "sealed, the second part's paths not text",
])
def test_a_second_part_not_trusted_is_read_only_when_needed_and_then_is_a_miss(project, expected, forgery) -> None:
    """A run where nothing changed answers from the results file's first part; once a
    module changes, the entries reaching it need the second part, and one that does not
    hold makes them misses, checked again."""
    replace_each(sorted((project / "cache" / "v2").glob("*/*.marshal")), RESULT_FORGERIES[forgery])
    assert_rebuilt(project, expected)
    with open(project / "clients.py", "a") as out:
        out.write("TIMEOUT = 1\n")  # another interface: app.py's entry needs its reach
    replace_each(sorted((project / "cache" / "v2").glob("*/*.marshal")), RESULT_FORGERIES[forgery])
    assert_rebuilt(project, expected)


def _summary_without_session(path: Path, data: bytes) -> bytes:
    document = json.loads(sealed.unseal(data, _inputs_of(data)) or b"")
    document["summary"] = None  # "does not parse": the session would be unknown, app.py quiet
    return json.dumps(document).encode()


@pytest.mark.parametrize("seal", [False, True])
def test_a_module_summary_put_in_place_is_not_trusted(project, expected, seal) -> None:
    (project / "app.py").write_text(SERVICE["app.py"] + "\n")  # its own result must be computed again

    def forge(path: Path, data: bytes) -> bytes:
        forged = _summary_without_session(path, data)
        # A seal for other inputs (another module's key): never read as this module's.
        return sealed.seal(_inputs_of(data) + "-other", forged) if seal else forged

    replace_each(sorted((project / "cache" / "v2" / "summaries").glob("*/*/*-clients-0.json")), forge)
    assert_rebuilt(project, expected)
