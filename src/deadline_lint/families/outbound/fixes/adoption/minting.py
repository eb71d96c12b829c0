"""The one place a budget is created: the first statements of an edge (edges.py), written by
`adopt` (thread_budget.py threads `budget_s` from there). The inbound claim is capped at the
edge total and a claim that is not positive, or not a number, is refused as spent (0.0: every
hop then fails at once, at the fixes' 1 ms floor), as DL204 asks (a `min` cap and a `max(0, ...)`
check). No edge mints more than `edge_total_ms`."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Protocol, Set

from deadline_lint.families.outbound.fixes.adoption.edges import GRPC_CONTEXT, HEADER, LAMBDA_CONTEXT, Edge
from deadline_lint.families.shared.function_nodes import Function
from deadline_lint.support.diagnostics import Edit
from deadline_lint.support.source import SourceFile

if TYPE_CHECKING:
    from deadline_lint.settings.profile import Profile

PARAMETER = "budget_s"  # thread_index.PARAMETER (thread_index imports this module)


class ModuleIndex(Protocol):
    """What minting reads of thread_index.ModuleIndex."""

    source: SourceFile
    profile: "Profile"
    minted: Dict[int, Edge]
    minted_before: Set[int]

    @property
    def function_of(self) -> Mapping[int, Function]: ...


def mint_lines(edge: Edge, profile: "Profile", name: str) -> List[str]:
    """The statements that bind `name` to the edge's budget in seconds."""
    total = f"{profile.edge_total_ms / 1000!r}"
    if edge.source == HEADER and edge.request is not None:
        header = profile.budget_header
        return [
            "try:",
            f"    {name} = max(0.0, min(float({edge.request}.headers.get({header!r}, {profile.edge_total_ms!r})) "
            f"/ 1000, {total}))",
            "except ValueError:",
            f"    {name} = 0.0",
        ]
    if edge.source == GRPC_CONTEXT and edge.context is not None:
        # No Load of `name` here: a deadline taken on entry rewrites every read of it after.
        remaining = f"{edge.context}.time_remaining()"
        return [f"{name} = {total} if {remaining} is None else max(0.0, min({remaining}, {total}))"]
    if edge.source == LAMBDA_CONTEXT and edge.context is not None:
        return [f"{name} = max(0.0, min({edge.context}.get_remaining_time_in_millis() / 1000, {total}))"]
    return [f"{name} = {total}"]


def mint_edit(source: SourceFile, function: Function, lines: List[str]) -> Optional[Edit]:
    """The lines before the body's first statement (after a docstring), at its indentation."""
    body = function.body
    first = body[0]
    if _is_docstring(first):
        if len(body) == 1:
            return None
        first = body[1]
    if first.lineno == function.lineno:
        return None  # `def f(): return g()` on one line
    line = source.line_text(first.lineno)
    indent = line[: source.char_column(first.lineno, first.col_offset)]
    if indent.strip(" \t"):
        return None
    ending = line[len(line.rstrip("\r\n")):] or "\n"
    at = source.line_starts[first.lineno - 1]
    return Edit(at, at, "".join(f"{indent}{text}{ending}" for text in lines))


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def mint_at_the_edges(module: "ModuleIndex", edits: List[Edit]) -> List[Edit]:
    """`edits` with each edge that now spends or forwards `budget_s` minting it first (one
    edit with the deadline spend_deadline.py takes on entry, when it takes one there)."""
    result = list(edits)
    for key, edge in module.minted.items():
        function = module.function_of[key]
        if key in module.minted_before:
            _after_the_mint(module, function, result)
            continue
        start, end = module.source.node_span(function)
        # Inside the def: a deadline taken on entry is inserted at the start of the first
        # body line, before its indentation (and reads `budget_s`, which the mint must bind).
        if not any(start < e.start and e.end <= end and PARAMETER in e.text for e in result):
            continue
        mint = mint_edit(module.source, function, mint_lines(edge, module.profile, PARAMETER))
        if mint is None:
            continue
        opening = [i for i, e in enumerate(result) if e.start == e.end == mint.start]
        if opening:
            index = opening[0]
            result[index] = Edit(mint.start, mint.end, mint.text + result[index].text)
        else:
            result.append(mint)
    return result


def _after_the_mint(module: "ModuleIndex", function: Function, edits: List[Edit]) -> None:
    """An edge minted by an earlier pass: a deadline taken on entry now goes after the mint,
    which binds the `budget_s` it reads."""
    body = function.body
    first = body[1] if _is_docstring(body[0]) and len(body) > 1 else body[0]
    minting = [s for s in body if _binds_parameter(s)]
    if not minting:
        return
    index = body.index(minting[-1])
    if index + 1 >= len(body):
        return
    at = module.source.line_starts[first.lineno - 1]
    after = module.source.line_starts[body[index + 1].lineno - 1]
    for i, edit in enumerate(edits):
        if edit.start == edit.end == at:
            edits[i] = Edit(after, after, edit.text)


def _binds_parameter(statement: ast.stmt) -> bool:
    inner = statement.body[0] if isinstance(statement, ast.Try) and statement.body else statement
    return any(isinstance(t, ast.Name) and t.id == PARAMETER for t in getattr(inner, "targets", ()))
