"""The adoption profile: an organisation's numbers and names, loaded and validated.

Lookup order, per file: `--profile PATH`, else `[tool.deadline-lint]` in the nearest
pyproject.toml that has that table, walking up from the file (`profile = "path"` and/or profile
keys inline), else the built-in defaults. `config.ProfileResolver` does it for a run.

What the keys are, their defaults, checks and docs: profile_settings.py, the one description
(the JSON Schema, the docs table and the "not used yet" warning are derived from it).
"""
from __future__ import annotations

import os
import reprlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Tuple

from deadline_lint.settings.globs import matches
from deadline_lint.settings.profile_settings import TIMEOUT_FLOOR_S, Settings, checks, defaults, typed_fields
from deadline_lint.settings.profile_values import GRPC_STATUS_NAMES, is_expression_template
from deadline_lint.support import compiled
from deadline_lint.support.regular_files import open_regular
from deadline_lint.support.selector import Selector

__all__ = ["TIMEOUT_FLOOR_S", "GRPC_STATUS_NAMES", "is_expression_template", "Profile", "ProfileError"]

# A profile file is read up to this many bytes (more is refused: a profile is a page of YAML,
# and /dev/zero never ends); its YAML aliases may expand to at most MAX_PROFILE_VALUES values.
MAX_PROFILE_BYTES = 1024 * 1024
MAX_PROFILE_VALUES = 100_000


class ProfileError(Exception):
    """One line: `path: key: what was expected`."""


DEFAULTS: Dict[str, Any] = defaults()
SCHEMA: Dict[str, Any] = checks()  # key -> profile_values.Check, or a nested mapping
SELECTOR_KEYS = ("select", "extend_select", "ignore", "extend_safe_fixes", "extend_unsafe_fixes")

_SHOWN = reprlib.Repr()
_SHOWN.maxstring, _SHOWN.maxother, _SHOWN.maxlist, _SHOWN.maxdict, _SHOWN.maxlevel = 80, 80, 8, 8, 3


def shown(value: Any) -> str:
    """A value for a message: short, never the whole of a large (alias-expanded) one."""
    text = _SHOWN.repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _validate(data: Any, schema: Mapping[str, Any], where: str, prefix: str = "") -> None:
    if not isinstance(data, dict):
        raise ProfileError(f"{where}: {prefix.rstrip('.') or 'profile'}: expected a mapping of keys")
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        spec = schema.get(key) if isinstance(key, str) else None
        if spec is None:
            known = ", ".join(sorted(schema))
            raise ProfileError(f"{where}: {dotted[:80]}: unknown key (expected one of: {known})")
        if isinstance(spec, dict):
            _validate(value, spec, where, dotted + ".")
            continue
        expected = spec.problem(value)
        if isinstance(expected, tuple):  # a validator naming the part of the value at fault
            dotted, expected, value = expected
        if expected:
            raise ProfileError(f"{where}: {dotted}: expected {expected}, got {shown(value)}")


def _merge(base: Dict[str, Any], override: Mapping[str, Any]) -> Dict[str, Any]:
    merged = _copied(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict) and key != "per_path_ignores":
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = _copied(value)
    return merged


