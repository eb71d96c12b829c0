"""What a rule is: one small class with its code, name, message, docs and fix safety."""
from __future__ import annotations

import ast
import inspect
from typing import TYPE_CHECKING, Callable, ClassVar, Dict, FrozenSet, Optional, Tuple, Type

from deadline_lint.catalog import Catalog
from deadline_lint.diagnostics import Applicability
from deadline_lint.profile import Profile

if TYPE_CHECKING:
    from deadline_lint.context import FileContext

REGISTRY: Dict[str, Type["Rule"]] = {}

DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "Options")


class Rule:
    """Subclass, set the class attributes, implement `visit`, decorate with @register.

    The class docstring is the rule's documentation, in the sections of DOC_SECTIONS, each a
    `## Heading`; `deadline-lint explain` and docs/rules/ are generated from it.
    """

    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, also the pylint symbol
    summary: ClassVar[str]  # one line for `rules` listings
    default_enabled: ClassVar[bool] = True
    fix_applicability: ClassVar[Optional[Applicability]] = None  # the best a fix can be
    node_types: ClassVar[Tuple[Type[ast.AST], ...]] = ()
    # Types whose end the rule wants to see (`leave`), e.g. a function it judges as a whole.
    leave_node_types: ClassVar[Tuple[Type[ast.AST], ...]] = ()

    def __init__(self, profile: Profile, catalog: Catalog) -> None:
        self.profile = profile
        self.catalog = catalog

    def trigger_words(self) -> Optional[FrozenSet[str]]:
        """Words at least one of which must occur in a file's text for this rule to fire there.
        None means the rule can fire anywhere (the file is always parsed)."""
        return None

    def first_look(self, node_type: Type[ast.AST]) -> Optional[Callable[[ast.AST, "FileContext"], object]]:
        """A cheap test, (node, ctx) -> truthy, that every node of `node_type` this rule can
        report on passes: `visit` returns at once on the others. Rules that start alike offer
        the same callable object, and the engine asks it once per node for all of them,
        visiting them only where it passes. None (the default): visit every such node. The
        test must have no effect on what the rule finds; `visit` keeps its own checks, so it
        stays correct when called without the engine."""
        return None

    def visit(self, node: ast.AST, ctx: "FileContext") -> None:
        raise NotImplementedError

    def leave(self, node: ast.AST, ctx: "FileContext") -> None:
        """Called once every descendant of `node` was visited (types in leave_node_types).
        `ctx.parents` holds the node's ancestors; for a function or class `ctx.scope` is
        still its own scope."""

    @classmethod
    def documentation(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")


def register(cls: Type[Rule]) -> Type[Rule]:
    if cls.code in REGISTRY:
        raise RuntimeError(f"duplicate rule code {cls.code}")
    REGISTRY[cls.code] = cls
    return cls


def all_rules() -> Dict[str, Type[Rule]]:
    import deadline_lint.rules  # noqa: F401  (importing registers every rule)

    return dict(sorted(REGISTRY.items()))


def known_codes() -> Tuple[str, ...]:
    """Every code the tool can report, from the registry at run time (rules merged later
    count automatically) plus the tool codes DL0xx."""
    from deadline_lint.tool_codes import TOOL_CODES

    return tuple(sorted({*TOOL_CODES, *all_rules()}))
