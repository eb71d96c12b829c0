"""Benchmark deadline-lint against plain parsing on a corpus of real code.

    python bench/run.py [--set library|services | --corpus DIR] [--jobs N] [--python EXE]
                        [--json-out FILE]
                        [-- extra args for `deadline-lint check`]

Passes, each in its own subprocess, over the same files:
  ast            ast.parse of every file (the floor)
  ruff           `ruff check --select S113,RUF006,ASYNC --no-cache` (the peer users compare us
                 with; skipped when ruff is not installed); with --cache-passes also ruff-warm
  libcst         libcst.parse_module of every file (what deadline-lint builds on)
  deadline-lint  python -m deadline_lint check CORPUS --format json [extra args]
  dl-unfiltered  deadline-lint's engine (default rules, or those of `-- --select X`) with the
                 text prefilter off: every file parsed and walked, the cost when no file can
                 be skipped

`--all-rules` selects every rule, opt-in ones included, in both deadline-lint passes.

`--cache-passes` adds the results cache's figures (the passes above run with --no-cache):
  cache-cold     check CORPUS with an empty cache folder (the check plus writing the cache)
  cache-warm     the same again, nothing changed
  one-changed    the pre-commit case: one file of a project, edited, checked alone, with the
                 cache warm for the rest (the project is a copy, so the corpus is never
                 touched; `--changed-file` picks the file, relative to the corpus)

Each pass is measured from outside: wall clock, CPU (user + system, from
os.wait4, so it includes any worker processes the pass reaped) and peak RSS
(ru_maxrss of the largest single process, not a sum over workers).
Standard library only; not part of the test suite.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import corpus as corpus_mod  # noqa: E402

# The pre-commit case of --cache-passes: a large, much-imported module of each set.
CHANGED_FILE = {"library": "botocore-1.44.8/botocore/client.py",
                "services": "litellm-1.110.2/litellm/proxy/utils.py"}


def measure(cmd, env=None):
    """Run cmd; return (exit code, stdout, stderr, wall s, CPU s, peak MiB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (proc.returncode, out.read().decode(errors="replace"),
                err.read().decode(errors="replace"), wall,
                ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024)  # KiB on Linux


def importable(python, module, env=None):
    proc = subprocess.run([python, "-c", f"import {module}"], env=env,
                          capture_output=True, text=True)
    return proc.returncode == 0, (proc.stderr.strip().splitlines() or [""])[-1]


def tail(text, n=5):
    return "\n".join("    " + line for line in text.strip().splitlines()[-n:])


def baseline_pass(kind, python, list_file, jobs, env=None):
    code, out, err, wall, cpu, mib = measure(
        [python, str(HERE / "parse_pass.py"), kind, list_file, str(jobs)], env)
    if code != 0:
        return {"error": f"exit {code}\n{tail(err)}"}
    result = json.loads(out)
    return {"wall": wall, "cpu": cpu, "peak_mib": mib, "files": result["files"],
            "failed": result["failed"], "failures": result["failures"]}


def findings_of(doc):
    """The list of findings in deadline-lint's JSON, whatever its top level."""
    if isinstance(doc, list):
        return doc
    for key in ("findings", "diagnostics", "results", "violations"):
        if isinstance(doc.get(key), list):
            return doc[key]
    raise ValueError(f"no findings list among keys {sorted(doc)}")


PYCACHE = HERE / ".cache" / "pycache"


def checkout_env():
    """Measure this checkout's package, installed or not (its deps must be importable), with
    its bytecode compiled as an installed package has it (pip compiles on install). Without
    that, under PYTHONDONTWRITEBYTECODE every pass would also compile the package's sources,
    about 0.3 s per process that no user pays twice; the bytecode is kept in bench/.cache/."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "src"), env.get("PYTHONPATH")) if p)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


def compile_checkout(python):
    """The checkout's bytecode, before any pass is timed (see checkout_env)."""
    subprocess.run([python, "-m", "compileall", "-q", str(REPO / "src")], env=checkout_env(),
                   stdout=subprocess.DEVNULL, check=False)


def all_codes(python):
    """Every registered rule code, asked of the checkout being measured."""
    out = subprocess.run(
        [python, "-c", "from deadline_lint.families.registry import all_rules; print(','.join(all_rules()))"],
        capture_output=True, text=True, env=checkout_env(), check=True).stdout
    return [c for c in out.strip().split(",") if c]


def lint_pass(python, corpus_dir, jobs, extra):
    env = checkout_env()
    ok, why = importable(python, "deadline_lint", env)
    if not ok:
        return {"error": f"cannot import deadline_lint with {python}: {why}"}
    # The pinned corpora live under bench/.cache/, which this repository's .gitignore
    # lists: without --no-respect-gitignore the check would skip every file.
    cmd = [python, "-m", "deadline_lint", "check", str(corpus_dir), "--format", "json",
           "--jobs", str(jobs), "--no-respect-gitignore", *extra]
    if "--cache-dir" not in extra:
        cmd.append("--no-cache")  # the check itself, not a cached answer
    code, out, err, wall, cpu, mib = measure(cmd, env)
    last = (err.strip().splitlines() or ["(no stderr)"])[-1]
    if code not in (0, 1):  # 2 = usage or configuration error, else a crash
        return {"error": f"exit {code}: {last}\n{tail(err)}"}
    try:
        findings = findings_of(json.loads(out))
    except ValueError as exc:  # includes JSONDecodeError; exit 1 from a traceback
        return {"error": f"exit {code} without a JSON report ({exc}): {last}\n{tail(err)}"}
    codes = Counter(str(f.get("code", "?")) for f in findings)
    return {"wall": wall, "cpu": cpu, "peak_mib": mib, "exit": code,
            "findings": len(findings), "by_code": dict(sorted(codes.items())),
            "command": cmd}


# ruff's nearest rules to ours: requests without a timeout, dangling asyncio tasks, the
# flake8-async family. The peer a user compares us with, measured in the same run.
RUFF_SELECT = "S113,RUF006,ASYNC"


def ruff_pass(corpus_dir, cache_dir=None):
    """`ruff check` over the corpus (no cache unless `cache_dir`), or why it was skipped."""
    import shutil

    ruff = shutil.which("ruff", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if ruff is None:
        return {"skipped": "ruff is not installed (pip install ruff)"}
    cmd = [ruff, "check", str(corpus_dir), "--select", RUFF_SELECT, "--isolated", "--exit-zero",
           "--no-respect-gitignore", "--output-format", "json", "--quiet"]
    cmd += ["--cache-dir", cache_dir] if cache_dir else ["--no-cache"]
    code, out, err, wall, cpu, mib = measure(cmd)
    if code != 0:
        return {"error": f"exit {code}\n{tail(err)}"}
    return {"wall": wall, "cpu": cpu, "peak_mib": mib, "findings": len(json.loads(out or "[]")), "command": cmd}


def cache_passes(python, corpus_dir, jobs, extra, changed_file):
    """cache-cold, cache-warm and one-changed (see the module docstring)."""
    import shutil

    passes = {}
    with tempfile.TemporaryDirectory() as scratch:
        cache = ["--cache-dir", os.path.join(scratch, "cache")]
        passes["cache-cold"] = lint_pass(python, corpus_dir, jobs, [*extra, *cache])
        passes["cache-warm"] = lint_pass(python, corpus_dir, jobs, [*extra, *cache])
        relative = Path(changed_file)
        project = corpus_dir / relative.parts[0]
        if not (corpus_dir / relative).is_file():
            passes["one-changed"] = {"skipped": f"{relative} is not a file of the corpus"}
            return passes
        copy = Path(scratch) / "copy" / relative.parts[0]
        shutil.copytree(project, copy, symlinks=True)
        lint_pass(python, copy, jobs, [*extra, *cache])  # the copy's entries, warm
        edited = copy.parent / relative
        with open(edited, "a", encoding="utf-8") as handle:
            handle.write("# edited\n")
        passes["one-changed"] = lint_pass(python, edited, 1, [*extra, *cache])
        passes["one-changed"]["file"] = str(relative)
    return passes


def count(corpus_dir):
    files = sorted(str(p) for p in Path(corpus_dir).rglob("*.py") if p.is_file())
    lines = 0
    for path in files:  # also warms the page cache for all passes alike
        lines += corpus_mod.count_lines(Path(path).read_bytes())
    return files, lines


def report(res):
    lines = res["corpus"]["lines"]
    print(f"\ncorpus  {res['corpus']['dir']}")
    print(f"        {res['corpus']['files']:,} files, {lines:,} lines"
          + (f", {res['corpus']['dropped']} unparseable files dropped when built"
             if res["corpus"]["dropped"] is not None else ""))
    print(f"python  {res['python']}  jobs {res['jobs']}\n")
    print(f"{'pass':<14}{'wall s':>9}{'CPU s':>9}{'lines/CPU s':>13}"
          f"{'lines/wall s':>14}{'peak MiB':>10}  note")
    for name, p in res["passes"].items():
        if "error" in p or "skipped" in p:
            first, *rest = (p.get("error") or p["skipped"]).splitlines()
            print(f"{name:<14}{'-':>9}{'-':>9}{'-':>13}{'-':>14}{'-':>10}  "
                  + ("ERROR: " if "error" in p else "skipped: ") + first)
            for line in rest:
                print(line)
            continue
        note = (f"{p['failed']} files failed to parse" if p.get("failed")
                else f"{p['findings']} findings" if "findings" in p else "")
        if "file" in p:  # one file: per-line rates over the corpus mean nothing
            print(f"{name:<14}{p['wall']:>9.2f}{p['cpu']:>9.2f}{'-':>13}{'-':>14}"
                  f"{p['peak_mib']:>10.0f}  {p['file']}, {note}")
            continue
        print(f"{name:<14}{p['wall']:>9.2f}{p['cpu']:>9.2f}{lines / p['cpu']:>13,.0f}"
              f"{lines / p['wall']:>14,.0f}{p['peak_mib']:>10.0f}  {note}")
    for pair, r in res["ratios"].items():
        print(f"\n{pair}: {r['cpu']:.1f}x CPU, {r['wall']:.1f}x wall,"
              f" {r['peak_mib']:.1f}x peak RSS", end="")
    print()
    lint = res["passes"].get("deadline-lint", {})
    if "by_code" in lint:
        codes = ", ".join(f"{c} {n}" for c, n in lint["by_code"].items()) or "none"
        print(f"findings by code: {codes}")


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path,
                    help="directory of .py files (default: build the --set's pinned corpus)")
    corpus_mod.add_set_argument(ap)
    ap.add_argument("--jobs", type=int, default=1,
                    help="worker processes for every pass, passed to deadline-lint "
                         "as --jobs N (default 1)")
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter for the passes (default: this one)")
    ap.add_argument("--json-out", type=Path, help="also save the results here")
    ap.add_argument("--skip-libcst", action="store_true",
                    help="leave out the libcst pass (the slowest; its figure changes only with libcst)")
    ap.add_argument("--all-rules", action="store_true",
                    help="select every rule (opt-in ones too) in both deadline-lint passes")
    ap.add_argument("--cache-passes", action="store_true",
                    help="also measure the results cache: cold, warm and one changed file")
    ap.add_argument("--changed-file",
                    help="for one-changed: a file of the corpus, relative to it "
                         "(default: a large module of the set's corpus)")
    args = ap.parse_args(argv)
    args.changed_file = args.changed_file or CHANGED_FILE[args.set_name]

    if args.corpus is None:
        corpus_dir = corpus_mod.build(verbose=False, set_name=args.set_name)
        dropped = corpus_mod.dropped_count(set_name=args.set_name)
    else:
        corpus_dir, dropped = args.corpus.resolve(), None
    files, lines = count(corpus_dir)
    if not files:
        sys.exit(f"no .py files under {corpus_dir}")

    res = {"corpus": {"dir": str(corpus_dir), "files": len(files), "lines": lines,
                      "dropped": dropped},
           "python": args.python, "python_version": subprocess.run(
               [args.python, "-c", "import platform; print(platform.python_version())"],
               capture_output=True, text=True).stdout.strip(),
           "jobs": args.jobs, "extra_args": extra,
           "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "passes": {}, "ratios": {}}
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(files) + "\n")
    compile_checkout(args.python)
    try:
        for kind in ("ast",) if args.skip_libcst else ("ast", "libcst"):
            print(f"running {kind} pass ...", flush=True)
            ok, why = importable(args.python, kind)
            res["passes"][kind] = (baseline_pass(kind, args.python, f.name, args.jobs)
                                   if ok else {"skipped": f"{kind} not importable ({why})"})
        codes = all_codes(args.python) if args.all_rules else []
        if codes:
            extra = ["--select", ",".join(codes), *extra]
        print("running ruff ...", flush=True)
        res["passes"]["ruff"] = ruff_pass(corpus_dir)
        print("running deadline-lint ...", flush=True)
        res["passes"]["deadline-lint"] = lint_pass(args.python, corpus_dir, args.jobs, extra)
        if "error" not in res["passes"]["deadline-lint"]:
            print("running deadline-lint with the prefilter off ...", flush=True)
            env = checkout_env()
            if codes:
                env["DL_BENCH_SELECT"] = ",".join(codes)
            elif "--select" in extra[:-1]:  # the same rules as the filtered pass
                env["DL_BENCH_SELECT"] = extra[extra.index("--select") + 1]
            res["passes"]["dl-unfiltered"] = baseline_pass("engine", args.python, f.name, args.jobs, env)
        if args.cache_passes and "error" not in res["passes"]["deadline-lint"]:
            print("running the results cache passes ...", flush=True)
            res["passes"].update(cache_passes(args.python, corpus_dir, args.jobs, extra, args.changed_file))
            with tempfile.TemporaryDirectory() as ruff_cache:
                ruff_pass(corpus_dir, ruff_cache)  # fills ruff's cache
                res["passes"]["ruff-warm"] = ruff_pass(corpus_dir, ruff_cache)
    finally:
        os.unlink(f.name)

    for name in ("deadline-lint", "dl-unfiltered"):
        lint = res["passes"].get(name, {})
        for base in ("ast", "libcst", "ruff"):
            b = res["passes"].get(base, {})
            if "cpu" in lint and "cpu" in b:
                res["ratios"][f"{name} / {base}"] = {k: lint[k] / b[k] for k in ("cpu", "wall", "peak_mib")}
    for name, base in (("cache-warm", "ruff-warm"),):
        lint, b = res["passes"].get(name, {}), res["passes"].get(base, {})
        if "cpu" in lint and "cpu" in b:
            res["ratios"][f"{name} / {base}"] = {k: lint[k] / b[k] for k in ("cpu", "wall", "peak_mib")}
    report(res)
    if args.json_out:
        args.json_out.write_text(json.dumps(res, indent=2) + "\n")
        print(f"results saved to {args.json_out}")
    return 2 if any("error" in p for p in res["passes"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
