"""Run what deadline-lint's fixes write: randomized service call trees, fixed, then executed.

    python bench/simulate.py --trees 1000 --seed 7         # a report per violation kind
    python bench/simulate.py --trees 200 --show 3          # also print 3 trees per kind
    python bench/simulate.py --trees 100000 --jobs 2 --codemod-sample 1000   # the gate's size

A seeded generator writes each tree as a small Python package (1-4 modules): sync and async
functions that call out through `requests`, `httpx`, `aiohttp` and a gRPC stub, call each
other in sequence, in parallel (`asyncio.gather`, `TaskGroup`), across modules and through
methods of project classes, with a budget object, a gRPC servicer context, a remainder read
from request state, seconds, or nothing (but a request always enters through a handler given
its inbound deadline: a budget object, a servicer context, a header value or seconds); with
fixed, unbounded, raw and stale timeouts, retry loops, tenacity and timeout-forwarding
wrappers sprinkled in. Each tree is written to a folder of its own and fixed in-process the
way `deadline-lint fix --unsafe-fixes --thread-budget` fixes a project (one run, across
modules), and by the LibCST codemod (`InsertBudget --unsafe-fixes --thread-budget`, run until
it settles; on every one-module tree, or a sample of them), whose output must be the same;
then the fixed tree is imported (it is our own generated code) under a virtual clock with
recording fake transports (bench/sim_runtime.py) and every entry point is called as a
request. `--jobs N` splits the trees over N processes.

On every outbound call the contract is asserted:
  infinite        the call may wait forever (no timeout, or None)
  exceeds         its timeout is more than the caller's remainder minus the hop margin (the
                  1 ms floor of the fix templates allowed): the budget grew at this hop
  after-deadline  the call started when the request's deadline had passed
  below-refuse    the code checked the refuse threshold right before it and still started it
  crash           the fixed program raised something no transport raises (a fix broke it)

A violation the fixed code still reports (a remaining finding in the same function, such as
DL105 or DL303, which have no mechanical fix, or a retry finding in a function on the stack
that a retry decorator is running again: `RETRIED_BY`) counts as `reported`; one nothing
reports is `silent`: a missing rule or a wrong fix. Standard library plus deadline-lint itself.
"""
from __future__ import annotations

import argparse
import ast
import asyncio
import multiprocessing
import os
import random
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import sim_runtime as rt  # noqa: E402

PROFILE = {
    "budget": {"accessors": ["simbudget.remaining_seconds"]},
    # The edge, explicit: the runtime sets every request's inbound deadline in the request
    # state (`simbudget.current_deadline`, as an edge middleware would), and a function that
    # cannot take a `budget_s` parameter reads what is left of it there.
    "fix": {"context_accessor": "simbudget.remaining_seconds"},
    # The refuse check (opt-in): the one rule that speaks to a call started after the deadline.
    "extend_select": ["DL106"],
}
# The kinds a finding left in the call's function accounts for: DL106 (no refuse check) says
# nothing of a timeout's size, so it reports only a call started too late.
ONLY_FOR = {"DL106": frozenset({"after-deadline", "below-refuse"})}
# The codes left in a function a retry decorator ran again that account for the calls below it
# on that attempt: the policy stops on no budget (DL303), retries an expiry (DL301), or
# multiplies another layer's attempts (DL304). Each reports the attempt that ran late or long.
RETRIED_BY = frozenset({"DL301", "DL303", "DL304"})
STYLES = ("budget", "context", "seconds", "state", "none")  # where a function's budget comes from
EDGE_KINDS = ("budget", "context", "header", "seconds")  # how a request's deadline enters a handler
BUDGET_HEADER = "X-Request-Budget-Ms"  # the profile's `budget_header` (its default)
TRANSPORTS_SYNC = ("requests", "session", "httpx", "grpc")
TRANSPORTS_ASYNC = ("httpx_async", "aiohttp", "grpc")
ERRORS = {
    "requests": "requests.ConnectionError", "session": "requests.ConnectionError",
    "httpx": "httpx.ConnectError", "httpx_async": "httpx.ConnectError",
    "aiohttp": "aiohttp.ClientConnectionError", "grpc": "grpc.RpcError",
}
EXPIRY = {
    "requests": "requests.Timeout", "session": "requests.Timeout",
    "httpx": "httpx.TimeoutException", "httpx_async": "httpx.TimeoutException",
    "aiohttp": "asyncio.TimeoutError", "grpc": None,
}


# -- the generator ------------------------------------------------------------------------
@dataclass
class Function:
    name: str
    module: int
    is_async: bool
    style: str
    klass: Optional[str] = None  # a method of this project class
    entry: bool = False
    decorated: bool = False  # tenacity on the whole function
    body: List[str] = field(default_factory=list)
    callers: int = 0
    # "state": the request state's budget object, read on entry from a module-level
    # ContextVar annotated with the budget type (`budget = REQUEST_BUDGET.get()`), instead of
    # the `remaining_seconds()` accessor
    state_object: bool = False


