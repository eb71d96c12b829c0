"""What a profile is checked against the installed tool for: every rule code it names must
exist (computed from the registry at run time, so rules merged later count by themselves),
and a top-level key that no code of the tool reads gets a "not used yet" warning.

"Reads" is derived from the code, not a list kept by hand: a key is read when some module of
the package (the profile modules themselves aside) accesses `profile.<key>` (or a `Profile`
helper that reads it, `Profile.READS`). The scan's answer ships as profile_readers.json
(regenerated with the JSON Schema, and a test fails when it is stale), so a run answered from
the cache reads one small file instead of the package's source. Kept apart from profile.py,
which the rules import."""
from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Dict, FrozenSet, List, Set

from deadline_lint import records
from deadline_lint.profile import SELECTOR_KEYS, Profile, ProfileError
from deadline_lint.profile_roles import role_warnings
from deadline_lint.profile_settings import Settings
from deadline_lint.selection import SelectorError, check_selectors

_ACCESS = re.compile(r"\bprofile\.([A-Za-z_]\w*)")
_PACKAGE = Path(__file__).resolve().parent
_OWN = (
    "profile.py", "profile_checks.py", "profile_roles.py", "profile_schema.py", "profile_settings.py",
    "profile_values.py",
)
READERS = _PACKAGE / "profile_readers.json"


def keys_read_in(text: str) -> Set[str]:
    """The top-level settings source `text` reads through a profile."""
    settings = {f.name for f in records.fields(Settings)}
    read: Set[str] = set()
    for name in _ACCESS.findall(text):
        read.update(Profile.READS.get(name, (name,)))
    return read & settings


def readers_by_key() -> Dict[str, List[str]]:
    """Setting -> the package's modules that read it (scanning the source)."""
    readers: Dict[str, List[str]] = {f.name: [] for f in records.fields(Settings)}
    for path in sorted(_PACKAGE.rglob("*.py")):
        if path.parent == _PACKAGE and path.name in _OWN:
            continue
        module = ".".join(path.relative_to(_PACKAGE.parent).with_suffix("").parts)
        for key in sorted(keys_read_in(path.read_text(encoding="utf-8"))):
            readers[key].append(module)
    return readers


def render_readers() -> str:
    return json.dumps(readers_by_key(), indent=1, sort_keys=True) + "\n"


# Keys no code reads any more, accepted without a warning so that older profiles still load:
# `project_index` (the outbound rules follow the project's modules by default).
RETIRED_KEYS = frozenset({"project_index"})


@functools.lru_cache(maxsize=None)
def keys_read() -> FrozenSet[str]:
    """The settings the installed package reads."""
    try:
        readers = json.loads(READERS.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # not shipped (a bare source tree): ask the source itself
        readers = readers_by_key()
    return frozenset(key for key, modules in readers.items() if modules)


def check_profile(profile: Profile) -> Profile:
    """`profile` with its warnings; ProfileError naming the key for an unknown code."""
    where = profile.source
    try:
        for key in SELECTOR_KEYS:
            if key in profile.keys_set:
                check_selectors(getattr(profile, key), f"{where}: {key}")
        if "per_path_ignores" in profile.keys_set:
            for pattern, codes in profile.per_path_ignores.items():
                check_selectors(codes, f"{where}: per_path_ignores: {pattern!r}")
    except SelectorError as exc:
        raise ProfileError(str(exc)) from None
    unread = profile.keys_set - keys_read() - RETIRED_KEYS if profile.keys_set else frozenset()
    warnings = tuple(
        f"{where}: {key}: not used yet (nothing in the installed deadline-lint reads it); "
        "it is accepted for the rules that will"
        for key in sorted(unread)
    )
    if profile.budget.type_roles:
        warnings += role_warnings(profile)
    return records.replace(profile, warnings=warnings)
