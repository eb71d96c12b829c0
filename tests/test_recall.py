"""bench/recall.py: the labelled set stays well formed, and a label is scored by its code on
its lines (or its `also` lines) in a snapshot extracted from a git directory."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import recall  # noqa: E402

SERVICE = '''import time

import requests


class Poller:
    def __init__(self):
        self.started = time.time()

    def fetch(self, url):
        return requests.get(url)

    def fetch_bounded(self, url):
        return requests.get(url, timeout=5)

    def expired(self, limit):
        return time.time() - self.started > limit
'''


def test_the_committed_labels_are_well_formed() -> None:
    entries = recall.load_labels(BENCH / "labelled" / "cross-function.yaml")
    bugs = [e for e in entries if e["kind"] == "bug"]
    assert len(bugs) >= 45 and len(entries) - len(bugs) >= 15
    assert all(len(e["commit"]) == 40 for e in entries)


def test_a_label_counts_its_code_on_its_lines_or_its_also_lines() -> None:
    entry = {"path": "a.py", "lines": [10, 11], "also": [3, "b.py:7"], "code": "DL201"}

    def finding(path, line, code="DL201"):
        return {"path": path, "line": line, "code": code}

    assert recall.judge(entry, [finding("a.py", 11)]) == {"hit": True, "where": "lines", "other_codes": []}
    assert recall.judge(entry, [finding("b.py", 7)])["where"] == "also"
    assert recall.judge(entry, [finding("a.py", 12), finding("b.py", 3)])["hit"] is False
    missed = recall.judge(entry, [finding("a.py", 10, "DL102")])
    assert missed == {"hit": False, "where": "", "other_codes": ["DL102"]}


def test_a_label_without_its_fields_is_refused(tmp_path) -> None:
    labels = tmp_path / "labels.yaml"
    labels.write_text("- id: x\n  kind: bug\n  code: DL101\n")
    with pytest.raises(SystemExit, match="lacks"):
        recall.load_labels(labels)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_pinned_snapshot_is_extracted_and_scored(tmp_path, monkeypatch, capsys) -> None:
    work = tmp_path / "work"
    (work / "svc").mkdir(parents=True)
    (work / "svc" / "poller.py").write_text(SERVICE)
    (work / "README.md").write_text("not python, not extracted\n")

    def git(*args, cwd=work):
        return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "snapshot")
    commit = git("rev-parse", "HEAD").strip()
    mirror = tmp_path / "mirror"
    git("clone", "-q", "--bare", str(work), str(mirror / "acme+svc" / "repo"), cwd=tmp_path)

    def label(name, kind, code, lines, also=()):
        return (f"- id: {name}\n  kind: {kind}\n  code: {code}\n  shape: attribute\n  repo: acme/svc\n"
                f"  commit: {commit}\n  path: svc/poller.py\n  lines: {list(lines)}\n  also: {list(also)}\n"
                f"  why: test\n")

    labels = tmp_path / "labels.yaml"
    labels.write_text(label("no-timeout", "bug", "DL101", [11, 11])
                      + label("bounded", "near-miss", "DL101", [14, 14])
                      + label("wall-timer", "bug", "DL201", [17, 17], also=[8]))
    cache = tmp_path / "cache"
    monkeypatch.setattr(sys, "argv", ["recall.py", "--labels", str(labels), "--mirror", str(mirror),
                                      "--cache", str(cache), "--entries"])
    recall.main()
    out = capsys.readouterr().out
    assert "| **all** | **2 / 2** | **1.00** | **0 / 1** |" in out
    assert "| no-timeout | bug | DL101 | attribute | found |" in out
    assert "| bounded | near-miss | DL101 | attribute | quiet |" in out
    snapshot = cache / f"acme+svc@{commit[:12]}"
    assert (snapshot / "svc" / "poller.py").read_text() == SERVICE
    assert not (snapshot / "README.md").exists() and (snapshot / "pyproject.toml").exists()
