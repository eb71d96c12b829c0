"""A grep-based probe for retry policies that admit timeouts, found without deadline-lint's code.

    python bench/retry_probe.py TREE [--findings FINDINGS.json] [--list]

It reads every `.py` file under TREE as text (no ast, nothing from deadline_lint) and finds
retry policies written with a library the file imports, whose text lets timeouts through:

- tenacity `@retry` / `retry(...)` / `Retrying(...)` / `AsyncRetrying(...)` with no `retry=`
  filter, or whose filter names a timeout class outside a `not_exception_type` / `unless`;
- retrying `@retry` / `retry(...)` / `Retrying(...)` with no `retry_on_exception=`;
- backoff `on_exception(...)` whose exception argument names a timeout class or `Exception`,
  with no `giveup=` and not `max_tries=1` (one attempt);
- stamina `retry(...)` / `retry_context(...)` whose `on=` names a timeout class or
  `Exception`;
- google-api-core `Retry(...)` / `AsyncRetry(...)` whose predicate names `DeadlineExceeded`;
- urllib3 `Retry(...)` (also from requests.adapters) unless `read=0/False`, `total=0/False`
  or `Retry(0)`/`Retry(False)`;
- redis-py `Retry(...)` without `supported_errors=`, or naming a timeout in it; and
  `retry_on_timeout=True`;
- aiohttp_retry `ExponentialRetry(...)` (and `RandomRetry`, `FibonacciRetry`, `JitterRetry`,
  `ListRetry`, `RetryOptions`) whose `exceptions=` names a timeout class or `Exception`
  (without `exceptions=` only statuses are retried), unless `attempts=1`.

With `--findings` (the JSON of `deadline-lint check --format json`, or bench/findings.py's
normalised output, paths relative to TREE), it counts how many of those policies have a
DL301 or DL302 finding on one of their lines. `--list` prints every policy found and whether
it is flagged. Finding the policies uses the standard library only; a rough instrument, not
an oracle: read what it lists.

Retries no request waits for. A retry only start-up, shutdown, a health probe or a background
task reaches spends nobody's deadline, and DL301/DL302 are quiet on it on purpose (issue 18).
So the probe also prints its figures for the policies a request may wait on, leaving out
those whose def (the decorated def, or the def the policy is built in) runs outside any
request by deadline-lint's own lifecycle reading (`analysis/lifecycle.ProjectLifecycle`:
the def's name, a task nobody awaits, every caller in the project being such code). That
split is the tool's, not the probe's: whether it is right is judged by hand (bench/judged),
and `--list` marks each such policy `lifecycle`. A policy outside any def (a class attribute,
a module constant) is used later by whoever reads it and counts as reachable. Without
deadline-lint importable the probe prints the first figure only.
"""
import argparse
import json
import os
import re
import sys
from collections import defaultdict

TIMEOUT = (
    r"(?:\b[A-Za-z_][\w.]*Timeout\w*\b|\bTimeoutError\b|\bDeadlineExceeded\b"
    r"|\bsocket\.timeout\b|\bCancelledError\b)"
)
EVERY = r"(?:(?<![\w.])(?:Exception|BaseException)\b)"
IMPORTS = {
    "tenacity": r"^\s*(?:from\s+tenacity\b|import\s+tenacity\b)",
    "retrying": r"^\s*(?:from\s+retrying\b|import\s+retrying\b)",
    "backoff": r"^\s*(?:from\s+backoff\b|import\s+backoff\b)",
    "stamina": r"^\s*(?:from\s+stamina\b|import\s+stamina\b)",
    "google": r"^\s*(?:from\s+google\.api_core\b|import\s+google\.api_core\b)",
    "urllib3": (
        r"^\s*(?:from\s+(?:urllib3|requests\.adapters|requests\.packages\.urllib3)\b.*\bRetry\b"
        r"|import\s+urllib3\b)"
    ),
    "redis": r"^\s*(?:from\s+redis\b|import\s+redis\b)",
    "aiohttp_retry": r"^\s*(?:from\s+aiohttp_retry\b|import\s+aiohttp_retry\b)",
}


def arguments(text, start):
    """The text between the parenthesis at `start` and its match (strings not handled)."""
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:index], index
    return text[start + 1:], len(text)


def top_level(args):
    """The comma-separated arguments, commas inside brackets left alone."""
    parts, depth, current = [], 0, ""
    for char in args:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def keyword(args, name):
    match = re.search(rf"\b{name}\s*=", args)
    return match is not None


def names_timeout(args):
    # what a `retry_if_not_exception_type(...)` / `unless` excludes is not admitted
    cleaned = re.sub(r"(?:not_exception_type|unless_exception_type)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)", "", args)
    return re.search(TIMEOUT, cleaned) is not None


