"""The adoption profile: an organisation's numbers and names, loaded and validated.

Lookup order: `--profile PATH`, else `[tool.deadline-lint]` in the nearest pyproject.toml
(`profile = "path"` and/or profile keys inline), else the built-in defaults below.
"""
from __future__ import annotations

import copy
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

import yaml

try:  # Python 3.11+
    import tomllib
except ImportError:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib  # type: ignore[no-redef]


class ProfileError(Exception):
    """One line: `path: key: what was expected`."""


DEFAULTS: Dict[str, Any] = {
    "edge_total_ms": 10000,
    "hop_margin_ms": 50,
    "refuse_below_ms": 100,
    "max_bounded_default_s": 60,
    "budget_header": "X-Request-Budget-Ms",
    "budget": {
        "parameters": ["budget"],
        "seconds_parameters": ["budget_s"],
        "types": ["Budget"],
        "accessors": [],
        "clamps": [],
    },
    "fix": {
        "budget_expression": "{budget}.timeout()",
        "seconds_expression": "max(0.0, {budget} - {margin})",
        "grpc_context_expression": "max(0.0, {budget}.time_remaining() - {margin})",
        "edge_expression": "{edge}",
    },
    "statuses": {
        "expired": 504,
        "cancelled": 499,
        "refused": 503,
        "grpc_expired": "DEADLINE_EXCEEDED",
        "grpc_cancelled": "CANCELLED",
        "grpc_refused": "DEADLINE_EXCEEDED",
    },
    "outbound": [],
    "exceptions": {"expiry": [], "cancel": []},
    "retry_decorators": [],
    "spawn_helpers": [],
    "select": [],
    "ignore": [],
    "per_path_ignores": {},
    "exclude": [],
}

_CODE_SELECTOR = re.compile(r"^(ALL|DL[0-9]{0,3})$")
_TEMPLATE_FIELDS = {"budget", "margin", "edge"}

Validator = Callable[[Any], Optional[str]]  # returns what was expected, or None if fine


def _non_negative_int(value: Any) -> Optional[str]:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return None if ok else "a whole number of milliseconds, 0 or more"


def _positive_number(value: Any) -> Optional[str]:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
    return None if ok else "a number of seconds greater than 0"


def _string(value: Any) -> Optional[str]:
    return None if isinstance(value, str) and value.strip() else "a non-empty string"


def _string_list(value: Any) -> Optional[str]:
    ok = isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)
    return None if ok else "a list of non-empty strings"


def _code_list(value: Any) -> Optional[str]:
    ok = isinstance(value, list) and all(isinstance(v, str) and _CODE_SELECTOR.match(v) for v in value)
    return None if ok else "a list of rule codes or prefixes such as DL101, DL1 or ALL"


def _path_map(value: Any) -> Optional[str]:
    ok = isinstance(value, dict) and all(
        isinstance(k, str) and _code_list(v) is None for k, v in value.items()
    )
    return None if ok else "a mapping of glob pattern to a list of rule codes"


def _status(value: Any) -> Optional[str]:
    ok = (isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599) or (
        isinstance(value, str) and value.isidentifier()
    )
    return None if ok else "an HTTP status (100-599) or a gRPC status name"


def _template(value: Any) -> Optional[str]:
    if not isinstance(value, str) or not value.strip():
        return "a Python expression template"
    fields = set(re.findall(r"{(\w*)}", value))
    if not fields <= _TEMPLATE_FIELDS:
        return "a Python expression using only {budget}, {margin} and {edge}"
    return None


def _client_list(value: Any) -> Optional[str]:
    from deadline_lint.catalog import validate_client_groups

    return validate_client_groups(value)


SCHEMA: Dict[str, Any] = {
    "edge_total_ms": _non_negative_int,
    "hop_margin_ms": _non_negative_int,
    "refuse_below_ms": _non_negative_int,
    "max_bounded_default_s": _positive_number,
    "budget_header": _string,
    "budget": {
        "parameters": _string_list,
        "seconds_parameters": _string_list,
        "types": _string_list,
        "accessors": _string_list,
        "clamps": _string_list,
    },
    "fix": {
        "budget_expression": _template,
        "seconds_expression": _template,
        "grpc_context_expression": _template,
        "edge_expression": _template,
    },
    "statuses": {key: _status for key in DEFAULTS["statuses"]},
    "outbound": _client_list,
    "exceptions": {"expiry": _string_list, "cancel": _string_list},
    "retry_decorators": _string_list,
    "spawn_helpers": _string_list,
    "select": _code_list,
    "ignore": _code_list,
    "per_path_ignores": _path_map,
    "exclude": _string_list,
}