class Generator:
    """One tree: functions assigned to modules, a call DAG (callees later in the order)."""

    def __init__(self, rng: random.Random, index: int, flat: bool = False) -> None:
        self.rng = rng
        self.flat = flat  # no function calls another: every hop is the function's own
        self.package = f"simtree{index}"
        self.modules = rng.randint(1, 4)
        self.sites = 0
        self.functions: List[Function] = []
        self.imports: Dict[int, set] = defaultdict(set)
        self.module_lines: Dict[int, List[str]] = defaultdict(list)
        self.wrappers: Dict[int, List[str]] = defaultdict(list)
        self.site_info: Dict[str, str] = {}  # site -> how its timeout was written
        self._retrying = False

    def site(self, function: Function, how: str = "") -> str:
        self.sites += 1
        site = f"{function.name}/{self.sites}"
        self.site_info[site] = how + (" in retry loop" if self._retrying else "")
        return site

    def by_name(self, name: str) -> Optional[Function]:
        return next((f for f in self.functions if f.name == name), None)

    def build(self) -> Dict[str, str]:
        rng = self.rng
        count = rng.randint(2, 7)
        any_async = rng.random() < 0.4
        for i in range(count):
            is_async = any_async and (i == 0 or rng.random() < 0.6)
            style = rng.choice(STYLES) if i else rng.choice(("budget", "context", "state", "none", "budget"))
            module = 0 if i == 0 else rng.randrange(self.modules)
            if i and module < self.functions[-1].module:
                module = self.functions[-1].module  # imports only go to later modules: no cycles
            function = Function(f"f{i}", module, is_async, style)
            if style == "state":  # its own stream: the rest of the tree is drawn as before
                function.state_object = random.Random(f"{self.package}:{i}:state").random() < 0.5
            if style == "context":
                function.klass = f"Svc{i}"  # servicer methods: (self, request, context)
            elif i and rng.random() < 0.25:
                function.klass = f"Repo{i}"
            self.functions.append(function)
        for function in self.functions:
            self._body(function)
        for function in self.functions:
            function.entry = function.callers == 0
        for function in list(self.functions):
            if function.entry and function.style == "none":
                self._edge(function)
        return self._render()

    def _edge(self, function: Function) -> None:
        """The edge, explicit: a request enters a service through a handler that is given its
        inbound deadline (a budget object, a gRPC servicer context, a header value or seconds),
        never through a function with no budget at all. A function with none that no other
        calls gets a handler calling it, as a view or servicer method calls the service code
        below it. Its own random stream, so the rest of the tree is drawn as before."""
        rng = random.Random(f"{self.package}:edge:{function.name}")
        kind = rng.choice(EDGE_KINDS)
        number = function.name[1:]
        handler = Function(f"h{number}", function.module, function.is_async, "header" if kind == "header" else kind)
        if kind == "context":
            handler.klass = f"Edge{number}"
        function.entry, function.callers, handler.entry = False, function.callers + 1, True
        if kind == "header":
            handler.body.append(f"budget_s = float(headers[{BUDGET_HEADER!r}]) / 1000")
        if kind == "budget":
            self.imports[function.module].add("from simbudget import Budget")
        handler.body.append("return " + self._call(handler, function, ""))
        self.functions.append(handler)

    # What a function may pass on.
    def _pass(self, caller: Function, callee: Function) -> Optional[str]:
        """The argument text for calling `callee` from `caller`, or None if impossible."""
        if callee.style == "budget":
            return "budget" if caller.style == "budget" else None
        if callee.style == "context":
            return None  # servicer methods are entry points only
        if callee.style == "seconds":
            forward = {
                "budget": "budget_s=budget.timeout()",
                "context": "budget_s=max(0.001, context.time_remaining() - 0.05)",
                "seconds": "budget_s=max(0.001, budget_s - 0.05)",
                "state": "budget_s=max(0.001, remaining_seconds() - 0.05)",
                "none": "",
            }[caller.style]
            if caller.state_object:
                forward = "budget_s=budget.timeout()"
            if forward and self.rng.random() < 0.2:
                return ""  # forgot to forward: DL503
            return forward
        return ""

    def _budget_exprs(self, function: Function) -> Dict[str, str]:
        style = "budget" if function.state_object else function.style
        return {
            "budget": {"good": "budget.timeout()", "raw": "budget.remaining()", "read": "budget.timeout()",
                       "check": "budget.remaining()"},
            "context": {"good": "max(0.001, context.time_remaining() - 0.05)", "raw": "context.time_remaining()",
                        "read": "context.time_remaining() - 0.05", "check": "context.time_remaining()"},
            "seconds": {"good": "max(0.001, budget_s - 0.05)", "raw": "budget_s", "read": "budget_s - 0.05",
                        "check": "budget_s"},
            "state": {"good": "max(0.001, remaining_seconds() - 0.05)", "raw": "remaining_seconds()",
                      "read": "remaining_seconds() - 0.05", "check": "remaining_seconds()"},
            "none": {},
        }[style]

    def _timeout(self, function: Function, stale: Optional[str]) -> Tuple[str, Optional[str]]:
        """(variant, seconds expression or None for no keyword)."""
        exprs = self._budget_exprs(function)
        choices = ["missing", "missing", "fixed", "none"]
        if exprs:
            choices += ["good", "good", "raw", "floor"]
            if stale:
                choices += ["stale", "stale"]
        variant = self.rng.choice(choices)
        value = {
            "missing": None,
            "none": "None",
            "fixed": repr(self.rng.choice((0.5, 2.0, 5.0, 30.0))),
            "good": exprs.get("good"),
            "raw": exprs.get("raw"),
            "stale": stale,
            "floor": f"max({exprs.get('raw')} - 0.05, 1.0)" if exprs else None,
        }[variant]
        return variant, value

    def _outbound(self, function: Function, stale: Optional[str]) -> Tuple[List[str], str]:
        """Lines for one outbound call, and its transport."""
        rng = self.rng
        transport = rng.choice(TRANSPORTS_ASYNC if function.is_async else TRANSPORTS_SYNC)
        variant, value = self._timeout(function, stale)
        site = self.site(function, f"{variant} {transport}")
        module = function.module
        if transport == "aiohttp":
            self.imports[module].add("import aiohttp")
            keyword = "" if value is None else f", timeout=aiohttp.ClientTimeout(total={value})"
            return [
                "async with aiohttp.ClientSession() as session:",
                f"    await session.get({site!r}{keyword})",
            ], transport
        keyword = "" if value is None else f", timeout={value}"
        if transport == "requests":
            self.imports[module].add("import requests")
            return [f"requests.get({site!r}{keyword})"], transport
        if transport == "session":
            self.imports[module].add("import requests")
            self.module_lines[module].append("HTTP = requests.Session()")
            return [f"HTTP.post({site!r}{keyword})"], transport
        if transport == "httpx":
            self.imports[module].add("import httpx")
            return [f"httpx.get({site!r}{keyword})"], transport
        if transport == "httpx_async":
            self.imports[module].add("import httpx")
            self.module_lines[module].append("ACLIENT = httpx.AsyncClient()")
            return [f"await ACLIENT.get({site!r}{keyword})"], transport
        self.imports[module].add("import grpc")
        self.imports[module].add("from . import svc_pb2_grpc")
        self.module_lines[module].append("STUB = svc_pb2_grpc.StockStub(grpc.insecure_channel('stock'))")
        return [f"STUB.Reserve({site!r}{keyword})"], transport

    def _wrapped(self, function: Function) -> List[str]:
        """A call through a module-level wrapper that forwards its `timeout` to requests."""
        module = function.module
        self.imports[module].add("import requests")
        name = f"fetch_{function.name}"
        wrapper = f"def {name}(url, timeout=None):\n    return requests.get(url, timeout=timeout)\n"
        if wrapper not in self.wrappers[module]:
            self.wrappers[module].append(wrapper)
        exprs = self._budget_exprs(function)
        if exprs and self.rng.random() < 0.5:
            site = self.site(function, "good wrapper")
            return [f"{name}({site!r}, timeout={exprs['good']})"]
        site = self.site(function, "missing wrapper")
        return [f"{name}({site!r})"]

    def _retry_loop(self, function: Function, stale: Optional[str]) -> List[str]:
        self._retrying = True
        call, transport = self._outbound(function, stale)
        self._retrying = False
        errors = ERRORS[transport]
        if EXPIRY[transport] and self.rng.random() < 0.3:
            errors = f"({errors}, {EXPIRY[transport]})"  # retries on expiry: DL301
        sleep = "await asyncio.sleep" if function.is_async else "time.sleep"
        self.imports[function.module].add("import asyncio" if function.is_async else "import time")
        exprs = self._budget_exprs(function)
        lines = ["for attempt in range(3):", "    try:"]
        lines += ["        " + line for line in call]
        lines += ["        break", f"    except {errors}:"]
        if exprs and self.rng.random() < 0.5:
            self.imports[function.module].add("from simbudget import Refused, note_refuse_check")
            lines += [f"        if {exprs['check']} < 0.1:", "            raise Refused()"]
            lines += ["            note_refuse_check()"]
        lines += [f"        {sleep}(0.1 * (attempt + 1))"]
        return lines

    def _call(self, caller: Function, callee: Function, argument: str) -> str:
        prefix = "await " if callee.is_async else ""
        if callee.klass is not None:
            if caller.klass == callee.klass:
                target = f"self.{callee.name}"
            else:
                target = f"{callee.klass.upper()}.{callee.name}"
                if callee.module != caller.module:
                    self.imports[caller.module].add(f"from .m{callee.module} import {callee.klass.upper()}")
        else:
            target = callee.name
            if callee.module != caller.module:
                self.imports[caller.module].add(f"from .m{callee.module} import {callee.name}")
        return f"{prefix}{target}({argument})"

    def _body(self, function: Function) -> None:
        rng = self.rng
        lines: List[str] = []
        exprs = self._budget_exprs(function)
        if function.state_object:
            self.imports[function.module].update(("import contextvars", "from simbudget import Budget"))
            self.module_lines[function.module].append(
                'REQUEST_BUDGET: contextvars.ContextVar[Budget] = contextvars.ContextVar("request_budget")'
            )
            lines.append("budget = REQUEST_BUDGET.get()")
        elif function.style == "state":
            self.imports[function.module].add("from simbudget import remaining_seconds")
        if exprs and rng.random() < 0.3:
            self.imports[function.module].add("from simbudget import Refused, note_refuse_check")
            lines += [f"if {exprs['check']} < 0.1:", "    raise Refused()", "note_refuse_check()"]
        stale = None
        if exprs and rng.random() < 0.3:
            lines.append(f"t = {exprs['read']}")
            stale = "t"
        later = [f for f in self.functions if int(f.name[1:]) > int(function.name[1:])]
        for _ in range(rng.randint(1, 4)):
            roll = rng.random()
            callees = [
                c for c in later if (function.is_async or not c.is_async) and self._pass(function, c) is not None
            ]
            if roll < 0.4 or not callees or self.flat:
                if rng.random() < 0.2:
                    lines += self._retry_loop(function, stale)
                elif rng.random() < 0.15:
                    lines += self._wrapped(function)
                else:
                    lines += self._outbound(function, stale)[0]
                continue
            if function.is_async and rng.random() < 0.4:
                group = rng.sample(callees, min(len(callees), rng.randint(2, 3)))
                group = [c for c in group if c.is_async] or group[:1]
                calls = []
                for callee in group:
                    callee.callers += 1
                    call = self._call(function, callee, self._pass(function, callee) or "")
                    calls.append(call.removeprefix("await "))
                if all(c.is_async for c in group) and len(group) > 1:
                    self.imports[function.module].add("import asyncio")
                    if rng.random() < 0.5:
                        lines.append(f"await asyncio.gather({', '.join(calls)})")
                    else:
                        lines.append("async with asyncio.TaskGroup() as tg:")
                        lines += [f"    tg.create_task({c})" for c in calls]
                    continue
                callee = group[0]
                lines.append(self._call(function, callee, self._pass(function, callee) or ""))
                continue
            callee = rng.choice(callees)
            callee.callers += 1
            lines.append(self._call(function, callee, self._pass(function, callee) or ""))
        if rng.random() < 0.1 and not function.klass:
            function.decorated = True
            self.imports[function.module].add("import tenacity")
            self.imports[function.module].add("import requests")
        function.body = lines

    def _signature(self, function: Function) -> str:
        params = {
            "budget": ["budget: Budget"],
            "context": ["request", "context"],
            "seconds": ["*", "budget_s: float = 10.0"],
            "state": [],
            "none": [],
            "header": ["headers"],
        }[function.style]
        if function.klass is not None:
            params = ["self", *params]
        if function.style == "budget":
            self.imports[function.module].add("from simbudget import Budget")
        keyword = "async def" if function.is_async else "def"
        return f"{keyword} {function.name}({', '.join(params)}):"

    def _render(self) -> Dict[str, str]:
        texts: Dict[str, str] = {}
        for module in range(self.modules):
            mine = [f for f in self.functions if f.module == module]
            chunks: List[str] = []
            classes: Dict[str, List[Function]] = defaultdict(list)
            for function in mine:
                if function.klass is not None:
                    classes[function.klass].append(function)
                    continue
                chunks.append(self._def(function, ""))
            for klass, methods in classes.items():
                base = "(svc_pb2_grpc.StockServicer)" if methods[0].style == "context" else ""
                if base:
                    self.imports[module].add("from . import svc_pb2_grpc")
                body = "".join(self._def(m, "    ") for m in methods)
                chunks.append(f"class {klass}{base}:\n{body}\n{klass.upper()} = {klass}()\n")
            head = sorted(self.imports[module])
            lines = list(dict.fromkeys(self.module_lines[module]))
            texts[f"m{module}"] = "\n".join([*head, "", *lines, "", *self.wrappers[module], *chunks]) + "\n"
        return texts

    def _def(self, function: Function, indent: str) -> str:
        out: List[str] = []
        if function.decorated:
            out.append(
                "@tenacity.retry(stop=tenacity.stop_after_attempt(3), wait=tenacity.wait_fixed(0.2),"
                " retry=tenacity.retry_if_exception_type(requests.ConnectionError))"
            )
        out.append(self._signature(function))
        out += ["    " + line for line in (function.body or ["pass"])]
        return "".join(indent + line + "\n" for line in out) + "\n"


