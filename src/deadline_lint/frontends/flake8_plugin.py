"""flake8 adapter: `flake8 --select DL` reports what `deadline-lint check` reports.

A thin translation through api.py. It reuses the tree flake8 already parsed (no second parse). Each file gets
its own profile, resolved as the CLI resolves it (`--deadline-profile` for every file, else
the nearest pyproject.toml with `[tool.deadline-lint]` walking up from the file), and yields
what `deadline-lint check` would report under that profile: its `select`, `extend_select`,
`ignore`, `exclude` and `per_path_ignores` all count. flake8's own selection (`select`,
`extend-select`, `ignore`, `per-file-ignores`) and `# noqa` then filter that. Opt-in rules
run only where the file's profile selects them or their exact code is in flake8's `select` or
`extend-select`, as in the CLI (a prefix such as `--select DL` does not switch them on). The
tool's own `# deadline-lint: ignore[...]` pragma, which flake8 cannot know, applies too. An
unknown DL code in flake8's selection options, like a broken profile, is one critical error.

A relative `deadline-profile` in a flake8 config file is relative to that file's folder
(flake8's `normalize_paths`); on the command line, to the working directory.

Tool codes (DL0xx): flake8 reports syntax errors (E999) itself and never runs a tree plugin on
them, so the plugin never yields DL001. Bytes that are not text in the file's encoding flake8
decodes as latin-1 and checks anyway; the plugin yields DL002 for those, as the CLI does, and
checks nothing else in them. flake8 runs no plugin on a file it cannot read (it reports its
own E902, which `--select DL` hides): the plugin reports DL006 there, as the CLI does. DL003
and DL007 (a rule failed on the file, or it is nested too deeply) are yielded like any other
finding, so flake8's selection decides whether they show (`--select DL` includes them; the
CLI always reports tool codes).
"""
from __future__ import annotations

import ast
import os
import re
from typing import Iterator, List, Optional, Tuple

from deadline_lint import __version__
from deadline_lint.engine.checker import Checker
from deadline_lint.families.registry import all_rules
from deadline_lint.run import api
from deadline_lint.run.api import Options, Session
from deadline_lint.run.selection import SelectorError, check_selectors
from deadline_lint.settings.profile import ProfileError
from deadline_lint.support.source import DecodeError, decode_source

Result = Tuple[int, int, str, type]


def opt_in_codes() -> List[str]:
    return [code for code, cls in all_rules().items() if not cls.default_enabled]


