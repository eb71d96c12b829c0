"""pylint adapter: `pylint --load-plugins deadline_lint.pylint_plugin`.

Every rule is one pylint message whose symbol is the rule's name and whose text starts with the
rule's code. Message ids keep the code's digits behind a `9`: DL101 -> W9101, DL203 -> W9203,
and the tool codes DL001-DL007 -> E9001-E9007 (their symbols carry a `deadline-lint-` prefix,
since pylint already owns `syntax-error`). pylint requires the two digits after the letter to be
the same for every message of one checker, so each rule family (each hundreds digit) is its own
checker class.

Two checker names, so that the README's command gives the CLI's default set:
`deadline-lint` holds the tool codes and every default-on rule, and `deadline-lint-opt-in`
holds the opt-in rules (their messages are also disabled by default). So
`--disable=all --enable=deadline-lint` turns on exactly what `deadline-lint check` reports;
add `--enable=deadline-lint-opt-in` for every opt-in rule, or `--enable=no-refuse-check` for
one. A rule runs only when one of its messages is enabled (pylint's enable/disable decide
which rules the engine runs at all, not only what is shown).

Each module gets its own profile, resolved as the CLI resolves it (`--deadline-profile` for
every module, else the nearest pyproject.toml with `[tool.deadline-lint]` walking up from the
module); its `select`, `extend_select`, `ignore`, `exclude` and `per_path_ignores` count. A
relative `deadline-profile` written in a pylint configuration file is relative to that file's
folder (on the command line: to the working directory).

The engine runs once per module (the first active family checker runs it, the others reuse the
result), over the module's bytes; findings are reported with explicit positions, so pylint's own
`# pylint: disable=<symbol>` pragmas apply. The engine's `# noqa` and
`# deadline-lint: ignore[...]` suppressions apply too, so one file reports the same set here and
in the CLI.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Type

from deadline_lint.families.registry import all_rules
from deadline_lint.frontends.rule_ids import PYLINT_CHECKER, message_id, symbol
from deadline_lint.run import api
from deadline_lint.run.api import Options, Session
from deadline_lint.settings.profile import ProfileError
from deadline_lint.support.diagnostics import Diagnostic
from deadline_lint.support.tool_codes import TOOL_CODES

if TYPE_CHECKING:  # pragma: no cover
    from pylint.lint import PyLinter

CHECKER_NAME = PYLINT_CHECKER
OPT_IN_CHECKER_NAME = "deadline-lint-opt-in"
PROFILE_OPTION = "deadline-profile"
USAGE_ERROR = 32  # pylint's exit status for a usage error


def message_definitions() -> Dict[Tuple[str, str], Dict[str, tuple]]:
    """Per (checker name, family digit): pylint `msgs` for that checker."""
    families: Dict[Tuple[str, str], Dict[str, tuple]] = {}
    for code, tool in TOOL_CODES.items():
        families.setdefault((CHECKER_NAME, "0"), {})[message_id(code)] = (
            f"{code} %s", symbol(code), f"{tool.doc} (deadline-lint {code})",
        )
    for code, cls in all_rules().items():
        description = f"{cls.summary[:1].upper()}{cls.summary[1:]}. See docs/rules/{code}.md."
        options = {} if cls.default_enabled else {"default_enabled": False}
        name = CHECKER_NAME if cls.default_enabled else OPT_IN_CHECKER_NAME
        families.setdefault((name, code[2]), {})[message_id(code)] = (f"{code} %s", cls.name, description, options)
    return families


class _ModuleFindings:
    """The last module's diagnostics, so that each family checker does not re-run the engine."""

    module: object = None
    found: List[Diagnostic] = []


def enabled_codes(linter) -> Tuple[str, ...]:
    return tuple(code for code in all_rules() if linter.is_message_enabled(message_id(code)))


def _engine_session(profile_path: Optional[str], enabled: Tuple[str, ...]) -> Session:
    # The CLI's selection under each module's profile, plus the opt-in rules pylint enabled,
    # restricted to the rules one of whose messages is enabled: the process's session for
    # those options (api.session), built once.
    opt_ins = tuple(code for code in enabled if not all_rules()[code].default_enabled)
    return api.session(Options(extend_select=opt_ins, only=enabled, profile=profile_path))


def profile_option(linter) -> Optional[str]:
    """`deadline-profile`, a relative path made relative to the configuration file that set it."""
    value = linter.config.deadline_profile
    if not value or os.path.isabs(value):
        return value
    for config_file in _config_files():
        try:
            from pylint.config.config_file_parser import _RawConfParser

            data, _ = _RawConfParser.parse_config_file(Path(config_file), False)
        except Exception:  # an unreadable config is pylint's own error to report
            continue
        if data.get(PROFILE_OPTION) == value:
            return os.path.join(os.path.dirname(os.path.abspath(config_file)), value)
    return value


def _config_files() -> List[str]:
    """The file pylint read its configuration from: `--rcfile`, else its default search."""
    found: List[str] = []
    argv = sys.argv[1:]
    for index, arg in enumerate(argv):
        if arg.startswith("--rcfile="):
            found.append(arg.split("=", 1)[1])
        elif arg == "--rcfile" and index + 1 < len(argv):
            found.append(argv[index + 1])
    try:
        from pylint.config import find_default_config_files

        found.extend(str(path) for path in find_default_config_files())
    except Exception:  # pragma: no cover - older pylint layouts
        pass
    return found


def _findings(node, session: Session) -> List[Diagnostic]:
    if _ModuleFindings.module is not node:
        path = node.file or node.name
        if node.file and session.excluded(node.file):
            found: List[Diagnostic] = []
        else:
            with node.stream() as stream:
                data = stream.read()
            found = session.lint_bytes(data, path).diagnostics
        _ModuleFindings.module, _ModuleFindings.found = node, found
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
                self._session = _engine_session(profile_option(self.linter), enabled_codes(self.linter))
                self._session.checker(os.path.join(os.getcwd(), "-"))
            except ProfileError as exc:
                print(f"deadline-lint: {exc}", file=sys.stderr)
                raise SystemExit(USAGE_ERROR) from None

        def process_module(self, node) -> None:
            try:
                found = _findings(node, self._session)
            except ProfileError as exc:
                print(f"deadline-lint: {exc}", file=sys.stderr)
                raise SystemExit(USAGE_ERROR) from None
            for diagnostic in found:
                if message_id(diagnostic.code) not in self.msgs:
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
    for (name, family), msgs in sorted(message_definitions().items()):
        attributes: Dict[str, Any] = {"name": name, "family": family, "msgs": msgs, "options": ()}
        if not classes:  # the option is declared once; every family reads it from the config
            attributes["options"] = (
                (
                    PROFILE_OPTION,
                    {
                        "default": None,
                        "type": "string",
                        "metavar": "<file>",
                        "help": "deadline-lint adoption profile (YAML) for every module. Default: per "
                        "module, [tool.deadline-lint] in the nearest pyproject.toml that has one. "
                        "Relative to the configuration file that sets it.",
                    },
                ),
            )
        suffix = "OptIn" if name == OPT_IN_CHECKER_NAME else ""
        classes.append(type(f"DeadlineLintFamily{family}{suffix}", (DeadlineLintFamily,), attributes))
    return classes


def register(linter: "PyLinter") -> None:
    for cls in checker_classes():
        linter.register_checker(cls(linter))


def mapping() -> List[Tuple[str, str, str]]:
    """(code, pylint message id, symbol) for every code, for docs and tests."""
    codes = [*TOOL_CODES, *all_rules()]
    return [(code, message_id(code), symbol(code)) for code in codes]