# -- fixing -------------------------------------------------------------------------------
class Fixer:
    """Fixes a tree as `fix` fixes a project: its modules are written to a folder of their own
    (a project: `pyproject.toml`, the package with its `__init__.py`) and fixed in one run of
    `api.fix_paths` (`--diff`: nothing is written), so a budget threaded in one module is
    forwarded from the others (thread_project.py). The codemod transforms one file at a time:
    it is run over the files again, reading what the last run wrote, until nothing changes,
    and must end where `fix` did."""

    RUNS = 5  # codemod runs at most (one per module a budget crosses, and one to see it settle)

    def __init__(self, codemod: bool = True) -> None:
        import shutil
        import tempfile
        import weakref

        import yaml

        import deadline_lint.families.registry  # noqa: F401  # registers every rule (the CLI does this)
        from deadline_lint.engine.checker import Checker
        from deadline_lint.run.api import Options, Session
        from deadline_lint.settings.profile import build_profile

        self.checker = Checker(build_profile(PROFILE, "<simulate>"))  # for fixing one text (tests)
        # `fix` reads a project from disk (module summaries, who calls a def), so a tree is
        # still written out; in memory-backed /dev/shm where there is one, as removing each
        # tree's folder on disk was 3% of a run (bench/results/issue34-simulator.md).
        shm = Path("/dev/shm")
        where = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
        self.folder = Path(tempfile.mkdtemp(prefix="deadline-lint-simulate-", dir=where))
        weakref.finalize(self, shutil.rmtree, str(self.folder), True)
        (self.folder / "pyproject.toml").write_text('[project]\nname = "simulated"\nversion = "0"\n')
        profile = self.folder / "profile.yaml"
        profile.write_text(yaml.safe_dump(PROFILE))
        common = dict(profile=str(profile), unsafe_fixes=True, thread_budget=True, jobs=1)
        self.session = Session(Options(**common, write=False))  # type: ignore[arg-type]
        self.codemod = codemod
        self.codemod_session = Session(Options(**common, insert_budgets=True))  # type: ignore[arg-type]

    def fix(self, package: str, texts: Dict[str, str], codemod: Optional[bool] = None
            ) -> Tuple[Dict[str, str], Dict[str, Dict[str, set]], List[str]]:
        """Fixed texts, the findings left per module per function, and any disagreement of
        the codemod with the CLI's fix (compared when `codemod`, by default when the fixer
        was made to)."""
        if codemod is None:
            codemod = self.codemod
        import shutil

        fixed: Dict[str, str] = {}
        remaining: Dict[str, Dict[str, set]] = {}
        problems: List[str] = []
        paths = self._write(package, texts)
        try:
            for name, result in zip(texts, self.session.fix_paths(list(paths.values()))):
                if result.gave_up:
                    failures = [d.message for d in result.remaining if d.code in ("DL003", "DL005")]
                    problems.append(f"{package}/{name}.py: fix gave up: {failures}")
                fixed[name] = result.text if result.changed and result.text is not None else texts[name]
                remaining[name] = _by_function(fixed[name], result.remaining)
            # The codemod fixes one file at a time and never threads a function another module
            # names (thread_elsewhere.py): it must agree with `fix` where a tree is one module.
            if codemod and len(texts) == 1:
                for name, text in self._codemod(paths).items():
                    if text != fixed[name]:
                        problems.append(f"{package}/{name}.py: the codemod's output differs from `fix`'s")
        finally:
            shutil.rmtree(self.folder / package, ignore_errors=True)
            # The tree's files are gone: what the sessions learned of them goes too, as the
            # editor server drops it when files change (a run's memos grew ~55 KB a tree).
            self.session.memos.invalidate(paths.values())
            self.codemod_session.memos.invalidate(paths.values())
        return fixed, remaining, problems

    def _write(self, package: str, texts: Dict[str, str]) -> Dict[str, str]:
        folder = self.folder / package
        folder.mkdir()
        (folder / "__init__.py").write_text("")
        paths = {}
        for name, text in texts.items():
            path = folder / f"{name}.py"
            path.write_text(text, encoding="utf-8")
            paths[name] = str(path)
        return paths

    def _codemod(self, paths: Dict[str, str]) -> Dict[str, str]:
        """What InsertBudget.transform_module_impl writes (codemod.py), run after run, without
        the LibCST round trip of the command line tool; each run reads the project afresh."""
        from deadline_lint.semantics.facts import forget_facts
        from deadline_lint.semantics.modules import forget_projects

        texts = {name: Path(path).read_text(encoding="utf-8") for name, path in paths.items()}
        due = list(paths)  # the first run transforms every file; a later one, their importers
        for _ in range(self.RUNS):
            forget_projects()
            forget_facts()
            changed = []
            for name in due:
                text = self.codemod_session.fix_text(texts[name], paths[name]).text
                assert text is not None
                if text != texts[name]:
                    Path(paths[name]).write_text(text, encoding="utf-8")
                    texts[name] = text
                    changed.append(name)
            if not changed:
                break
            # A file a run changed can change only what its importers do (or what it does
            # itself, through an import of one changed before it).
            due = [name for name in paths if any(re.search(rf"\b{other}\b", texts[name]) for other in changed)]
        forget_projects()
        forget_facts()
        return texts


