"""pylint adapter: `pylint --load-plugins deadline_lint.pylint_plugin`.

Every rule is one pylint message whose symbol is the rule's name and whose text starts with the
rule's code. Message ids keep the code's digits behind a `9`: DL101 -> W9101, DL203 -> W9203,
and the tool codes DL001-DL007 -> E9001-E9007 (their symbols carry a `deadline-lint-` prefix,
since pylint already owns `syntax-error`). pylint requires the two digits after the letter to be
the same for every message of one checker, so each rule family (each hundreds digit) is its own
checker class; all are named `deadline-lint`, so `--enable=deadline-lint` and
`--disable=deadline-lint` switch every message at once.

The engine runs once per module (the first active family checker runs it, the others reuse the
result), over the module's bytes; findings are reported with explicit positions, so pylint's own
`# pylint: disable=<symbol>` pragmas apply. The engine's `# noqa` and
`# deadline-lint: ignore[...]` suppressions apply too, so one file reports the same set here and
in the CLI. Opt-in rules are messages that are disabled by default.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple, Type

from deadline_lint.diagnostics import Diagnostic
from deadline_lint.engine import Checker
from deadline_lint.profile import ProfileError, resolve_profile
from deadline_lint.rules.base import all_rules
from deadline_lint.runner import apply_path_ignores
from deadline_lint.tool_codes import TOOL_CODES

if TYPE_CHECKING:  # pragma: no cover
    from pylint.lint import PyLinter

CHECKER_NAME = "deadline-lint"
PROFILE_OPTION = "deadline-profile"
USAGE_ERROR = 32  # pylint's exit status for a usage error


def message_id(code: str) -> str:
    """DL101 -> W9101; tool codes (family 0) are errors: DL001 -> E9001."""
    category = "E" if code in TOOL_CODES else "W"
    return f"{category}9{code[2:]}"


def symbol(code: str) -> str:
    if code in TOOL_CODES:
        return f"{CHECKER_NAME}-{TOOL_CODES[code].name}"
    return all_rules()[code].name


def message_definitions() -> Dict[str, Dict[str, tuple]]:
    """Per family digit: pylint `msgs` for that family's checker."""
    families: Dict[str, Dict[str, tuple]] = {}
    for code, tool in TOOL_CODES.items():
        families.setdefault("0", {})[message_id(code)] = (
            f"{code} %s", symbol(code), f"{tool.doc} (deadline-lint {code})",
        )
    for code, cls in all_rules().items():
        description = f"{cls.summary[:1].upper()}{cls.summary[1:]}. See docs/rules/{code}.md."
        options = {} if cls.default_enabled else {"default_enabled": False}
        families.setdefault(code[2], {})[message_id(code)] = (f"{code} %s", cls.name, description, options)
    return families


class _ModuleFindings:
    """The last module's diagnostics, so that each family checker does not re-run the engine."""

    module: object = None
    found: List[Diagnostic] = []


_checkers: Dict[Optional[str], Checker] = {}


def _engine_checker(profile_path: Optional[str]) -> Checker:
    checker = _checkers.get(profile_path)
    if checker is None:
        profile = resolve_profile(profile_path, Path("."))
        # Every rule runs; pylint's enable/disable and pragmas decide what is shown.
        checker = Checker(profile, select=list(all_rules()))
        _checkers[profile_path] = checker
    return checker


def _findings(node, profile_path: Optional[str]) -> List[Diagnostic]:
    if _ModuleFindings.module is not node:
        checker = _engine_checker(profile_path)
        with node.stream() as stream:
            data = stream.read()
        found = checker.check_bytes(data, node.file or node.name)
        _ModuleFindings.module, _ModuleFindings.found = node, apply_path_ignores(checker, found)
    return _ModuleFindings.found


def checker_classes() -> List[Type]:
    """One BaseRawFileChecker subclass per rule family, all named `deadline-lint`."""
    from pylint.checkers import BaseRawFileChecker
    from pylint.interfaces import HIGH

    class DeadlineLintFamily(BaseRawFileChecker):
        name = CHECKER_NAME
        family = ""

        def open(self) -> None:
            # Fail once, clearly, on a broken profile rather than once per module.
            try:
                _engine_checker(self.linter.config.deadline_profile)
            except ProfileError as exc:
                print(f"deadline-lint: {exc}", file=sys.stderr)
                raise SystemExit(USAGE_ERROR) from None

        def process_module(self, node) -> None:
            for diagnostic in _findings(node, self.linter.config.deadline_profile):
                if diagnostic.code[2] != self.family:
                    continue
                self.add_message(
                    message_id(diagnostic.code),
                    line=diagnostic.line,
                    args=(diagnostic.message,),
                    confidence=HIGH,
                    col_offset=diagnostic.column - 1,
                    end_lineno=diagnostic.end_line,
                    end_col_offset=diagnostic.end_column - 1,
                )

    classes: List[Type] = []
    for family, msgs in sorted(message_definitions().items()):
        attributes = {"family": family, "msgs": msgs, "options": ()}
        if not classes:  # the option is declared once; every family reads it from the config
            attributes["options"] = (
                (
                    PROFILE_OPTION,
                    {
                        "default": None,
                        "type": "string",
                        "metavar": "<file>",
                        "help": "deadline-lint adoption profile (YAML). Default: [tool.deadline-lint] "
                        "in the nearest pyproject.toml, else the built-in defaults.",
                    },
                ),
            )
        classes.append(type(f"DeadlineLintFamily{family}", (DeadlineLintFamily,), attributes))
    return classes


def register(linter: "PyLinter") -> None:
    for cls in checker_classes():
        linter.register_checker(cls(linter))


def mapping() -> List[Tuple[str, str, str]]:
    """(code, pylint message id, symbol) for every code, for docs and tests."""
    codes = [*TOOL_CODES, *all_rules()]
    return [(code, message_id(code), symbol(code)) for code in codes]
