"""The rules' own fixes, re-aimed for `--thread-budget` (thread_budget.py). The rules build
their fixes themselves (keyword, timeout object, `wait_for` wrapper, imports); rather than
rebuild them, the file is checked once more with a profile whose edge default is a placeholder
name, and in a threaded function the placeholder in those fixes becomes the `budget_s`
expression. A fix without the placeholder is one that cannot be proven: its function is left
alone."""
from __future__ import annotations

import ast
import bisect
import copy
import re
import weakref
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

from deadline_lint.settings.profile import Profile
from deadline_lint.support.diagnostics import Diagnostic, Edit, Fix
from deadline_lint.support.source import SourceFile

if TYPE_CHECKING:
    from deadline_lint.engine.checker import Checker
    from deadline_lint.families.outbound.fixes.thread_index import ModuleIndex

THREADED_CODE = "DL101"  # the finding that says "this function makes an unbudgeted outbound call"
# Findings whose fix bounds a call by the edge default: each makes its function a candidate
# (DL103, an explicit `timeout=None`, only where its unsafe fix applies).
THREADED_CODES = frozenset({THREADED_CODE, "DL103"})
PLACEHOLDER = "__deadline_lint_edge_default__"  # stands in for the edge default in fix texts
_ATOMIC = (ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.Subscript)
_PLACEHOLDER_PATTERN = re.compile(r"\b" + PLACEHOLDER + r"\b")

Position = Tuple[int, int, int, int]  # line, column, end line, end column (as in Diagnostic)
Key = Tuple[str, Position]  # a finding: its code and where it is

_PLACEHOLDER_CHECKERS: "weakref.WeakKeyDictionary[Checker, Checker]" = weakref.WeakKeyDictionary()


def finding_key(diagnostic: Diagnostic) -> Key:
    return diagnostic.code, (diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column)


def placeholder_fixes(checker: "Checker", source: SourceFile) -> Dict[Key, Fix]:
    """The fixes the rules would make if the edge default were the placeholder name."""
    twin = _PLACEHOLDER_CHECKERS.get(checker)
    if twin is None:
        raw = copy.deepcopy(dict(checker.profile.raw))
        raw["fix"]["edge_expression"] = PLACEHOLDER
        profile = Profile.from_raw(raw, checker.profile.source, checker.profile.root)
        twin = _PLACEHOLDER_CHECKERS[checker] = type(checker)(profile, select=checker.codes, catalog=checker.catalog)
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



CAPPED_CODE = "DL102"  # fixed-timeout-ignores-budget: a hop a budget in scope would cap
_CAPPED_CHECKERS: "weakref.WeakKeyDictionary[Checker, Checker]" = weakref.WeakKeyDictionary()


def hops_a_budget_would_cap(checker: "Checker", module: "ModuleIndex", candidates: Dict[int, ast.AST]) -> Set[int]:
    """Functions (by id) with no budget and no finding making them a candidate whose hops a
    budget in scope would cap (a literal timeout, a library default: DL102): no rule speaks
    where no budget is, yet their callers may hold one. Only with unsafe fixes, as DL102's fix,
    which caps those hops once the parameter is in scope, is unsafe. The text is checked once
    more for DL102 alone with the parameter added to each such signature (an insertion within
    its line, so every body line keeps its number); a finding in a function's body names it."""
    from deadline_lint.engine.edits import add_keyword_only_parameter
    from deadline_lint.families.outbound.fixes.thread_callers import may_change
    from deadline_lint.families.outbound.fixes.thread_index import has_threaded_parameter

    if not module.unsafe or CAPPED_CODE not in checker.codes:
        return set()
    source = module.source
    added: List[Tuple[ast.AST, Edit]] = []
    for function in module.functions:
        if id(function) in candidates or has_threaded_parameter(function) or not may_change(function, module):
            continue
        if module.budgets.budget_of(module.scope_of[id(function)]) is not None:
            continue
        edit = add_keyword_only_parameter(source, function, module.parameter)  # type: ignore[arg-type]
        body = function.body[0]  # type: ignore[attr-defined]
        if edit is None or "\n" in edit.text or edit.start != edit.end:
            continue
        if bisect.bisect_right(source.line_starts, edit.start) >= body.lineno:
            continue  # a body on the signature's line would move
        added.append((function, edit))
    if not added:
        return set()
    text = source.text
    for _, edit in sorted(added, key=lambda pair: pair[1].start, reverse=True):
        text = text[:edit.start] + edit.text + text[edit.end:]
    twin = _CAPPED_CHECKERS.get(checker)
    if twin is None:
        twin = _CAPPED_CHECKERS[checker] = type(checker)(
            checker.profile, select=(CAPPED_CODE,), catalog=checker.catalog,
        )
    lines = [d.line for d in twin.check_text(text, source.path) if d.code == CAPPED_CODE]
    found: Set[int] = set()
    for line in lines:
        holding = [
            f for f, _ in added
            if f.body[0].lineno <= line <= (f.end_lineno or f.lineno)  # type: ignore[attr-defined]
        ]
        if holding:  # the innermost: a nested def's hop is its own
            found.add(id(max(holding, key=lambda f: f.body[0].lineno)))  # type: ignore[attr-defined]
    return found
