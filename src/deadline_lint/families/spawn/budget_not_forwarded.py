from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from deadline_lint.engine.edits import insert_keyword
from deadline_lint.engine.requires import Look, Words, in_file
from deadline_lint.engine.rule import Rule, register
from deadline_lint.families.shared.budget.budget import SECONDS, Budget, budget_in_scope
from deadline_lint.families.shared.budget.budget_text import BudgetText, budget_parameter_words
from deadline_lint.families.shared.budget.forwarding import Forwarding, forwarded_value
from deadline_lint.semantics.local.expressions import mentions_any
from deadline_lint.semantics.local.scopes import FUNCTION, IMPORT
from deadline_lint.support.diagnostics import Applicability
from deadline_lint.families.shared.budget.fix_tags import INSERTS_BUDGET_TAGS

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


@register
class BudgetNotForwarded(Rule):
    """
    ## What it does
    In a function with a budget in scope, flags a call to a function that accepts a budget
    and is not given one: a function of the same module called by its name, a method of
    the same class called on `self`, or an undecorated module-level function of another
    module of the project (`from .clients import fetch`, `clients.fetch(...)`, read through
    the project facts), or an undecorated method of a module-level instance of a class of
    the module that builds it (`REPO = Repo()`, called as `REPO.load(...)` there or where
    `REPO` is imported: the class built there is the one called), with a parameter named like a profile budget
    (`budget.parameters`, e.g. `budget`), annotated with a budget type, or holding budget
    seconds (`budget.seconds_parameters`, e.g. `budget_s`, which `fix --thread-budget`
    adds). Only parameters with a default are considered (a missing required one would fail
    at once); calls that pass `*args` / `**kwargs` or any argument derived from the budget
    are left alone, as are callees whose decorators might change their signature. A retry
    policy of the catalog (`@tenacity.retry(...)`, `@backoff.on_exception(...)`) keeps it:
    a function or instance method of this module decorated with one is a callee like an
    undecorated one.
    Where the profile names the ambient budget (`fix.context_accessor`), a function with no
    budget of its own has that one: a call there that omits a seconds parameter is flagged
    too, and given what the accessor says is left (a budget object's parameter is not: its
    default may read the ambient budget itself).

    ## Why is this bad?
    The callee falls back to its default, usually no budget at all or the whole edge
    total, so every call it makes may run longer than the request that asked for it. The
    budget has to be forwarded at every hop, in-process ones included.

    ## Example
    ```python
    def load_profile(user_id, budget=None):
        ...

    def handler(request, budget):
        return load_profile(request.user_id)
    ```

    ## Use instead
    ```python
    def load_profile(user_id, budget=None):
        ...

    def handler(request, budget):
        return load_profile(request.user_id, budget=budget)
    ```

    ## Fix safety
    Unsafe: the callee's calls become bounded by the caller's remainder, so a call that used
    to wait may now fail. For a function called by name it inserts a budget, so the LibCST
    codemod and `fix --thread-budget` apply it without `--unsafe-fixes`, as they do DL101's.
    A method called on `self` (`self.lookup(...)`) gets no fix: an override in a subclass,
    in this module or any other, may lack the parameter, and the added keyword would be a
    `TypeError` there; the message says so. The fix passes the budget object as it is (`budget=budget`), or
    for a seconds parameter the caller's own seconds parameter, else the timeout it would
    give an outbound call (`budget_s=budget.timeout()`, the hop margin already taken off).
    A budget read into a local before the call (`budget = request.state.budget`) is passed
    by that local.
    `fix --thread-budget --unsafe-fixes` (and the LibCST codemod with the same options),
    with this rule selected, threads a `budget_s` parameter up through every caller in the
    module that has none, so one run forwards the budget along whole call chains.

    ## Options
    - `budget.parameters`, `budget.seconds_parameters`, `budget.types`: what counts as a
      budget parameter, in callers and callees alike.
    - `fix.*`: the timeout expression passed for a seconds parameter;
      `fix.context_accessor`, the ambient budget of a function with none of its own.
    """

    code = "DL503"
    name = "budget-not-forwarded"
    summary = "a budgeted function calls a function that accepts a budget without passing it"
    fix_applicability = Applicability.UNSAFE
    node_types = (ast.Call,)

    needs = (in_file(Words.of(lambda rule: budget_parameter_words(rule.profile, rule.catalog))),)
    first_looks = {ast.Call: Look.of(lambda rule: may_forward)}

    def visit_Call(self, node: ast.Call, ctx: "FileView") -> None:
        if not isinstance(node.func, (ast.Name, ast.Attribute)):
            return
        if not ctx.analysis(BudgetText).receivers:
            return
        budget = budget_in_scope(ctx)
        ambient = budget is None
        if budget is None:
            budget = ambient_budget(ctx)
            if budget is None:
                return
        parameter = ctx.analysis(Forwarding).missing_budget(node, ctx.scope)
        if parameter is None or ambient and parameter.kind != SECONDS:
            return  # the ambient budget is seconds: a budget object's default may read it itself
        if any(mentions_any(a, budget.names) for a in [*node.args, *(k.value for k in node.keywords)]):
            return  # it hands over something derived from the budget: a choice, not an omission
        callee = parameter.callee
        value = forwarded_value(budget, parameter.kind, ctx.scope, self.profile, node)
        if value is None:
            ctx.report(self, node, f"`{callee}()` accepts `{parameter.name}` but is called without it: "
                       "forward the budget")
            return
        argument = f"{parameter.name}={value}"
        message = f"`{callee}()` accepts `{parameter.name}` but is called without it: pass `{argument}`"
        if parameter.on_self:
            # `self.m(...)` may run an override in a subclass (in any module) that lacks the
            # parameter: a keyword added here would be a TypeError there. No fix.
            ctx.report(self, node, message + f" (not fixed: a subclass may override `{callee}` without "
                       f"`{parameter.name}`; pass it through the class's overrides together)")
            return
        edit = insert_keyword(ctx.source, node, parameter.name, value)
        imports = (ctx.profile.fix.context_accessor.rpartition(".")[0],) if ambient else ()
        ctx.report(self, node, message, [edit] if edit else (), description=f"pass {argument}",
                   tags=INSERTS_BUDGET_TAGS, imports=imports)


def ambient_budget(ctx: "FileView") -> Optional[Budget]:
    """The request's budget read through the profile's `fix.context_accessor`, for a function
    with none of its own: the edge set it in the request's context, so a callee's default
    would mint a new total below the edge. None without an accessor, outside a function, or
    where the accessor's module name means something else."""
    accessor = ctx.profile.fix.context_accessor
    owner = accessor.rpartition(".")[0]
    if not owner or ctx.scope.kind != FUNCTION:
        return None
    bindings = ctx.scope.lookup(owner.split(".")[0])
    if bindings and not all(b.kind == IMPORT and b.scope.parent is None for b in bindings):
        return None
    read = f"{accessor}()"
    return Budget(names=frozenset({read}), kinds=((read, SECONDS),))


def may_forward(node: ast.Call, ctx: "FileView") -> bool:
    """The first look: a call by name in a file where a function can receive a budget."""
    return isinstance(node.func, (ast.Name, ast.Attribute)) and bool(ctx.analysis(BudgetText).receivers)

