"""What a front end asks for (`Options`) and what it gets back (`FileResult`, `FixResult`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Tuple

# Every family's fix tags, declared before a fix is spelled: see families/fix_tags.py.
from deadline_lint.families import fix_tags  # noqa: F401
from deadline_lint.run.selection import SelectorError, check_selectors
from deadline_lint.settings.profile import ProfileError
from deadline_lint.support.diagnostics import Diagnostic

if TYPE_CHECKING:
    from deadline_lint.fixes.loop import FixMode
    from deadline_lint.cache.dependencies import Dependencies
    from deadline_lint.cache.states import Stamp

# What a checked file's findings were computed from, for the results cache:
# (stat before the read, content hash, project dependencies or None).
Record = Tuple["Stamp", str, Optional["Dependencies"], str]  # stamp, content hash, reach, interface


@dataclass(frozen=True)
class Options:
    """What a front end can say. Selectors are codes or prefixes (`DL101`, `DL1`, `ALL`)."""

    select: Tuple[str, ...] = ()  # replaces the profile's `select`
    ignore: Tuple[str, ...] = ()  # these add to the profile's
    extend_select: Tuple[str, ...] = ()
    extend_safe_fixes: Tuple[str, ...] = ()
    extend_unsafe_fixes: Tuple[str, ...] = ()
    profile: Optional[str] = None  # a profile YAML for every file (else per file, pyproject.toml)
    only: Optional[Tuple[str, ...]] = None  # run no rule outside these (pylint: enabled messages)
    noqa: bool = True  # False: the host applies noqa comments itself (flake8)
    # Fixing
    unsafe_fixes: bool = False
    thread_budget: bool = False
    mint_at_edges: bool = False  # `adopt`: the budget is minted at the edges and threaded from them only
    insert_budgets: bool = False  # fixes inserting a missing timeout whatever their class (codemod)
    thread_run: FrozenSet[str] = frozenset()  # set by fix_paths: the run's files (thread_elsewhere.py)
    write: bool = True  # fix_paths: write fixed files (False: compute the diff only)
    # Running
    jobs: Optional[int] = None  # worker processes (None: by file count)
    cache_dir: Optional[str] = None  # the results cache for lint_paths (None: no cache)
    # Finding files (files.discover; lint_paths itself takes files)
    exclude: Tuple[str, ...] = ()
    respect_gitignore: bool = True

    def __post_init__(self) -> None:
        for name in ("select", "ignore", "extend_select", "extend_safe_fixes", "extend_unsafe_fixes", "exclude"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.only is not None:
            object.__setattr__(self, "only", tuple(self.only))

    def check(self) -> None:
        """Raise ProfileError for an unknown code in a selector."""
        for name in ("select", "extend_select", "ignore", "extend_safe_fixes", "extend_unsafe_fixes"):
            try:
                check_selectors(getattr(self, name), "--" + name.replace("_", "-"))
            except SelectorError as exc:
                raise ProfileError(str(exc)) from None

    def checker_options(self) -> Dict[str, object]:
        """The keyword arguments of engine.Checker (also the results cache's key: only what
        changes findings)."""
        options: Dict[str, object] = {
            "select": list(self.select), "ignore": list(self.ignore), "extend_select": list(self.extend_select),
            "extend_safe_fixes": list(self.extend_safe_fixes), "extend_unsafe_fixes": list(self.extend_unsafe_fixes),
        }
        if self.only is not None:
            options["only"] = list(self.only)
        if not self.noqa:
            options["apply_noqa"] = False
        return options

    def fix_mode(self) -> "FixMode":
        from deadline_lint.fixes.loop import FixMode  # not on a cached check's path

        return FixMode(
            unsafe=self.unsafe_fixes, thread_budget=self.thread_budget, insert_budgets=self.insert_budgets,
            mint_at_edges=self.mint_at_edges,
            run=self.thread_run,
        )


@dataclass(frozen=True)
class FileResult:
    path: str
    diagnostics: List[Diagnostic]


@dataclass(frozen=True)
class FixResult:
    path: str
    diagnostics: List[Diagnostic]  # what remains (plus DL003/DL005 when fixing gave up)
    fixed: int = 0  # findings whose fix was applied
    changed: bool = False  # the fixed text differs (written, or shown as a diff)
    text: Optional[str] = None  # the fixed text (fix_text: the original if unchanged; fix_path: if changed)
    diff: bytes = b""  # with write=False: in the file's own encoding, so `patch -p0` applies it
    written: bool = False
    refused: Optional[str] = None  # why a changed file was not (or would not be) written
    threaded: int = 0  # functions given a budget parameter (--thread-budget)
    gave_up: bool = False
    before: Tuple[Diagnostic, ...] = ()  # what checking the original reported
    new: int = 0  # remaining findings the original did not have (fixes.FixedText.new)

    @property
    def remaining(self) -> List[Diagnostic]:
        return self.diagnostics
