"""What a budget object's methods do: which read the raw remainder (in seconds or in
milliseconds), which check or refuse, and the role of a call on a budget in scope, from the
receiver's budget type (budget_types.py) and the catalog's context methods."""
from __future__ import annotations

import ast
from typing import Optional

from deadline_lint.catalog import Catalog
from deadline_lint.families.shared.budget.budget_types import (
    CHECK_ROLES,
    GRPC_CONTEXT,
    HOP_TIMEOUT,
    LAMBDA_CONTEXT,
    OBJECT,
    RAW_REMAINDER,
    RAW_REMAINDER_MS,
    REFUSE_CHECK,
    BudgetType,
    BudgetTypes,
)
from deadline_lint.families.shared.budget.scope_budget import DERIVED, Budget, receiver_text


class BudgetMethods:
    """Per file: the budget types' methods by role."""

    def __init__(self, catalog: Catalog, budget_types: BudgetTypes) -> None:
        self.budget_types = budget_types
        self.context_methods = catalog.budget.context_methods
        self.refuse_methods = catalog.budget.refuse_methods
        # Methods that read the raw remainder on some budget type (a name assigned from one
        # holds remaining seconds), and those that check or refuse (DL106).
        known = [budget_types.default, budget_types.grpc, budget_types.aws_lambda]
        known.extend(t for t in (budget_types.type_named(n) for n in budget_types.names) if t is not None)
        self.raw_methods = self.context_methods | frozenset(m for t in known for m in t.methods(RAW_REMAINDER))
        self.raw_ms_methods = frozenset(m for t in known for m in t.methods(RAW_REMAINDER_MS))
        self.check_methods = self.refuse_methods | frozenset(m for t in known for m in t.methods(*CHECK_ROLES))

    def millis_operand(self, value: ast.expr) -> Optional[ast.expr]:
        """`x.get_remaining_time_in_millis() / 1000` (or `/ 1000.0`): the call."""
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div):
            right = value.right
            if isinstance(right, ast.Constant) and right.value in (1000, 1000.0) and isinstance(value.left, ast.Call):
                func = value.left.func
                if isinstance(func, ast.Attribute) and func.attr in self.raw_ms_methods:
                    return value.left
        return None

    def role(self, call: ast.AST, budget: Optional[Budget]) -> Optional[str]:
        """The role of `call` as a method of a budget object in scope (`budget.remaining()`:
        RAW_REMAINDER, `context.get_remaining_time_in_millis()`: RAW_REMAINDER_MS,
        `budget.check()`: REFUSE_CHECK, ...), from the receiver's budget type."""
        if budget is None or not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            return None
        text = receiver_text(call.func.value)
        if text is None or text not in budget.names:
            return None
        method = call.func.attr
        budget_type = budget.type_of(text) or self._type_of_kind(budget.kind_of(text))
        found = budget_type.role_of(method) if budget_type is not None else None
        if found is None and method in self.context_methods:
            return RAW_REMAINDER
        if found is None and method in self.refuse_methods:
            return REFUSE_CHECK
        return found

    def remainder_may_be_none(self, call: ast.AST, budget: Optional[Budget]) -> bool:
        """A raw remainder that is None when the caller set no deadline: a gRPC servicer
        context's `time_remaining()` (a method the catalog lists as a context's, on a receiver
        whose type gives it no other role)."""
        if self.role(call, budget) != RAW_REMAINDER or budget is None:
            return False
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)  # `role` answered
        text = receiver_text(call.func.value)
        budget_type = (budget.type_of(text) or self._type_of_kind(budget.kind_of(text))) if text else None
        if budget_type is not None and budget_type.kind == GRPC_CONTEXT:
            return True
        return call.func.attr in self.context_methods and (
            budget_type is None or budget_type.role_of(call.func.attr) is None
        )

    def hop_timeout_method(self, call: ast.AST, budget: Optional[Budget]) -> Optional[str]:
        """For a raw-remainder call (`budget.remaining()`), the method of the receiver's budget
        type in the hop-timeout role (`timeout`: the margin already off), if it has one."""
        if self.role(call, budget) != RAW_REMAINDER or budget is None:
            return None
        # (`role` answers only for a method call on a name the budget knows)
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            return None
        text = receiver_text(call.func.value)
        if text is None:
            return None
        budget_type = budget.type_of(text) or self._type_of_kind(budget.kind_of(text))
        methods = sorted(budget_type.methods(HOP_TIMEOUT)) if budget_type is not None else []
        if not methods:
            return None
        return "timeout" if "timeout" in methods else methods[0]

    def _type_of_kind(self, kind: Optional[str]) -> Optional[BudgetType]:
        if kind == GRPC_CONTEXT:
            return self.budget_types.grpc
        if kind == LAMBDA_CONTEXT:
            return self.budget_types.aws_lambda
        if kind in (OBJECT, DERIVED):
            return self.budget_types.default
        return None

    def raw_remainder_call(self, value: ast.AST, budget: Optional[Budget]) -> bool:
        """`budget.remaining()`, `context.time_remaining()`, or a millisecond remainder
        scaled to seconds (`context.get_remaining_time_in_millis() / 1000`): no margin off."""
        if isinstance(value, ast.BinOp):
            inner = self.millis_operand(value)
            return inner is not None and self.role(inner, budget) == RAW_REMAINDER_MS
        if not isinstance(value, ast.Call) or value.args or value.keywords:
            return False
        return self.role(value, budget) == RAW_REMAINDER
