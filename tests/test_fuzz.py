"""Bounded fuzzing: generated programs through `check` and `fix --unsafe-fixes --thread-budget`.

For every program: no exception escapes, no rule fails (DL003), every fix parses, fixing never
gives up (DL005), and fixing twice gives what fixing once gave. Two generators: hypothesmith's
grammar-based one (arbitrary valid Python, with the outbound imports in front so the rules do
look at it), and a small grammar of the code the rules are about (calls, timeouts, budgets,
nesting, clients, comments), which reaches far more rule paths per example.

Bounded by a count, not by time; the seed and the count are printed (`-s` shows them; a
failure shows them too). Reproduce a run with DEADLINE_LINT_FUZZ_SEED=<seed>, or go longer
with DEADLINE_LINT_FUZZ_COUNT=<n>.
"""
from __future__ import annotations

import ast
import functools
import os
import random
from typing import Any

from deadline_lint.engine.checker import Checker
from deadline_lint.families.registry import all_rules
from deadline_lint.fixes.loop import FixMode, fix_text

SEED = int(os.environ.get("DEADLINE_LINT_FUZZ_SEED", random.randrange(2**32)))
COUNT = int(os.environ.get("DEADLINE_LINT_FUZZ_COUNT", "40"))
MODE = FixMode(unsafe=True, thread_budget=True)
HEADER = (
    "import asyncio\nimport aiohttp\nimport grpc\nimport httpx\nimport requests\nimport socket\n"
    "import urllib.request\nfrom botocore.config import Config\nimport boto3\n"
)
# Hypothesis, the checker and the grammar below are built by the process that runs these
# tests, on first use: importing and building them is a second of every xdist worker's
# collection otherwise.


@functools.lru_cache(maxsize=None)
def checker() -> Checker:
    return Checker(select=list(all_rules()))


@functools.lru_cache(maxsize=None)
def fuzz_settings() -> Any:
    from hypothesis import HealthCheck, settings

    return settings(
        max_examples=COUNT,
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
    )


def _exercise(text: str) -> None:
    from hypothesis import assume

    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        assume(False)  # the generators are wider than what compiles (`f(k=1, 2)`, ...)
    found = checker().check_text(text, "fuzzed.py")
    assert not [d for d in found if d.code == "DL003"], found
    once = fix_text(checker(), text, "fuzzed.py", MODE)
    assert not once.gave_up, [d for d in once.remaining if d.code in ("DL003", "DL005")]
    ast.parse(once.text)
    twice = fix_text(checker(), once.text, "fuzzed.py", MODE)
    assert twice.text == once.text, "fixing twice changed more than fixing once"


