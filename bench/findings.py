"""Checksums of the corpus findings, for "a refactor changes no finding".

    python bench/findings.py [--set library|services | --corpus DIR]
                             [--modes default,all,index,wide] [--out DIR]

Each mode runs `deadline-lint check CORPUS --format json --no-cache` in a subprocess (this
checkout's `src/` first on PYTHONPATH) and prints the md5 of its findings (every field of
the JSON output, paths relative to the corpus, sorted), the count and the count per
code. `--set services` reads the services corpus (build it first with
`python bench/corpus.py --set services`). `--out DIR` also saves each mode's normalised
findings, so two runs can be diffed.

Modes:
  default  the default rules
  all      every rule, opt-in ones included
  index    every rule with the project index on
  wide     every rule, the project index on, and bench/wide.yaml's budget names
Standard library only; not part of the test suite.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import corpus as corpus_mod  # noqa: E402


def every_code(env):
    out = subprocess.run([sys.executable, "-m", "deadline_lint", "rules"], env=env,
                         capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines()[1:] if line.startswith("DL") and not line.startswith("DL0")]


def normalised(doc, corpus):
    """Every field of every finding, the path relative to the corpus, in a fixed order."""
    rows = []
    for item in doc:
        item = dict(item, path=os.path.relpath(item["path"], corpus))
        rows.append(item)
    rows.sort(key=lambda r: json.dumps(r, sort_keys=True))
    return rows


def run_mode(mode, corpus, env, codes, tmp):
    cmd = [sys.executable, "-m", "deadline_lint", "check", str(corpus), "--format", "json", "--no-cache", "--exit-zero",
           "--no-respect-gitignore"]  # the corpus lives under a git-ignored folder
    if mode != "default":
        cmd += ["--select", ",".join(codes)]
    if mode == "index":
        profile = Path(tmp) / "index.yaml"
        profile.write_text("project_index: true\n")
        cmd += ["--profile", str(profile)]
    if mode == "wide":
        cmd += ["--profile", str(HERE / "wide.yaml")]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{mode}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    rows = normalised(json.loads(proc.stdout), corpus)
    if not rows:
        raise SystemExit(f"{mode}: no findings at all: is {corpus} the corpus?")
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", help="default: the --set's corpus folder under bench/.cache")
    corpus_mod.add_set_argument(parser)
    parser.add_argument("--modes", default="default,all,index,wide")
    parser.add_argument("--out")
    args = parser.parse_args()
    corpus = Path(args.corpus or corpus_mod.set_root(corpus_mod.DEFAULT_CACHE, args.set_name) / "corpus").resolve()
    env = dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    codes = every_code(env)
    with tempfile.TemporaryDirectory() as tmp:
        for mode in args.modes.split(","):
            rows = run_mode(mode, corpus, env, codes, tmp)
            blob = json.dumps(rows, sort_keys=True).encode()
            counts = Counter(r["code"] for r in rows)
            print(f"{mode:8} md5 {hashlib.md5(blob).hexdigest()}  {len(rows):6} findings  "
                  + " ".join(f"{c}:{n}" for c, n in sorted(counts.items())))
            if args.out:
                Path(args.out).mkdir(parents=True, exist_ok=True)
                (Path(args.out) / f"{mode}.json").write_text(json.dumps(rows, indent=0))


if __name__ == "__main__":
    main()
