"""What a check produces: diagnostics, and the text edits that fix them."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Dict, Optional, Tuple


class Applicability(str, Enum):
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

    def to_json(self) -> Dict[str, Any]:
        return {
            "applicability": self.applicability.value,
            "description": self.description,
            "edits": [{"start": e.start, "end": e.end, "text": e.text} for e in self.edits],
            "imports": list(self.imports),
        }


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
