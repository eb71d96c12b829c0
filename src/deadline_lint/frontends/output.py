"""Rendering diagnostics for people and machines: text, json, sarif, github."""
from __future__ import annotations

from types import MappingProxyType
import json
import os
from collections import Counter
from typing import Any, Callable, Dict, List, Mapping, TextIO

from deadline_lint import __version__
from deadline_lint.support.diagnostics import Diagnostic, report_item, valid_text
from deadline_lint.support.tool_codes import TOOL_CODES

# Formats whose output is one document: anything appended (statistics) goes to stderr instead.
DOCUMENT_FORMATS = frozenset({"json", "sarif"})


def write_text(found: List[Diagnostic], out: TextIO, files_checked: int) -> None:
    for d in found:
        marker = " [*]" if d.fix is not None and d.fix.applicability.value == "safe" else ""
        out.write(f"{d.path}:{d.line}:{d.column}: {d.code}{marker} {d.message}\n")
    out.write(summary_line(found, files_checked) + "\n")


def summary_line(found: List[Diagnostic], files_checked: int) -> str:
    files = f"{files_checked} file{'s' if files_checked != 1 else ''}"
    if not found:
        return f"All checks passed ({files} checked)."
    fixable = sum(1 for d in found if d.fix is not None and d.fix.applicability.value == "safe")
    unsafe = sum(1 for d in found if d.fix is not None and d.fix.applicability.value == "unsafe")
    with_problems = len({d.path for d in found})
    text = f"Found {len(found)} problem{'s' if len(found) != 1 else ''} in {with_problems} of {files} checked"
    if fixable:
        text += f"; {fixable} fixable with `deadline-lint fix`"
    if unsafe:
        text += (f"; {unsafe} more with `--unsafe-fixes`" if fixable
                 else f"; {unsafe} fixable with `deadline-lint fix --unsafe-fixes`")
    return text + "."


def write_json(found: List[Diagnostic], out: TextIO, files_checked: int) -> None:
    """`json.dumps(findings, indent=2)`, byte for byte, put together from each finding's
    item: indenting is the stdlib's pure-Python encoder, and a warm run's findings carry
    their item's text from the results cache (`Diagnostic.report`)."""
    # One write: the stream is a text wrapper, and each write of it is a call.
    out.write("[\n" + ",\n".join(report_item(d) for d in found) + "\n]\n" if found else "[]\n")


def _name_bytes(path: str) -> bytes:
    """The file name as the file system holds it (any surrogate escapes back to their bytes)."""
    try:
        return path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return path.encode("utf-8", "replace")


def write_statistics(found: List[Diagnostic], out: TextIO) -> None:
    counts = Counter((d.code, d.name) for d in found)
    for (code, name), count in sorted(counts.items()):
        out.write(f"{count:6d}  {code}  {name}\n")


SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SOURCE_ROOT = "%SRCROOT%"  # relative artifact paths are relative to the directory of the run


def _level(code: str) -> str:
    """Tool codes mean a file went unchecked: an error. Rule findings are warnings."""
    return "error" if code in TOOL_CODES else "warning"


def sarif_rules() -> List[Dict[str, Any]]:
    """A reportingDescriptor for every code, tool codes first, with help text and help URI."""
    from deadline_lint.families.registry import all_rules
    from deadline_lint.frontends.docs import doc_section, help_url

    descriptors: List[Dict[str, Any]] = []
    for code, tool in TOOL_CODES.items():
        descriptors.append({
            "id": code,
            "name": tool.name,
            "shortDescription": {"text": tool.doc.split(". ")[0].rstrip(".") + "."},
            "fullDescription": {"text": tool.doc},
            "help": {"text": tool.doc, "markdown": tool.doc},
            "helpUri": help_url(code),
            "defaultConfiguration": {"level": "error", "enabled": True},
        })
    for code, cls in all_rules().items():
        documentation = cls.documentation()
        descriptors.append({
            "id": code,
            "name": cls.name,
            "shortDescription": {"text": cls.summary},
            "fullDescription": {"text": doc_section(documentation, "What it does") or cls.summary},
            "help": {"text": documentation, "markdown": documentation},
            "helpUri": help_url(code),
            "defaultConfiguration": {"level": "warning", "enabled": cls.default_enabled},
            "properties": {"fix": cls.fix_applicability.value if cls.fix_applicability else "none"},
        })
    return descriptors


def _artifact_location(path: str) -> Dict[str, str]:
    """A URI names bytes, so a file name that is not UTF-8 keeps them (percent-encoded)."""
    from pathlib import Path  # and urllib.parse: imported for SARIF only, not at every start
    from urllib.parse import quote

    if os.path.isabs(path):
        if valid_text(path) == path:
            return {"uri": Path(path).as_uri()}
        return {"uri": "file://" + quote(_name_bytes(path.replace(os.sep, "/")))}
    return {"uri": quote(_name_bytes(path.replace(os.sep, "/"))), "uriBaseId": SOURCE_ROOT}


def _sarif_result(d: Diagnostic, rule_index: Dict[str, int]) -> Dict[str, Any]:
    result: Dict[str, Any] = {
        "ruleId": d.code,
        "level": _level(d.code),
        "message": {"text": valid_text(d.message)},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": _artifact_location(d.path),
                # Columns are 1-based characters; the end column is exclusive, as SARIF's is.
                "region": {
                    "startLine": d.line,
                    "startColumn": d.column,
                    "endLine": d.end_line,
                    "endColumn": d.end_column,
                },
            }
        }],
    }
    if d.code in rule_index:
        result["ruleIndex"] = rule_index[d.code]
    if d.fix is not None:
        result["properties"] = {"fix": d.fix.applicability.value, "fixDescription": d.fix.description}
    return result


def sarif_document(found: List[Diagnostic]) -> Dict[str, Any]:
    from pathlib import Path

    from deadline_lint.frontends.docs import PROJECT_URL

    rules = sarif_rules()
    rule_index = {rule["id"]: i for i, rule in enumerate(rules)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "deadline-lint",
                    "version": __version__,
                    "semanticVersion": __version__,
                    "informationUri": PROJECT_URL,
                    "rules": rules,
                }
            },
            "originalUriBaseIds": {SOURCE_ROOT: {"uri": Path.cwd().as_uri().rstrip("/") + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": [_sarif_result(d, rule_index) for d in found],
        }],
    }


def write_sarif(found: List[Diagnostic], out: TextIO, files_checked: int) -> None:
    out.write(json.dumps(sarif_document(found), indent=2))
    out.write("\n")


def _escape_data(text: str) -> str:
    """GitHub workflow commands: `%`, CR and LF are escaped in a command's message..."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    """...and `:` and `,` too in its properties, where they would end the value."""
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def write_github(found: List[Diagnostic], out: TextIO, files_checked: int) -> None:
    """One GitHub Actions annotation (`::warning ...::message`) per finding."""
    for d in found:
        properties = ",".join(
            f"{key}={_escape_property(str(value))}"
            for key, value in (
                ("file", d.path.replace(os.sep, "/")),
                ("line", d.line),
                ("col", d.column),
                ("endLine", d.end_line),
                ("endColumn", d.end_column),
                ("title", d.code),
            )
        )
        out.write(f"::{_level(d.code)} {properties}::{_escape_data(d.message)}\n")


WRITERS: Mapping[str, Callable[[List[Diagnostic], TextIO, int], None]] = MappingProxyType({
    "text": write_text,
    "json": write_json,
    "sarif": write_sarif,
    "github": write_github,
})
