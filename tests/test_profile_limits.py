"""A hostile or mistaken profile file is refused in one line with exit 2, without reading
more than the documented limit, expanding aliases without bound, or echoing the expansion."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from deadline_lint.settings import profile as loader
from deadline_lint.settings.profile import ProfileError, build_profile, load_profile_file

# The "billion laughs": nine levels of nine aliases each, about 330 bytes that expand to 9**9
# strings, under a key the loader knows (so it validates, and reports, the value).
LAUGHS = "exclude:\n" + "".join(
    f"  - &{name} [{','.join([f'*{prev}'] * 9) if prev else ','.join(['lol'] * 9)}]\n"
    for prev, name in zip(["", *"abcdefgh"], "abcdefghi")
)


# Run in a child with its address space capped, so a loader that expands the aliases fails
# fast (MemoryError) instead of taking the machine's memory.
_CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (768 * 1024 * 1024, resource.RLIM_INFINITY))
from deadline_lint.frontends.cli import main
sys.exit(main(["check", "--no-cache", "--profile", sys.argv[1], sys.argv[2]]))
"""


def _check_with_profile(profile: str, tmp_path: Path) -> "subprocess.CompletedProcess[str]":
    (tmp_path / "a.py").write_text("x = 1\n")
    return subprocess.run(
        [sys.executable, "-c", _CHILD, profile, str(tmp_path / "a.py")],
        capture_output=True, text=True, timeout=300,
    )


@pytest.mark.parametrize("where", ["in a list", "under a nested key"])
def test_nested_aliases_are_refused_in_one_line(where: str, tmp_path: Path) -> None:
    text = LAUGHS if where == "in a list" else "budget:\n  parameters:\n" + LAUGHS.replace("  - ", "    - ", -1)[9:]
    assert len(LAUGHS) <= 400
    path = tmp_path / "laughs.yaml"
    path.write_text(text)
    done = _check_with_profile(str(path), tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(lines) == 1 and f" {path}: " in f" {lines[0]}", lines
    assert "lol" not in lines[0] and len(lines[0]) < 300


def test_an_endless_file_is_refused_after_the_limit(tmp_path: Path) -> None:
    done = _check_with_profile("/dev/zero", tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(lines) == 1 and " /dev/zero: " in f" {lines[0]}" and "too large" in lines[0], lines


def test_a_file_over_the_limit_names_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("# " + "x" * loader.MAX_PROFILE_BYTES + "\n")
    with pytest.raises(ProfileError, match=r"too large .*1 MiB"):
        load_profile_file(path)


def test_a_long_bad_value_is_not_echoed_whole(tmp_path: Path) -> None:
    path = tmp_path / "long.yaml"
    path.write_text("exclude: [" + ", ".join(["[a]"] * 5000) + "]\n")
    with pytest.raises(ProfileError) as info:
        build_profile(load_profile_file(path), str(path))
    assert "exclude: expected a list of non-empty strings" in str(info.value)
    assert len(str(info.value)) < 300


def test_a_self_referencing_alias_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("exclude: &a [*a]\n")
    with pytest.raises(ProfileError) as info:
        build_profile(load_profile_file(path), str(path))
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)


def test_deep_nesting_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("exclude: " + "[" * 50000 + "]" * 50000 + "\n")
    with pytest.raises(ProfileError) as info:
        build_profile(load_profile_file(path), str(path))
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)


# -- statuses: every key validated (issue 19, defect 4) -------------------------------------
HTTP_KEYS = ("expired", "cancelled", "refused")
GRPC_KEYS = ("grpc_expired", "grpc_cancelled", "grpc_refused")


def _statuses(key: str, value: object) -> None:
    build_profile({"statuses": {key: value}}, "p.yaml")


@pytest.mark.parametrize("key", HTTP_KEYS)
@pytest.mark.parametrize("value", ["banana", "DEADLINE_EXCEEDED", 99, 600, True, 504.0])
def test_an_http_status_key_takes_only_an_http_code(key: str, value: object) -> None:
    with pytest.raises(ProfileError, match=rf"^p.yaml: statuses.{key}: expected an HTTP status"):
        _statuses(key, value)


@pytest.mark.parametrize("key", GRPC_KEYS)
@pytest.mark.parametrize("value", ["banana", "deadline_exceeded", 504, "OK!", True])
def test_a_grpc_status_key_takes_only_a_grpc_status_name(key: str, value: object) -> None:
    with pytest.raises(ProfileError, match=rf"^p.yaml: statuses.{key}: expected a gRPC status name"):
        _statuses(key, value)


def test_valid_statuses_are_accepted() -> None:
    for key in HTTP_KEYS:
        _statuses(key, 429)
    for key in GRPC_KEYS:
        _statuses(key, "UNAVAILABLE")


def test_the_grpc_names_are_grpcs() -> None:
    grpc = pytest.importorskip("grpc")
    from deadline_lint.settings.profile import GRPC_STATUS_NAMES

    assert set(GRPC_STATUS_NAMES) == {code.name for code in grpc.StatusCode}


def test_statuses_is_not_reported_unused(tmp_path: Path) -> None:
    from deadline_lint.run.profile_checks import check_profile

    profile = check_profile(build_profile({"statuses": {"expired": 504}}, "p.yaml"))
    assert not profile.warnings, profile.warnings
