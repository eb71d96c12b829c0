"""The results cache: it never changes a result, it is invalidated by every input a result
depends on (the file, the settings, the tool, project modules the file reaches), and a corrupt
or foreign cache is ignored and rebuilt."""
from __future__ import annotations

import json
import marshal
import os
import shutil
import time
from pathlib import Path
from typing import List, Tuple

import pytest

from deadline_lint.cache import results as cache_module
from deadline_lint.frontends.cli import main
from deadline_lint.support import sealed

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def check(capsys, *args: str) -> tuple:
    code = main(["check", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def cache_files(folder: Path) -> List[Path]:
    return sorted((folder / "v2").glob("*/*.marshal"))


def sealed_for(entry_file: Path) -> str:
    """The inputs a cache file is sealed for (sealed.py), so damage inside it can be written
    back under the same seal: the reader's own checks are what these tests are about."""
    return inputs_of(entry_file.read_bytes())


def inputs_of(data: bytes) -> str:
    magic, header, _ = data.split(b"\n", 2)
    # A results file is sealed in two parts: its seal line names both digests and a size.
    return header.rsplit(b" ", 3 if magic.endswith(b"in parts 1") else 1)[0].decode()


# The first part of a results file (what a run where nothing changed reads); the rest is
# what the entries depend on.
HEAD = ("format", "key", "project", "files", "clean", "stamps")


def results_document(data: bytes, inputs: str) -> dict:
    """A results file's two parts as one document."""
    parts = sealed.unseal_head(data, inputs)
    assert parts is not None and sealed.tail_holds(parts[1], parts[2])
    return {**marshal.loads(parts[0]), **marshal.loads(parts[1])}


def sealed_results(inputs: str, document) -> bytes:
    """`document` sealed as a results file, its keys in the part the cache writes them in
    (anything but a dict, in the first part)."""
    if not isinstance(document, dict):
        return sealed.seal_parts(inputs, marshal.dumps(document), marshal.dumps({}))
    head = {key: value for key, value in document.items() if key in HEAD}
    tail = {key: value for key, value in document.items() if key not in HEAD}
    return sealed.seal_parts(inputs, marshal.dumps(head), marshal.dumps(tail))


def read_marshalled(entry_file: Path):
    return results_document(entry_file.read_bytes(), sealed_for(entry_file))


def write_marshalled(entry_file: Path, document) -> None:
    entry_file.write_bytes(sealed_results(sealed_for(entry_file), document))


def read_document(entry_file: Path) -> dict:
    """A cache file's document with its entries and module reaches decoded (the file keeps
    each of them marshalled on its own)."""
    document = read_marshalled(entry_file)
    document["files"] = {path: marshal.loads(entry) for path, entry in document["files"].items()}
    document["reaches"] = {path: marshal.loads(reach) for path, reach in document["reaches"].items()}
    document["modules"] = {
        index: {node: marshal.loads(reach) for node, reach in table.items()}
        for index, table in document["modules"].items()
    }
    return document


def document_text(entry_file: Path) -> str:
    """A cache file's document as JSON text, so damage can be spelled as text."""
    return json.dumps(read_document(entry_file), separators=(",", ":"))


def write_document(entry_file: Path, text: str) -> None:
    """`text` back as a cache file, laid out as the cache writes it, when it is such a JSON
    document; else its bytes (garbage, another document, a truncated file)."""
    try:
        document = json.loads(text)
    except ValueError:
        entry_file.write_bytes(text.encode("utf-8", "surrogateescape"))
        return
    if isinstance(document, dict) and isinstance(document.get("files"), dict):
        document["files"] = {path: marshal.dumps(entry) for path, entry in document["files"].items()}
        document["reaches"] = {path: marshal.dumps(reach) for path, reach in document.get("reaches", {}).items()}
        document["modules"] = {
            index: {node: marshal.dumps(reach) for node, reach in table.items()}
            for index, table in document.get("modules", {}).items()
        }
    write_marshalled(entry_file, document)


def one_file(tmp_path: Path, text: str) -> Tuple[Path, List[str]]:
    """svc.py holding `text`, and the arguments that check it with a cache under tmp_path.
    The cache is created beside the project folder, not in it: the file's answer depends on
    which modules its project folder holds (a name it imports could be one), and a cache
    folder created there in the same second makes the next run re-check it once."""
    (tmp_path / "project").mkdir(exist_ok=True)
    source = tmp_path / "project" / "svc.py"
    source.write_text(text)
    settled = time.time_ns() - 10 * 10**9  # the folder's listing settled before this run
    os.utime(tmp_path / "project", ns=(settled, settled))
    return source, [str(source), "--cache-dir", str(tmp_path / "cache")]


def hits_and_misses(monkeypatch) -> dict:
    """Count how many files each run really checks (a miss) against cached answers."""
    from deadline_lint.run import api

    counts = {"checked": 0}
    original = api.recorded

    def counted(checker, path, read, *rest):
        counts["checked"] += 1
        return original(checker, path, read, *rest)

    monkeypatch.setattr(api, "recorded", counted)
    return counts


def aged(tree: Path) -> Path:
    """Every file and folder under `tree` last changed long ago: a stat taken within
    seconds of a change is never trusted (it could hide a second change in the same clock
    tick), so a fresh copy would be re-read on every run."""
    old = 1_700_000_000 * 10**9  # fixed: aging a tree again leaves unchanged stats alone
    for folder, _, files in os.walk(tree):
        for name in files:
            os.utime(os.path.join(folder, name), ns=(old, old))
    for folder, _, _ in sorted(os.walk(tree), reverse=True):
        os.utime(folder, ns=(old, old))
    return tree


def test_cached_runs_report_exactly_what_an_uncached_run_reports(tmp_path, capsys, monkeypatch) -> None:
    counts = hits_and_misses(monkeypatch)
    folder = tmp_path / "cache"
    aged(Path(shutil.copytree(FIXTURES, tmp_path / "fixtures")))
    monkeypatch.chdir(tmp_path)
    args = ["fixtures", "--jobs", "1", "--format", "json", "--extend-select", "ALL"]
    uncached = check(capsys, *args, "--no-cache")
    assert counts["checked"] == 0 and not folder.exists()  # --no-cache neither reads nor writes
    cold = check(capsys, *args, "--cache-dir", str(folder))
    checked_cold = counts["checked"]
    warm = check(capsys, *args, "--cache-dir", str(folder))
    assert uncached == cold == warm
    assert json.loads(uncached[1]), "the fixtures must have findings for this to show anything"
    assert checked_cold > 50 and counts["checked"] == checked_cold  # the warm run checked nothing


def test_fixes_and_their_safety_survive_the_cache(tmp_path, capsys) -> None:
    folder = tmp_path / "cache"
    args = [str(FIXTURES / "DL101"), "--statistics", "--cache-dir", str(folder)]
    assert check(capsys, *args) == check(capsys, *args)
    text = check(capsys, *args)[1]
    assert "fixable with `deadline-lint fix`" in text


def test_the_cache_folder_ignores_itself_and_is_tagged(tmp_path, capsys) -> None:
    folder = tmp_path / "cache"
    check(capsys, str(FIXTURES / "DL103"), "--cache-dir", str(folder))
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (folder / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert len(cache_files(folder)) == 1


def test_default_folder_is_in_the_working_directory_unless_the_environment_says(tmp_path, capsys, monkeypatch) -> None:
    one_file(tmp_path, "import requests\nrequests.get('http://x')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(cache_module.CACHE_DIR_ENV, raising=False)
    assert check(capsys, "project/svc.py")[0] == 1
    assert cache_files(tmp_path / cache_module.CACHE_DIR_NAME)
    elsewhere = tmp_path / "elsewhere"
    monkeypatch.setenv(cache_module.CACHE_DIR_ENV, str(elsewhere))
    assert check(capsys, "project/svc.py")[0] == 1
    assert cache_files(elsewhere)


def test_an_edited_file_is_checked_again(tmp_path, capsys) -> None:
    source, args = one_file(tmp_path, "import requests\nrequests.get('http://x')\n")
    assert check(capsys, *args)[0] == 1
    source.write_text("import requests\nrequests.get('http://y', timeout=2)\n")
    os.utime(source, ns=(1, 1))  # an old mtime: only the size and content tell
    assert check(capsys, *args)[0] == 0
    source.write_text("import requests\nrequests.get('http://z', timeout=None)\n")
    os.utime(source, ns=(1, 1))  # another size, the same old mtime
    code, out, _ = check(capsys, *args)
    assert code == 1 and "DL103" in out


def test_same_size_same_mtime_edit_is_caught_by_the_content_hash_when_fresh(tmp_path, capsys) -> None:
    source, args = one_file(tmp_path, "import requests\nrequests.get('http://x', timeout=3)\n")
    assert check(capsys, *args)[0] == 0
    stat = source.stat()
    unbounded = "import requests\nrequests.get('http://x')"
    source.write_text(unbounded.ljust(stat.st_size - 1) + "\n")
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # a same-tick, same-size edit
    assert source.stat().st_size == stat.st_size
    assert check(capsys, *args)[0] == 1


def test_settings_are_part_of_the_key(tmp_path, capsys) -> None:
    _, args = one_file(tmp_path, "import requests\nrequests.get('http://x')\n")
    assert check(capsys, *args)[0] == 1
    assert check(capsys, *args, "--ignore", "DL101")[0] == 0
    (tmp_path / "profile.yaml").write_text("ignore: [DL101]\n")
    assert check(capsys, *args, "--profile", str(tmp_path / "profile.yaml"))[0] == 0
    assert check(capsys, *args)[0] == 1
    assert len(cache_files(tmp_path / "cache")) == 3


def test_a_different_tool_never_reads_the_entries(tmp_path, capsys, monkeypatch) -> None:
    _, args = one_file(tmp_path, "import requests\nrequests.get('http://x')\n")
    check(capsys, *args)
    counts = hits_and_misses(monkeypatch)
    monkeypatch.setattr(cache_module, "_TOOL", "another build of the tool")
    assert check(capsys, *args)[0] == 1
    assert counts["checked"] == 1


@pytest.mark.parametrize("damage", [
    lambda text: text[: len(text) // 2],  # truncated
    lambda text: "\x00\xff garbage",
    lambda text: json.dumps({"format": 1, "key": "someone else's", "files": {}, "stamps": {}}),
    lambda text: json.dumps([1, 2, 3]),
    lambda text: text.replace('"found":[', '"found":[7,'),  # an entry of the wrong shape
    lambda text: text.replace('"hash":"', '"hash":"0'),  # an entry for other content
])
def test_a_damaged_or_foreign_cache_is_ignored_and_rebuilt(tmp_path, capsys, monkeypatch, damage) -> None:
    _, args = one_file(tmp_path, "import requests\nrequests.get('http://x')\nrequests.get('http://x', timeout=None)\n")
    first = check(capsys, *args)
    (entry_file,) = cache_files(tmp_path / "cache")
    write_document(entry_file, damage(document_text(entry_file)))
    counts = hits_and_misses(monkeypatch)
    assert check(capsys, *args) == first
    assert counts["checked"] == 1
    assert check(capsys, *args) == first and counts["checked"] == 1  # rebuilt, then trusted


@pytest.mark.parametrize("keep", [0.5, 0.99])
def test_a_truncated_cache_file_is_ignored_and_rebuilt(tmp_path, capsys, monkeypatch, keep) -> None:
    _, args = one_file(tmp_path, "import requests\nrequests.get('http://x')\n")
    first = check(capsys, *args)
    (entry_file,) = cache_files(tmp_path / "cache")
    data = entry_file.read_bytes()
    entry_file.write_bytes(data[: int(len(data) * keep)])
    counts = hits_and_misses(monkeypatch)
    assert check(capsys, *args) == first
    assert counts["checked"] == 1


def test_an_entry_that_does_not_decode_is_a_miss(tmp_path, capsys, monkeypatch) -> None:
    """Entries stay marshalled in the file until used: one damaged there is never trusted."""
    _, args = one_file(tmp_path, "import requests\nrequests.get('http://x')\n")
    first = check(capsys, *args)
    (entry_file,) = cache_files(tmp_path / "cache")
    document = read_marshalled(entry_file)
    document["files"] = {path: entry[: len(entry) // 2] for path, entry in document["files"].items()}
    write_marshalled(entry_file, document)
    counts = hits_and_misses(monkeypatch)
    assert check(capsys, *args) == first
    assert counts["checked"] == 1
    assert check(capsys, *args) == first and counts["checked"] == 1


def test_a_large_run_keeps_the_module_reaches_of_entries_it_did_not_read(shop, tmp_path, capsys, monkeypatch) -> None:
    """A run over most of a project's files prunes the cache file: an entry it never looked
    up (still marshalled as read) keeps its module reaches, so it stays a hit."""

    folder = tmp_path / "cache"
    package = shop / "shop"
    (package / "only_here.py").write_text("import requests\n\n\ndef fetch(url):\n    return requests.get(url)\n")
    (package / "report.py").write_text("from shop.only_here import fetch\n\nfetch('http://x')\n")
    other = package / "other.py"
    other.write_text("import requests\nrequests.get('http://x')\n")
    aged(shop)
    check(capsys, str(shop), "--cache-dir", str(folder))
    other.write_text("import requests\nrequests.get('http://other')\n")  # nothing imports it
    aged(shop)
    most = [str(package / name) for name in ("__init__.py", "compat.py", "transport.py", "orders.py", "other.py")]
    check(capsys, *most, "--cache-dir", str(folder))  # all but report.py and only_here.py: a large run
    counts = hits_and_misses(monkeypatch)
    check(capsys, str(package / "report.py"), "--cache-dir", str(folder))
    assert counts["checked"] == 0  # its reach (shop.only_here, which no other file reaches) was kept


def test_an_unwritable_cache_warns_once_and_keeps_the_result(tmp_path, capsys) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    source, _ = one_file(tmp_path, "import requests\nrequests.get('http://x')\n")
    code, out, err = check(capsys, str(source), "--cache-dir", str(blocker / "cache"))
    assert code == 1 and "DL101" in out
    assert err.count("warning: cannot write the cache") == 1 and "Traceback" not in err


# -- the project index: a result also depends on the modules its file reaches ------------
@pytest.fixture
def shop(tmp_path) -> Path:
    project = tmp_path / "shop"
    shutil.copytree(FIXTURES / "projects" / "shop", project)
    return aged(project)


def test_reach_memos_dropped_for_older_projects_answer_alike(shop, tmp_path, monkeypatch) -> None:
    """Only the memos of the projects asked about last are kept; a project asked about again
    after its memos were dropped gets the same reaches."""
    from deadline_lint.cache import dependencies
    from deadline_lint.catalog import load_catalog
    from deadline_lint.semantics.session import current

    second = tmp_path / "second"
    shutil.copytree(shop, second)
    files = [root / "shop" / name for root in (shop, second) for name in ("orders.py", "compat.py", "transport.py")]
    files = [path for path in files if path.exists()]
    assert len(files) >= 4
    catalog = load_catalog()

    def reaches() -> list:
        current().forget(dependencies.ModuleReaches, dependencies.Prefixes, dependencies.Folders)
        # Alternating projects: with one kept, every question finds the other's memos gone.
        order = [path for pair in zip(files[: len(files) // 2], files[len(files) // 2:]) for path in pair]
        return [dependencies.project_reach(str(path), path.read_text(), catalog) for path in order * 2]

    kept = reaches()
    monkeypatch.setattr(dependencies, "KEEP_INDEXES", 1)
    dropped = reaches()
    prefixes = current().state(dependencies.Prefixes)
    assert prefixes._tables and len(prefixes._tables) == 1
    assert dropped == kept and all(reach is not None and reach.own.follow for reach in kept[:2])


def test_editing_a_module_the_file_reaches_invalidates_it(shop, tmp_path, capsys, monkeypatch) -> None:
    folder = tmp_path / "cache"
    orders = shop / "shop" / "orders.py"
    args = [str(orders), "--cache-dir", str(folder), "--select", "DL101", "--format", "json"]
    before = json.loads(check(capsys, *args)[1])
    assert any("get_json" in d["message"] for d in before)
    transport = shop / "shop" / "transport.py"
    text = transport.read_text()
    transport.write_text(text.replace(
        "    return requests.get(url, timeout=timeout).json()",
        "    return requests.get(url, timeout=timeout or 2.0).json()",
    ))
    counts = hits_and_misses(monkeypatch)
    after = json.loads(check(capsys, *args)[1])
    assert counts["checked"] == 1
    uncached = json.loads(check(capsys, *args[:-2], "--no-cache", "--format", "json")[1])
    assert after == uncached != before


def test_a_module_that_appears_where_one_was_looked_for_invalidates(shop, tmp_path, capsys, monkeypatch) -> None:
    folder = tmp_path / "cache"
    client = shop / "shop" / "client.py"
    client.write_text("from shop.helpers import fetch_all\n\n\ndef run():\n    fetch_all('http://x')\n")
    args = [str(client), "--cache-dir", str(folder), "--select", "DL101"]
    assert check(capsys, *args)[0] == 0  # shop.helpers does not exist: nothing to follow
    (shop / "shop" / "helpers.py").write_text(
        "import requests\n\n\ndef fetch_all(url, timeout=None):\n    return requests.get(url, timeout=timeout)\n"
    )
    counts = hits_and_misses(monkeypatch)
    code, out, _ = check(capsys, *args)
    assert counts["checked"] == 1 and code == 1 and "fetch_all" in out


def test_an_unrelated_module_leaves_the_entry_alone_and_a_new_one_does_not(shop, tmp_path, capsys, monkeypatch) -> None:
    folder = tmp_path / "cache"
    orders = shop / "shop" / "orders.py"
    args = [str(orders), "--cache-dir", str(folder)]
    unrelated = shop / "shop" / "unrelated.py"
    unrelated.write_text("import requests\n")
    aged(shop)
    first = check(capsys, *args)
    with open(unrelated, "r+") as handle:  # edited in place: its folder's listing stays
        handle.write("import httpx   \n")
    counts = hits_and_misses(monkeypatch)
    assert check(capsys, *args) == first
    assert counts["checked"] == 0
    (shop / "shop" / "helpers.py").write_text("")  # a new module where lookups failed
    assert check(capsys, *args) == first
    assert counts["checked"] == 1  # checked again (it could have changed what a name means)


def two_imports_away(tmp_path: Path) -> Tuple[Path, Path]:
    """A project whose `caller.py` reaches a client through `wrappers.py` and `compat.py`."""
    project = tmp_path / "proj"
    (project / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "compat.py").write_text("import requests as http\n")
    (project / "pkg" / "wrappers.py").write_text(
        "from pkg.compat import http\n\n\ndef fetch(url, timeout=None):\n    return http.get(url, timeout=timeout)\n"
    )
    caller = project / "pkg" / "caller.py"
    caller.write_text("from pkg.wrappers import fetch\n\n\ndef run():\n    fetch('http://x')\n")
    return project, caller


def test_a_change_two_imports_away_invalidates(tmp_path, capsys, monkeypatch) -> None:
    project, caller = two_imports_away(tmp_path)
    args = [str(caller), "--cache-dir", str(tmp_path / "cache"), "--select", "DL101"]
    aged(project)
    assert check(capsys, *args)[0] == 1
    with open(project / "pkg" / "compat.py", "r+") as handle:
        handle.write("import json     as http\n")  # no longer a client (edited in place)
    counts = hits_and_misses(monkeypatch)
    assert check(capsys, *args)[0] == 0
    assert counts["checked"] == 1
    aged(project)
    assert check(capsys, *args)[0] == 0 and counts["checked"] == 1  # the new answer is reused


def test_one_changed_file_takes_the_stored_reaches_behind_it_and_they_stay_exact(tmp_path, capsys, monkeypatch) -> None:
    """Pre-commit's case: one file of a cached project changed. The modules it reaches are
    not looked up again (their stored reaches still hold), and a module changed later two
    imports away still invalidates the new entry."""
    from deadline_lint.cache import dependencies

    project, caller = two_imports_away(tmp_path)
    cache = ["--cache-dir", str(tmp_path / "cache"), "--select", "DL101"]
    aged(project)
    assert check(capsys, str(project), *cache)[0] == 1
    followed: List[str] = []
    original = dependencies._module_reach

    def counted(index, name):
        followed.append(name)
        return original(index, name)

    monkeypatch.setattr(dependencies, "_module_reach", counted)
    with open(caller, "a") as handle:
        handle.write("# edited\n")
    counts = hits_and_misses(monkeypatch)
    assert check(capsys, str(caller), *cache)[0] == 1
    assert counts["checked"] == 1 and followed == ["pkg.caller"]  # wrappers, compat: as the cache held them
    aged(project)
    with open(project / "pkg" / "compat.py", "r+") as handle:
        handle.write("import json     as http\n")  # no longer a client (edited in place)
    assert check(capsys, str(caller), *cache)[0] == 0
    assert counts["checked"] == 2
    assert check(capsys, str(caller), *cache[:-2], "--select", "DL101", "--no-cache")[0] == 0


@pytest.mark.parametrize("damage", [
    lambda text: text.replace('"folders":[[', '"folders":[[99999999,0],['),  # a path number out of range
    lambda text: text.replace('"follow":[[', '"follow":[["x",'),  # a path that is not a number
    lambda text: text.replace('"paths":[', '"paths":[7,'),  # a path table of the wrong shape
    lambda text: text.replace('"complete":true', '"complete":"yes"'),
])
def test_damaged_module_summaries_are_never_trusted(shop, tmp_path, capsys, monkeypatch, damage) -> None:
    folder = tmp_path / "cache"
    args = [str(shop / "shop" / "orders.py"), "--cache-dir", str(folder)]
    first = check(capsys, *args)
    (entry_file,) = cache_files(folder)
    damaged = damage(document_text(entry_file))
    assert damaged != document_text(entry_file)
    write_document(entry_file, damaged)
    counts = hits_and_misses(monkeypatch)
    assert check(capsys, *args) == first
    assert counts["checked"] == 1
    assert check(capsys, *args) == first and counts["checked"] == 1


def test_entries_of_deleted_files_are_dropped_by_a_run_over_the_folder(tmp_path, capsys) -> None:
    folder = tmp_path / "cache"
    tree = tmp_path / "svc"
    tree.mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (tree / name).write_text("import requests\nrequests.get('http://x')\n")
    check(capsys, str(tree), "--cache-dir", str(folder))
    (tree / "b.py").unlink()
    (tree / "c.py").write_text("import requests\nrequests.get('http://y')\n")
    check(capsys, str(tree / "c.py"), "--cache-dir", str(folder))  # a small run keeps b's entry
    (entry_file,) = cache_files(folder)
    assert str(tree / "b.py") in read_document(entry_file)["files"]
    (tree / "a.py").write_text("import requests\nrequests.get('http://z')\n")
    check(capsys, str(tree), "--cache-dir", str(folder))
    assert sorted(read_document(entry_file)["files"]) == [str(tree / "a.py"), str(tree / "c.py")]


def test_files_of_one_project_seen_through_different_indexes_are_all_reused(tmp_path, capsys, monkeypatch) -> None:
    # A script beside the package has its own search paths (its folder comes first), so the
    # same module's reach is recorded once per index: each must be complete on its own.
    project = tmp_path / "proj"
    shutil.copytree(FIXTURES / "projects" / "shop", project)
    (project / "tools").mkdir()
    (project / "tools" / "bench.py").write_text("from shop.transport import get_json\n\nget_json('http://x')\n")
    aged(project)
    args = [str(project), "--cache-dir", str(tmp_path / "cache"), "--jobs", "1"]
    first = check(capsys, *args)
    assert "tools/bench.py" in first[1]
    counts = hits_and_misses(monkeypatch)
    assert check(capsys, *args) == first
    assert counts["checked"] == 0


def test_stored_module_summaries_give_the_same_findings_and_damage_is_a_miss(tmp_path, capsys) -> None:
    """A re-check reads what unchanged modules say from the store instead of parsing them:
    the same findings, whether the stored summaries are intact, damaged or gone."""
    from deadline_lint.semantics.facts import forget_facts

    project = tmp_path / "tasks"
    shutil.copytree(Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "tasks", project)
    args = [str(project), "--cache-dir", str(tmp_path / "cache"), "--format", "json"]
    forget_facts()  # this process may know these modules' contents from another test
    first = check(capsys, *args)
    assert first[0] == 1
    stored = sorted((tmp_path / "cache" / "v2" / "summaries").rglob("*.json"))
    assert stored, "module summaries were stored"

    def forget_results() -> None:
        from deadline_lint.semantics.facts import forget_facts
        from deadline_lint.semantics.store import use_store

        for entry in cache_files(tmp_path / "cache"):
            entry.unlink()
        forget_facts()  # nothing remembered in this process: the next run reads the store
        use_store(None)

    forget_results()
    assert check(capsys, *args) == first  # from the stored summaries
    for entry in stored:
        entry.write_text("{not json")
    forget_results()
    assert check(capsys, *args) == first  # damaged: recomputed
    for entry in stored:
        entry.write_text('{"key": "someone else"}')
    forget_results()
    assert check(capsys, *args) == first


def test_summaries_of_builds_unused_for_a_week_are_dropped_and_recent_ones_kept(tmp_path, capsys) -> None:
    """An upgrade does not leave every older build's summaries behind; another install used
    lately (pre-commit's and the editor's may differ) keeps its own."""
    from deadline_lint.semantics.facts import forget_facts
    from deadline_lint.semantics.store import use_store

    project = tmp_path / "tasks"
    shutil.copytree(FIXTURES / "projects" / "tasks", project)
    summaries = tmp_path / "cache" / "v2" / "summaries"
    stale, recent, unmarked = (summaries / (letter * 32) for letter in "abc")
    for build in (stale, recent, unmarked):
        (build / "ab").mkdir(parents=True)
        (build / "ab" / "ab12-x-0.json").write_text("{}")
    for build, age in ((stale, 8 * 24 * 3600), (recent, 3600)):
        (build / ".used").write_text("")
        then = time.time() - age
        os.utime(build / ".used", (then, then))
    forget_facts()
    use_store(None)
    assert check(capsys, str(project), "--cache-dir", str(tmp_path / "cache"))[0] == 1
    assert not stale.exists() and not unmarked.exists()
    assert (recent / "ab" / "ab12-x-0.json").exists()
    (own,) = [build for build in summaries.iterdir() if build != recent]
    assert (own / ".used").exists() and any(own.rglob("*.json"))


def test_the_parsed_catalog_is_kept_beside_the_cache_and_read_back(tmp_path) -> None:
    """A run with a results cache keeps the built-in YAML parsed, keyed by the files' contents:
    the next run reads what the parse gave; an edited file or a damaged copy is parsed again."""
    from deadline_lint.support import compiled

    first = tmp_path / "a.yaml"
    first.write_text("x: 1\n")
    parses: List[int] = []

    def parse(files):
        parses.append(len(files))
        return [(path.stem, data.decode()) for path, data in files]

    def valid(kept):
        return [stem for stem, _ in kept] == ["a"]

    folder = tmp_path / "cache"
    compiled.keep_in(str(folder))
    try:
        assert compiled.documents([first], parse, valid) == [("a", "x: 1\n")]
        assert compiled.documents([first], parse, valid) == [("a", "x: 1\n")]
        assert len(parses) == 1  # the second answer was read back
        (kept,) = folder.glob("catalog-*.marshal")
        kept.write_bytes(b"\x00damaged")
        assert compiled.documents([first], parse, valid) == [("a", "x: 1\n")] and len(parses) == 2
        first.write_text("x: 2\n")
        assert compiled.documents([first], parse, valid) == [("a", "x: 2\n")] and len(parses) == 3
        assert len(list(folder.glob("catalog-*.marshal"))) == 2
    finally:
        compiled.keep_in(None)


def test_a_check_reading_the_kept_catalog_does_not_import_yaml(tmp_path) -> None:
    """The pre-commit case: one changed file, the catalog kept by an earlier run."""
    import subprocess
    import sys

    source, args = one_file(tmp_path, "import requests\nrequests.get('http://x')\n")
    probe = (
        "import sys\nfrom deadline_lint.frontends.cli import main\ncode = main(['check', *sys.argv[1:]])\n"
        "print('yaml' in sys.modules, code)\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    source.write_text(source.read_text() + "# edited\n")
    runs.append(subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True).stdout)
    assert [run.splitlines()[-1] for run in runs] == ["True 1", "False 1", "False 1"]


def test_a_check_answered_from_the_cache_loads_no_rule_catalog_or_pool(tmp_path) -> None:
    """The warm run with nothing changed: its answers are read back, so it imports neither the
    rules, the catalog, the callers index, the worker pool nor the glob matcher."""
    import subprocess
    import sys

    _, args = one_file(tmp_path, "import requests\nrequests.get('http://x')\n")
    families = ("clock", "outbound", "retry", "spawn", "status", "trace", "registry")
    unwanted = (*(f"deadline_lint.families.{name}" for name in families), "deadline_lint.catalog",
                "deadline_lint.engine.checker",
                "deadline_lint.semantics.callers", "multiprocessing", "pathspec")
    probe = (
        "import sys\nfrom deadline_lint.frontends.cli import main\ncode = main(['check', *sys.argv[1:]])\n"
        f"print(sorted(m for m in sys.modules if m.startswith({unwanted!r})), code)\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    assert runs[0].splitlines()[-1] != "[] 1"  # the first run checks the file
    assert runs[1].splitlines()[-1] == "[] 1"


def test_the_pyproject_table_is_kept_beside_the_cache_and_an_invalid_file_still_fails(tmp_path) -> None:
    """A run with a results cache keeps the `[tool.deadline-lint]` table parsed, keyed by the
    file's bytes: the next run (one changed file) applies the same settings without importing
    tomllib; an edited pyproject.toml is parsed again, and one that is not TOML is an error
    whether a cache folder is given or not."""
    import subprocess
    import sys

    source, args = one_file(tmp_path, "import requests\nrequests.get('http://x')\nrequests.post('http://x')\n")
    pyproject = tmp_path / "project" / "pyproject.toml"
    pyproject.write_text('[tool.deadline-lint]\nper_path_ignores = {"svc.py" = ["DL101"]}\n')
    probe = (
        "import sys\nfrom deadline_lint.frontends.cli import main\ncode = main(['check', *sys.argv[1:]])\n"
        "print('tomllib' in sys.modules, code)\n"
    )

    def run() -> List[str]:
        source.write_text(source.read_text() + "# edited\n")
        out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True).stdout
        return out.splitlines()

    first, second = run(), run()
    assert first[-1] == "True 0" and second[-1] == "False 0"  # DL101 ignored both times
    assert len(list((tmp_path / "cache" / "v2").glob("pyproject-*.marshal"))) == 1
    pyproject.write_text("[tool.deadline-lint]\nselect = ['DL201']\n")
    assert run()[-1] == "True 0"
    pyproject.write_text("[tool.deadline-lint\n")
    failed = subprocess.run([sys.executable, "-m", "deadline_lint", "check", *args], capture_output=True, text=True)
    assert failed.returncode == 2 and "not valid TOML" in failed.stderr


def test_a_caller_added_in_another_module_is_seen_through_the_cache(tmp_path, capsys) -> None:
    """DL302 stays quiet on a retried method only start-up code calls; its answer depends on
    every module of the project (who calls it), so a request handler calling it, added in a
    module the file does not import, re-checks the file and reports the retry."""
    from deadline_lint.semantics.facts import forget_facts
    from deadline_lint.semantics.modules import forget_projects

    project = aged(_retry_project(tmp_path / "proj"))
    args = [str(project / "pkg" / "db.py"), "--cache-dir", str(tmp_path / "cache"), "--select", "DL302",
            "--format", "json"]
    forget_facts()
    assert json.loads(check(capsys, *args)[1]) == []
    (project / "pkg" / "routes.py").write_text(
        "from pkg.db import Database\n\n\nasync def read(db: Database):\n    return await db.connect()\n"
    )
    forget_facts()  # a new run: nothing this process learnt about the project's files
    forget_projects()
    found = json.loads(check(capsys, *args)[1])
    assert [(Path(f["path"]).name, f["line"]) for f in found] == [("db.py", 5)]


def _retry_project(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "db.py").write_text(
        "import backoff\n\n\nclass Database:\n"
        "    @backoff.on_exception(backoff.expo, Exception, max_tries=3)\n"
        "    async def connect(self):\n        return self\n"
    )
    (root / "pkg" / "app.py").write_text(
        "from pkg.db import Database\n\n\nasync def lifespan(app):\n    await Database().connect()\n    yield\n"
    )
    return root
