"""The profile's JSON Schema, for editors: built from the loader's own schema (profile.SCHEMA)
so the two cannot drift, and shipped as `deadline_lint/profile.schema.json`.

    python -m deadline_lint.profile_schema           # print it
    python -m deadline_lint.profile_schema --write   # regenerate the shipped file
    python -m deadline_lint.profile_schema --check   # exit 1 when the shipped file is stale

It checks shapes (types, ranges, patterns, known keys); the loader also checks what JSON
Schema cannot say: that codes name registered rules and hop_margin_ms < edge_total_ms.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Mapping

from deadline_lint import profile as loader
from deadline_lint.catalog import schema as catalog_schema

SHIPPED = Path(__file__).with_name("profile.schema.json")
_STRING = {"type": "string", "pattern": r"\S"}
_NAMES = {"type": "array", "items": _STRING}
_CODES = {"type": "array", "items": {"type": "string", "pattern": r"^(ALL|DL[0-9]{0,3})$"}}
_SECONDS = {"anyOf": [{"type": "null"}, {"type": "number", "exclusiveMinimum": 0}]}


def _closed(keys, value: Mapping[str, Any] = None) -> Dict[str, Any]:
    return {"type": "object", "properties": {k: dict(value or {}) for k in sorted(keys)}, "additionalProperties": False}


def _outbound() -> Dict[str, Any]:
    entry = {"anyOf": [_STRING, _closed(catalog_schema._ENTRY_KEYS)]}
    group = _closed(catalog_schema._GROUP_KEYS)
    group["required"] = ["library"]
    group["properties"].update({
        "library": _STRING,
        "default_timeout": _SECONDS,
        "keyword": {"type": ["string", "null"]},
        "functions": {"type": "array", "items": entry},
        "classes": {"type": "object", "additionalProperties": _closed(catalog_schema._CLASS_KEYS)},
        "stubs": {"type": "array", "items": _closed(catalog_schema._STUB_KEYS)},
        "timeout_objects": {"type": "object", "additionalProperties": _closed(catalog_schema._TIMEOUT_OBJECT_KEYS)},
        "aliases": {"type": "object", "additionalProperties": {"type": "string"}},
    })
    return {"type": "array", "items": group}


FRAGMENTS: Dict[Callable, Callable[[], Dict[str, Any]]] = {
    loader._non_negative_int: lambda: {"type": "integer", "minimum": 0},
    loader._positive_number: lambda: {"type": "number", "exclusiveMinimum": 0},
    loader._string: lambda: dict(_STRING),
    loader._string_list: lambda: dict(_NAMES),
    loader._code_list: lambda: dict(_CODES),
    loader._path_map: lambda: {"type": "object", "additionalProperties": dict(_CODES)},
    loader._status: lambda: {"anyOf": [
        {"type": "integer", "minimum": 100, "maximum": 599},
        {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"},
    ]},
    loader._template: lambda: {
        "type": "string", "pattern": r"\S",
        "not": {"pattern": r"\{(?!(?:budget|margin|edge)\})\w*\}"},
    },
    loader._client_list: _outbound,
}


def _node(spec: Any, defaults: Any) -> Dict[str, Any]:
    if isinstance(spec, dict):
        result = _closed(spec)
        result["properties"] = {key: _node(spec[key], defaults.get(key)) for key in sorted(spec)}
        return result
    fragment = FRAGMENTS[spec]()
    fragment["default"] = defaults
    return fragment


def profile_json_schema() -> Dict[str, Any]:
    root = _node(loader.SCHEMA, loader.DEFAULTS)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/deadline-lint/deadline-lint/blob/main/src/deadline_lint/profile.schema.json",
        "title": "deadline-lint adoption profile",
        "description": "Every key is optional; see example.yaml for what each one means.",
        **root,
    }


def render() -> str:
    return json.dumps(profile_json_schema(), indent=2, sort_keys=False) + "\n"


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if "--write" in args:
        SHIPPED.write_text(text, encoding="utf-8")
        return 0
    if "--check" in args:
        current = SHIPPED.read_text(encoding="utf-8") if SHIPPED.exists() else ""
        if current != text:
            print(f"{SHIPPED}: stale; run `python -m deadline_lint.profile_schema --write`", file=sys.stderr)
            return 1
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
