"""What a rule is: one small class with its code, name, message, docs and fix safety. A leaf:
importing it loads no rule (`families.registry` loads them all)."""
from __future__ import annotations

import ast
import inspect
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Dict, Mapping, Optional, Tuple, Type

from deadline_lint.catalog import Catalog
from deadline_lint.engine.requires import Look, Scoped
from deadline_lint.settings.profile import Profile
from deadline_lint.support.diagnostics import Applicability

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

REGISTRY: Dict[str, Type["Rule"]] = {}

_LEGACY_NEEDS = ("requires", "visit_requires", "body_requires")

DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "Options")


class Rule:
    """Subclass, set the class attributes, implement `visit_<Type>` for each type of
    `node_types` (or one `visit` for all of them), decorate with @register.

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
    # What the prefilter asks before the rule runs (the vocabulary and the scopes are
    # `requires.py`): `needs` holds at most one need per scope, `in_file(...)` of the file's
    # text, `on_visits(..., ast.Call)` of it for those visits, `in_body(...)` of a function's
    # or class's text (none declared: every file, visit and body is walked); `first_looks`
    # are the shared per-node tests. Each must be sound: a file, body or node failing it holds
    # nothing the rule reports.
    needs: ClassVar[Tuple[Scoped, ...]] = ()
    first_looks: ClassVar[Mapping[Type[ast.AST], Look]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The declarations `needs` replaced would be ignored without a word: refuse them.
        legacy = [name for name in _LEGACY_NEEDS if name in vars(cls)]
        if legacy:
            raise TypeError(f"{cls.__name__} declares {', '.join(legacy)}: declare `needs` (engine/requires.py)")

    def __init__(self, profile: Profile, catalog: Catalog) -> None:
        self.profile = profile
        self.catalog = catalog

    def visit(self, node: ast.AST, ctx: "FileView") -> None:
        raise NotImplementedError

    def visitor(self, node_type: Type[ast.AST]) -> Callable[[Any, "FileView"], None]:
        """The method the engine calls for nodes of `node_type`: `visit_<Type>` (for example
        `visit_Call(self, node: ast.Call, ctx)`, typed with its node) when the rule has one,
        else `visit`."""
        handler: Callable[[Any, "FileView"], None] = getattr(self, f"visit_{node_type.__name__}", self.visit)
        return handler

    def leaver(self, node_type: Type[ast.AST]) -> Callable[[Any, "FileView"], None]:
        """`leave_<Type>` when the rule has one, else `leave`."""
        handler: Callable[[Any, "FileView"], None] = getattr(self, f"leave_{node_type.__name__}", self.leave)
        return handler

    def leave(self, node: ast.AST, ctx: "FileView") -> None:
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


def registered_rules() -> Dict[str, Type[Rule]]:
    """Every rule registered so far, by code. The engine knows no family: whoever builds a
    checker imports `deadline_lint.families.registry` first, and an empty table means it did not."""
    if not REGISTRY:
        raise RuntimeError("no rule is registered: import deadline_lint.families.registry first")
    return dict(sorted(REGISTRY.items()))
