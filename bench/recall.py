"""Recall on labelled real bugs, and false positives on labelled near misses.

    python bench/recall.py [--labels bench/labelled/cross-function.yaml]
                           [--mirror /work/.mirror] [--cache bench/.cache/labelled]
                           [--entries] [--json-out FILE]

For each repository snapshot named in the labels (repo and commit), the `.py` files at that
commit are extracted from its fetched git directory (`MIRROR/<owner>+<name>/repo`) into
`CACHE/<owner>+<name>@<commit12>/`, once; an empty `pyproject.toml` is written at the top so
that the snapshot is its own project root and nothing above it (this repository's own
settings) is read. Then `deadline-lint check` runs once per snapshot on the labelled files
only (the project index reads the rest of the snapshot when a rule follows a name into
another module), with this checkout's `src/` first on PYTHONPATH, every rule selected,
`--profile bench/wide.yaml` (the project index on), `--format json --no-cache`.

A label counts as found (a bug) or fired (a near miss) when a finding of its `code` lands in
its file on a line of its `lines` range, or on one of its `also` lines (the other end of the
same defect: the stamp of an attribute, the tuple a filter names; `also` may name another
file as "path:line"). A finding of another code on those lines is shown, not counted.

Prints per family and per shape: bugs found / total and near misses fired / total, then,
with --entries, every label and what the tool said. See bench/labelled/README.md for the
label format. Standard library and PyYAML only; not part of the test suite.
"""
import argparse
import json
import os
import subprocess
import sys
import tarfile
from collections import defaultdict
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
FAMILIES = {"1": "outbound", "2": "clock", "3": "retry", "4": "status", "5": "spawn", "6": "trace"}
KINDS = ("bug", "near-miss")
SHAPES = ("parameter", "attribute", "predicate", "default", "return", "alias", "in-function")
REQUIRED = ("id", "kind", "repo", "commit", "path", "lines", "code", "shape", "why")


def load_labels(path):
    entries = yaml.safe_load(Path(path).read_text())
    seen = set()
    for entry in entries:
        missing = [key for key in REQUIRED if key not in entry]
        if missing:
            raise SystemExit(f"{path}: label {entry.get('id', '?')} lacks {', '.join(missing)}")
        if entry["id"] in seen:
            raise SystemExit(f"{path}: label id {entry['id']} is used twice")
        seen.add(entry["id"])
        if entry["kind"] not in KINDS or entry["shape"] not in SHAPES:
            raise SystemExit(f"{path}: label {entry['id']}: kind must be one of {KINDS}, shape one of {SHAPES}")
        start, end = entry["lines"]
        if not 0 < start <= end:
            raise SystemExit(f"{path}: label {entry['id']}: lines must be [start, end] with 0 < start <= end")
    return entries


def snapshot_dir(cache, repo, commit):
    return Path(cache) / f"{repo.replace('/', '+')}@{commit[:12]}"


def extract(mirror, cache, repo, commit):
    """The snapshot's .py files at `commit`, extracted once (a marker file says it finished)."""
    target = snapshot_dir(cache, repo, commit)
    done = target / ".extracted"
    if done.exists():
        return target
    gitdir = Path(mirror) / repo.replace("/", "+") / "repo"
    if not gitdir.exists():
        raise SystemExit(f"{repo}: no fetched git directory at {gitdir} (fetch github:{repo} first)")
    target.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "--git-dir", str(gitdir), "archive", "--format=tar", commit, "--", "*.py"],
                             capture_output=True, check=True)
    tar_path = target / ".snapshot.tar"
    tar_path.write_bytes(archive.stdout)
    with tarfile.open(tar_path) as tar:
        members = [m for m in tar.getmembers()
                   if m.isfile() and not os.path.isabs(m.name) and ".." not in m.name.split("/")]
        # the "data" filter refuses links and device files where the Python has it (3.11.4+)
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        tar.extractall(target, members=members, **safe)
    tar_path.unlink()
    (target / "pyproject.toml").write_text("# a root marker with no tool settings, so nothing above is read\n")
    done.write_text(commit + "\n")
    return target


def every_code(env):
    out = subprocess.run([sys.executable, "-m", "deadline_lint", "rules"], env=env,
                         capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines()[1:] if line.startswith("DL") and not line.startswith("DL0")]


def check(root, files, env, codes):
    cmd = [sys.executable, "-m", "deadline_lint", "check", *files, "--format", "json", "--no-cache", "--exit-zero",
           "--no-respect-gitignore", "--select", ",".join(codes), "--profile", str(HERE / "wide.yaml")]
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{root}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    rows = json.loads(proc.stdout)
    for row in rows:
        row["path"] = os.path.relpath(os.path.join(root, row["path"]), root).replace(os.sep, "/")
    return rows, cmd


