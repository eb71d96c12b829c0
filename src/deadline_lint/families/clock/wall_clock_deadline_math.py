from __future__ import annotations

from types import MappingProxyType
import ast
from typing import TYPE_CHECKING, FrozenSet, List, Optional, Tuple

from deadline_lint.engine.edits import replace_node
from deadline_lint.engine.requires import Aliases, Look, Names, Project, Text, Words, in_body, in_file
from deadline_lint.engine.rule import Rule, register
from deadline_lint.families.clock.common import (
    CLOCK_WORDS,
    may_read_clock,
    spell_function,
    WALL_READ_TEXT,
    WallClockThroughProject,
)
from deadline_lint.families.shared.time.clock_catalog import clock_catalog
from deadline_lint.families.shared.time.time_values import (
    COMPARE,
    REMAINING,
    SPAN_CHECK,
    TIMEOUT,
    WALL,
    ClockRead,
    DeadlineUse,
    FunctionTimes,
    TimeValues,
)
from deadline_lint.support.diagnostics import Applicability, Edit

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_PRIORITY = (REMAINING, COMPARE, SPAN_CHECK, TIMEOUT)  # the use a message names first
_WHAT = MappingProxyType({
    COMPARE: "compared with a deadline",
    REMAINING: "used to compute the remaining time",
    SPAN_CHECK: "used to check elapsed or remaining time against a limit",
    TIMEOUT: "used to compute a timeout",
})



def _clock_names(rule: Rule) -> FrozenSet[str]:
    clocks = clock_catalog(rule.catalog)
    return clocks.final_names | frozenset(clocks.instant_methods)


