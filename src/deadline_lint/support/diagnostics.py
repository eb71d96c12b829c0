"""What a check produces: diagnostics, and the text edits that fix them."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Dict, FrozenSet, Optional, Tuple

from deadline_lint.support.tool_codes import TOOL_CODES


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


# The tags a fix's JSON spells, each as a boolean key of every fix, in the order declared (by
# the families, `families/fix_tags.py`).
_JSON_TAGS: Dict[str, None] = {}


def fix_tag(name: str) -> str:
    """Declare `name` a fix tag (`Fix.tags`) spelled in the JSON as a boolean key; returns it."""
    _JSON_TAGS.setdefault(name)
    return name


@dataclass(frozen=True)
class Fix:
    edits: Tuple[Edit, ...]
    applicability: Applicability
    description: str
    # Modules the fixed code needs imported, e.g. ("time",).
    imports: Tuple[str, ...] = ()
    # What a family says the fix does, for the runs that apply fixes of a kind whatever their
    # applicability (declared with `fix_tag`).
    tags: FrozenSet[str] = frozenset()

    def to_json(self) -> Dict[str, Any]:
        document: Dict[str, Any] = {
            "applicability": self.applicability.value,
            "description": self.description,
            "edits": [{"start": e.start, "end": e.end, "text": e.text} for e in self.edits],
            "imports": list(self.imports),
        }
        for tag in _JSON_TAGS:
            document[tag] = tag in self.tags
        return document

    @classmethod
    def from_json(cls, document: Dict[str, Any]) -> "Fix":
        """The inverse of to_json; TypeError (or KeyError, ValueError) for any other shape."""
        return cls(
            edits=tuple(
                Edit(_typed(e["start"], int), _typed(e["end"], int), _typed(e["text"], str))
                for e in _typed(document["edits"], list)
            ),
            applicability=Applicability(document["applicability"]),
            description=_typed(document["description"], str),
            imports=tuple(_typed(name, str) for name in _typed(document["imports"], list)),
            tags=frozenset(tag for tag in _JSON_TAGS if _typed(document[tag], bool)),
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
        """The inverse of to_json (the results cache), shown under `path`; TypeError (or
        KeyError, ValueError) for a document of any other shape: nothing is coerced."""
        fix = document.get("fix")
        code = _typed(document["code"], str)
        if not (len(code) == 5 and code.startswith("DL") and code[2:].isdigit()):
            raise ValueError(f"not a code: {code!r}")
        line, column = _typed(document["line"], int), _typed(document["column"], int)
        if line < 1 or column < 1:
            raise ValueError("positions are 1-based")
        return cls(
            code=code, name=_typed(document["name"], str), path=path, line=line, column=column,
            end_line=_typed(document["end_line"], int), end_column=_typed(document["end_column"], int),
            message=_typed(document["message"], str),
            fix=Fix.from_json(_typed(fix, dict)) if fix is not None else None,
        )


def _typed(value: Any, kind: type) -> Any:
    """`value` if it is a `kind` (a bool is not an int here), else TypeError."""
    if type(value) is not kind:
        raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def tool_diagnostic(path: str, code: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    """A finding of the tool itself (DL001-DL007): unparsable, unreadable, too large, ..."""
    return Diagnostic(code, TOOL_CODES[code].name, path, line, column, line, column, message)