def _by_function(text: str, diagnostics: Sequence[Any]) -> Dict[str, set]:
    """Codes left in each function (`Class.method` or `name`), by line span: its decorators
    too (a retry policy's findings are on the decorator, DL301-DL303), which `lineno` is not."""
    spans: List[Tuple[int, int, str]] = []
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}

    def span(node: Any, name: str) -> Tuple[int, int, str]:
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        return first, node.end_lineno or node.lineno, name

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            spans.append(span(node, node.name))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    spans.append(span(item, f"{node.name}.{item.name}"))
    found: Dict[str, set] = defaultdict(set)
    for diagnostic in diagnostics:
        for start, end, name in spans:
            if start <= diagnostic.line <= end:
                found[name].add(diagnostic.code)
    return found


# -- running ------------------------------------------------------------------------------
@dataclass
class Violation:
    kind: str
    tree: int
    site: str
    detail: str
    reported: Tuple[str, ...]  # codes still reported in the function of the call
    why: str = ""


@dataclass
class Totals:
    trees: int = 0
    modules: int = 0
    requests: int = 0
    calls: int = 0
    silent: Counter = field(default_factory=Counter)
    reported: Counter = field(default_factory=Counter)
    causes: Counter = field(default_factory=Counter)
    reported_by: Counter = field(default_factory=Counter)  # "kind: code", a code left in the function
    examples: Dict[str, List[int]] = field(default_factory=dict)
    shown: List[Tuple[str, int, str]] = field(default_factory=list)  # --show: kind, tree, line
    problems: List[str] = field(default_factory=list)
    codemod_trees: int = 0  # trees the codemod was compared on
    cpu_s: float = 0.0  # CPU seconds of the processes that ran the trees

    def add(self, other: "Totals", show: int) -> None:
        """Fold in the totals of a later range of trees (the order of `--jobs` chunks)."""
        self.trees += other.trees
        self.modules += other.modules
        self.requests += other.requests
        self.calls += other.calls
        self.silent.update(other.silent)
        self.reported.update(other.reported)
        self.causes.update(other.causes)
        self.reported_by.update(other.reported_by)
        self.problems += other.problems
        self.codemod_trees += other.codemod_trees
        self.cpu_s += other.cpu_s
        for kind, index, line in other.shown:
            mine = self.examples.setdefault(kind, [])
            if len(mine) < show and index not in mine:
                mine.append(index)
                self.shown.append((kind, index, line))


