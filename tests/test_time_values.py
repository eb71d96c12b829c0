"""The time-values analysis: which names hold wall-clock or monotonic instants, deadlines and
spans, through import spellings and simple local assignments, and which values leave a function."""
from __future__ import annotations

import ast
import textwrap

from deadline_lint.engine.checker import Checker
from deadline_lint.engine.context import FileContext
from deadline_lint.support.source import SourceFile
from deadline_lint.families.shared.time.time_values import (
    COMPARE,
    DEADLINE,
    INSTANT,
    MONOTONIC,
    REMAINING,
    SPAN,
    SPAN_CHECK,
    TIMEOUT,
    WALL,
    FunctionTimes,
    TimeValues,
)

_CHECKER = Checker()


def times_of(code: str, function: str = "f") -> FunctionTimes:
    text = textwrap.dedent(code)
    tree = ast.parse(text)
    ctx = FileContext(SourceFile(text, "m.py"), tree, _CHECKER.profile, _CHECKER.catalog)
    node = next(
        n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == function
    )
    found = ctx.analysis(TimeValues).function(ctx.resolver.scope_of(node, ctx.module_scope))
    assert found is not None
    return found


def described(times: FunctionTimes):
    return {name: (v.role, v.clock, v.local) for name, v in times.names.items()}


def test_every_import_spelling_of_the_wall_clock() -> None:
    times = times_of('''
        import time
        import time as t
        import datetime as dt
        from time import time as now, time_ns
        from datetime import datetime, timezone

        def f():
            a = time.time()
            b = t.time()
            c = now()
            d = time_ns()
            e = datetime.now(timezone.utc)
            g = dt.datetime.utcnow()
            h = datetime.now().timestamp()
            i = time.monotonic()
            j = t.perf_counter_ns()
            k = len("x")
    ''')
    assert described(times) == {
        **{name: (INSTANT, WALL, True) for name in "abcdegh"},
        "i": (INSTANT, MONOTONIC, True),
        "j": (INSTANT, MONOTONIC, True),
    }
    assert times.names["h"].unit == "s" and times.names["h"].reads[0].monotonic == "time.monotonic"
    assert times.names["e"].reads[0].monotonic is None  # datetime: no clean monotonic twin


def test_from_time_import_time_and_event_loop_time() -> None:
    times = times_of('''
        import asyncio
        from time import time

        async def f(self):
            start = time()
            loop = asyncio.get_running_loop()
            until = loop.time() + 2
            other = self._loop.time()
    ''')
    assert described(times) == {
        "start": (INSTANT, WALL, True),
        "until": (DEADLINE, MONOTONIC, True),
        "other": (INSTANT, MONOTONIC, True),
    }


def test_deadlines_and_spans_through_local_assignments() -> None:
    times = times_of('''
        import time
        from datetime import datetime, timedelta

        def f(timeout, expires_at, record):
            deadline = None
            deadline = time.time() + timeout
            later = deadline + 1.0
            remaining = deadline - time.time()
            left = max(0.0, remaining)
            capped = min(remaining, timeout)
            earliest = min(deadline, expires_at)
            cutoff = time.time() - 3600
            age = time.time() - record.created
            until_expiry = expires_at - time.time()
            soon = datetime.now() + timedelta(seconds=5)
            if time.time() > expires_at:
                pass
    ''')
    got = described(times)
    assert got["deadline"] == got["later"] == got["cutoff"] == (DEADLINE, WALL, True)
    assert got["remaining"] == got["left"] == got["capped"] == (SPAN, WALL, True)
    assert got["earliest"] == (DEADLINE, WALL, False)  # another deadline from elsewhere took part
    assert got["age"] == got["until_expiry"] == (SPAN, WALL, False)  # an instant from elsewhere
    assert got["soon"] == (DEADLINE, WALL, True)
    assert got["expires_at"] == (DEADLINE, WALL, False)  # known only from the comparison
    assert "timeout" not in got and "record" not in got


def test_deadline_uses() -> None:
    times = times_of('''
        import asyncio, time

        async def f(timeout, token):
            deadline = time.time() + timeout
            while time.time() < deadline:
                await asyncio.sleep(deadline - time.time())
            start = time.time()
            if time.time() - start > timeout:
                pass
            if time.time() > token.exp:
                pass
    ''')
    kinds = sorted((u.kind, u.node.lineno, u.local) for u in times.deadline_uses)
    assert kinds == [
        (COMPARE, 6, True),
        (COMPARE, 11, False),
        (REMAINING, 7, True),
        (SPAN_CHECK, 9, True),
        (TIMEOUT, 7, True),
    ]


def test_escapes() -> None:
    times = times_of('''
        import time, logging

        def f(self, timeout, sock):
            inside = time.time() + timeout
            while time.time() < inside:
                sock.settimeout(timeout=inside - time.time())
            returned = time.time()
            logged = time.time()
            logging.info("at %s", logged)
            stored = time.time()
            self.at = stored
            boxed = time.time()
            record = {"at": boxed}
            passed = time.time()
            sock.send(passed)
            chained = time.time()
            alias = chained
            sock.send(alias)
            unused = time.time()
            return returned + 1
    ''')
    assert not times.escapes("inside") and not times.escapes("unused")
    for name in ("returned", "logged", "stored", "boxed", "passed", "chained", "alias"):
        assert times.escapes(name), name


def test_linked_reads_cover_every_read_combined_with_a_name() -> None:
    times = times_of('''
        import time, logging

        def f(timeout):
            start = time.time()
            if time.time() - start > timeout:
                pass
            logging.info("took %s", time.time() - start)
            unrelated = time.time()
    ''')
    first = times.names["start"].reads[0]
    assert [r.node.lineno for r in times.linked_reads(first)] == [5, 6, 8]


def test_nothing_outside_functions_and_unknown_stays_unknown() -> None:
    times = times_of('''
        import time

        def f(x, clock):
            a = clock.time()
            b = x.now()
            c = a + b
            d = time.time()
            d = "later"
    ''')
    assert described(times) == {}


def test_the_clock_catalog_is_typed_and_checked() -> None:
    import pytest

    from deadline_lint.families.shared.time.clock_catalog import _build, clock_catalog

    clocks = clock_catalog(_CHECKER.catalog)
    assert clocks.functions["time.time"].monotonic == "time.monotonic"
    assert clocks.functions["time.perf_counter"].clock == MONOTONIC
    assert "datetime.timedelta" in clocks.durations and "asyncio.sleep" in clocks.sleeps
    with pytest.raises(RuntimeError, match="clock.yaml: expected `wall.time.time` with a unit"):
        _build({"wall": {"time.time": {"unit": "hours"}}})


_ELAPSED_CHECK = '''
    import time

    def f(client):
        start = time.time()
        response = client.get("/delay")
        elapsed = time.time() - start
        assert elapsed >= 0.4
'''


def _uses(times: FunctionTimes):
    return sorted((type(u.node).__name__, u.node.lineno, u.kind) for u in times.deadline_uses)


def test_answers_do_not_depend_on_which_question_comes_first() -> None:
    # The budget analysis asks for a function's names first, DL201 for a read's value first:
    # a cycle guard met while the names were being worked out once poisoned the memo, so
    # selecting DL503 next to DL201 hid DL201's findings.
    value_first = times_of(_ELAPSED_CHECK)
    value_first.value(value_first.scope.node.body[0].value)  # type: ignore[attr-defined]
    names_first = times_of(_ELAPSED_CHECK)
    assert described(names_first) == described(value_first)
    assert _uses(names_first) == _uses(value_first)
    assert _uses(value_first)  # the comparison is a use of the span
