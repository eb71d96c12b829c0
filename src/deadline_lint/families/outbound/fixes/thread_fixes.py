"""The rules' own fixes, re-aimed for `--thread-budget` (thread_budget.py). The rules build
their fixes themselves (keyword, timeout object, `wait_for` wrapper, imports); rather than
rebuild them, the file is checked once more with a profile whose edge default is a placeholder
name, and in a threaded function the placeholder in those fixes becomes the `budget_s`
expression. A fix without the placeholder is one that cannot be proven: its function is left
alone."""
from __future__ import annotations

import ast
import copy
import re
from typing import TYPE_CHECKING, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from deadline_lint.semantics.session import current
from deadline_lint.settings.profile import Profile
from deadline_lint.support.diagnostics import Diagnostic, Edit, Fix
from deadline_lint.support.source import SourceFile

if TYPE_CHECKING:
    from deadline_lint.engine.checker import Checker

THREADED_CODE = "DL101"  # the finding that says "this function makes an unbudgeted outbound call"
# Findings whose fix bounds a call by the edge default: each makes its function a candidate
# (DL103, an explicit `timeout=None`, only where its unsafe fix applies).
THREADED_CODES = frozenset({THREADED_CODE, "DL103"})
FORWARDING_CODE = "DL503"  # budget-not-forwarded: its presence threads callers too
PLACEHOLDER = "__deadline_lint_edge_default__"  # stands in for the edge default in fix texts
_ATOMIC = (ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.Subscript)
_PLACEHOLDER_PATTERN = re.compile(r"\b" + PLACEHOLDER + r"\b")

Position = Tuple[int, int, int, int]  # line, column, end line, end column (as in Diagnostic)
Key = Tuple[str, Position]  # a finding: its code and where it is


class PlaceholderCheckers:
    """The run's twin of each checker, whose edge default is the placeholder name."""


def finding_key(diagnostic: Diagnostic) -> Key:
    return diagnostic.code, (diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column)


def placeholder_fixes(checker: "Checker", source: SourceFile, codes: Iterable[str]) -> Dict[Key, Fix]:
    """The fixes the rules of `codes` would make if the edge default were the placeholder
    name. Only the findings the plan applies are looked up here, so only their rules run
    (a rule's findings do not depend on which other rules run)."""
    only = frozenset(codes).intersection(checker.codes)
    if not only:
        return {}
    twins: Dict[Tuple["Checker", FrozenSet[str]], "Checker"] = current().memo(PlaceholderCheckers, lasting=True)
    twin = twins.get((checker, only))
    if twin is None:
        raw = copy.deepcopy(dict(checker.profile.raw))
        raw["fix"]["edge_expression"] = PLACEHOLDER
        profile = Profile.from_raw(raw, checker.profile.source, checker.profile.root)
        twin = twins[(checker, only)] = type(checker)(
            profile, select=checker.codes, catalog=checker.catalog, only=only,
        )
    return {
        finding_key(d): d.fix
        for d in twin.check_text(source.text, source.path)
        if d.fix is not None and any(PLACEHOLDER in e.text for e in d.fix.edits)
    }


def _substitute(text: str, expression: str) -> str:
    """Put `expression` where the placeholder is; in parentheses unless it is one operand or
    fills a whole argument (`timeout=X`, `f(X, ...)`), so no template can regroup it."""
    try:
        atomic = isinstance(ast.parse(expression, mode="eval").body, _ATOMIC)
    except SyntaxError:
        atomic = False

    def replace(match: "re.Match[str]") -> str:
        before = text[:match.start()].rstrip()
        after = text[match.end():].lstrip()
        opens = before.endswith(("(", ",")) or (
            before.endswith("=") and not before.endswith(("==", "<=", ">=", "!="))
        )
        whole_argument = opens and (not after or after.startswith((")", ",")))
        return expression if atomic or whole_argument else f"({expression})"

    return _PLACEHOLDER_PATTERN.sub(replace, text)


def edge_default_fixes(
    inside: List[Diagnostic], placeholder_fixes: Dict[Key, Fix], expression: str,
) -> Optional[Tuple[List[Edit], List[str], Set[Key]]]:
    """The fixes of a function's findings that use the edge default, with `expression` in its
    place, their imports and the findings they settle; None when a DL101 fix cannot show where
    its timeout goes (the function is then left alone). Other findings keep their own fix."""
    edits: List[Edit] = []
    imports: List[str] = []
    covered: Set[Key] = set()
    for diagnostic in inside:
        key = finding_key(diagnostic)
        fix = placeholder_fixes.get(key)
        if fix is None:
            if diagnostic.code == THREADED_CODE:
                return None
            continue
        edits.extend(Edit(e.start, e.end, _substitute(e.text, expression)) for e in fix.edits)
        imports.extend(fix.imports)
        covered.add(key)
    return edits, imports, covered


def forwarding_findings(found: Sequence[Diagnostic], forwarding: List[Edit], source: SourceFile) -> Set[Key]:
    """The DL503 findings the forwarding edits settle (the same keyword at the same call),
    so their own fixes do not apply on top."""
    at = {edit.start for edit in forwarding}
    covered: Set[Key] = set()
    for diagnostic in found:
        if diagnostic.code == FORWARDING_CODE and diagnostic.fix is not None:
            if any(edit.start in at for edit in diagnostic.fix.edits):
                covered.add(finding_key(diagnostic))
    return covered
