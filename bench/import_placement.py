"""Is the plain import placement (deadline_lint/import_block.py) what LibCST writes?

    python bench/import_placement.py [--corpus DIR] [--limit N]

For every file of the corpus and each of a few import sets, add the imports both ways: the
plain path when it takes the file, LibCST's AddImportsVisitor always. Counts files the plain
path took, files it left to LibCST, and files where the two differ (must be 0; the first few
are printed). Exit status 1 on any difference.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Optional, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import libcst  # noqa: E402
from libcst.codemod import CodemodContext  # noqa: E402
from libcst.codemod.visitors import AddImportsVisitor  # noqa: E402

from deadline_lint.fixes.import_block import add_imports_plainly  # noqa: E402
from deadline_lint.semantics.local.imports import parse_import  # noqa: E402
from deadline_lint.support.source import DecodeError, decode_source  # noqa: E402

IMPORT_SETS = (
    ("time",),
    ("from time import monotonic",),
    ("asyncio", "time"),
    ("os", "from os import path"),  # often there already: nothing to add, or LibCST merges
    ("aiohttp", "from typing import Optional", "from requests import Timeout"),
)


def _libcst_adds(tree: Optional[libcst.Module], imports: Tuple[str, ...]) -> Optional[str]:
    """fixes.add_imports on an already parsed module (one parse per file, not per set)."""
    if tree is None:
        return None
    context = CodemodContext()
    for spec in imports:
        parsed = parse_import(spec)
        assert parsed is not None
        AddImportsVisitor.add_needed_import(context, *parsed)
    try:
        return AddImportsVisitor(context).transform_module(tree).code
    except Exception:
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=str(HERE / ".cache" / "corpus"))
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    paths = sorted(Path(args.corpus).rglob("*.py"))
    if args.limit:
        paths = paths[: args.limit]
    counts: Counter = Counter()
    plain_s = libcst_s = 0.0
    shown = 0
    for path in paths:
        try:
            text = decode_source(path.read_bytes())
        except (OSError, DecodeError):
            counts["unreadable"] += 1
            continue
        began = time.process_time()
        try:
            tree = libcst.parse_module(text)
        except Exception:  # what add_imports does when LibCST cannot take the file
            tree = None
        libcst_s += time.process_time() - began
        for imports in IMPORT_SETS:
            began = time.process_time()
            plain = add_imports_plainly(text, imports)
            middle = time.process_time()
            reference = _libcst_adds(tree, imports)
            plain_s += middle - began
            libcst_s += time.process_time() - middle
            if plain is None:
                counts["left to LibCST"] += 1
                if reference is None:
                    counts["LibCST cannot either"] += 1
            elif plain != reference:
                counts["different"] += 1
                if shown < 5:
                    shown += 1
                    print(f"differs: {path} {imports}", file=sys.stderr)
            else:
                counts["same"] += 1
    print(f"files {len(paths)}, import sets {len(IMPORT_SETS)}: {dict(counts)}")
    print(f"CPU s: plain path {plain_s:.1f} (files it took and declined), LibCST {libcst_s:.1f}")
    return 1 if counts["different"] else 0


if __name__ == "__main__":
    sys.exit(main())
