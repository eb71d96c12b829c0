"""What a profile is checked against the installed tool for: every rule code it names must
exist. The codes come from the registry at run time, so rules merged later count by
themselves; that is why this check belongs to the run and not to the settings, which know no
rule. Unknown keys are the loader's to reject (settings/profile.py)."""
from __future__ import annotations

from deadline_lint.run.selection import SelectorError, check_selectors
from deadline_lint.settings.profile import SELECTOR_KEYS, Profile, ProfileError
from deadline_lint.settings.profile_roles import role_warnings
from deadline_lint.support import records


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
    if not profile.budget.type_roles:
        return profile
    return records.replace(profile, warnings=role_warnings(profile))
