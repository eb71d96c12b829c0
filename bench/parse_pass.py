"""One baseline pass for bench/run.py: parse every listed file, nothing else.

    python bench/parse_pass.py {ast|libcst|engine} FILE_LIST [JOBS]

`engine` runs deadline-lint's Checker (default rules, or DEADLINE_LINT_BENCH_SELECT) on every file with its text
prefilter switched off, so every file is parsed and walked: the cost when nothing can be skipped.

FILE_LIST holds one path a line. Prints a JSON object with the number of files
parsed and the ones that failed. Timing is taken from outside by the caller
(wall clock and os.wait4 rusage), so interpreter start-up is included, as it
is for deadline-lint.
"""

import json
import sys
import warnings


def parse_ast(data):
    import ast
    ast.parse(data)


def parse_libcst(data):
    import libcst
    libcst.parse_module(data)


_checker = None


def check_engine(data):
    global _checker
    if _checker is None:
        import os

        from deadline_lint.engine.checker import Checker
        # bench/run.py passes the rules of `--all-rules` or `-- --select X` (default: default rules).
        codes = [c for c in os.environ.get("DL_BENCH_SELECT", "").split(",") if c]
        _checker = Checker(select=codes)
        _checker.prefilter = False  # parse every file and walk it for every rule
    found = _checker.check_bytes(data, "corpus.py")
    tool_errors = [d for d in found if d.code < "DL100"]
    if tool_errors:
        raise RuntimeError(tool_errors[0].message)


PARSERS = {"ast": parse_ast, "libcst": parse_libcst, "engine": check_engine}


def parse_one(args):
    kind, path = args
    warnings.simplefilter("ignore")  # SyntaxWarning on old escape sequences
    with open(path, "rb") as f:
        data = f.read()
    try:
        PARSERS[kind](data)
    except Exception as exc:  # noqa: BLE001 - report, don't die
        return f"{path}: {type(exc).__name__}"
    return None


def main():
    kind, list_file = sys.argv[1], sys.argv[2]
    jobs = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    with open(list_file) as f:
        tasks = [(kind, line.rstrip("\n")) for line in f if line.strip()]
    if kind == "libcst":
        import libcst  # noqa: F401 - fail early, before forking workers
    if jobs > 1:
        import multiprocessing
        with multiprocessing.Pool(jobs) as pool:
            results = pool.map(parse_one, tasks, chunksize=16)
    else:
        results = [parse_one(t) for t in tasks]
    failures = [r for r in results if r]
    json.dump({"files": len(tasks), "failed": len(failures), "failures": failures[:20]},
              sys.stdout)


if __name__ == "__main__":
    main()
