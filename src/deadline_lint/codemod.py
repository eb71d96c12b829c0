"""`python -m libcst.tool codemod deadline_lint.codemod.InsertBudget`: the name users give
LibCST; the command itself is `deadline_lint.frontends.codemod`."""
from deadline_lint.frontends.codemod import InsertBudget

__all__ = ["InsertBudget"]
