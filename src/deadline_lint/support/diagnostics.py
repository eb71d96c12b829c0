"""What a check produces: diagnostics, and the text edits that fix them."""
from __future__ import annotations

from enum import Enum
from typing import Any, Dict, Optional, Tuple

from deadline_lint.support.tool_codes import TOOL_CODES
from deadline_lint.support.records import dataclass, field


class Applicability(str, Enum):
    """Decided per finding, by the rule that makes the fix (ruff's meaning): SAFE keeps the
    program's meaning; anything that can make a call fail that used to succeed, or changes a
    status or a value sent, is UNSAFE. `extend_safe_fixes` / `extend_unsafe_fixes` move a
    code's fixes between the two (engine.FixClasses)."""

    SAFE = "safe"  # applied by `fix`
    UNSAFE = "unsafe"  # applied only with `--unsafe-fixes`


@dataclass(frozen=True)
class Edit:
    """Replace source[start:end] (character offsets) with `text`."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Fix:
    edits: Tuple[Edit, ...]
    applicability: Applicability
    description: str
    # Modules the fixed code needs imported, e.g. ("time",).
    imports: Tuple[str, ...] = ()
    # The fix adds a timeout where the call passes none: what the codemod and
    # `--thread-budget` exist to do, so they apply it whatever its applicability.
    inserts_budget: bool = False

    def to_json(self) -> Dict[str, Any]:
        return {
            "applicability": self.applicability.value,
            "description": self.description,
            "edits": [{"start": e.start, "end": e.end, "text": e.text} for e in self.edits],
            "imports": list(self.imports),
            "inserts_budget": self.inserts_budget,
        }

    @classmethod
    def from_json(cls, document: Dict[str, Any]) -> "Fix":
        return cls(
            edits=tuple(Edit(int(e["start"]), int(e["end"]), str(e["text"])) for e in document["edits"]),
            applicability=Applicability(document["applicability"]),
            description=str(document["description"]),
            imports=tuple(str(name) for name in document["imports"]),
            inserts_budget=bool(document["inserts_budget"]),
        )


@dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    path: str
    line: int  # 1-based
    column: int  # 1-based, in characters
    end_line: int
    end_column: int
    message: str
    fix: Optional[Fix] = field(default=None, compare=False)

    def sort_key(self) -> Tuple[str, int, int, str]:
        return (self.path, self.line, self.column, self.code)

    def to_json(self) -> Dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "message": self.message,
            "fix": self.fix.to_json() if self.fix else None,
        }

    @classmethod
    def from_json(cls, document: Dict[str, Any], path: str) -> "Diagnostic":
        """The inverse of to_json (the results cache), shown under `path`."""
        fix = document.get("fix")
        return cls(
            code=str(document["code"]), name=str(document["name"]), path=path,
            line=int(document["line"]), column=int(document["column"]),
            end_line=int(document["end_line"]), end_column=int(document["end_column"]),
            message=str(document["message"]),
            fix=Fix.from_json(fix) if fix is not None else None,
        )


def tool_diagnostic(path: str, code: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    """A finding of the tool itself (DL001-DL007): unparsable, unreadable, too large, ..."""
    return Diagnostic(code, TOOL_CODES[code].name, path, line, column, line, column, message)
