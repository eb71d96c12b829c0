"""What a profile is checked against the installed rules for: every rule code it names must
exist (computed from the registry at run time, so rules merged later count by themselves),
and a rule-family key that no installed rule reads (`Rule.profile_keys`) gets a "not used yet"
warning. Kept apart from profile.py, which the rules themselves import."""
from __future__ import annotations

import dataclasses

from deadline_lint.profile import ENGINE_KEYS, SELECTOR_KEYS, Profile, ProfileError
from deadline_lint.selection import SelectorError, check_selectors


def check_profile(profile: Profile) -> Profile:
    """`profile` with its warnings; ProfileError naming the key for an unknown code."""
    where = profile.source
    try:
        for key in SELECTOR_KEYS:
            if key in profile.keys_set:
                check_selectors(profile[key], f"{where}: {key}")
        if "per_path_ignores" in profile.keys_set:
            for pattern, codes in profile["per_path_ignores"].items():
                check_selectors(codes, f"{where}: per_path_ignores: {pattern!r}")
    except SelectorError as exc:
        raise ProfileError(str(exc)) from None
    unread = profile.keys_set - ENGINE_KEYS
    if unread:  # the rules are loaded only to answer this (a cached run may need none)
        from deadline_lint.registry import keys_read_by_rules

        unread -= keys_read_by_rules()
    warnings = tuple(
        f"{where}: {key}: not used yet (no installed rule reads it); it is accepted for the rules that will"
        for key in sorted(unread)
    )
    return dataclasses.replace(profile, warnings=warnings)
