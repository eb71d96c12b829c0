"""deadline-lint's fixes as a LibCST codemod command, for teams whose pipeline runs codemods:

    python -m libcst.tool codemod --no-format -x deadline_lint.codemod.InsertBudget src/

(`-x`: the command is a module path, no `.libcst.codemod.yaml` needed; `--no-format`: keep
the file's own formatting, since LibCST would otherwise pipe the result through black.)

It runs what `deadline-lint fix` runs (the same engine, fix loop and options) on the module's
code and hands LibCST the re-parsed result, with one difference: fixes that insert a missing
timeout (from the budget in scope or the profile's edge default) are applied whatever their
safety class, since inserting budgets is what the command is for; the other unsafe fixes
(replacing an explicit value) still need `--unsafe-fixes`. Each file gets its own profile, as
in the CLI. Prove or bail: when the profile is
invalid, fixing gives up (DL003/DL005) or the result does not parse, it warns through the
codemod context and returns the module unchanged.
"""
from __future__ import annotations

import argparse
import os
from typing import Optional, Sequence

import libcst
import libcst.codemod._cli as _libcst_cli
from libcst.codemod import CodemodCommand, CodemodContext, SkipFile

from deadline_lint.engine.checker import parse_source
from deadline_lint.run import api
from deadline_lint.run.api import Options, Session
from deadline_lint.run.selection import parse_selectors
from deadline_lint.settings.profile import ProfileError
from deadline_lint.support.diagnostics import Diagnostic
from deadline_lint.support.source import DecodeError, decode_source


class InsertBudget(CodemodCommand):
    DESCRIPTION = (
        "Insert request budgets: apply deadline-lint's fixes (timeouts from the budget in scope "
        "or the profile's edge default), the same transforms as `deadline-lint fix`. Fixes that "
        "insert a missing timeout are applied whatever their safety class (inserting budgets is "
        "what this command is for); other unsafe fixes only with --unsafe-fixes."
    )

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument(
            "--unsafe-fixes", action="store_true",
            help="also apply the other unsafe fixes (fixes that insert a missing timeout, from the budget "
            "in scope or the edge default, are always applied: that is what this command is for)",
        )
        arg_parser.add_argument(
            "--thread-budget", action="store_true",
            help="add a budget_s parameter to functions with unbudgeted outbound calls and forward it",
        )
        arg_parser.add_argument("--profile", default=None, help="adoption profile YAML (default: pyproject.toml)")
        arg_parser.add_argument("--select", type=parse_selectors, default=[], help="only these codes or prefixes")

    def __init__(
        self,
        context: CodemodContext,
        unsafe_fixes: bool = False,
        thread_budget: bool = False,
        profile: Optional[str] = None,
        select: Sequence[str] = (),
    ) -> None:
        super().__init__(context)
        self.options = Options(
            select=tuple(select), profile=profile, unsafe_fixes=unsafe_fixes, thread_budget=thread_budget,
            insert_budgets=True,
        )

    def _session(self) -> Session:
        # Checkers are costly to build (rules, catalog) and the same for every file under one
        # profile: the process's session for these options (api.session), each file resolving
        # its own profile as the CLI does (config.py).
        return api.session(self.options)

    def transform_module_impl(self, tree: libcst.Module) -> libcst.Module:
        path = self.context.filename or "<module>"
        located = os.path.abspath(self.context.filename) if self.context.filename else os.path.join(os.getcwd(), "-")
        try:
            session = self._session()
            session.checker(located)
            if self.context.filename and session.excluded(located):
                return tree  # the profile's `exclude`, as in a folder walk of the CLI
        except ProfileError as exc:
            self.warn(f"deadline-lint: {exc}; file left unchanged")
            return tree
        code = tree.code
        try:
            result = session.fix_text(code, os.path.relpath(path) if self.context.filename else path)
        except Exception as exc:  # prove or bail: never hand LibCST a half-made result
            self.warn(f"deadline-lint: fixing failed ({type(exc).__name__}: {exc}); file left unchanged")
            return tree
        if result.gave_up:
            for diagnostic in result.remaining:
                if diagnostic.code in ("DL003", "DL005"):
                    self.warn(f"deadline-lint {diagnostic.code}: {diagnostic.message}")
            return tree
        if not result.changed:
            return tree
        try:
            return libcst.parse_module(result.text or code, config=tree.config_for_parsing)
        except libcst.ParserSyntaxError as exc:
            self.warn(f"deadline-lint: LibCST cannot parse the fixed code ({exc.message}); file left unchanged")
            return tree


# `libcst.tool codemod` parses each file before our command sees it, and LibCST's native parser
# crashes the process (a segfault) on some code `ast` rejects outright, such as 10,000 nested
# parentheses: in a multi-process run that ends the whole run (BrokenProcessPool). So the
# tool's parse goes through this guard first. A file Python itself would not run is skipped
# with one line saying why (LibCST reports a skip without a traceback), and never reaches
# LibCST. The guard replaces a private name of LibCST's; if a LibCST release drops it the
# command still works, unguarded.
_unguarded_parse = getattr(_libcst_cli, "parse_module", None)


def _guarded_parse(code, *args, **kwargs):
    problem = why_not_parseable(code if isinstance(code, bytes) else code.encode("utf-8"))
    if problem is not None:
        raise SkipFile(problem)
    return _unguarded_parse(code, *args, **kwargs)  # type: ignore[misc]


def why_not_parseable(data: bytes) -> Optional[str]:
    """One line on why these bytes are not Python worth handing to LibCST, or None."""
    try:
        text = decode_source(data)
    except DecodeError as exc:
        return f"deadline-lint DL002: cannot decode file: {exc}"
    parsed = parse_source(text, "<codemod>")
    if isinstance(parsed, Diagnostic):
        return f"deadline-lint {parsed.code}: {parsed.message}"
    return None


if _unguarded_parse is not None:
    # A private LibCST hook whose declared signature ours only widens (libcst versions differ).
    _libcst_cli.parse_module = _guarded_parse  # type: ignore[attr-defined,assignment]