# -- a grammar of the code the rules are about -------------------------------------------------
@functools.lru_cache(maxsize=None)
def service_programs() -> Any:
    from hypothesis import strategies as st

    NAMES = st.sampled_from(["url", "budget", "budget_s", "remaining", "left", "context", "self.timeout", "t"])
    TIMEOUTS = st.sampled_from([
        "None", "2.0", "0", "-1", "(3.05, None)", "(None, 27)", "(1, 2)", "float('inf')", "budget.timeout()",
        "remaining", "context.time_remaining()", "max(remaining, 5)", "remaining + 1", "remaining or 30",
        "min(2.0, remaining)", "max(0.0, remaining)", "httpx.Timeout(None)", "httpx.Timeout(5.0, read=None)",
        "aiohttp.ClientTimeout()", "aiohttp.ClientTimeout(total=None)", "Config(read_timeout=None)",
        "self.remaining", "t", "left", "budget_s", "1+" * 40 + "1", "-" * 60 + "1",
    ])
    CALLS = st.sampled_from([
        "requests.get({url}{t})", "requests.post({url}, json={{}}{t})", "requests.Session().request('GET', {url}{t})",
        "httpx.get({url}{t})", "httpx.Client({t0}).get({url})", "await session.get({url}{t})",
        "self.stub.Method(request{t})", "urllib.request.urlopen({url}{t})", "socket.create_connection(({url}, 80){t})",
        "await asyncio.wait_for(work(){t})", "await asyncio.open_connection({url}, 80)",
        "boto3.client('s3'{tc})", "requests.get(*args, **kwargs)", "fetch({url})",
    ])

    @st.composite
    def _statement(draw, depth: int = 0) -> str:
        kind = draw(st.integers(0, 9 if depth < 3 else 4))
        call = draw(CALLS)
        timeout = draw(TIMEOUTS)
        keyword = draw(st.sampled_from(["", ", timeout={}", ", {}"]))
        text = call.format(
            url=draw(NAMES),
            t=keyword.format(timeout) if keyword else "",
            t0=f"timeout={timeout}" if keyword else "",
            tc=f", config={timeout}" if keyword else "",
        )
        comment = draw(st.sampled_from(["", "  # noqa: DL101", "  # a comment", "  # noqa", "  # NOQA: dl102"]))
        if kind <= 2:
            return f"{text}{comment}"
        if kind == 3:
            return f"{draw(NAMES).split('.')[0]} = {draw(TIMEOUTS)}"
        if kind == 4:
            return f"remaining = context.time_remaining(){comment}"
        body = "\n".join("    " + line for s in draw(st.lists(_statement(depth + 1), min_size=1, max_size=3))
                         for line in s.splitlines())
        header = draw(st.sampled_from([
            "if (left := context.time_remaining()) > 0.1:", "while (left := budget_s) > 0:", "for x in range(3):",
            "with open(url) as f:", "async with asyncio.timeout(2):", "try:",
            "def fetch(url, budget=None):", "async def handler(request, context):",
            "def f(url, *, budget_s: float = 10.0):", "class Service:", "@retry\ndef g(url, budget):",
        ]))
        tail = "\nexcept Exception:\n    pass" if header == "try:" else ""
        return f"{header}\n{body}{tail}"

    @st.composite
    def programs(draw) -> str:
        statements = draw(st.lists(_statement(), min_size=1, max_size=6))
        functions = [f"async def handler_{i}(request, context: grpc.ServicerContext, budget, session):\n" +
                     "\n".join("    " + line for line in s.splitlines()) for i, s in enumerate(statements)]
        return HEADER + "\n\n".join(functions) + "\n"

    return programs()


def _report(capsys, generator: str) -> None:
    with capsys.disabled():
        print(f"\nfuzz {generator}: seed={SEED} count={COUNT}", end=" ")


def test_fuzz_service_programs(capsys) -> None:
    from hypothesis import given, seed

    _report(capsys, "service grammar")

    @seed(SEED)
    @fuzz_settings()
    @given(service_programs())
    def run(text: str) -> None:
        _exercise(text)

    run()


def hypothesmith_programs() -> Any:
    """`hypothesmith.from_grammar()`: its strategy over its grammar of Python, minus the LALR
    parse tables that `from_grammar` has Lark build (1.5 of its 2 CPU seconds), which drawing
    never reads: hypothesis' LarkStrategy draws from the grammar's own rules and terminals
    (`grammar.grammar.compile`), so a seed draws the same programs either way."""
    from hypothesmith.syntactic import LARK_GRAMMAR, GrammarStrategy, PythonIndenter
    from lark import Lark

    start = "file_input"  # from_grammar's default: a module
    grammar = Lark(LARK_GRAMMAR, parser=None, lexer="basic", postlex=PythonIndenter(), start=start)
    return GrammarStrategy(grammar, start, auto_target=True)


def test_fuzz_hypothesmith_programs(capsys) -> None:
    from hypothesis import given, seed, settings

    _report(capsys, "hypothesmith")

    @seed(SEED)
    @settings(fuzz_settings(), max_examples=max(1, COUNT // 3))
    @given(hypothesmith_programs())
    def run(text: str) -> None:
        _exercise(HEADER + text)

    run()
