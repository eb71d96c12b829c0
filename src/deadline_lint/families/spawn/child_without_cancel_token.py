from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from deadline_lint.catalog import Catalog
from deadline_lint.engine.requires import Aliases, Look, Names, Words, in_body, in_file
from deadline_lint.engine.rule import Rule, register
from deadline_lint.families.shared.budget.budget import budget_in_scope
from deadline_lint.families.shared.budget.budget_text import BudgetText, budget_words
from deadline_lint.families.spawn.common import child_words, may_start, start_first_look
from deadline_lint.families.spawn.spawn import CHILD_KINDS, Spawns
from deadline_lint.semantics.local.children import walk as walk_nodes
from deadline_lint.semantics.local.expressions import mentions_any
from deadline_lint.settings.profile import Profile

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


@register
class ChildWithoutCancelToken(Rule):
    """
    ## What it does
    In a function with a budget in scope, flags a child started outside the event loop's
    cancellation: `threading.Thread(...)`, `executor.submit(...)` (on a
    `ThreadPoolExecutor` / `ProcessPoolExecutor`), `loop.run_in_executor(...)` and
    `asyncio.to_thread(...)`, when nothing it is given carries the budget or a cancel token:
    no argument mentions the budget or a name derived from it, none is a `threading.Event` /
    `asyncio.Event` (in a local or a `self` attribute), and the function it runs is not a
    closure that reads one. A thread started by a method of a class that keeps an Event in an
    attribute is taken to poll it.

    ## Why is this bad?
    Cancelling a request cancels its coroutines, not its threads: a thread or executor job
    cannot be interrupted from outside. Unless it gets the deadline (to bound its own calls)
    or an Event it checks, it runs to the end after the caller has given up, holding a
    worker and calling downstream services with time nobody has.

    ## Example
    ```python
    import threading

    def export(report, budget):
        worker = threading.Thread(target=render_pdf, args=(report,))
        worker.start()
    ```

    ## Use instead
    ```python
    import threading

    def export(report, budget):
        worker = threading.Thread(target=render_pdf, args=(report, budget))
        worker.start()
    ```

    ## Fix safety
    No fix: the child's function has to accept and honour the budget or token first.

    ## Options
    - `budget.*`: what counts as a budget (only budgeted functions are checked).
    """

    code = "DL502"
    name = "child-without-cancel-token"
    summary = "thread or executor job started in a budgeted function without the budget or a cancel token"
    node_types = (ast.Call,)

    # Every finding is at a call that may start a child: `x.<word>()`, `<word>()` or an
    # imported name, under its own name (a word) or another.
    needs = (
        in_file(
            Words.of(lambda rule: child_words(rule.profile, rule.catalog))
            & Words.of(lambda rule: budget_words(rule.profile, rule.catalog))
        ),
        in_body(Names.of(lambda rule: child_words(rule.profile, rule.catalog)) | Aliases()),
    )
    first_looks = {ast.Call: Look.of(lambda rule: start_first_look(rule.profile, rule.catalog))}

    def __init__(self, profile: Profile, catalog: Catalog) -> None:
        super().__init__(profile, catalog)
        self._words = child_words(profile, catalog)

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        if not may_start(node.func, self._words, ctx):
            return  # most calls: nothing that starts a child (checked before any lookup)
        if not ctx.analysis(BudgetText).possible:
            return
        spawns = ctx.analysis(Spawns)
        spawn = spawns.classify(node, ctx.scope)
        if spawn is None or spawn.kind not in CHILD_KINDS:
            return
        budget = budget_in_scope(ctx)
        if budget is None:
            return
        scope = ctx.scope
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return  # `*args` / `**kwargs`: what the child gets cannot be seen
        for argument in spawn.arguments:
            if mentions_any(argument, budget.names) or spawns.reaches_token(argument, scope):
                return
        body = spawns.target_body(spawn.target, scope)
        if body is not None and (mentions_any(body, budget.names) or _reads_token(body, spawns, ctx)):
            return
        if spawns.class_has_token(spawn.target, scope):
            return
        article = "an" if spawn.kind[0] in "aeiou" else "a"
        ctx.report(self, node, f"`{spawn.display}(...)` starts {article} {spawn.kind} that gets neither the budget "
                   "nor a cancel token: it outlives the request; pass the budget or an Event it checks")


def _reads_token(function: ast.AST, spawns: Spawns, ctx: "FileView") -> bool:
    """A closure that reads a cancel token of the enclosing scope."""
    return any(
        isinstance(node, ast.Name) and spawns.tokens.matches(node, ctx.scope)
        for node in walk_nodes(function)
    )
