"""The shipped JSON Schema (deadline_lint/settings/profile.schema.json) and the loader agree: the same
keys, the same verdict on valid and invalid values, and example.yaml points editors at it."""
from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path
from typing import Any, Dict, List, Tuple

import jsonschema
import pytest

from deadline_lint.settings.profile import DEFAULTS, SCHEMA, ProfileError, build_profile, load_profile_file
from deadline_lint.settings.profile_schema import main as schema_main
from deadline_lint.settings.profile_schema import profile_json_schema

ROOT = Path(__file__).resolve().parent.parent


def shipped() -> Dict[str, Any]:
    shipped_file = resources.files("deadline_lint.settings").joinpath("profile.schema.json")
    return json.loads(shipped_file.read_text(encoding="utf-8"))


def test_the_shipped_schema_is_current_and_valid() -> None:
    assert schema_main(["--check"]) == 0, "run `python -m deadline_lint.settings.profile_schema --write`"
    assert shipped() == profile_json_schema()
    jsonschema.Draft202012Validator.check_schema(shipped())


def test_same_keys_at_every_level() -> None:
    def keys(schema: Dict[str, Any], loader: Dict[str, Any], where: str) -> None:
        assert schema["additionalProperties"] is False, where
        assert set(schema["properties"]) == set(loader), where
        for key, spec in loader.items():
            if isinstance(spec, dict):
                keys(schema["properties"][key], spec, f"{where}.{key}")

    keys(shipped(), SCHEMA, "profile")


def loader_accepts(data: Dict[str, Any]) -> bool:
    try:
        build_profile(data, "sample.yaml")
    except ProfileError:
        return False
    return True


def schema_accepts(data: Dict[str, Any]) -> bool:
    return jsonschema.Draft202012Validator(shipped()).is_valid(data)


def test_defaults_and_example_are_valid_under_both() -> None:
    example = load_profile_file(ROOT / "example.yaml")
    for data in (copy.deepcopy(DEFAULTS), example):
        assert loader_accepts(data) and schema_accepts(data)
    assert (ROOT / "example.yaml").read_text().startswith(
        "# yaml-language-server: $schema=src/deadline_lint/settings/profile.schema.json\n"
    )


SAMPLES: List[Tuple[str, Any, bool]] = [
    ("edge_total_ms", 2000, True), ("edge_total_ms", -1, False), ("edge_total_ms", "10s", False),
    ("edge_total_ms", True, False), ("edge_total_ms", 1.5, False),
    ("max_bounded_default_s", 0.5, True), ("max_bounded_default_s", 0, False), ("max_bounded_default_s", "x", False),
    ("budget_header", "X-Budget", True), ("budget_header", "  ", False), ("budget_header", 3, False),
    ("budget.parameters", ["deadline"], True), ("budget.parameters", "deadline", False),
    ("budget.parameters", [""], False), ("budget.parameters", [3], False), ("budget.nope", [], False),
    ("fix.edge_expression", "{edge}", True), ("fix.edge_expression", "min({edge}, 5)", True),
    ("fix.edge_expression", "{edges}", False), ("fix.edge_expression", "{}", False),
    ("fix.budget_expression", "", False),
    ("statuses.expired", 504, True), ("statuses.expired", 99, False), ("statuses.expired", 600, False),
    ("statuses.grpc_expired", "DEADLINE_EXCEEDED", True), ("statuses.grpc_expired", "not a name", False),
    ("statuses.expired", True, False),
    ("select", ["DL101", "DL1", "ALL"], True), ("select", ["E501"], False), ("select", "DL1", False),
    ("extend_safe_fixes", ["DL101"], True), ("extend_unsafe_fixes", ["dl101"], False),
    ("per_path_ignores", {"tests/*": ["DL101"]}, True), ("per_path_ignores", {"tests/*": "DL101"}, False),
    ("exclude", ["migrations"], True), ("exclude", "migrations", False),
    ("outbound", [{"library": "acme", "default_timeout": None, "functions": ["acme.get"]}], True),
    ("outbound", [{"default_timeout": None}], False), ("outbound", [{"library": "acme", "bogus": 1}], False),
    ("outbound", {"library": "acme"}, False),
    ("retry_decorators", ["acme.retry"], True), ("spawn_helpers", "acme.spawn", False),
    ("exceptions.expiry", ["acme.Expired"], True), ("exceptions.other", [], False),
    ("nonsense", 1, False),
]


@pytest.mark.parametrize("dotted, value, valid", SAMPLES, ids=[f"{d}={v!r}" for d, v, _ in SAMPLES])
def test_schema_and_loader_give_the_same_verdict(dotted: str, value: Any, valid: bool) -> None:
    data: Dict[str, Any] = {}
    *parents, key = dotted.split(".")
    target = data
    for parent in parents:
        target = target.setdefault(parent, {})
    target[key] = value
    assert loader_accepts(data) is valid
    assert schema_accepts(data) is valid


def test_example_yaml_names_only_rules_that_exist() -> None:
    import re

    from deadline_lint.families.registry import known_codes

    named = set(re.findall(r"\bDL[0-9]{3}\b", (ROOT / "example.yaml").read_text(encoding="utf-8")))
    assert named and named <= set(known_codes()), sorted(named - set(known_codes()))
