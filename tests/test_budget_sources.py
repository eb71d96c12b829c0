"""Budget sources the fixtures do not spell out: seconds parameters and optional budgets."""
from __future__ import annotations

from deadline_lint.engine.checker import Checker


def messages(text: str, select=("DL101", "DL102")):
    return [(d.code, d.message) for d in Checker(select=list(select)).check_text(text, "svc.py")]


def test_a_threaded_seconds_parameter_is_a_budget() -> None:
    text = (
        "import requests\n"
        "def fetch(url, *, budget_s: float = 10.0):\n"
        "    requests.get(url)\n"
        "    requests.get(url, timeout=5)\n"
    )
    (first, second) = messages(text)
    assert first[0] == "DL101" and "timeout=max(0.001, budget_s - 0.05)" in first[1]
    assert second[0] == "DL102"


def test_optional_budget_falls_back_to_the_edge_default() -> None:
    text = (
        "from typing import Optional\n"
        "import requests\n"
        "def fetch(url, budget: Optional['Budget'] = None):\n"
        "    requests.get(url)\n"
    )
    ((code, message),) = messages(text)
    assert "timeout=(budget.timeout() if budget is not None else 10.0)" in message


def test_required_budget_uses_the_plain_template() -> None:
    text = "import requests\ndef fetch(url, budget):\n    requests.get(url)\n"
    ((code, message),) = messages(text)
    assert "timeout=budget.timeout()" in message and "is not None" not in message


def test_a_project_type_roles_say_which_method_is_the_raw_remainder() -> None:
    from deadline_lint.settings.profile import build_profile

    profile = build_profile(
        {"budget": {"types": ["Deadline"], "type_roles": {"Deadline": {"raw_remainder": ["left"]}}}}, "test",
    )
    text = (
        "import requests\n"
        "from shop import Deadline\n"
        "def fetch(url, d: Deadline):\n"
        "    requests.get(url, timeout=d.left())\n"
        "    requests.get(url, timeout=d.remaining())\n"  # not a role of Deadline's
    )
    found = Checker(profile, select=["DL104"]).check_text(text, "svc.py")
    assert [(d.line, d.code) for d in found] == [(4, "DL104")]


def test_a_role_outside_the_known_ones_is_one_clear_line() -> None:
    import pytest

    from deadline_lint.settings.profile import ProfileError, build_profile

    with pytest.raises(ProfileError) as info:
        build_profile({"budget": {"roles": {"remainder": ["left"]}}}, "deadline-lint.yaml")
    message = str(info.value)
    assert "\n" not in message and message.startswith("deadline-lint.yaml: budget.roles: expected a mapping of role")


def test_the_budget_type_seam_takes_a_type_from_elsewhere() -> None:
    """The one place that says "this class is a budget type" can be taught more (the project
    index's cross-module facts)."""
    from deadline_lint.catalog import load_catalog
    from deadline_lint.families.shared.budget.budget_types import OBJECT, BudgetType, BudgetTypes
    from deadline_lint.settings.profile import default_profile

    types = BudgetTypes(load_catalog(), default_profile())
    assert types.type_named("shop.time.Allowance") is None
    roles = (("raw_remainder", frozenset({"left"})),)
    types.add("shop.time.Allowance", BudgetType("shop.time.Allowance", OBJECT, roles))
    found = types.type_named("shop.time.Allowance")
    assert found is not None and found.role_of("left") == "raw_remainder" and found.role_of("timeout") is None


def test_a_role_method_the_project_type_lacks_is_a_warning(tmp_path) -> None:
    from deadline_lint.settings.profile import build_profile, load_profile_file
    from deadline_lint.run.profile_checks import check_profile

    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "deadlines.py").write_text(
        "class Budget:\n    def remaining(self):\n        return 1.0\n\n"
        "class Derived(Base):\n    pass\n",
        encoding="utf-8",
    )
    (tmp_path / "deadline-lint.yaml").write_text(
        "budget:\n  type_roles:\n"
        "    acme.deadlines.Budget: {raw_remainder: [left, remaining]}\n"
        "    acme.deadlines.Derived: {raw_remainder: [left]}\n"  # may inherit it: quiet
        "    acme.elsewhere.Missing: {raw_remainder: [left]}\n"  # not in the project: quiet
        "    Bare: {raw_remainder: [left]}\n",  # no module: quiet
        encoding="utf-8",
    )
    path = tmp_path / "deadline-lint.yaml"
    profile = check_profile(build_profile(load_profile_file(path), str(path), root=str(tmp_path)))
    assert len(profile.warnings) == 1
    assert "acme.deadlines.Budget: raw_remainder method `left` not found" in profile.warnings[0]
