"""Print the findings to judge by hand: outside tests, all or a seeded sample per rule.

    python bench/sample.py FINDINGS.json --corpus DIR [--code DL101] [--n 40] [--seed 0]
                           [--context 3] [--exclude OTHER.json]

FINDINGS.json is a file written by `bench/findings.py --out` (paths relative to the corpus).
Per code, every finding outside tests when there are at most N of them, else a
`random.Random(seed)` sample of N, in a stable order, each with a few lines of source
around it. `--exclude` leaves out findings already in another mode's file (the default
mode's, say), so a wider mode's new findings can be judged alone.
Standard library only; not part of the test suite.
"""
import argparse
import json
import random
from collections import defaultdict
from pathlib import Path

TEST_PARTS = {"tests", "test", "testing", "conftest.py"}


def in_tests(path: str) -> bool:
    return any(p in TEST_PARTS or p.startswith("test_") or p.endswith("_test.py")
               for p in path.split("/"))


def key(row: dict) -> tuple:
    return row["code"], row["path"], row["line"], row["column"], row["message"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("findings", type=Path)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--code", help="only this code")
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--context", type=int, default=3)
    ap.add_argument("--exclude", type=Path)
    args = ap.parse_args()
    rows = json.loads(args.findings.read_text())
    seen = {key(r) for r in json.loads(args.exclude.read_text())} if args.exclude else set()
    by_code = defaultdict(list)
    for row in rows:
        if not in_tests(row["path"]) and key(row) not in seen:
            by_code[row["code"]].append(row)
    for code in sorted(by_code):
        if args.code and code != args.code:
            continue
        found = sorted(by_code[code], key=key)
        chosen = found if len(found) <= args.n else sorted(
            random.Random(args.seed).sample(found, args.n), key=key)
        print(f"##### {code}: {len(chosen)} of {len(found)} outside tests")
        for i, row in enumerate(chosen, 1):
            lines = (args.corpus / row["path"]).read_text(errors="replace").splitlines()
            lo, hi = max(row["line"] - 1 - args.context, 0), row["line"] + args.context
            print(f"--- {code} #{i} {row['path']}:{row['line']}  {row['message']}")
            for n in range(lo, min(hi, len(lines))):
                mark = ">" if n + 1 == row["line"] else " "
                print(f"{mark}{n + 1:6} {lines[n]}")


if __name__ == "__main__":
    main()
