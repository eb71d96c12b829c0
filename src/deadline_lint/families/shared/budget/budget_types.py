"""Budget types: which classes carry a request's remaining time, and what each of their
methods does (its *role*).

Built in (catalog `budget.yaml`): gRPC's `ServicerContext` (sync and asyncio) and AWS Lambda's
context; from the profile: `budget.types` with `budget.roles` (or `budget.type_roles` for one
type). Roles:

- RAW_REMAINDER: seconds left, no hop margin taken off (`context.time_remaining()`,
  `budget.remaining()`): forwarding it as is is DL104;
- RAW_REMAINDER_MS: the same in milliseconds (`context.get_remaining_time_in_millis()`);
- HOP_TIMEOUT: the margin already taken off (`budget.timeout()`);
- EXPIRED_CHECK / REFUSE_CHECK: asking or refusing (DL106 counts both as the refuse check);
- HEADER_VALUE: what goes on the wire.

`BudgetTypes.type_named(qualname)` is the one place that decides "this class is a budget
type". It knows the catalog's and the profile's types; `add` teaches it more. Given the
project (`see_project`, the semantics layer's names), a project name it does not know is
followed to the class it stands for: a type re-exported under another name (`from budgets
import Allowance`, defined in `budgets.deadline`) and a project class deriving from a budget
type, in any module (`class RequestAllowance(Allowance)`), have the roles of that type.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, Mapping, Optional, Tuple

from deadline_lint.catalog import Catalog
from deadline_lint.semantics.local.resolve import dotted_parts
from deadline_lint.settings.profile import Profile
from deadline_lint.support.records import dataclass

if TYPE_CHECKING:
    from deadline_lint.semantics.local.resolve import Resolver
    from deadline_lint.semantics.local.scopes import Scope
    from deadline_lint.semantics.summary import Names

RAW_REMAINDER, RAW_REMAINDER_MS, HOP_TIMEOUT = "raw_remainder", "raw_remainder_ms", "hop_timeout"
EXPIRED_CHECK, REFUSE_CHECK, HEADER_VALUE = "expired_check", "refuse_check", "header_value"
CHECK_ROLES = frozenset({EXPIRED_CHECK, REFUSE_CHECK})
RAW_ROLES = frozenset({RAW_REMAINDER, RAW_REMAINDER_MS})

# Budget kinds (which fix template applies; budget.py names them too).
OBJECT, GRPC_CONTEXT, LAMBDA_CONTEXT = "object", "grpc_context", "lambda_context"


_WRAPPERS = frozenset({"Optional", "ContextVar", "Final", "ClassVar"})


@dataclass(frozen=True)
class BudgetType:
    name: str  # as the catalog or profile spells it
    kind: str  # OBJECT / GRPC_CONTEXT / LAMBDA_CONTEXT
    roles: Tuple[Tuple[str, FrozenSet[str]], ...]  # (role, methods)

    def role_of(self, method: str) -> Optional[str]:
        for role, methods in self.roles:
            if method in methods:
                return role
        return None

    def methods(self, *roles: str) -> FrozenSet[str]:
        return frozenset(m for role, methods in self.roles if role in roles for m in methods)


def _roles(mapping: Mapping[str, object]) -> Tuple[Tuple[str, FrozenSet[str]], ...]:
    return tuple((role, frozenset(methods or ())) for role, methods in sorted(mapping.items()))  # type: ignore[call-overload]


class BudgetTypes:
    """The budget types a check knows, by qualified name and by bare class name."""

    def __init__(self, catalog: Catalog, profile: Profile) -> None:
        data = catalog.data.get("budget", {}) or {}
        kind_roles = data.get("roles", {}) or {}
        self._types: Dict[str, BudgetType] = {}
        for name, kind in (data.get("types", {}) or {}).items():
            self.add(name, BudgetType(name, kind, _roles(kind_roles.get(kind, {}) or {})))
        for name in profile.budget.types:
            roles = profile.budget.type_roles.get(name) or profile.budget.roles
            self._types.setdefault(name, BudgetType(name, OBJECT, _roles(roles)))
        # A profile type without a `type_roles` entry (and a budget known only by its name)
        # has the profile's roles.
        self.default = BudgetType("", OBJECT, _roles(profile.budget.roles))
        self.grpc = BudgetType("grpc.ServicerContext", GRPC_CONTEXT, _roles(kind_roles.get(GRPC_CONTEXT, {}) or {}))
        self.aws_lambda = BudgetType("LambdaContext", LAMBDA_CONTEXT, _roles(kind_roles.get(LAMBDA_CONTEXT, {}) or {}))
        self._project: Optional[Callable[[], "Names"]] = None
        self._through_project: Dict[str, Optional[BudgetType]] = {}

    # -- the seam --------------------------------------------------------------------
    def add(self, qualname: str, budget_type: BudgetType) -> None:
        """Know one more budget type (a class defined in another module of the project)."""
        self._types[qualname] = budget_type

    def see_project(self, names: Callable[[], "Names"]) -> None:
        """Follow project names through the project's modules (`names` builds the file's view
        of them when first needed)."""
        self._project = names

    def type_named(self, qualname: Optional[str]) -> Optional[BudgetType]:
        """The budget type a class's qualified name (or bare name) denotes, or None."""
        if not qualname:
            return None
        found = self._known(qualname)
        if found is None and self._project is not None and "." in qualname:
            if qualname not in self._through_project:
                self._through_project[qualname] = self._follow(qualname, self._project())
            found = self._through_project[qualname]
        return found

    def _known(self, qualname: str) -> Optional[BudgetType]:
        found = self._types.get(qualname)
        if found is None:
            found = self._types.get(qualname.rpartition(".")[2])
        return found

    def _follow(self, qualname: str, names: "Names") -> Optional[BudgetType]:
        """The budget type a project class is or derives from. A module is parsed only when
        its text spells a known type's name (most annotations name no budget)."""
        if not names.is_project_name(qualname):
            return None
        tails = {name.rpartition(".")[2] for name in self._types}
        defining = names.defining_module(qualname)
        if defining is None or not any(tail in defining.text for tail in tails):
            return None
        klass = names.symbol(qualname)
        if klass is None or not klass.is_class:
            return None
        for owner in names.mro(klass):
            found = self._known(owner.qualname)
            if found is not None:
                return found
            for base in names.bases_of(owner):
                found = self._known(base) if base is not None else None
                if found is not None:
                    return found
        return None

    def of_annotation(
        self, annotation: Optional[ast.expr], scope: "Scope", resolver: "Resolver",
    ) -> Optional[BudgetType]:
        """The budget type an annotation names: `Budget`, `mod.Budget`, `"Budget"`,
        `Optional[Budget]`, `Budget | None`, `ContextVar[Budget]` (the argument of a
        one-argument generic)."""
        if annotation is None:
            return None
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            text = annotation.value.replace(" ", "").removeprefix("Optional[").removesuffix("]")
            return self.type_named(text.split("|")[0])
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            left = self.of_annotation(annotation.left, scope, resolver)
            return left or self.of_annotation(annotation.right, scope, resolver)
        if isinstance(annotation, ast.Subscript):
            # `Optional[Budget]`, `ContextVar[Budget]`, `Final[Budget]`: not `List[Budget]`.
            parts = dotted_parts(annotation.value)
            inner = annotation.slice
            if not parts or parts[-1] not in _WRAPPERS or isinstance(inner, ast.Tuple):
                return None
            return self.of_annotation(inner, scope, resolver)
        found = self.type_named(resolver.annotation_class(annotation, scope))
        if found is None:
            parts = dotted_parts(annotation)  # a class of this module, or one not imported
            found = self.type_named(".".join(parts)) if parts else None
        return found

    @property
    def names(self) -> FrozenSet[str]:
        return frozenset(self._types)

    def kinds(self) -> Dict[str, str]:
        """Type name -> kind (what budget.py's `types` table held)."""
        return {name: t.kind for name, t in self._types.items()}