class DeadlineLintFlake8:
    """The `flake8.extension` entry point `DL`."""

    name = "deadline-lint"
    version = __version__

    profile_path: Optional[str] = None
    opt_ins: Tuple[str, ...] = ()  # opt-in codes the user selected by their exact code
    parsed = False  # parse_options ran: this flake8 run has the plugin (see _report_unreadable)

    def __init__(self, tree: ast.Module, lines: List[str], filename: str) -> None:
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, option_manager) -> None:
        option_manager.add_option(
            "--deadline-profile",
            default=None,
            parse_from_config=True,
            normalize_paths=True,
            metavar="PATH",
            help="deadline-lint adoption profile (YAML). Default: [tool.deadline-lint] in the "
            "nearest pyproject.toml, else the built-in defaults.",
        )

    @classmethod
    def parse_options(cls, options) -> None:
        cls.profile_path = options.deadline_profile
        # As in the CLI, an opt-in rule runs only when its exact code is selected: flake8 alone
        # would let a prefix such as `--select DL` switch it on.
        named = {code.strip().upper() for code in [*(options.select or ()), *(options.extend_select or ())]}
        cls.opt_ins = tuple(code for code in opt_in_codes() if code in named)
        _check_flake8_selection(options)
        # Load it now: a broken profile is one clear error instead of one failure per file.
        try:
            cls.session().checker(os.path.join(os.getcwd(), "-"))
        except ProfileError as exc:
            raise _critical(exc) from None
        cls.parsed = True

    @classmethod
    def session(cls) -> Session:
        """The API's session for flake8's options (`# noqa` is flake8's to apply): one per
        process and options (api.session), so rules are instantiated once, not once per file."""
        try:
            return api.session(Options(extend_select=cls.opt_ins, profile=cls.profile_path, noqa=False))
        except ProfileError as exc:
            raise _critical(exc) from None

    @classmethod
    def checker(cls) -> Checker:
        """The checker for a file in the working directory (kept for callers of 0.1)."""
        return cls.session().checker(os.path.join(os.getcwd(), "-"))

    def _undecodable(self, text: str) -> Optional[str]:
        """Why the file's bytes are not source text, when flake8 decoded them anyway (it falls
        back to latin-1). Pure ASCII always decodes, so only other text is read again."""
        if text.isascii() or self.filename in ("-", "stdin") or not os.path.isfile(self.filename):
            return None
        try:
            with open(self.filename, "rb") as handle:
                decode_source(handle.read())
        except DecodeError as exc:
            return str(exc)
        except OSError:
            return None
        return None

    def run(self) -> Iterator[Result]:
        session = self.session()
        try:
            if session.excluded(self.filename):
                return
            text = "".join(self.lines)
            problem = self._undecodable(text)
            if problem is not None:  # flake8 read it as latin-1; Python (and the CLI) would not
                yield 1, 0, f"DL002 cannot decode file: {problem}", type(self)
                return
            found = session.lint_text(text, self.filename, tree=self.tree).diagnostics
        except ProfileError as exc:
            raise _critical(exc) from None
        for diagnostic in found:
            # flake8 adds 1 to the column a plugin yields; ours is already 1-based.
            yield diagnostic.line, diagnostic.column - 1, f"{diagnostic.code} {diagnostic.message}", type(self)


def _critical(exc: Exception) -> Exception:
    from flake8.exceptions import ExecutionError

    # flake8 prints this as a critical error and exits 1.
    return ExecutionError(f"deadline-lint: {exc}")


def _check_flake8_selection(options) -> None:
    """DL codes in flake8's selection options must exist (other plugins' codes are theirs)."""
    listed = {
        "select": options.select, "extend-select": options.extend_select,
        "ignore": options.ignore, "extend-ignore": options.extend_ignore,
    }
    for name, values in listed.items():
        ours = [v.strip().upper() for v in values or () if v.strip().upper().startswith("DL")]
        try:
            check_selectors(ours, f"flake8 --{name}")
        except SelectorError as exc:
            raise _critical(exc) from None
    for entry in getattr(options, "per_file_ignores", None) or ():
        ours = re.findall(r"\bDL[0-9A-Za-z]*", entry if isinstance(entry, str) else " ".join(map(str, entry)))
        try:
            check_selectors([code.upper() for code in ours], "flake8 --per-file-ignores")
        except SelectorError as exc:
            raise _critical(exc) from None


def _report_unreadable() -> None:
    """flake8 runs no plugin on a file it cannot read: it reports its own E902, which
    `--select DL` hides, so the file would pass silently. Report DL006 there, as the CLI
    does (the file's profile decides: its `exclude` and `per_path_ignores` count)."""
    try:
        from flake8.checker import FileChecker
    except ImportError:  # pragma: no cover - imported without flake8
        return
    unguarded = FileChecker._make_processor
    if getattr(unguarded, "deadline_lint", False):
        return

    def make_processor(self):
        processor = unguarded(self)
        if processor is None and DeadlineLintFlake8.parsed:
            session = DeadlineLintFlake8.session()
            try:
                found = [] if session.excluded(self.filename) else session.lint_path(self.filename).diagnostics
            except ProfileError as exc:
                raise _critical(exc) from None
            for diagnostic in found:
                self.report(None, diagnostic.line, diagnostic.column - 1, f"{diagnostic.code} {diagnostic.message}")
        return processor

    make_processor.deadline_lint = True  # type: ignore[attr-defined]
    FileChecker._make_processor = make_processor


_report_unreadable()
