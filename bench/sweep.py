"""Sweep deadline-lint over a corpus of real code: check and fix every file, count what
must never happen.

    python bench/sweep.py [--corpus DIR | --cache DIR] [--jobs N] [--no-thread-budget]

Two passes over the same files, with the profile the CLI would use for the corpus folder and
every rule selected (opt-in ones too):
  check   the engine on every file: files, findings per code, internal errors (DL003),
          files too deeply nested to analyse (DL007)
  fix     `fix --unsafe-fixes --thread-budget` on every file, in memory (nothing is written):
          files changed, fixes applied, fixes whose result does not parse, files whose fixes
          do not converge (DL005), internal errors while fixing (DL003), and files where
          fixing the fixed text changes it again (not idempotent)
Each pass reports its wall time. Exit status 1 when any must-be-zero count is not zero.
Not part of the test suite.
"""
from __future__ import annotations

import argparse
import ast
import os
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))  # this checkout, whatever is installed

from deadline_lint.engine.checker import Checker  # noqa: E402
from deadline_lint.families.registry import all_rules  # noqa: E402
from deadline_lint.fixes.loop import FixMode, check_for_fixing, fix_text  # noqa: E402
from deadline_lint.run.files import discover  # noqa: E402
from deadline_lint.settings.profile import Profile, resolve_profile  # noqa: E402
from deadline_lint.support.source import DecodeError, decode_source  # noqa: E402

_worker: Dict[str, object] = {}


def _init(profile: Profile, mode: FixMode) -> None:
    _worker["checker"] = Checker(profile, select=list(all_rules()))
    _worker["mode"] = mode


def _read(path: str) -> Optional[str]:
    try:
        return decode_source(Path(path).read_bytes())
    except (OSError, DecodeError):
        return None


def _check(paths: List[str]) -> Counter:
    checker: Checker = _worker["checker"]  # type: ignore[assignment]
    codes: Counter = Counter()
    for path in paths:
        codes.update(d.code for d in checker.check_path(path))
    return codes


def _fix(paths: List[str]) -> Tuple[Counter, List[str]]:
    checker: Checker = _worker["checker"]  # type: ignore[assignment]
    mode: FixMode = _worker["mode"]  # type: ignore[assignment]
    counts: Counter = Counter()
    bad: List[str] = []
    for path in paths:
        text = _read(path)
        if text is None or not checker.could_fire(text):
            continue
        try:
            result = fix_text(checker, text, path, mode)
        except Exception as exc:  # must not happen: the fix loop never raises
            counts["exceptions"] += 1
            bad.append(f"{path}: exception {type(exc).__name__}: {exc}")
            continue
        counts["fixes applied"] += result.fixed
        codes = {d.code for d in result.remaining}
        if "DL005" in codes:
            counts["not converging (DL005)"] += 1
            bad.append(f"{path}: DL005")
        if result.gave_up and "DL003" in codes:
            counts["fixes that do not parse"] += 1
            bad.append(f"{path}: a fix produced code that does not parse")
        elif "DL003" in codes:
            counts["internal errors while fixing (DL003)"] += 1
            bad.append(f"{path}: DL003")
        if not result.changed:
            continue
        counts["files changed"] += 1
        try:
            ast.parse(result.text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            counts["fixes that do not parse"] += 1
            bad.append(f"{path}: fixed text does not parse")
            continue
        if fix_text(checker, result.text, path, mode).text != result.text:
            counts["not idempotent"] += 1
            bad.append(f"{path}: fixing again changes it")
        if any(d.code == "DL003" for d in check_for_fixing(checker, result.text, path)):
            counts["internal errors after fixing (DL003)"] += 1
            bad.append(f"{path}: DL003 on the fixed text")
    return counts, bad


def _chunks(paths: List[str], jobs: int) -> List[List[str]]:
    size = max(1, len(paths) // (jobs * 8))
    return [paths[i:i + size] for i in range(0, len(paths), size)]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="a folder of .py files")
    parser.add_argument("--cache", type=Path, help="a bench cache: its corpus/ folder (not rebuilt)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("--no-thread-budget", action="store_true", help="fix without --thread-budget")
    args = parser.parse_args(argv)
    if args.corpus is None and args.cache is None:
        sys.path.insert(0, str(HERE))
        import corpus as corpus_mod

        corpus_dir = corpus_mod.build(verbose=False)
    else:
        corpus_dir = (args.corpus or args.cache / "corpus").resolve()
    # The corpus is data, usually under a git-ignored cache: ignore rules are not ours to apply.
    files = list(discover([str(corpus_dir)], respect_gitignore=False))
    if not files:
        print(f"no .py files under {corpus_dir}", file=sys.stderr)
        return 2
    profile = resolve_profile(None, corpus_dir)
    mode = FixMode(unsafe=True, thread_budget=not args.no_thread_budget)
    jobs = max(1, args.jobs)
    chunks = _chunks(files, jobs)

    with ProcessPoolExecutor(jobs, initializer=_init, initargs=(profile, mode)) as pool:
        list(pool.map(_check, _chunks(files[: jobs], jobs)))  # workers up before timing
        start = time.perf_counter()
        codes: Counter = sum(pool.map(_check, chunks), Counter())
        check_wall = time.perf_counter() - start
        start = time.perf_counter()
        fixed: Counter = Counter()
        bad: List[str] = []
        for counts, problems in pool.map(_fix, chunks):
            fixed.update(counts)
            bad.extend(problems)
        fix_wall = time.perf_counter() - start

    must_be_zero = {
        "internal errors (DL003)": codes.get("DL003", 0) + fixed["internal errors while fixing (DL003)"]
        + fixed["internal errors after fixing (DL003)"] + fixed["exceptions"],
        "fixes that do not parse": fixed["fixes that do not parse"],
        "fixes that do not converge (DL005)": fixed["not converging (DL005)"],
        "fixes that are not idempotent": fixed["not idempotent"],
    }
    print(f"corpus          {corpus_dir}")
    print(f"files           {len(files):,}")
    print(f"findings        {sum(c for code, c in codes.items() if not code.startswith('DL0')):,}")
    for code, count in sorted(codes.items()):
        print(f"  {code}           {count:,}")
    print(f"files changed   {fixed['files changed']:,} ({fixed['fixes applied']:,} fixes applied, "
          f"unsafe fixes and --thread-budget {'off' if args.no_thread_budget else 'on'})")
    for name, count in must_be_zero.items():
        print(f"{name:34} {count}")
    print(f"wall time       check {check_wall:.1f} s, fix {fix_wall:.1f} s ({jobs} processes)")
    for line in bad[:20]:
        print("  " + line)
    return 1 if any(must_be_zero.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
