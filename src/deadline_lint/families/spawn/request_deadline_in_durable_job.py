from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, FrozenSet, List, Optional

from deadline_lint.catalog import Catalog
from deadline_lint.engine.requires import Aliases, Look, Names, Words
from deadline_lint.engine.rule import Rule, register
from deadline_lint.families.shared.budget.budget import budget_in_scope
from deadline_lint.families.shared.budget.budget_text import BudgetText, budget_words
from deadline_lint.families.spawn.durable import Enqueue, Enqueues
from deadline_lint.families.spawn.queue_catalog import queue_catalog
from deadline_lint.semantics.local.expressions import mentions_any
from deadline_lint.settings.profile import Profile

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


@register
class RequestDeadlineInDurableJob(Rule):
    """
    ## What it does
    In a function with a budget in scope, flags a call that hands work to a durable queue
    when one of its arguments or options is derived from the request's budget or deadline:
    Celery (`task.delay`, `task.apply_async`, `app.send_task`, `task.s(...).apply_async`,
    with `expires`, `countdown`, `eta`, `time_limit`), RQ (`Queue.enqueue`, `enqueue_in`,
    `enqueue_at`, `job_timeout`, `ttl`, `result_ttl`), arq (`enqueue_job`, `_expires`,
    `_defer_by`), dramatiq (`send`, `send_with_options`, `time_limit`), Huey (`schedule`),
    taskiq (`kiq`), kombu (`Producer.publish`, `expiration`), Google Cloud Tasks
    (`create_task`) and SQS (`send_message`), and the organisation's own enqueue functions.

    A call counts only when the code shows what it calls: a task decorated in this module or
    in an imported project module (`@shared_task`, `@app.task` on a Celery app, `@dramatiq.actor`,
    ...), a queue object built by the library (`Queue(...)`, `await create_pool(...)`,
    `boto3.client("sqs")`). It stays quiet for a constant or a setting as the job's bound, for
    a job the request waits for (`.get(timeout=...)`, `await job.result(...)`: that work exists
    to answer the request, and the wait is an outbound call, DL101/DL102), for in-process
    queues and tasks (`asyncio.Queue`, `create_task`: DL501/DL502), and in a function that is
    itself a task (a worker passing its own batch deadline on).

    ## Why is this bad?
    A request deadline bounds work that exists to answer this request. A job on a durable
    queue is another unit of work, with its own lifetime: it may run in a minute or an hour,
    after the request has long been answered. Copying the request's remaining time or
    deadline into it makes the job expire, or be skipped, on a schedule that has nothing to
    do with it: a report that takes a minute is dropped because the request that asked for
    it had 800 ms left. What crosses into the queue is the job's own freshness bound, chosen
    when it is enqueued ("don't bother running this after 10 minutes").

    ## Example
    ```python
    from celery import shared_task


    @shared_task
    def build_report(user_id):
        ...


    def start_report(user_id, budget):
        build_report.apply_async(args=(user_id,), expires=budget.remaining())
    ```

    ## Use instead
    ```python
    from celery import shared_task

    REPORT_FRESHNESS_S = 600


    @shared_task
    def build_report(user_id):
        ...


    def start_report(user_id, budget):
        build_report.apply_async(args=(user_id,), expires=REPORT_FRESHNESS_S)
    ```

    ## Fix safety
    No fix: the job's own bound is a decision about the job (how stale its result may be),
    which the request's budget cannot make.

    ## Options
    - `budget.*`: what counts as a budget (only budgeted functions are checked).
    - `durable_enqueues`: the organisation's own functions that enqueue durable work.
    """

    code = "DL504"
    name = "request-deadline-in-durable-job"
    summary = "a value derived from the request's budget or deadline passed to a durable queue's job"
    node_types = (ast.Call,)

    # A file is parsed for this rule only when it spells an enqueue (a method or function a
    # queue library or the profile lists) and a budget: one that mentions no queue is not.
    requires = Words.of(lambda rule: enqueue_words(rule.profile, rule.catalog)) & Words.of(
        lambda rule: budget_words(rule.profile, rule.catalog)
    )
    body_requires = Names.of(lambda rule: enqueue_words(rule.profile, rule.catalog)) | Aliases()
    first_looks = {ast.Call: Look.of(lambda rule: enqueue_first_look(rule.profile, rule.catalog))}

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        if not ctx.analysis(BudgetText).possible:
            return
        enqueues = ctx.analysis(Enqueues)
        enqueue = enqueues.classify(node, ctx.scope)
        if enqueue is None:
            return
        budget = budget_in_scope(ctx)
        if budget is None:
            return
        offenders = [found for call in enqueue.calls or (node,) for found in _offenders(call, budget.names)]
        if not offenders:
            return
        function = _function_of(ctx.parents)
        if function is not None and enqueues.is_task(function):
            return  # a worker: the deadline it holds is its own batch's, not a request's
        if enqueues.waited(node, ctx.parents, function):
            return  # the request waits for the job: it belongs under the request's deadline
        ctx.report(self, node, _message(enqueue, offenders))


def enqueue_words(profile: Profile, catalog: Catalog) -> FrozenSet[str]:
    return queue_catalog(catalog, profile.durable_enqueues).words


def enqueue_first_look(profile: Profile, catalog: Catalog) -> Callable[[ast.Call, object], bool]:
    words = enqueue_words(profile, catalog)
    return catalog.cached(enqueue_first_look, lambda: lambda node, ctx: _may_enqueue(node.func, words, ctx), words)


def _may_enqueue(func: ast.expr, words: FrozenSet[str], ctx) -> bool:
    if type(func) is ast.Attribute:
        return func.attr in words  # type: ignore[attr-defined]
    if type(func) is ast.Name:
        # The profile's own functions, perhaps imported under another name.
        return func.id in words or func.id in ctx.resolver.imported_names(ctx.scope)  # type: ignore[attr-defined]
    return False


def _offenders(call: ast.Call, names) -> List[str]:
    """How the message names each argument that carries the budget: `expires`, `deadline=`,
    argument 2. Values hidden behind `*` / `**` are not looked into."""
    found: List[str] = []
    for index, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            break
        if mentions_any(argument, names):
            found.append(f"argument {index + 1}")
    for keyword in call.keywords:
        if keyword.arg is not None and mentions_any(keyword.value, names):
            found.append(keyword.arg)
    return found


def _function_of(parents) -> Optional[ast.AST]:
    for node in reversed(parents):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node
    return None


def _message(enqueue: Enqueue, offenders: List[str]) -> str:
    options = [o for o in offenders if o in enqueue.options]
    named = ", ".join(f"`{o}`" if not o.startswith("argument") else o for o in offenders)
    if options:
        advice = f"give `{options[0]}` the job's own bound (a constant or a setting)"
    elif enqueue.options:
        advice = f"drop it and give the job its own bound (`{enqueue.options[0]}=` a constant or a setting)"
    else:
        advice = "drop it and give the job its own bound (a constant or a setting)"
    return (f"`{enqueue.display}()` hands the request's budget to a durable job ({named}): "
            f"the job outlives the request; {advice}")
