"""What one file may cost (issue 35, item 7): a file over the limit is DL004 in every front
end, before it is parsed, so a check's memory is bounded whatever the file holds."""
from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from deadline_lint.engine.reading import MAX_FILE_BYTES, unusable_text
from deadline_lint.frontends.cli import main
from deadline_lint.frontends.lsp.server_engine import Engine
from deadline_lint.run import api

# A generated module: every line something a rule looks at (the shape that took 1.6 GB at 5 MB).
LINE = "def call_{n}(url):\n    return requests.get(url)\n\n"


def generated(size: int) -> str:
    lines = ["import requests\n\n"]
    total, n = len(lines[0]), 0
    while total < size:
        lines.append(LINE.format(n=n))
        total += len(lines[-1])
        n += 1
    return "".join(lines)


def test_a_generated_file_over_the_limit_is_dl004_in_every_front_end(tmp_path: Path, monkeypatch) -> None:
    text = generated(MAX_FILE_BYTES + 500_000)
    monkeypatch.chdir(tmp_path)
    api.reset()
    (tmp_path / "gen.py").write_text(text)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["check", "--no-cache", "--format", "json", "gen.py"]) == 1
    on_disk = [(d["line"], d["code"], d["message"]) for d in json.loads(out.getvalue())]
    assert on_disk == [(1, "DL004", "file too large to check (2.5 MiB, limit 2 MiB)")]
    assert [(d.line, d.code, d.message) for d in api.lint_text(text, "gen.py").diagnostics] == on_disk
    assert [(d.line, d.code, d.message) for d in Engine().check(text, str(tmp_path / "gen.py")).diagnostics] == on_disk
    (fixed,) = api.fix_paths(["gen.py"], api.Options())
    assert [(d.line, d.code, d.message) for d in fixed.diagnostics] == on_disk and not fixed.changed


def test_a_project_module_is_followed_up_to_the_same_limit() -> None:
    from deadline_lint.semantics.modules import MAX_MODULE_BYTES

    assert MAX_MODULE_BYTES == MAX_FILE_BYTES  # semantics/ sits below engine/: two constants, one bound


def test_the_limit_counts_bytes_not_characters() -> None:
    assert unusable_text("x" * MAX_FILE_BYTES, "a.py") is None
    over = unusable_text("x" * (MAX_FILE_BYTES + 1), "a.py")
    assert over is not None and over.code == "DL004"
    wide = "\u00e9" * (MAX_FILE_BYTES // 2 + 1)  # two bytes each in UTF-8: over, in fewer characters
    assert len(wide) < MAX_FILE_BYTES and getattr(unusable_text(wide, "a.py"), "code", None) == "DL004"