def _entry_call(function: Function, deadline: float, budget_module: Any) -> Tuple[str, Dict[str, Any]]:
    target = f"{function.klass.upper()}.{function.name}" if function.klass else function.name
    if function.style == "budget":
        return f"{target}(budget)", {"budget": budget_module.Budget(deadline)}
    if function.style == "context":
        return f"{target}('request', context)", {"context": None}
    return f"{target}()", {}


def run_tree(index: int, seed: int, fixer: Fixer, totals: Totals, loop: asyncio.AbstractEventLoop,
             flat: bool = False, codemod: Optional[bool] = None) -> List[Violation]:
    rng = random.Random(f"{seed}:{index}")
    generator = Generator(rng, index, flat)
    texts = generator.build()
    fixed, remaining, problems = fixer.fix(generator.package, texts, codemod)
    if (fixer.codemod if codemod is None else codemod) and len(texts) == 1:
        totals.codemod_trees += 1
    totals.trees += 1
    totals.modules += len(texts)
    for problem in problems:
        totals.problems.append(f"tree {index}: {problem}")
    fakes = rt.fakes()
    violations: List[Violation] = []
    try:
        tree = rt.Tree(generator.package, fixed, fakes)
        loaded = {name: tree.module(name) for name in fixed}
    except Exception as exc:  # a fix that makes the module fail to import
        violations.append(Violation("crash", index, "<import>", f"{type(exc).__name__}: {exc}", ()))
        return violations
    for function in generator.functions:
        if not function.entry:
            continue
        module = loaded[f"m{function.module}"]
        owner = getattr(module, function.klass.upper()) if function.klass else module
        target = getattr(owner, function.name)
        total = rt.EDGE_TOTAL_S if function.style == "none" else rng.choice((0.05, 0.3, 1.0, 3.0, 10.0))
        request = rt.Request(deadline=total, rng=random.Random(rng.random()), package=generator.package)
        rt.STATE.request = request
        # The request state holds its deadline, and its budget object where a module keeps
        # one: set in the request's own context, as every tree's variables are new objects
        # that the process's context would otherwise keep for good.
        state: List[Tuple[Any, Any]] = [(fakes["simbudget"].current_deadline, total)]
        for loaded_module in loaded.values():
            if hasattr(loaded_module, "REQUEST_BUDGET"):
                state.append((loaded_module.REQUEST_BUDGET, fakes["simbudget"].Budget(total)))
        args: List[Any] = []
        kwargs: Dict[str, Any] = {}
        if function.style == "budget":
            args = [fakes["simbudget"].Budget(total)]
        elif function.style == "context":
            args = ["request", fakes["grpc"].ServicerContext(total)]
        elif function.style == "seconds":
            kwargs = {"budget_s": total}
        elif function.style == "header":
            args = [{BUDGET_HEADER: f"{total * 1000:.0f}"}]
        outcome = _run(target, args, kwargs, function.is_async, loop, state)
        totals.requests += 1
        totals.calls += len(request.calls)
        if outcome is not None:
            violations.append(Violation("crash", index, function.name, outcome, ()))
        violations += _judge(index, request, remaining, generator, fixed)
    rt.STATE.request = None
    return violations


