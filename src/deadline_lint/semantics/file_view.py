"""What rules and analyses see of the file being checked, as protocols. They are typed against
these, not against `context.FileContext`, so the analyses the context builds on never import
the context back (the import graph has no cycle, `TYPE_CHECKING` edges included)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, FrozenSet, List, Optional, Protocol, Sequence, Tuple, Type, TypeVar

if TYPE_CHECKING:
    from deadline_lint.catalog import Catalog
    from deadline_lint.semantics.local.resolve import Resolver
    from deadline_lint.semantics.local.scopes import Scope
    from deadline_lint.settings.profile import Profile
    from deadline_lint.support.diagnostics import Applicability, Diagnostic, Edit
    from deadline_lint.support.source import SourceFile

_A = TypeVar("_A")
_S = TypeVar("_S")


class AnalysisInputs(Protocol):
    """What an analysis may be built from: the file's resolver, catalog and profile."""

    resolver: "Resolver"
    catalog: "Catalog"
    profile: "Profile"


class Reporter(Protocol):
    """What a finding needs of the rule making it (read-only: a rule sets them on its class)."""

    @property
    def code(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def fix_applicability(self) -> Optional["Applicability"]: ...


class FileView(Protocol):
    """The file being checked and where the walk is in it (implemented by `FileContext`)."""

    source: "SourceFile"
    tree: ast.Module
    profile: "Profile"
    catalog: "Catalog"
    resolver: "Resolver"
    module_scope: "Scope"
    scope: "Scope"
    parents: List[ast.AST]
    diagnostics: List["Diagnostic"]

    @property
    def parent(self) -> Optional[ast.AST]: ...

    def analysis(self, kind: Type[_A]) -> _A: ...

    def state(self, owner: object, factory: Callable[[], _S], scope: Optional["Scope"] = None) -> _S: ...

    def report(
        self,
        rule: Reporter,
        node: ast.AST,
        message: str,
        edits: Sequence["Edit"] = (),
        applicability: Optional["Applicability"] = None,
        description: str = "",
        imports: Tuple[str, ...] = (),
        tags: FrozenSet[str] = frozenset(),
    ) -> None: ...