def judge(library, callee, args):
    """Why the policy admits timeouts, or None."""
    if library == "tenacity":
        if not keyword(args, "retry"):
            return "no filter"
        return "filter names a timeout" if names_timeout(args) else None
    if library == "retrying":
        return None if keyword(args, "retry_on_exception") else "no filter"
    if library == "backoff":
        if keyword(args, "giveup") or re.search(r"\bmax_tries\s*=\s*1\b", args):
            return None  # a filter decides, or one attempt only
        if names_timeout(args):
            return "filter names a timeout"
        parts = top_level(args)
        return "filter is Exception" if len(parts) > 1 and re.search(EVERY, parts[1]) else None
    if library == "stamina":
        on = re.search(r"\bon\s*=\s*(.*)", args, re.S)
        value = on.group(1) if on else (args.split(",")[0] if callee == "retry_context" else "")
        if names_timeout(value):
            return "filter names a timeout"
        return "filter is Exception" if re.search(EVERY, value.split(",")[0] if value else "") else None
    if library == "google":
        return "predicate names DeadlineExceeded" if "DeadlineExceeded" in args else None
    if library == "urllib3":
        if re.search(r"\b(?:read|total)\s*=\s*(?:0|False)\b", args) or re.match(r"\s*(?:0|False)\s*(?:,|$)", args):
            return None
        return "retries read timeouts"
    if library == "redis":
        parts = top_level(args)
        positional = [p for p in parts if not re.match(r"\w+\s*=", p)]
        if re.search(r"\bretries\s*=\s*0\b", args) or (len(positional) > 1 and positional[1] == "0"):
            return None  # no retry at all
        if not keyword(args, "supported_errors") and len(positional) < 3:
            return "default supported_errors include TimeoutError"
        return "supported_errors names a timeout" if names_timeout(args) else None
    if library == "aiohttp_retry":
        if re.search(r"\battempts\s*=\s*1\b", args) or re.match(r"\s*1\s*(?:,|$)", args):
            return None  # one attempt only
        given = re.search(r"\bexceptions\s*=\s*(.*)", args, re.S)
        if given is None:
            return None
        value = given.group(1)
        if names_timeout(value):
            return "exceptions names a timeout"
        return "exceptions is Exception" if re.search(EVERY, value) else None
    return None


CALLEES = {
    "tenacity": r"@\s*(?:tenacity\.)?retry\b\s*\(?|\b(?:tenacity\.)?(?:Retrying|AsyncRetrying)\s*\(",
    "retrying": r"@\s*(?:retrying\.)?retry\b\s*\(?|\bretrying\.Retrying\s*\(",
    "backoff": r"\b(?:backoff\.)?on_exception\s*\(",
    "stamina": r"\b(?:stamina\.)?(?:retry|retry_context)\s*\(",
    "google": r"\b(?:retry\.|retry_async\.)?(?:Retry|AsyncRetry)\s*\(",
    "urllib3": r"\b(?:urllib3\.|retry\.|util\.)?Retry\s*\(",
    "redis": r"\b(?:retry\.)?Retry\s*\(",
    "aiohttp_retry": (
        r"\b(?:aiohttp_retry\.)?(?:Exponential|Random|Fibonacci|Jitter|List)Retry\s*\(|\bRetryOptions\s*\("
    ),
}


def strings(text):
    """Spans of triple-quoted strings (docstrings hold examples, not policies)."""
    return [m.span() for m in re.finditer(r'(?s)""".*?"""|\'\'\'.*?\'\'\'', text)]


def policies(text):
    found = []
    quoted = strings(text)
    libraries = [lib for lib, pattern in IMPORTS.items() if re.search(pattern, text, re.M)]
    if "google" in libraries or "redis" in libraries:
        libraries = [lib for lib in libraries if lib != "urllib3" or "urllib3" in text]
    seen = set()
    for library in libraries:
        for match in re.finditer(CALLEES[library], text):
            start = match.start()
            line_start = text.rfind("\n", 0, start) + 1
            before = text[line_start:start].lstrip()
            if before.startswith("#") or before.startswith(("class ", "def ", "async def ")) or start in seen:
                continue  # a comment, or the library defining the name
            if any(a <= start < b for a, b in quoted):
                continue
            if library in ("google", "urllib3", "redis") and not _owner(text, library):
                continue
            if match.group(0).endswith("("):
                args, end = arguments(text, match.end() - 1)
            else:
                args, end = "", match.end()
            one_attempt = r"stop\s*=\s*(?:_STOP_NO_RETRY|stop_after_attempt\(\s*1\s*\))"
            if re.search(r"(?<![\w)\]])\*", args) or re.search(one_attempt, args):
                continue  # options forwarded (`**kw`): cannot be read; or one attempt only
            callee = re.sub(r"[@\s(]", "", match.group(0)).rpartition(".")[2]
            why = judge(library, callee, args)
            seen.add(start)
            if why:
                found.append((text.count("\n", 0, start) + 1, text.count("\n", 0, end) + 1, library, why))
    for match in re.finditer(r"\bretry_on_timeout\s*=\s*True\b", text):
        if "redis" in libraries:
            line = text.count("\n", 0, match.start()) + 1
            found.append((line, line, "redis", "retry_on_timeout=True"))
    return found


