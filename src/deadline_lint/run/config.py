"""Configuration resolved per file, the same way in every front end (CLI, pre-commit, flake8,
pylint, the codemod).

For each file: `--profile` (or the plugin's `deadline-profile`) when given, for every file;
else the nearest pyproject.toml with a `[tool.deadline-lint]` table walking up from the file's
folder; else the built-in defaults. Run options (`--select`, `--ignore`, `--extend-select`,
`--extend-safe-fixes`, ...) are applied on top of each file's profile, so `check a b` and
`check b a` give the same findings. The profile's `exclude` and `per_path_ignores` are globs
relative to the folder of the profile (or pyproject.toml) that declared them.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple, Union

from deadline_lint.cache.results import settings_key
from deadline_lint.run.profile_checks import check_profile
from deadline_lint.settings.globs import matches, relative_path
from deadline_lint.settings.profile import (
    Profile,
    ProfileError,
    default_profile,
    explicit_profile,
    has_profile_table,
    path_ignores,
    pyproject_profile,
)
from deadline_lint.support.collector import collector_paused
from deadline_lint.support.selector import Selector

if TYPE_CHECKING:
    from deadline_lint.engine.checker import Checker


class ProfileResolver:
    """Profiles by file, each pyproject.toml loaded once and each folder's answer cached."""

    def __init__(self, explicit: Optional[str] = None) -> None:
        self.explicit = explicit
        self._explicit: Optional[Profile] = check_profile(explicit_profile(explicit)) if explicit else None
        self._config_of: Dict[str, Optional[str]] = {}
        self._profiles: Dict[Optional[str], Profile] = {}
        self._by_folder: Dict[str, Profile] = {}

    def for_path(self, path: Union[str, os.PathLike], is_dir: Optional[bool] = None) -> Profile:
        """`is_dir`, when the caller knows it, saves a stat per file."""
        if self._explicit is not None:
            return self._explicit
        path = os.fspath(path)
        if is_dir is None:
            is_dir = os.path.isdir(path)
        folder = path if is_dir else os.path.dirname(path)
        known = self._by_folder.get(folder)
        if known is not None:
            return known  # keyed as given: most files share a folder, and abspath costs
        config = self._config_for(os.path.abspath(folder))
        profile = self._profiles.get(config)
        if profile is None:
            profile = default_profile() if config is None else check_profile(pyproject_profile(Path(config)))
            self._profiles[config] = profile
        self._by_folder[folder] = profile
        return profile

    def _config_for(self, folder: str) -> Optional[str]:
        walked: List[str] = []
        found: Optional[str] = None
        current = folder
        while True:
            if current in self._config_of:
                found = self._config_of[current]
                break
            walked.append(current)
            if _holds_profile(current):
                found = os.path.join(current, "pyproject.toml")
                break
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for seen in walked:
            self._config_of[seen] = found
        return found

    def loaded(self) -> List[Profile]:
        return [*([self._explicit] if self._explicit else []), *self._profiles.values()]

    def warnings(self) -> List[str]:
        return list(dict.fromkeys(w for profile in self.loaded() for w in profile.warnings))


def _holds_profile(folder: str) -> bool:
    """A folder we may not search (a named file inside it gets DL006) holds no profile we
    could read: the caller looks further up. Asked of every folder a walk enters, so the
    folder is stat'ed only when looking into it failed."""
    try:
        return has_profile_table(Path(folder))
    except ProfileError:
        if os.path.exists(folder):
            raise
        return False


def excluded_by_profile(profile: Profile, path: str, is_dir: bool = False) -> bool:
    """The profile's `exclude` globs, relative to its folder (the working directory for the
    built-in defaults and an explicit profile without a folder)."""
    patterns = profile.exclude
    if not patterns:
        return False
    relative = relative_path(path, profile.root or os.getcwd())
    if not relative:
        return False
    return matches(patterns, relative, is_dir)


class Checkers:
    """One Checker per profile and per-path selection for a run: `options` (the command
    line's selection and fix classes) on top of each file's profile. Picklable for worker
    processes (they rebuild their own caches)."""

    def __init__(self, resolver: Optional[ProfileResolver] = None, options: Optional[Mapping[str, Any]] = None) -> None:
        self.resolver = resolver or ProfileResolver()
        self.options: Dict[str, Any] = dict(options or {})
        self._by_selection: Dict[Tuple[int, Tuple[str, ...]], Tuple[Profile, "Checker"]] = {}
        self._keys: Dict[int, Tuple[Profile, str]] = {}

    def for_path(self, path: Union[str, os.PathLike]) -> "Checker":
        """The checker for this file: its profile's, without the rules its `per_path_ignores`
        silence there (a rule that cannot report is not run)."""
        profile = self.resolver.for_path(path)
        return self.for_profile(profile, path_ignored(profile, os.fspath(path)))

    def for_profile(self, profile: Profile, dropped: Tuple[str, ...] = ()) -> "Checker":
        key = (id(profile), dropped)
        entry = self._by_selection.get(key)
        if entry is None:
            # Loading the rules and building their catalog makes thousands of objects that
            # live as long as the run: the cyclic collector has nothing to find among them.
            with collector_paused():
                entry = self._by_selection[key] = (profile, self._built(profile, dropped))
        return entry[1]

    def _built(self, profile: Profile, dropped: Tuple[str, ...]) -> "Checker":
        # Imported here: a run answered wholly from the results cache never loads the rules.
        from deadline_lint.engine.checker import Checker
        from deadline_lint.families import registry  # noqa: F401  (registers every rule)

        if dropped:
            whole = self.for_profile(profile)
            kept = [code for code in whole.codes if not silenced(code, dropped)]
            return Checker(profile, **{**self.options, "only": kept}, catalog=whole.catalog)
        return Checker(profile, **self.options)

    def dropped(self, path: Union[str, os.PathLike]) -> Tuple[str, ...]:
        """The codes `per_path_ignores` silence for this file (the tool codes among them are
        dropped from its findings; the rules are not run)."""
        return path_ignored(self.resolver.for_path(path), os.fspath(path))

    def settings_key(self, profile: Profile) -> str:
        """The results cache's key for files checked under `profile` in this run."""
        entry = self._keys.get(id(profile))
        if entry is None:
            entry = self._keys[id(profile)] = (profile, settings_key(dict(profile.raw), profile.root, self.options))
        return entry[1]

    def excluded(self, path: str, is_dir: bool = False) -> bool:
        return excluded_by_profile(self.resolver.for_path(path, is_dir), path, is_dir)

    def excludes_files_in(self, folder: str) -> bool:
        """The profile of the files in `folder` has `exclude` patterns (a walk tests each file
        of that folder against them only then)."""
        return bool(self.resolver.for_path(folder, True).exclude)

    def __getstate__(self):
        return {"explicit": self.resolver.explicit, "options": self.options}

    def __setstate__(self, state) -> None:
        Checkers.__init__(self, ProfileResolver(state["explicit"]), state["options"])


def path_ignored(profile: Profile, path: str) -> Tuple[str, ...]:
    """The profile's `per_path_ignores` for `path`; patterns are relative to the folder of the
    profile (or pyproject.toml) that declared them, as in ruff and flake8."""
    if not profile.per_path_ignores:
        return ()
    relative = relative_path(path, profile.root or os.getcwd())
    return tuple(sorted(set(path_ignores(profile, relative).selectors))) if relative else ()


def silenced(code: str, dropped: Tuple[str, ...]) -> bool:
    return Selector(dropped).matches(code)