def _copied(value: Any) -> Any:
    """A deep copy of parsed YAML or TOML (`copy.deepcopy` for plain data, without importing
    `copy` and `weakref` on every run): containers are new, scalars are immutable."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


@dataclass(frozen=True)
class Profile(Settings):
    """Validated settings (the typed fields of `Settings`) and where they came from. Picklable:
    worker processes receive it."""

    source: str = "<built-in defaults>"  # where it came from, for messages
    # The merged mapping the fields were built from: the results cache's key, and the start
    # of a variant (`from_raw`).
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    # The folder `exclude` and `per_path_ignores` patterns are relative to: the profile's or
    # pyproject's (None: the working directory).
    root: Optional[str] = None
    keys_set: FrozenSet[str] = frozenset()  # the top-level keys the profile itself sets
    warnings: Tuple[str, ...] = ()

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any], source: str, root: Optional[str] = None,
                 keys_set: FrozenSet[str] = frozenset()) -> "Profile":
        """From a merged mapping the loader validated (or a variant of one)."""
        return cls(**typed_fields(Settings, raw), source=source, raw=raw, root=root, keys_set=keys_set)

    @property
    def hop_margin_s(self) -> float:
        return self.hop_margin_ms / 1000.0

    @property
    def edge_total_s(self) -> float:
        return self.edge_total_ms / 1000.0

    def render(self, template_key: str, budget: str = "") -> str:
        """Fill a fix template; seconds print without trailing zeros noise (0.05, 10.0)."""
        template: str = getattr(self.fix, template_key)
        margin, edge = seconds_literal(self.hop_margin_s), seconds_literal(self.edge_total_s)
        return template.format(budget=budget, margin=margin, edge=edge)


def seconds_literal(value: float) -> str:
    """Seconds as fixes write them into code (`0.05`, `10.0`)."""
    return repr(round(value, 6))


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
    """Shape and consistency; what needs the rule registry (known codes) is
    `run.profile_checks.check_profile`, which every front end applies (run/config.py)."""
    _validate(overrides, SCHEMA, where)
    merged = _merge(DEFAULTS, overrides)
    _check_consistency(merged, where)
    return Profile.from_raw(merged, where, root, frozenset(overrides))


def default_profile() -> Profile:
    return build_profile({}, "<built-in defaults>")


def load_profile_file(path: os.PathLike) -> Dict[str, Any]:
    where = str(path)
    try:
        with open_regular(path) as handle:
            data = handle.read(MAX_PROFILE_BYTES + 1)
    except FileNotFoundError:
        raise ProfileError(f"{where}: file not found") from None
    except OSError as exc:
        raise ProfileError(f"{where}: cannot be read: {exc.strerror or exc}") from None
    if len(data) > MAX_PROFILE_BYTES:
        raise ProfileError(f"{where}: too large for a profile (more than {MAX_PROFILE_BYTES // (1024 * 1024)} MiB)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProfileError(f"{where}: cannot be read: {exc}") from None
    import yaml  # deferred: see _unique_key_loader

    try:
        loaded = yaml.load(text, Loader=_unique_key_loader())
    except _DuplicateKey as exc:
        raise ProfileError(f"{where}: line {exc.line}: {str(exc.key)[:80]}: given twice") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ProfileError(f"{where}: {at}not valid YAML ({problem})") from None
    except RecursionError:
        raise ProfileError(f"{where}: not valid YAML (nested too deeply)") from None
    if loaded is None:
        return {}
    _check_expansion(loaded, where)
    if not isinstance(loaded, dict):
        raise ProfileError(f"{where}: profile: expected a mapping of keys, got {type(loaded).__name__}")
    return loaded


def _check_expansion(data: Any, where: str) -> None:
    """YAML aliases share one object, so a few hundred bytes can stand for billions of values
    (and a value may contain itself): count them as validation would see them, up to a cap."""
    seen, stack = 0, [data]
    while stack:
        value = stack.pop()
        seen += 1
        if seen > MAX_PROFILE_VALUES:
            raise ProfileError(
                f"{where}: too many values once YAML aliases are expanded (more than {MAX_PROFILE_VALUES})"
            )
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


class _DuplicateKey(Exception):
    def __init__(self, key: Any, line: int) -> None:
        super().__init__(key)
        self.key, self.line = key, line


_LOADER: Optional[type] = None


def _unique_key_loader() -> type:
    """YAML keeps the last of two equal keys without a word; a profile must not. Built on
    first use: a run with no profile file (or answered from the cache) never imports YAML, and
    tests/test_cache.py holds the pre-commit path to that."""
    global _LOADER
    if _LOADER is None:
        import yaml

        class UniqueKeyLoader(yaml.SafeLoader):
            def construct_mapping(self, node, deep=False):
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
        with open_regular(pyproject) as handle:
            data = handle.read()
    except OSError as exc:
        raise ProfileError(f"{pyproject}: not valid TOML ({exc})") from None
    table = compiled.kept("pyproject", data, lambda: _parse_table(pyproject, data), _may_be_table)
    if table is not None and not isinstance(table, dict):
        raise ProfileError(f"{pyproject}: tool.deadline-lint: expected a table")
    return table


def _may_be_table(kept: Any) -> bool:
    """What a parse can have left in the cache: no table, or a table with string keys."""
    return kept is None or (isinstance(kept, dict) and all(isinstance(key, str) for key in kept))


def _parse_table(pyproject: Path, data: bytes) -> Any:
    import tomllib  # deferred: only when the file's table was not kept by an earlier run (tests/test_cache.py)

    try:
        document = tomllib.loads(data.decode())
    except UnicodeDecodeError as exc:
        raise ProfileError(f"{pyproject}: not valid TOML (not UTF-8: {exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{pyproject}: not valid TOML ({exc})") from None
    return document.get("tool", {}).get("deadline-lint")


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


def path_ignores(profile: Profile, relpath: str) -> Selector:
    """Codes `per_path_ignores` silences for `relpath` (relative to the profile's folder),
    matched with the same gitignore-style rule as `exclude` (see globs.py)."""
    codes: List[str] = []
    for pattern, listed in profile.per_path_ignores.items():
        if matches((pattern,), relpath):
            codes.extend(listed)
    return Selector(codes)
