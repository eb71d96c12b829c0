"""What a rule sees of the file being checked: its source and tree, where the walk is (scope,
ancestors), the shared analyses on demand, and `report`. It knows no rule family: every
family's facts live in `analysis/` and are asked for with `ctx.analysis(Kind)`."""
from __future__ import annotations

import ast
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    FrozenSet,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
    Type,
    TypeVar,
    cast,
)

from deadline_lint.catalog import Catalog
from deadline_lint.semantics.local.imports import bind_imports
from deadline_lint.semantics.local.resolve import Resolver
from deadline_lint.semantics.local.scopes import Scope, note_text
from deadline_lint.semantics.summary import release_own_tree
from deadline_lint.settings.profile import Profile
from deadline_lint.support.diagnostics import Applicability, Diagnostic, Edit, Fix
from deadline_lint.support.source import SourceFile

if TYPE_CHECKING:
    from deadline_lint.engine.rule import Rule

_A = TypeVar("_A")
_S = TypeVar("_S")
SCOPE_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


class FileContext:
    """Everything a rule may ask about the file being checked; analyses are computed lazily
    and at most once per file (or per scope)."""

    def __init__(self, source: SourceFile, tree: ast.Module, profile: Profile, catalog: Catalog):
        self.source = source
        self.tree = tree
        self.profile = profile
        self.catalog = catalog
        self.module_scope = Scope(tree, None)
        note_text(self.module_scope, source.text)
        self._scopes: Dict[int, Scope] = {id(tree): self.module_scope}  # every scope of the file, by node
        # Names imported from the project's own modules resolve through the file's view.
        self.resolver = Resolver(catalog, self._scopes, self)
        self.scope = self.module_scope
        self.parents: List[ast.AST] = []  # ancestors of the node being visited, innermost last
        self.diagnostics: List[Diagnostic] = []
        self._reported: Set[Tuple[str, int, int, int, int, str]] = set()
        self._analyses: Dict[type, Any] = {}
        self._states: Dict[Scope, Dict[object, Any]] = {}

    def analysis(self, kind: Type[_A]) -> _A:
        """The per-file instance of a shared analysis, built on first request as `kind(ctx)`.
        Analyses live in `analysis/`; the context knows none of them."""
        found = self._analyses.get(kind)
        if found is None:
            build = cast(Callable[[FileContext], _A], kind)  # every analysis is built from the context
            found = self._analyses[kind] = build(self)
        return found

    def state(self, owner: object, factory: Callable[[], _S], scope: Optional[Scope] = None) -> _S:
        """`owner`'s state (a rule's, by the rule) in the scope being walked, or in `scope`:
        built by `factory()` on first request, dropped when the walk leaves that scope, after
        the rules' `leave` hooks have judged it. Module-scope state lasts for the file."""
        slots = self._states.get(scope or self.scope)
        if slots is None:
            slots = self._states[scope or self.scope] = {}
        found = slots.get(owner)
        if found is None:
            found = slots[owner] = factory()
        return found

    def close(self) -> None:
        """Drop what the analyses, the scopes and the resolver remembered once the file is
        done. They hold the context (the resolver holds it as the file's view): left as
        cycles, the whole tree would wait for the cyclic collector, which walks every node
        before freeing it (tests/test_collector.py)."""
        self._analyses.clear()
        self._states.clear()
        release_own_tree()  # the semantics layer's view of this file
        self.resolver.release()  # the scopes are shared with it
        self.resolver.detach()

    @property
    def parent(self) -> Optional[ast.AST]:
        return self.parents[-1] if self.parents else None

    def report(
        self,
        rule: "Rule",
        node: ast.AST,
        message: str,
        edits: Sequence[Edit] = (),
        applicability: Optional[Applicability] = None,
        description: str = "",
        imports: Tuple[str, ...] = (),
        tags: FrozenSet[str] = frozenset(),
    ) -> None:
        """`applicability` is this finding's fix class (else the rule's `fix_applicability`);
        `tags`: what the rule's family says the fix does (`Fix.tags`)."""
        fix = None
        if edits and imports:
            bound = bind_imports(self.scope, edits, imports)
            edits, imports = bound if bound is not None else ((), ())  # prove or bail
        if edits:
            safety = applicability or rule.fix_applicability or Applicability.UNSAFE
            if safety is Applicability.SAFE and any(
                self.source.touches_comment(e.start, e.end) for e in edits
            ):
                safety = Applicability.UNSAFE  # never silently drop or move a comment
            fix = Fix(tuple(edits), safety, description or message, imports, tags)
        found = node_diagnostic(self.source, rule.code, rule.name, node, message, fix)
        key = (found.code, found.line, found.column, found.end_line, found.end_column, found.message)
        if key in self._reported:
            return  # the same finding reached twice (a shared value judged from two calls)
        self._reported.add(key)
        self.diagnostics.append(found)

    # The walk keeps `parents` itself and tells the context when it enters or leaves a scope.
    def enter_scope(self, node: ast.AST) -> None:
        self.scope = self.resolver.scope_of(node, self.scope)

    def leave_scope(self) -> None:
        self._states.pop(self.scope, None)
        self.scope = self.scope.parent or self.module_scope


def node_diagnostic(
    source: SourceFile, code: str, name: str, node: Optional[ast.AST], message: str, fix: Optional[Fix] = None
) -> Diagnostic:
    if node is None or not hasattr(node, "lineno"):
        line, col, end_line, end_col = 1, 0, 1, 0
    else:
        line = node.lineno
        col = source.char_column(line, getattr(node, "col_offset", 0))
        end_line = getattr(node, "end_lineno", None) or line
        end_col = source.char_column(end_line, getattr(node, "end_col_offset", None) or 0)
    return Diagnostic(code, name, source.path, line, col + 1, end_line, end_col + 1, message, fix)
