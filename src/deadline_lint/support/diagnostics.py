"""What a check produces: diagnostics, and the text edits that fix them."""
from __future__ import annotations

import json
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
    # The finding as the JSON report renders it (`report_parts`), when the results cache kept
    # that text: a warm run's report joins it instead of encoding each finding again. Not an
    # argument, so `dataclasses.replace` never carries it over to a finding it no longer
    # renders.
    report: Optional[Tuple[str, str]] = field(default=None, init=False, compare=False, repr=False)

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
    def from_json(cls, document: Dict[str, Any], path: str, report: Any = None) -> "Diagnostic":
        """The inverse of to_json (the results cache), shown under `path`, with the report
        text kept for it (`report_parts`'s, or None); TypeError (or KeyError, ValueError) for
        a document of any other shape: nothing is coerced."""
        fix = document.get("fix")
        code = _typed(document["code"], str)
        if not (len(code) == 5 and code.startswith("DL") and code[2:].isdigit()):
            raise ValueError(f"not a code: {code!r}")
        line, column = _typed(document["line"], int), _typed(document["column"], int)
        if line < 1 or column < 1:
            raise ValueError("positions are 1-based")
        found = cls(
            code=code, name=_typed(document["name"], str), path=path, line=line, column=column,
            end_line=_typed(document["end_line"], int), end_column=_typed(document["end_column"], int),
            message=_typed(document["message"], str),
            fix=Fix.from_json(_typed(fix, dict)) if fix is not None else None,
        )
        if report is not None:
            before, after = _typed(report, list)
            object.__setattr__(found, "report", (_typed(before, str), _typed(after, str)))  # frozen
        return found


# Where a report item's path goes: the item's third key, at its own indentation (a key or
# string inside a value has its quotes escaped, or is indented deeper).
_PATH_KEY = '\n  "path": ""'


def report_parts(diagnostic: Diagnostic) -> Tuple[str, str]:
    """The finding as an item of the JSON report, `json.dumps(findings, indent=2)`, in the
    two parts either side of its path's value (the path is the one part a cached finding
    shows differently: as the run names its file). `report_item` puts them together."""
    if diagnostic.report is not None:
        return diagnostic.report
    document = diagnostic.to_json()
    document["path"], document["message"] = "", valid_text(document["message"])
    # An item of a list indented by 2 is the item rendered alone with every line indented 2
    # more: JSON escapes the line breaks inside strings, so each line break is the layout's.
    before, _, after = json.dumps(document, indent=2).partition(_PATH_KEY)
    return "  " + before.replace("\n", "\n  ") + '\n    "path": ', after.replace("\n", "\n  ")


def report_item(diagnostic: Diagnostic) -> str:
    before, after = report_parts(diagnostic)
    return before + json.dumps(valid_text(diagnostic.path)) + after


def valid_text(text: str) -> str:
    """`text` with a file name's undecodable bytes (read as surrogate escapes) shown as U+FFFD:
    a JSON document is Unicode, and a lone surrogate is not (strict parsers reject it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text


def _typed(value: Any, kind: type) -> Any:
    """`value` if it is a `kind` (a bool is not an int here), else TypeError."""
    if type(value) is not kind:
        raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
    return value


def tool_diagnostic(path: str, code: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    """A finding of the tool itself (DL001-DL007): unparsable, unreadable, too large, ..."""
    return Diagnostic(code, TOOL_CODES[code].name, path, line, column, line, column, message)