def accepted_lines(entry):
    """(path, line) pairs where a finding of the label's code counts."""
    start, end = entry["lines"]
    places = {(entry["path"], line) for line in range(start, end + 1)}
    for extra in entry.get("also", []):
        if isinstance(extra, int):
            places.add((entry["path"], extra))
        else:
            path, _, line = str(extra).rpartition(":")
            places.add((path, int(line)))
    return places


def judge(entry, findings):
    places = accepted_lines(entry)
    start, end = entry["lines"]
    primary = {(entry["path"], line) for line in range(start, end + 1)}
    on_place = [f for f in findings if (f["path"], f["line"]) in places]
    same = [f for f in on_place if f["code"] == entry["code"]]
    return {
        "hit": bool(same),
        "where": "lines" if any((f["path"], f["line"]) in primary for f in same) else ("also" if same else ""),
        "other_codes": sorted({f["code"] for f in on_place if f["code"] != entry["code"]}),
    }


def family(code):
    return FAMILIES.get(code[2], "?")


def table(title, key, results):
    rows = defaultdict(lambda: [0, 0, 0, 0])
    for entry, verdict in results:
        row = rows[key(entry)]
        index = 0 if entry["kind"] == "bug" else 2
        row[index] += verdict["hit"]
        row[index + 1] += 1
    total = [sum(r[i] for r in rows.values()) for i in range(4)]
    lines = [f"| {title} | bugs found / total | recall | near misses fired / total |", "|---|---:|---:|---:|"]
    for name in sorted(rows):
        found, bugs, fired, misses = rows[name]
        recall = f"{found / bugs:.2f}" if bugs else "-"
        lines.append(f"| {name} | {found} / {bugs} | {recall} | {fired} / {misses} |")
    recall = f"{total[0] / total[1]:.2f}" if total[1] else "-"
    lines.append(f"| **all** | **{total[0]} / {total[1]}** | **{recall}** | **{total[2]} / {total[3]}** |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", default=str(HERE / "labelled" / "cross-function.yaml"))
    parser.add_argument("--mirror", default="/work/.mirror", help="where fetched repositories live (OWNER+NAME/repo)")
    parser.add_argument("--cache", default=str(HERE / ".cache" / "labelled"))
    parser.add_argument("--entries", action="store_true", help="also list every label and its verdict")
    parser.add_argument("--json-out", help="save every label with its verdict and the findings on its lines")
    args = parser.parse_args()

    entries = load_labels(args.labels)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    codes = every_code(env)
    by_snapshot = defaultdict(list)
    for entry in entries:
        by_snapshot[(entry["repo"], entry["commit"])].append(entry)

    results = []
    command = None
    for (repo, commit), group in sorted(by_snapshot.items()):
        root = extract(args.mirror, args.cache, repo, commit)
        files = sorted({entry["path"] for entry in group})
        absent = [f for f in files if not (root / f).is_file()]
        if absent:
            raise SystemExit(f"{repo}@{commit[:12]}: labelled files not in the snapshot: {', '.join(absent)}")
        findings, command = check(root, files, env, codes)
        for entry in group:
            results.append((entry, judge(entry, findings)))

    bugs = sum(entry["kind"] == "bug" for entry in entries)
    print(f"labels: {args.labels} ({len(entries)}: {bugs} bugs, {len(entries) - bugs} near misses; "
          f"{len(by_snapshot)} snapshots)")
    if command:
        options = command[command.index("--format"):]
        options[options.index("--profile") + 1] = "bench/wide.yaml"
        print(f"each snapshot: cd SNAPSHOT && python -m deadline_lint check FILES {' '.join(options)}\n")
    print(table("family", lambda e: family(e["code"]), results))
    print()
    print(table("shape", lambda e: e["shape"], results))
    print()
    print(table("code", lambda e: e["code"], results))
    if args.entries:
        print("\n| label | kind | code | shape | verdict | other codes on its lines |\n|---|---|---|---|---|---|")
        for entry, verdict in results:
            said = ("found" if entry["kind"] == "bug" else "FIRED") if verdict["hit"] else (
                "missed" if entry["kind"] == "bug" else "quiet")
            if verdict["where"] == "also":
                said += " (on an also line)"
            print(f"| {entry['id']} | {entry['kind']} | {entry['code']} | {entry['shape']} | {said} | "
                  f"{', '.join(verdict['other_codes']) or ''} |")
    if args.json_out:
        saved = [dict(entry, verdict=verdict) for entry, verdict in results]
        Path(args.json_out).write_text(json.dumps(saved, indent=1))


if __name__ == "__main__":
    main()
