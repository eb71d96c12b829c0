"""The profile's JSON Schema, for editors: derived from the one description of the settings
(profile_settings.py: each field's check gives its fragment, its doc the description, its
default the default), and shipped as `deadline_lint/profile.schema.json`.

    python -m deadline_lint.profile_schema           # print it
    python -m deadline_lint.profile_schema --write   # regenerate the shipped file
    python -m deadline_lint.profile_schema --check   # exit 1 when the shipped file is stale

It checks shapes (types, ranges, patterns, known keys); the loader also checks what JSON
Schema cannot say: that codes name registered rules and hop_margin_ms < edge_total_ms.
"""
from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any, Dict

from deadline_lint.profile_settings import Settings, default_of, plain

SHIPPED = Path(__file__).with_name("profile.schema.json")


def _object(cls: type) -> Dict[str, Any]:
    properties: Dict[str, Any] = {}
    for f in sorted(dataclasses.fields(cls), key=lambda f: f.name):
        if "section" in f.metadata:
            node = _object(f.metadata["section"])
        else:
            node = f.metadata["check"].json()
            node["default"] = plain(default_of(f))
        properties[f.name] = {"description": f.metadata["doc"], **node}
    return {"type": "object", "properties": properties, "additionalProperties": False}


def profile_json_schema() -> Dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/deadline-lint/deadline-lint/blob/main/src/deadline_lint/profile.schema.json",
        "title": "deadline-lint adoption profile",
        "description": "Every key is optional; see example.yaml and docs/settings.md for what each one means.",
        **_object(Settings),
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