def _run(target: Any, args: List[Any], kwargs: Dict[str, Any], is_async: bool,
         loop: asyncio.AbstractEventLoop, state: Sequence[Tuple[Any, Any]] = ()) -> Optional[str]:
    """None when the request ended normally (a reply or a simulated error), else why not.
    `state`: (context variable, value) pairs the request starts with."""
    context = rt.contextvars.copy_context()
    for variable, value in state:
        context.run(variable.set, value)
    rt_now = rt._now

    def call() -> Any:
        rt_now.set(0.0)
        if not is_async:
            return target(*args, **kwargs)
        try:
            return loop.run_until_complete(target(*args, **kwargs))
        finally:
            _finish_the_request(loop)

    try:
        context.run(call)
    except rt.Simulated:
        return None
    except BaseExceptionGroup as group:  # TaskGroup
        _, unexpected = group.split(rt.Simulated)
        if unexpected is None:
            return None
        first = unexpected
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        return f"{type(first).__name__}: {first}"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _finish_the_request(loop: asyncio.AbstractEventLoop) -> None:
    """Run what the request left running to its end, within the request. `gather` raises its
    first child's error and leaves the others running: their hops are this request's. Left
    pending, they ran in the next request's `run_until_complete` (the next tree's, often),
    recorded there with none of that tree's frames on the stack, which made `_judge` fail
    with an IndexError on a 3,000-tree run."""
    while True:
        pending = asyncio.all_tasks(loop)
        if not pending:
            return
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def _judge(index: int, request: rt.Request, remaining: Dict[str, Dict[str, set]],
           generator: Generator, fixed: Dict[str, str]) -> List[Violation]:
    found: List[Violation] = []
    for call in request.calls:
        frames = [f.partition(".") for f in call.frames]
        left: set = set()
        through_wrapper = call.frames[-1].split(".")[-1].startswith("fetch_")
        for module, _, function in frames[-2:] if through_wrapper else frames[-1:]:
            left |= remaining.get(module, {}).get(function, set())
        for module, _, function in (f.partition(".") for f in call.retried):
            left |= remaining.get(module, {}).get(function, set()) & RETRIED_BY
        allowed = max(rt.TIMEOUT_FLOOR_S, call.remaining - rt.HOP_MARGIN_S)
        detail = (
            f"{call.library} {call.site} at t={call.start:.3f} remaining={call.remaining:.3f} "
            f"timeout={call.timeout} attempt {call.attempt} via {' > '.join(call.frames)}"
        )
        why = _cause(call, generator, fixed)

        if call.timeout is None:
            found.append(Violation("infinite", index, call.site, detail, _accounting(left, "infinite"), why))
        elif call.timeout > allowed + 1e-9:
            found.append(Violation("exceeds", index, call.site, detail, _accounting(left, "exceeds"), why))
        if call.remaining <= 0:
            late = _accounting(left, "after-deadline")
            found.append(Violation("after-deadline", index, call.site, detail, late, why))
        if call.checked_at is not None and call.remaining < rt.REFUSE_BELOW_S - 1e-9:
            when = "after a backoff" if call.start > call.checked_at else "right after it"
            checked = f"{detail} (checked at t={call.checked_at:.3f}, {when})"
            found.append(Violation("below-refuse", index, call.site, checked, _accounting(left, "below-refuse"), why))
    return found


