"""The retry family's project fact: a project function or method that retries on its own (it
carries a retry decorator, a library's or the profile's), so that calling it where retries
already happen multiplies the attempts (DL304) wherever it is defined and however it is
reached (`inventory.availability()` on an instance of a project class, another module)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, Optional

from deadline_lint.catalog.retry import DECORATOR, RetryCatalog
from deadline_lint.semantics.facts import Answer, Fact, Local
from deadline_lint.semantics.file import FileSemantics
from deadline_lint.semantics.local.scopes import Scope
from deadline_lint.semantics.session import current
from deadline_lint.semantics.summary import FUNCTIONS, ModuleTree

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView


class RetriesOnItsOwn(Fact[str]):
    """Payload: the retry decorator's qualified name (`tenacity.retry`)."""

    version = 1

    def __init__(self, catalog: RetryCatalog) -> None:
        self.catalog = catalog
        self.name = "retry.decorated[" + ",".join(sorted(catalog.policies)) + "]"
        self._words = tuple(sorted({name.rpartition(".")[2] for name in catalog.policies}))

    def may_hold(self, text: str) -> bool:
        return "@" in text and any(word in text for word in self._words)

    def function(self, module: ModuleTree, node: ast.AST, klass: Optional[ast.ClassDef]) -> Optional[Local]:
        if not isinstance(node, FUNCTIONS):
            return None
        for decorator in node.decorator_list:
            called = isinstance(decorator, ast.Call)
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            api = self.catalog.policy(module.qualname_of(target))
            if api is not None and api.form == DECORATOR and (called or api.bare) and not _single_attempt(decorator):
                return Local(api.qualname, node.name)
        return None


def _single_attempt(decorator: ast.expr) -> bool:
    """`stop=stop_after_attempt(1)`: one attempt, no retry."""
    if not isinstance(decorator, ast.Call):
        return False
    for keyword in decorator.keywords:
        value = keyword.value
        if (
            keyword.arg == "stop"
            and isinstance(value, ast.Call)
            and value.args
            and isinstance(value.args[0], ast.Constant)
            and value.args[0].value in (0, 1)
        ):
            return True
    return False


class ProjectRetries:
    """Per file (`ctx.analysis(ProjectRetries)`): what a call reaches that retries on its own."""

    def __init__(self, ctx: "FileView") -> None:
        from deadline_lint.families.retry.analysis.retry import RetryAnalysis

        self.ctx = ctx
        catalog = ctx.analysis(RetryAnalysis).catalog
        facts: Dict[int, RetriesOnItsOwn] = current().memo(RetriesOnItsOwn, lasting=True)  # by catalog
        found = facts.get(id(catalog))
        if found is None or found.catalog is not catalog:
            found = facts[id(catalog)] = RetriesOnItsOwn(catalog)
        self.fact = found

    def retried(self, call: ast.Call, scope: Scope) -> Optional[Answer[str]]:
        return self.ctx.analysis(FileSemantics).fact_at(self.fact, call.func, scope)