def _owner(text, library):
    """Which `Retry` a file means: the only one of the three libraries it imports the name from."""
    importers = {
        "google": (
            r"from\s+google\.api_core(?:\.retry\w*)?\s+import\s+[^\n]*\b(?:Retry|AsyncRetry|retry\w*)\b"
            r"|import\s+google\.api_core"
        ),
        "urllib3": (
            r"from\s+(?:urllib3|requests\.adapters|requests\.packages\.urllib3)[\w.]*\s+import\s+[^\n]*\bRetry\b"
            r"|urllib3\.(?:util\.)?Retry\b"
        ),
        "redis": r"from\s+redis(?:\.asyncio)?\.retry\s+import\s+[^\n]*\bRetry\b|redis\.retry\.Retry\b",
    }
    return re.search(importers[library], text) is not None


def is_test(path):
    parts = path.replace(os.sep, "/").split("/")
    return any(p in ("tests", "test", "t", "testing") or p.startswith("test_") for p in parts)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tree")
    parser.add_argument("--findings")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    flagged = defaultdict(set)
    if args.findings:
        for item in json.load(open(args.findings)):
            if item["code"] in ("DL301", "DL302"):
                path = item["path"] if not os.path.isabs(item["path"]) else os.path.relpath(item["path"], args.tree)
                flagged[path].update(range(item["line"], item.get("end_line", item["line"]) + 1))
    totals = defaultdict(lambda: [0, 0])
    lifecycle = defaultdict(lambda: [0, 0])
    for root, dirs, files in os.walk(args.tree):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, args.tree)
            try:
                text = open(path, encoding="utf-8", errors="replace").read()
            except OSError:
                continue
            found_here = policies(text)
            outside = lifecycle_only(path, text, [first for first, *_ in found_here]) if found_here else set()
            for first, last, library, why in found_here:
                hit = any(line in flagged[rel] for line in range(first, last + 1))
                where = "tests" if is_test(rel) else "code"
                totals[where][0] += 1
                totals[where][1] += hit
                if first in outside:
                    lifecycle[where][0] += 1
                    lifecycle[where][1] += hit
                if args.list:
                    mark = " lifecycle" if first in outside else ""
                    print(f"{'FLAGGED' if hit else 'missed '} {where:5} {rel}:{first} {library}: {why}{mark}")
    for where in ("code", "tests"):
        found, hit = totals[where]
        share = f"{hit / found:.2f}" if found else "-"
        print(f"{where:5}: {found} retry policies admitting timeouts, {hit} flagged ({share})")
        if LIFECYCLE[0] is not None:
            quiet, quiet_hit = lifecycle[where]
            waited, waited_hit = found - quiet, hit - quiet_hit
            share = f"{waited_hit / waited:.2f}" if waited else "-"
            print(f"{'':5}  of them {waited} a request may wait on, {waited_hit} flagged ({share}); "
                  f"{quiet} only start-up/shutdown/background code reaches, {quiet_hit} flagged")
    return 0


LIFECYCLE = [None]  # deadline-lint's lifecycle reading, when importable


def lifecycle_only(path, text, lines):
    """The policy lines (of `lines`) whose def runs outside any request, by deadline-lint's
    `ProjectLifecycle`; an empty set when deadline-lint cannot be imported or the file does
    not parse."""
    import ast

    if LIFECYCLE[0] is None:
        try:
            from deadline_lint.catalog import load_catalog
            from deadline_lint.engine.context import FileContext
            from deadline_lint.families.shared.lifecycle import ProjectLifecycle
            from deadline_lint.settings.profile import default_profile
            from deadline_lint.support.source import SourceFile
        except ImportError:
            return set()
        LIFECYCLE[0] = (ProjectLifecycle, FileContext, SourceFile, load_catalog(), default_profile())
    ProjectLifecycle, FileContext, SourceFile, catalog, profile = LIFECYCLE[0]
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    ctx = FileContext(SourceFile(text, os.path.abspath(path)), tree, profile, catalog)
    reading = ctx.analysis(ProjectLifecycle)
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    found = set()
    for line in lines:
        decorated = [d for d in defs if any(dec.lineno <= line <= dec.end_lineno for dec in d.decorator_list)]
        around = [d for d in defs if d.lineno <= line <= d.end_lineno]
        owner = decorated[-1] if decorated else max(around, key=lambda d: d.lineno, default=None)
        if owner is not None and reading.outside(owner):
            found.add(line)
    return found


if __name__ == "__main__":
    sys.exit(main())