def _accounting(left: set, kind: str) -> Tuple[str, ...]:
    """The codes left in the function that speak to a violation of `kind`."""
    return tuple(sorted(c for c in left if kind in ONLY_FOR.get(c, (kind,))))


def _cause(call: rt.Call, generator: Generator, fixed: Dict[str, str]) -> str:
    """The call site's timeout as generated, its function's budget, and how it was reached."""
    names = [frame.split(".")[-1] for frame in call.frames if not frame.split(".")[-1].startswith("fetch_")]
    site_function = generator.by_name(names[-1]) if names else None
    if site_function is None:
        return generator.site_info.get(call.site, "?")
    threaded = "budget_s" in _signature_line(fixed[f"m{site_function.module}"], site_function.name)
    style = site_function.style + ("+threaded" if threaded and site_function.style != "seconds" else "")
    if len(names) < 2:
        edge = "entry"
    else:
        caller = generator.by_name(names[-2])
        if site_function.klass is not None:
            edge = "self-method" if caller is not None and caller.klass == site_function.klass else "method"
        elif caller is not None and caller.module != site_function.module:
            edge = "cross-module"
        else:
            edge = "by-name"
        if caller is not None:
            edge += f" from {caller.style}"
    if DETAILED:
        return f"{generator.site_info.get(call.site, '?')} | fn {style} | reached {edge}"
    return f"fn {style} | reached {edge.split(' from ')[0]}"


DETAILED = False


def _signature_line(text: str, name: str) -> str:
    for line in text.splitlines():
        if f"def {name}(" in line:
            return line
    return ""