def _validate(data: Any, schema: Mapping[str, Any], where: str, prefix: str = "") -> None:
    if not isinstance(data, dict):
        raise ProfileError(f"{where}: {prefix.rstrip('.') or 'profile'}: expected a mapping of keys")
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        spec = schema.get(key) if isinstance(key, str) else None
        if spec is None:
            known = ", ".join(sorted(schema))
            raise ProfileError(f"{where}: {dotted}: unknown key (expected one of: {known})")
        if isinstance(spec, dict):
            _validate(value, spec, where, dotted + ".")
            continue
        expected = spec(value)
        if expected:
            raise ProfileError(f"{where}: {dotted}: expected {expected}, got {value!r}")


def _merge(base: Dict[str, Any], override: Mapping[str, Any]) -> Dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict) and key != "per_path_ignores":
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


@dataclass(frozen=True)
class Profile:
    """Validated settings; `raw` keeps the merged mapping for rules that need rarer keys."""

    raw: Mapping[str, Any]
    source: str  # where it came from, for messages
    # The folder `per_path_ignores` patterns are relative to: the profile's or pyproject's.
    root: Optional[str] = None

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    @property
    def hop_margin_s(self) -> float:
        return self.raw["hop_margin_ms"] / 1000.0

    @property
    def edge_total_s(self) -> float:
        return self.raw["edge_total_ms"] / 1000.0

    def render(self, template_key: str, budget: str = "") -> str:
        """Fill a fix template; seconds print without trailing zeros noise (0.05, 10.0)."""
        return self.raw["fix"][template_key].format(
            budget=budget, margin=_seconds(self.hop_margin_s), edge=_seconds(self.edge_total_s)
        )


def _seconds(value: float) -> str:
    text = repr(round(value, 6))
    return text


def _check_consistency(data: Mapping[str, Any], where: str) -> None:
    if data["hop_margin_ms"] >= data["edge_total_ms"] > 0:
        raise ProfileError(
            f"{where}: hop_margin_ms: expected less than edge_total_ms ({data['edge_total_ms']}),"
            f" got {data['hop_margin_ms']}"
        )
    if data["refuse_below_ms"] > data["edge_total_ms"]:
        raise ProfileError(
            f"{where}: refuse_below_ms: expected at most edge_total_ms ({data['edge_total_ms']}),"
            f" got {data['refuse_below_ms']}"
        )


def build_profile(overrides: Mapping[str, Any], where: str, root: Optional[str] = None) -> Profile:
    _validate(overrides, SCHEMA, where)
    merged = _merge(DEFAULTS, overrides)
    _check_consistency(merged, where)
    return Profile(raw=merged, source=where, root=root)


def default_profile() -> Profile:
    return build_profile({}, "<built-in defaults>")


def load_profile_file(path: os.PathLike) -> Dict[str, Any]:
    where = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProfileError(f"{where}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"{where}: cannot be read: {exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ProfileError(f"{where}: {at}not valid YAML ({problem})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ProfileError(f"{where}: profile: expected a mapping of keys, got {type(data).__name__}")
    return data


def find_pyproject(start: Path) -> Optional[Path]:
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else list(start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _pyproject_table(pyproject: Path) -> Optional[Dict[str, Any]]:
    try:
        with pyproject.open("rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ProfileError(f"{pyproject}: not valid TOML ({exc})") from None
    table = data.get("tool", {}).get("deadline-lint")
    if table is not None and not isinstance(table, dict):
        raise ProfileError(f"{pyproject}: tool.deadline-lint: expected a table")
    return table


def resolve_profile(explicit: Optional[str], start: Path) -> Profile:
    """Find and load the profile the way the CLI and plugins all do."""
    if explicit:
        return build_profile(load_profile_file(Path(explicit)), explicit, str(Path(explicit).resolve().parent))
    pyproject = find_pyproject(start)
    if pyproject is None:
        return default_profile()
    table = _pyproject_table(pyproject)
    if not table:
        return default_profile()
    table = dict(table)
    overrides: Dict[str, Any] = {}
    where = f"{pyproject} [tool.deadline-lint]"
    profile_path = table.pop("profile", None)
    if profile_path is not None:
        if not isinstance(profile_path, str):
            raise ProfileError(f"{where}: profile: expected a path string")
        file_path = (pyproject.parent / profile_path)
        overrides = load_profile_file(file_path)
        where = str(file_path)
        _validate(overrides, SCHEMA, where)
    if table:
        table = {key.replace("-", "_"): value for key, value in table.items()}
        _validate(table, SCHEMA, f"{pyproject} [tool.deadline-lint]")
        overrides = _merge(overrides, table)
    return build_profile(overrides, where, str(pyproject.parent))


def code_selected(code: str, selectors: Tuple[str, ...]) -> bool:
    return any(sel == "ALL" or code.startswith(sel) for sel in selectors)


def path_ignores(profile: Profile, relpath: str) -> List[str]:
    from fnmatch import fnmatch

    codes: List[str] = []
    for pattern, listed in profile["per_path_ignores"].items():
        if fnmatch(relpath, pattern) or fnmatch(relpath, pattern.rstrip("/") + "/*"):
            codes.extend(listed)
    return codes