@register
class WallClockDeadlineMath(Rule):
    """
    ## What it does
    Flags a wall-clock read (`time.time()`, `time.time_ns()`, `datetime.now()`,
    `datetime.utcnow()`, in any import spelling) that a function uses for its own deadline or
    remaining-time arithmetic: a deadline computed from it and compared with a later read
    (`deadline = time.time() + t` ... `while time.time() < deadline`), remaining time
    (`deadline - time.time()`), elapsed time checked against a limit
    (`time.time() - start > timeout`), or a span passed as a timeout or to a sleep
    (`time.sleep(period - (time.time() - start))`).

    The deadline may cross a function boundary inside the module: an instant read from the
    wall clock and kept on `self` (`self.deadline = time.time() + t` in `__init__`, compared
    in `left()`), on request state (`request.state.deadline_at`), as a keyword of a class of
    the module (`Lease(expires=time.time() + ttl)`) or returned by a module-level function
    (`def deadline_in(t): return time.time() + t`), or passed as a parameter by every caller
    (`run_listener(ack, time.time(), 5)`, `wait_for(time.time() + 5)`: a module-level def or
    a method called on `self`; a caller in another module counts when its call resolves to
    the def and passes the instant there, read from the project's call-site index), in any
    unit (`int(time.time() * 1000)`), then compared with or subtracted from a later
    wall-clock read. The attribute may be set through a setter (a property's, given
    `self.started = time.time()`, or a method keeping its parameter, `self.mark(time.time())`
    or `timer.mark(...)` on an instance of the class built here) or by a base class, of the
    module or of another project module (`Job.start` keeps it, `Export(Job).poll` compares
    it; a base no project module defines, or one in a test module, silences it). The clock
    may be read through a module-level alias (`_now = datetime.datetime.now`), an alias of
    such an alias (`now = _now`), or a name a project module binds to a clock function
    (`from .compat import now` where `compat` has `now = time.time`, `now = _clock` or
    `from time import time as now`). One finding per timer: the later read, whose message
    names the line that started it (for another module, its file and the line of the call).
    So is a parameter the profile names a deadline instant (`budget.deadline_names`:
    `deadline`, `deadline_at`) compared with the wall clock. Every
    store of the attribute, and every call's argument, must be such an instant (`None` and
    `0` are placeholders); one from elsewhere silences it, as does a parameter with no caller
    in the project, a call through `*args` or `**kwargs`, or the function handed on as a
    value.

    It stays quiet where the wall clock is the right clock or the code cannot tell: comparisons
    with an instant issued elsewhere (a token's `exp`, an `expires_at` from a server, a
    `Retry-After` date, a persisted or message-carried timestamp: an ORM row's attribute, a
    module global such as `settings.LAST_CHECK`), timestamps that are only logged, stored or
    sent, an interval whose `if` branch only writes a log line (and stamps the time again),
    a deadline at the next boundary of the calendar (`time.time() % ONE_HOUR`), monotonic
    clocks (`time.monotonic()`, `perf_counter`, `loop.time()`), and module-level code.

    The finding is on the wall-clock call.

    ## Why is this bad?
    The wall clock is not a stopwatch: NTP steps it, an operator or a VM resume sets it, and
    leap-second smearing bends it. A deadline measured on it can expire at once or never, so a
    loop spins forever or gives up early, and the remaining time a hop forwards is wrong by
    the size of the jump. Remaining time is a monotonic quantity (`time.monotonic()`); the
    wall clock is for instants other machines or people must understand.

    ## Example
    ```python
    import time

    def wait_ready(probe, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if probe():
                return True
            time.sleep(0.1)
        return False
    ```

    ## Use instead
    ```python
    import time

    def wait_ready(probe, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if probe():
                return True
            time.sleep(0.1)
        return False
    ```

    ## Fix safety
    The fix replaces every wall-clock read that is combined with the flagged one (so the two
    sides of a comparison stay on one clock) with its monotonic counterpart:
    `time.monotonic()` for `time.time()`, `time.monotonic_ns()` for `time.time_ns()`, and
    `time.monotonic()` for `datetime.now().timestamp()`. It uses the name the module already
    binds (`t.monotonic()` after `import time as t`) or adds the import.

    Safe when every use of those values stays inside the function: compared, used in
    arithmetic, `min`/`max`/`abs`/`float`/`int`/`round`, passed to a sleep or as a `*timeout*`
    keyword. Unsafe when a value can leave it (returned, stored on an attribute or in a
    container, passed to another call, formatted or logged): a monotonic reading means
    nothing to whoever receives it. There is no fix when a read is also compared with an
    instant from elsewhere, or has no clean monotonic equivalent (`datetime` arithmetic with
    `timedelta`: switch to `time.monotonic()` and seconds by hand), or the deadline crosses a
    function boundary (both sides must change together: by hand).

    ## Options
    - `budget.deadline_names`: parameters that carry a deadline instant this process set.
    The clocks are catalog data (`catalog/clock.yaml`).
    """

    code = "DL201"
    name = "wall-clock-deadline-math"
    summary = "wall-clock time used for deadline or remaining-time arithmetic"
    fix_applicability = Applicability.SAFE
    node_types = (ast.Call,)

    # A clock read in the text, or one through the project (a project function that reads the
    # wall clock, a clock module re-exported by a project module).
    _through_project = Project(lambda rule: rule.catalog.derived(WallClockThroughProject))
    # Every finding starts at a clock read: `x.<clock name>()` or a name imported from a clock
    # module, under its own name or another, or a call through the project.
    needs = (
        in_file(Words(*CLOCK_WORDS) & Text(lambda rule: WALL_READ_TEXT) | _through_project),
        in_body(Names.of(_clock_names) | Aliases() | _through_project),
    )
    first_looks = {ast.Call: Look(may_read_clock)}

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        analysis = ctx.analysis(TimeValues)
        read = analysis.clock_read(node, ctx.scope)
        if read is None or read.clock != WALL:
            return
        times = analysis.function(ctx.scope)
        if times is None:
            return
        uses = [u for u in times.deadline_uses if u.clock == WALL and _involves(u, read)]
        local = [u for u in uses if u.local]
        if not local:
            # A read kept on an attribute, returned or passed for another function to compare
            # is reported there, once per timer, naming this line (`_started`).
            return
        shown = ctx.source.segment(node)
        what = _WHAT[min((u.kind for u in local), key=_PRIORITY.index)]
        started = _started(local, read, times, ctx)
        if read.through:
            message = (
                f"`{shown}` reads the wall clock ({read.through}) and is {what}{started}: "
                "measure remaining time with `time.monotonic()`"
            )
            ctx.report(self, node, message)
            return
        fix = self._fix(read, times, ctx)
        if fix is None:
            message = (
                f"`{shown}` reads the wall clock and is {what}{started}: measure remaining time with `time.monotonic()`"
            )
            ctx.report(self, node, message)
            return
        edits, imports, safety, replacement = fix
        message = f"`{shown}` reads the wall clock and is {what}: use `{replacement}`"
        ctx.report(self, node, message, edits, applicability=safety, description=f"use {replacement}", imports=imports)

    def _fix(
        self, read: ClockRead, times: FunctionTimes, ctx: "FileView"
    ) -> Optional[Tuple[List[Edit], Tuple[str, ...], Applicability, str]]:
        group = times.linked_reads(read)
        if any(not u.local for u in times.deadline_uses if any(_involves(u, r) for r in group)):
            return None  # a read also measured against an instant from elsewhere
        edits: List[Edit] = []
        imports: List[str] = []
        own = ""
        for member in group:
            if member.monotonic is None:
                return None
            spelled = spell_function(member.monotonic, ctx)
            if spelled is None:
                return None
            callee, needed = spelled
            edits.append(replace_node(ctx.source, member.node, f"{callee}()"))
            imports.extend(i for i in needed if i not in imports)
            if member.node is read.node:
                own = f"{callee}()"
        escapes = any(times.expression_escapes(member.node) for member in group)
        safety = Applicability.UNSAFE if escapes else Applicability.SAFE
        return edits, tuple(imports), safety, own


def _started(uses: List[DeadlineUse], read: ClockRead, times: FunctionTimes, ctx: "FileView") -> str:
    """` (started at line 12 with `time.time()`)`: the read another function made of the
    instant this one measures against (kept on an attribute, returned, or passed in)."""
    for use in uses:
        for other in use.reads:
            node = other.node
            if other.elsewhere and other.shown:
                return f" (started at {other.elsewhere} with `{other.shown}`)"
            if other.elsewhere:
                return f" (passed from {other.elsewhere}, read with `{other.qualname}()`)"
            if node is read.node or not hasattr(node, "lineno") or times.parent_of(node) is not None:
                continue
            return f" (started at line {node.lineno} with `{ctx.source.segment(node)}`)"
    return ""


def _involves(use: DeadlineUse, read: ClockRead) -> bool:
    return any(r.node is read.node for r in use.reads)