def simulate(trees: int, seed: int, codemod: bool = True, show: int = 0, start: int = 0, only: str = "",
             flat: bool = False, jobs: int = 1, codemod_sample: Optional[int] = None) -> Totals:
    """Trees start..start+trees-1. The codemod is compared on every one-module tree
    (`codemod_sample` None) or on about `codemod_sample` of them, drawn per tree from the seed;
    with `jobs` > 1 the range is cut into chunks run by that many processes, and the chunks'
    totals are added in tree order, so the report is the same for any `jobs`."""
    if not codemod or codemod_sample == 0:
        share = 0.0
    elif codemod_sample is None:
        share = 1.0
    else:
        share = min(1.0, codemod_sample / (ONE_MODULE_SHARE * max(1, trees)))
    if jobs <= 1:
        return _simulate_range(Fixer(share > 0), start, start + trees, seed, share, show, only, flat)
    size = max(1, min(CHUNK, -(-trees // jobs)))
    chunks = [(first, min(first + size, start + trees), seed, share, show, only, flat)
              for first in range(start, start + trees, size)]
    totals = Totals()
    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    with context.Pool(jobs, initializer=_worker_started, initargs=(DETAILED,)) as pool:
        for part in pool.imap(_simulate_chunk, chunks):
            totals.add(part, show)
    return totals


CHUNK = 50  # trees a worker runs before handing its totals back
ONE_MODULE_SHARE = 0.25  # trees of one module (1-4, uniform): the codemod is compared on those
_FIXERS: Dict[bool, Fixer] = {}  # a worker's own: building one loads every rule


def _worker_started(detailed: bool) -> None:
    global DETAILED
    DETAILED = detailed
    _FIXERS.clear()  # a forked worker builds its own: a parent's has seen other trees


def _simulate_chunk(chunk: Tuple[int, int, int, float, int, str, bool]) -> Totals:
    first, end, seed, share, show, only, flat = chunk
    fixer = _FIXERS.get(share > 0) or _FIXERS.setdefault(share > 0, Fixer(share > 0))
    return _simulate_range(fixer, first, end, seed, share, show, only, flat)


def _codemod_due(seed: int, index: int, share: float) -> bool:
    """Whether tree `index` is in the codemod's sample: its own draw, so any split agrees."""
    return share >= 1.0 or (share > 0 and random.Random(f"{seed}:{index}:codemod").random() < share)


def _simulate_range(fixer: Fixer, first: int, end: int, seed: int, share: float, show: int, only: str,
                    flat: bool) -> Totals:
    began = time.process_time()
    totals = Totals()
    loop = asyncio.new_event_loop()
    try:
        for index in range(first, end):
            for violation in run_tree(index, seed, fixer, totals, loop, flat, _codemod_due(seed, index, share)):
                bucket = totals.reported if violation.reported else totals.silent
                bucket[violation.kind] += 1
                totals.reported_by.update(f"{violation.kind}: {code}" for code in violation.reported)
                if not violation.reported:
                    totals.causes[f"{violation.kind}: {violation.why}"] += 1
                    if only not in f"{violation.kind}: {violation.why}":
                        continue
                    mine = totals.examples.setdefault(violation.kind, [])
                    if len(mine) < show and index not in mine:
                        mine.append(index)
                        line = f"-- tree {index} {violation.kind}: {violation.detail} [{violation.why}]"
                        totals.shown.append((violation.kind, index, line))
    finally:
        loop.close()
    totals.cpu_s = time.process_time() - began
    return totals


def tree_texts(index: int, seed: int, flat: bool = False) -> Tuple[Dict[str, str], Dict[str, str]]:
    """The generated and the fixed texts of one tree, for looking at a violation."""
    rng = random.Random(f"{seed}:{index}")
    generator = Generator(rng, index, flat)
    texts = generator.build()
    fixed, _, _ = Fixer(codemod=False).fix(generator.package, texts)
    return texts, fixed


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    parser.add_argument("--start", type=int, default=0, help="first tree index (to split a run)")
    parser.add_argument("--no-codemod", action="store_true", help="skip the codemod comparison")
    parser.add_argument("--codemod-sample", type=int, default=-1, metavar="K",
                        help="compare the codemod on about K one-module trees of the range (default: all)")
    parser.add_argument("--jobs", type=int, default=1, help="processes running ranges of trees")
    parser.add_argument("--show", type=int, default=0, help="print this many violating calls per kind")
    parser.add_argument("--flat", action="store_true", help="no in-process calls: only each function's own hops")
    parser.add_argument("--only", default="", help="with --show: only violations whose kind and cause contain this")
    parser.add_argument("--tree", type=int, default=None, help="print one tree, generated and fixed")
    parser.add_argument("--detailed", action="store_true", help="causes by call site and caller too")
    args = parser.parse_args(argv)
    global DETAILED
    DETAILED = args.detailed
    if args.tree is not None:
        texts, fixed = tree_texts(args.tree, args.seed, args.flat)
        for name in texts:
            print(f"==== {name}.py (generated)\n{texts[name]}==== {name}.py (fixed)\n{fixed[name]}")
        return 0
    print(f"seed {args.seed}, trees {args.start}..{args.start + args.trees - 1}, jobs {args.jobs}", flush=True)
    began = time.perf_counter()
    sample = 0 if args.no_codemod else args.codemod_sample
    totals = simulate(args.trees, args.seed, sample != 0, args.show, args.start, args.only, args.flat,
                      args.jobs, sample if sample and sample > 0 else None)
    wall = time.perf_counter() - began
    for _, _, line in totals.shown:
        print(line, file=sys.stderr)
    print(f"trees {totals.trees}, modules {totals.modules}, requests {totals.requests}, calls {totals.calls}, "
          f"codemod compared on {totals.codemod_trees}")
    print(f"silent violations {sum(totals.silent.values())}: {dict(sorted(totals.silent.items()))}")
    print(f"reported (a finding remains) {sum(totals.reported.values())}: {dict(sorted(totals.reported.items()))}")
    for key, count in totals.causes.most_common():
        print(f"  {count:6d}  {key}")
    print("reported, by the codes left in the call's function (a violation counts once per code):")
    for key, count in sorted(totals.reported_by.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {count:6d}  {key}")
    for problem in totals.problems[:20]:
        print(f"problem: {problem}")
    cpu = totals.cpu_s
    print(f"{cpu:.1f} CPU s, {totals.trees / cpu if cpu else 0:.1f} trees per CPU s; "
          f"{wall:.1f} s wall, {totals.trees / wall if wall else 0:.1f} trees/s")
    return 1 if totals.silent or totals.problems else 0

if __name__ == "__main__":
    sys.exit(main())
