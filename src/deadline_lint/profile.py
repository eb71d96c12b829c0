"""The adoption profile: an organisation's numbers and names, loaded and validated.

Lookup order, per file: `--profile PATH`, else `[tool.deadline-lint]` in the nearest
pyproject.toml that has that table, walking up from the file (`profile = "path"` and/or profile
keys inline), else the built-in defaults below. `config.ProfileResolver` does it for a run.

Every key is either read (by the engine, or by a registered rule that declares it in
`Rule.profile_keys`) or rejected; a rule-family key that no registered rule reads yet is
accepted with a "not used yet" warning (profile_checks.py, which also rejects unknown rule
codes). `profile.schema.json` is the same schema for editors.
"""
from __future__ import annotations

import ast
import copy
import keyword
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple


class ProfileError(Exception):
    """One line: `path: key: what was expected`."""


# The least timeout a fix ever inserts. A spent budget must still give a *positive* timeout:
# requests/urllib3 raise ValueError on 0, a socket timeout of 0 means non-blocking
# (http.client: BlockingIOError) and aiohttp reads `total=0` as "no limit". One millisecond
# makes the call fail at once with the library's own timeout error, the deadline path.
TIMEOUT_FLOOR_S = 0.001

DEFAULTS: Dict[str, Any] = {
    "edge_total_ms": 10000,
    "hop_margin_ms": 50,
    "refuse_below_ms": 100,
    "max_bounded_default_s": 60,
    "budget_header": "X-Request-Budget-Ms",
    "trace_remaining_attribute": "deadline.remaining_ms",
    # Follow names imported from the project's own modules (re-exports, wrappers, client
    # subclasses). Off by default: on library-sized trees where most modules import a sibling
    # that uses a client a cold check costs about twice as much (cached re-runs do not).
    "project_index": False,
    "budget": {
        "parameters": ["budget"],
        "seconds_parameters": ["budget_s"],
        "types": ["Budget"],
        "accessors": [],
        "clamps": [],
        # Opt-in (measured on the corpus, see docs/architecture.md): a function's own numeric
        # parameter of one of these names is the time its caller gave it, for DL102.
        "timeout_parameters": [],
    },
    "fix": {
        "budget_expression": "{budget}.timeout()",
        "seconds_expression": f"max({TIMEOUT_FLOOR_S}, {{budget}} - {{margin}})",
        "grpc_context_expression": f"max({TIMEOUT_FLOOR_S}, {{budget}}.time_remaining() - {{margin}})",
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
    "exceptions": {"expiry": [], "cancel": [], "breaker": []},
    "retry_decorators": [],
    "spawn_helpers": [],
    "select": [],
    "extend_select": [],
    "ignore": [],
    "per_path_ignores": {},
    "exclude": [],
    "extend_safe_fixes": [],
    "extend_unsafe_fixes": [],
}

# Keys the engine and the front ends read themselves; every other top-level key belongs to a
# rule family and must be declared by a registered rule (Rule.profile_keys) to count as read.
ENGINE_KEYS = frozenset({
    "edge_total_ms", "hop_margin_ms", "budget", "fix", "outbound", "select", "extend_select",
    "ignore", "per_path_ignores", "exclude", "extend_safe_fixes", "extend_unsafe_fixes",
    "project_index",
})
SELECTOR_KEYS = ("select", "extend_select", "ignore", "extend_safe_fixes", "extend_unsafe_fixes")

_CODE_SELECTOR = re.compile(r"^(ALL|DL[0-9]{0,3})$")
_TEMPLATE_FIELDS = {"budget", "margin", "edge"}

Validator = Callable[[Any], Optional[str]]  # returns what was expected, or None if fine


_MAX_MS = 24 * 60 * 60 * 1000  # a day: no request budget is longer; larger is a typo


def _non_negative_int(value: Any) -> Optional[str]:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_MS
    return None if ok else f"a whole number of milliseconds, 0 or more (at most a day, {_MAX_MS})"


def _positive_number(value: Any) -> Optional[str]:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
    return None if ok else "a number of seconds greater than 0"


def _boolean(value: Any) -> Optional[str]:
    return None if isinstance(value, bool) else "true or false"


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
    if not is_expression_template(value, {"budget": "budget", "margin": "0.05", "edge": "10.0"}):
        return "a template that fills in to one Python expression, such as \"{budget}.timeout()\""
    return None


def is_expression_template(template: str, fields: Mapping[str, str]) -> bool:
    """The template, filled in, is one Python expression (not a statement, not broken)."""
    try:
        ast.parse(template.format(**fields).strip(), mode="eval")
    except (SyntaxError, ValueError, KeyError, IndexError, RecursionError):
        return False
    return True


def _client_list(value: Any):
    from deadline_lint.catalog import validate_client_groups

    problem = validate_client_groups(value)
    return problem or _client_spelling_problem(value)


_NAME_KEYS = ("keyword", "constructor_keyword", "headers_keyword")
_TEMPLATE_KEYS = {"timeout_template": ("timeout",), "wrap": ("call", "timeout")}


def _client_spelling_problem(groups: List[Mapping[str, Any]]):
    """What the catalog schema leaves to the profile: that names are Python identifiers and
    templates Python expressions, or a fix blames the tool (DL003) for the profile's typo.
    Returns (where, expected, got), e.g. ("outbound[0].keyword", ...)."""
    for index, group in enumerate(groups):
        specs = [(f"outbound[{index}]", group)]
        for entry_index, entry in enumerate(group.get("functions", []) or []):
            if isinstance(entry, dict):
                specs.append((f"outbound[{index}].functions[{entry_index}]", entry))
        for name, spec in (group.get("classes", {}) or {}).items():
            specs.append((f"outbound[{index}].classes.{name}", spec))
            for method_index, method in enumerate(spec.get("methods", []) or []):
                if isinstance(method, dict):
                    specs.append((f"outbound[{index}].classes.{name}.methods[{method_index}]", method))
        for where, spec in specs:
            for key in _NAME_KEYS:
                value = spec.get(key)
                if value is not None and not (value.isidentifier() and not keyword.iskeyword(value)):
                    return f"{where}.{key}", "a Python parameter name", value
            for key, fields in _TEMPLATE_KEYS.items():
                value = spec.get(key)
                if value is not None and not is_expression_template(value, {f: "x" for f in fields}):
                    return f"{where}.{key}", "a template that fills in to one Python expression", value
    return None


SCHEMA: Dict[str, Any] = {
    "edge_total_ms": _non_negative_int,
    "hop_margin_ms": _non_negative_int,
    "refuse_below_ms": _non_negative_int,
    "max_bounded_default_s": _positive_number,
    "budget_header": _string,
    "trace_remaining_attribute": _string,
    "project_index": _boolean,
    "budget": {
        "parameters": _string_list,
        "seconds_parameters": _string_list,
        "types": _string_list,
        "accessors": _string_list,
        "clamps": _string_list,
        "timeout_parameters": _string_list,
    },
    "fix": {
        "budget_expression": _template,
        "seconds_expression": _template,
        "grpc_context_expression": _template,
        "edge_expression": _template,
    },
    "statuses": {key: _status for key in DEFAULTS["statuses"]},
    "outbound": _client_list,
    "exceptions": {"expiry": _string_list, "cancel": _string_list, "breaker": _string_list},
    "retry_decorators": _string_list,
    "spawn_helpers": _string_list,
    "select": _code_list,
    "extend_select": _code_list,
    "ignore": _code_list,
    "per_path_ignores": _path_map,
    "exclude": _string_list,
    "extend_safe_fixes": _code_list,
    "extend_unsafe_fixes": _code_list,
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
        if isinstance(expected, tuple):  # a validator naming the part of the value at fault
            dotted, expected, value = expected
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
    # The folder `exclude` and `per_path_ignores` patterns are relative to: the profile's or
    # pyproject's (None: the working directory).
    root: Optional[str] = None
    keys_set: FrozenSet[str] = frozenset()  # the top-level keys the profile itself sets
    warnings: Tuple[str, ...] = ()

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
    """Shape and consistency; what needs the rule registry (known codes, keys no rule reads
    yet) is `profile_checks.check_profile`, which every front end applies (config.py)."""
    _validate(overrides, SCHEMA, where)
    merged = _merge(DEFAULTS, overrides)
    _check_consistency(merged, where)
    return Profile(raw=merged, source=where, root=root, keys_set=frozenset(overrides))


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
    import yaml

    try:
        data = yaml.load(text, Loader=_unique_key_loader())
    except _DuplicateKey as exc:
        raise ProfileError(f"{where}: line {exc.line}: {exc.key}: given twice") from None
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


class _DuplicateKey(Exception):
    def __init__(self, key: Any, line: int) -> None:
        super().__init__(key)
        self.key, self.line = key, line


_LOADER: Optional[type] = None


def _unique_key_loader() -> type:
    """YAML keeps the last of two equal keys without a word; a profile must not. Built on
    first use: a run with no profile file (or answered from the cache) never imports YAML."""
    global _LOADER
    if _LOADER is None:
        import yaml

        class UniqueKeyLoader(yaml.SafeLoader):
            def construct_mapping(self, node, deep=False):  # type: ignore[override]
                seen = set()
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=deep)
                    if isinstance(key, str) and key in seen:
                        raise _DuplicateKey(key, key_node.start_mark.line + 1)
                    seen.add(key)
                return super().construct_mapping(node, deep=deep)

        _LOADER = UniqueKeyLoader
    return _LOADER


def find_pyproject(start: Path) -> Optional[Path]:
    """The nearest pyproject.toml with a `[tool.deadline-lint]` table, walking up from `start`
    (a folder, or a file whose folder is the first looked at); one without the table is
    passed over, as ruff passes over one without `[tool.ruff]`."""
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else list(start.parents):
        if has_profile_table(folder):
            return folder / "pyproject.toml"
    return None


def has_profile_table(folder: Path) -> bool:
    candidate = folder / "pyproject.toml"
    try:
        present = candidate.is_file()
    except OSError as exc:  # a folder on the way up that we may not look into
        raise ProfileError(f"{exc.filename or folder}: cannot look for pyproject.toml: {exc.strerror or exc}") from None
    return present and _pyproject_table(candidate) is not None


def _pyproject_table(pyproject: Path) -> Optional[Dict[str, Any]]:
    try:
        with pyproject.open("rb") as handle:
            data = tomllib.load(handle)
    except UnicodeDecodeError as exc:
        raise ProfileError(f"{pyproject}: not valid TOML (not UTF-8: {exc.reason} at byte {exc.start})") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ProfileError(f"{pyproject}: not valid TOML ({exc})") from None
    table = data.get("tool", {}).get("deadline-lint")
    if table is not None and not isinstance(table, dict):
        raise ProfileError(f"{pyproject}: tool.deadline-lint: expected a table")
    return table


def explicit_profile(path: str) -> Profile:
    return build_profile(load_profile_file(Path(path)), path, str(Path(path).resolve().parent))


def resolve_profile(explicit: Optional[str], start: Path) -> Profile:
    """The profile for files at `start`: `explicit` wins, else the nearest configured
    pyproject.toml, else the defaults. `config.ProfileResolver` caches this per folder."""
    if explicit:
        return explicit_profile(explicit)
    pyproject = find_pyproject(start)
    if pyproject is None:
        return default_profile()
    return pyproject_profile(pyproject)


def pyproject_profile(pyproject: Path) -> Profile:
    table = _pyproject_table(pyproject)
    if not table:
        return build_profile({}, f"{pyproject} [tool.deadline-lint]", str(pyproject.parent))
    table = dict(table)
    overrides: Dict[str, Any] = {}
    where = f"{pyproject} [tool.deadline-lint]"
    profile_path = table.pop("profile", None)
    if profile_path is not None:
        if not isinstance(profile_path, str) or not profile_path.strip():
            raise ProfileError(f"{where}: profile: expected the path of a profile YAML file, got {profile_path!r}")
        file_path = (pyproject.parent / profile_path)
        overrides = load_profile_file(file_path)
        where = str(file_path)
        _validate(overrides, SCHEMA, where)
    if table:
        spelled: Dict[str, str] = {}
        for key in table:
            other = spelled.setdefault(key.replace("-", "_"), key)
            if other != key:
                raise ProfileError(f"{pyproject} [tool.deadline-lint]: {key}: given twice (also as {other})")
        table = {key.replace("-", "_"): value for key, value in table.items()}
        _validate(table, SCHEMA, f"{pyproject} [tool.deadline-lint]")
        overrides = _merge(overrides, table)
    return build_profile(overrides, where, str(pyproject.parent))


def code_selected(code: str, selectors: Tuple[str, ...]) -> bool:
    return any(sel == "ALL" or code.startswith(sel) for sel in selectors)


def path_ignores(profile: Profile, relpath: str) -> List[str]:
    """Codes `per_path_ignores` silences for `relpath` (relative to the profile's folder),
    matched with the same gitignore-style rule as `exclude` (see globs.py)."""
    from deadline_lint.globs import matches

    codes: List[str] = []
    for pattern, listed in profile["per_path_ignores"].items():
        if matches((pattern,), relpath):
            codes.extend(listed)
    return codes
