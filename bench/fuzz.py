"""The fuzzer at length: tests/test_fuzz.py's three generators (the service grammar,
hypothesmith's Python grammar, mutants of the fixtures) with a larger count than CI's.

    python bench/fuzz.py [--count N] [--seed S] [--jobs J]

CI runs the same tests with DEADLINE_LINT_FUZZ_COUNT's default (40 programs per generator,
a third of that for hypothesmith); this runs `--count` (2,000 by default) with one seed for
all three, printed first so a failure can be replayed with `--seed`. Bounded by the count,
not by time. Exit status is pytest's: 0 when every program passed. Not part of the suite.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000, help="programs per generator (default 2000)")
    parser.add_argument("--seed", type=int, default=None, help="replay a run (default: a random seed)")
    parser.add_argument("--jobs", type=int, default=0, help="pytest-xdist workers (default 0: in this process)")
    args = parser.parse_args()
    if args.count < 1:
        parser.error("--count must be at least 1")
    seed = random.randrange(2**32) if args.seed is None else args.seed
    print(f"fuzz: seed={seed} count={args.count}", flush=True)
    env = dict(os.environ, DEADLINE_LINT_FUZZ_SEED=str(seed), DEADLINE_LINT_FUZZ_COUNT=str(args.count))
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")  # this checkout
    command = [sys.executable, "-m", "pytest", "-q", "-s", "-n", str(args.jobs), "-p", "no:cacheprovider",
               str(ROOT / "tests" / "test_fuzz.py")]
    return subprocess.call(command, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
