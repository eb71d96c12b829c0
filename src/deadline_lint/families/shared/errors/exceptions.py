"""What an exception expression admits: expiry, cancel and open-breaker errors.

The vocabulary is data (catalog/exceptions.yaml, plus the profile's `exceptions:` types, plus
names by convention for classes the catalog does not know); this module answers, for the
type of an `except` clause, a tuple, a name bound to a tuple (module, class or function level)
or a retry library's filter argument, which of those kinds it lets through and how.

Stable API (other rule families build on it; add, do not change)::

    exc = ctx.analysis(ExceptionAnalysis)           # once per file
    adm = exc.admits(expr)                           # an except type / tuple / filter argument
    adm = exc.handler(handler)                       # an ast.ExceptHandler; bare `except:` too
    adm.admits(EXPIRY)  -> Optional[Admitted]        # the best witness: a direct one first
    adm.all(EXPIRY)     -> Tuple[Admitted, ...]      # one witness per element admitting it
    adm.kinds           -> FrozenSet[str]            # subset of {EXPIRY, CANCEL, BREAKER}
    adm.elements        -> Tuple[Element, ...]       # each filter element, resolved or not
    adm.complete        -> bool                      # every element resolved to a class
    adm.catch_all       -> bool                      # bare except / BaseException
    exc.type_of(expr)   -> Optional[ExceptionType]   # one class expression, classified
    exc.status_code(expr) -> Optional[ExceptionType] # `grpc.StatusCode.DEADLINE_EXCEEDED`
    exc.status_test(compare) -> Optional[StatusTest] # `err.code() == grpc.StatusCode.X`
    exc.isinstance_test(call) -> Optional[Tuple[ast.expr, Admission]]  # `isinstance(e, T)`
    exc.vocabulary      -> ExceptionVocabulary       # catalog + profile types
    exc.witnesses(qualname, node) -> Tuple[Admitted, ...]  # what naming a class lets through

An `Admitted` names the concrete type let through (`type`, e.g. "requests.ConnectTimeout" or
"grpc.StatusCode.DEADLINE_EXCEEDED"), what the code wrote (`named`), whether the code names
that kind itself (`direct`: `requests.Timeout`, a profile type, `UpstreamTimeout` by
convention, a class defined here deriving from an expiry type) or lets it through a base
class (`direct=False`: `OSError`, `Exception`, `requests.ConnectionError`), and the node to
report on (the element inside a tuple; the handler for a bare `except:`).

Precision: an element that cannot be resolved (a call, a parameter, an attribute of an
unknown object) admits nothing and makes `complete` False; an imported class the catalog
does not know admits only what its name signals by convention. Through `Exception`, the cancel
kind is only the errors that derive from it (concurrent.futures, google-api-core, the grpc
CANCELLED status); `asyncio.CancelledError` and trio's `Cancelled` derive from BaseException.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Tuple

from deadline_lint.catalog.exceptions import (
    BREAKER,
    CANCEL,
    CONVENTION,
    EXPIRY,
    KINDS,
    SUBCLASS,
    ExceptionType,
    ExceptionVocabulary,
    profile_types,
)
from deadline_lint.families.shared.errors.admissions import CATCH_ALL, Admission, Admitted, Element, StatusTest
from deadline_lint.families.shared.errors.exception_facts import EXCEPTION_TUPLE
from deadline_lint.semantics.file import FileSemantics
from deadline_lint.semantics.local.resolve import dotted_parts
from deadline_lint.semantics.local.scopes import ASSIGN, CLASS, IMPORT, OTHER, PARAM, Binding, Scope

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

__all__ = [
    "EXPIRY", "CANCEL", "BREAKER", "KINDS", "Admitted", "Element", "Admission", "StatusTest",
    "ExceptionAnalysis", "ExceptionType", "CATCH_ALL",
]

_MAX_DEPTH = 8  # chains of names and nested tuples deeper than this are left unknown


class ExceptionAnalysis:
    """Per file; answers are remembered by node (the node is kept alive with its answer)."""

    def __init__(self, ctx: "FileView") -> None:
        self.ctx = ctx
        self.resolver = ctx.resolver
        own = profile_types(ctx.profile.exceptions)
        base = ctx.catalog.exceptions
        self.vocabulary: ExceptionVocabulary = (
            ctx.catalog.cached(ExceptionAnalysis, lambda: base.extended(own), own) if own else base
        )
        self._admissions: Dict[int, Tuple[ast.AST, Admission]] = {}
        self._types: Dict[int, Tuple[ast.AST, Optional[ExceptionType]]] = {}
        self._module_scope = ctx.module_scope
        self._imported_roots: Optional[FrozenSet[str]] = None  # top-level packages the module imports

    # -- filters ------------------------------------------------------------------------
    def handler(self, handler: ast.ExceptHandler, scope: Optional[Scope] = None) -> Admission:
        if handler.type is None:
            return self._remember(handler, Admission((self._catch_all(handler),), True))
        return self.admits(handler.type, scope)

    def admits(self, expr: ast.expr, scope: Optional[Scope] = None) -> Admission:
        known = self._admissions.get(id(expr))
        if known is not None:
            return known[1]
        elements: List[Element] = []
        complete = self._expand(expr, scope or self.ctx.scope, elements, 0)
        return self._remember(expr, Admission(tuple(elements), complete))

    def _remember(self, node: ast.AST, admission: Admission) -> Admission:
        self._admissions[id(node)] = (node, admission)
        return admission

    def _expand(self, expr: ast.expr, scope: Scope, out: List[Element], depth: int) -> bool:
        """Append the classes `expr` stands for; False when some part is unknown."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
            results = [self._expand(e, scope, out, depth + 1) for e in expr.elts]
            return all(results)
        if isinstance(expr, ast.Starred):
            return self._expand(expr.value, scope, out, depth + 1)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):  # `BASE + (X,)`
            left = self._expand(expr.left, scope, out, depth + 1)
            return self._expand(expr.right, scope, out, depth + 1) and left
        bound = self._bound_collection(expr, scope)
        if bound is not None:
            value, value_scope = bound
            return self._expand(value, value_scope, out, depth + 1)
        alternatives = self._bound_collections(expr, scope)
        if alternatives:  # `ERRORS = ()` then `ERRORS = (Timeout,)` under an optional import
            results = [self._expand(value, value_scope, out, depth + 1) for value, value_scope in alternatives]
            return all(results)
        classes = self._project_tuple(expr, scope)
        if classes is not None:  # a tuple another project module defines: judged here, on the name
            out.extend(self._named_classes(classes, expr))
            return None not in classes
        found = self.type_of(expr, scope)
        if found is None:
            out.append(Element(expr, None, ()))
            return False
        out.append(Element(expr, found.qualname, self._witnesses(found, expr)))
        return True

    def admits_classes(self, classes: Tuple[Optional[str], ...], node: ast.AST) -> Admission:
        """What a filter of these absolute class names admits (a project helper's default,
        read in its own module), every element placed on `node`, where the reader is."""
        return Admission(tuple(self._named_classes(classes, node)), None not in classes)

    def _named_classes(self, classes: Tuple[Optional[str], ...], node: ast.AST) -> List[Element]:
        """Elements for absolute class names (None: unresolved), each placed on `node`."""
        elements: List[Element] = []
        for qualname in classes:
            if qualname is None:
                elements.append(Element(node, None, ()))
                continue
            listed = self._imported(qualname)
            elements.append(Element(node, listed.qualname, self._witnesses(listed, node)))
        return elements

    def _project_tuple(self, expr: ast.expr, scope: Scope) -> Optional[Tuple[Optional[str], ...]]:
        """The classes of an exception tuple imported from a project module, else None."""
        if not isinstance(expr, (ast.Name, ast.Attribute)):
            return None
        qualname = self.resolver.qualified_name(expr, scope)
        if qualname is None:
            return None
        semantics = self.ctx.analysis(FileSemantics)
        if not semantics.names.is_project_name(qualname):
            return None
        answer = semantics.facts.answer(EXCEPTION_TUPLE, qualname)
        return answer.payload if answer is not None else None

    def _bound_collection(self, expr: ast.expr, scope: Scope) -> Optional[Tuple[ast.expr, Scope]]:
        """A name (or `self.X` / `cls.X` class attribute) bound once to a tuple, list, set or
        concatenation: the bound value and the scope it is written in."""
        binding = self._single_binding(expr, scope)
        if binding is None or binding.kind != ASSIGN:
            return None
        value = binding.value
        if isinstance(value, (ast.Tuple, ast.List, ast.Set, ast.BinOp)):
            return value, binding.scope
        return None

    def _bound_collections(self, expr: ast.expr, scope: Scope) -> List[Tuple[ast.expr, Scope]]:
        """Every value a name may hold, when each is a collection: a name assigned tuples
        more than once (judged as their union), or a parameter whose default is one
        (`def call(..., retry_on=(Timeout, ConnectionError))`)."""
        if not isinstance(expr, ast.Name):
            return []
        bindings = scope.lookup(expr.id) or []
        collections = (ast.Tuple, ast.List, ast.Set, ast.BinOp)
        values: List[Tuple[ast.expr, Scope]] = [
            (b.value, b.scope) for b in bindings if b.kind == ASSIGN and isinstance(b.value, collections)
        ]
        if len(bindings) > 1 and len(values) == len(bindings):
            return values
        if len(bindings) == 1 and bindings[0].kind == PARAM:
            default = _parameter_default(bindings[0].scope.node, bindings[0].value)
            if isinstance(default, collections) and bindings[0].scope.parent is not None:
                return [(default, bindings[0].scope.parent)]  # defaults are evaluated outside the def
        return []

    def _single_binding(self, expr: ast.expr, scope: Scope) -> Optional[Binding]:
        if isinstance(expr, ast.Name):
            bindings = scope.lookup(expr.id)
        elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            class_scope = self._class_of_receiver(expr.value.id, scope)
            if class_scope is None:
                return None
            bindings = class_scope.bindings().get(expr.attr)
        else:
            return None
        return bindings[0] if bindings and len(bindings) == 1 else None

    def _class_of_receiver(self, name: str, scope: Scope) -> Optional[Scope]:
        """The class whose body `self.X` / `cls.X` / `ClassName.X` reads, inside its methods."""
        method: Optional[Scope] = scope
        while method is not None and method.enclosing_class is None:
            method = method.parent if method.kind != CLASS else None
        if method is None:
            return None
        class_scope = method.enclosing_class
        params = method.function_params()
        if params and params[0].arg == name:
            return class_scope
        if class_scope is not None and getattr(class_scope.node, "name", None) == name:
            return class_scope
        return None

    # -- single classes ------------------------------------------------------------------
    def type_of(self, expr: ast.expr, scope: Optional[Scope] = None) -> Optional[ExceptionType]:
        """The class `expr` names, classified; None when it cannot be resolved. A resolved
        class that is none of the kinds comes back with `kind` None."""
        known = self._types.get(id(expr))
        if known is not None:
            return known[1]
        found = self._type_of(expr, scope or self.ctx.scope, 0)
        self._types[id(expr)] = (expr, found)
        return found

    def _type_of(self, expr: ast.expr, scope: Scope, depth: int) -> Optional[ExceptionType]:
        if depth > _MAX_DEPTH or dotted_parts(expr) is None:
            return None
        qualname = self.resolver.qualified_name(expr, scope)
        if qualname is not None:
            return self._imported(qualname)
        binding = self._single_binding(expr, scope) if isinstance(expr, ast.Name) else None
        if binding is None:
            return None
        value = binding.value  # an expression for every ASSIGN binding
        if binding.kind == ASSIGN and isinstance(value, ast.expr) and dotted_parts(value) is not None:
            return self._type_of(value, binding.scope, depth + 1)  # `Alias = requests.Timeout`
        if binding.kind == OTHER and isinstance(binding.value, ast.ClassDef):
            return self._defined_here(binding.value, binding.scope, depth)
        return None

    def _imported(self, qualname: str) -> ExceptionType:
        vocabulary = self.vocabulary
        canonical = vocabulary.canonical(qualname)
        listed = vocabulary.types.get(canonical)
        if listed is not None:
            return listed
        return ExceptionType(canonical, vocabulary.convention_kind(canonical), source=CONVENTION)

    def _defined_here(self, node: ast.ClassDef, scope: Scope, depth: int) -> ExceptionType:
        """A class defined in this file: of a kind when a base is, else by its name."""
        for base in node.bases:
            found = self._type_of(base, scope, depth + 1)
            if found is not None and found.kind is not None:
                return ExceptionType(node.name, found.kind, (found.qualname,), source=SUBCLASS)
        return ExceptionType(node.name, self.vocabulary.convention_kind(node.name), source=CONVENTION)

    def witnesses(self, qualname: str, node: ast.AST) -> Tuple[Admitted, ...]:
        """What naming `qualname` (a class known to the vocabulary) lets through, one witness
        per kind, reported on `node`: for "retries everything" (`Exception`)."""
        found = self.vocabulary.get(qualname) or ExceptionType(qualname, None)
        return self._witnesses(found, node)

    def _witnesses(self, found: ExceptionType, node: ast.AST) -> Tuple[Admitted, ...]:
        witnesses = []
        for kind in KINDS:
            if found.kind == kind:
                witnesses.append(
                    Admitted(kind, found.qualname, found.qualname, True, node, found.source, found.status)
                )
                continue
            candidates = [t for t in self.vocabulary.admitted(found.qualname) if t.kind == kind]
            if candidates:
                best = min(candidates, key=self._relevance)
                witnesses.append(Admitted(kind, best.qualname, found.qualname, False, node, best.source, best.status))
        return tuple(witnesses)

    def _relevance(self, exc: ExceptionType) -> int:
        """Prefer, as the witness named in a message, a type from a library this module
        imports (by its imports, not its text: `googleapiclient` is not `google`, whose
        `api_core` types that client never raises, and a comment imports nothing)."""
        root = exc.qualname.split(".")[0] if "." in exc.qualname else ""
        if not root:
            return 1
        if self._imported_roots is None:
            self._imported_roots = frozenset(
                str(binding.value).split(".")[0]
                for bindings in self._module_scope.bindings().values()
                for binding in bindings
                if binding.kind == IMPORT
            )
        return 0 if root in self._imported_roots else 2

    def _catch_all(self, node: ast.AST) -> Element:
        found = self.vocabulary.types[CATCH_ALL]
        return Element(node, CATCH_ALL, self._witnesses(found, node))

    # -- status codes ---------------------------------------------------------------------
    def status_code(self, expr: ast.expr, scope: Optional[Scope] = None) -> Optional[ExceptionType]:
        """`grpc.StatusCode.DEADLINE_EXCEEDED` (any import spelling): the listed status."""
        if not isinstance(expr, ast.Attribute):
            return None
        found = self.type_of(expr, scope)
        return found if found is not None and found.status else None

    def status_test(self, node: ast.Compare, scope: Optional[Scope] = None) -> Optional[StatusTest]:
        """`x == grpc.StatusCode.X`, `x is ...`, `x != ...`, `x in (A, B)`, either side."""
        if len(node.ops) != 1:
            return None
        op = node.ops[0]
        left, right = node.left, node.comparators[0]
        if isinstance(op, (ast.In, ast.NotIn)):
            if not isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                return None
            statuses = [self.status_code(e, scope) for e in right.elts]
            found = tuple(s for s in statuses if s is not None)
            return StatusTest(found, left, isinstance(op, ast.NotIn)) if found else None
        if not isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            return None
        for status_side, subject in ((right, left), (left, right)):
            status = self.status_code(status_side, scope)
            if status is not None:
                return StatusTest((status,), subject, isinstance(op, (ast.NotEq, ast.IsNot)))
        return None

    def isinstance_test(self, call: ast.Call, scope: Optional[Scope] = None) -> Optional[Tuple[ast.expr, Admission]]:
        """`isinstance(err, T)`: the subject and what T admits."""
        if len(call.args) != 2 or call.keywords:
            return None
        if self.resolver.qualified_name(call.func, scope or self.ctx.scope) != "isinstance":
            return None
        return call.args[0], self.admits(call.args[1], scope)


def _parameter_default(function: ast.AST, param: object) -> Optional[ast.expr]:
    """The default value of `param` in `function`'s signature, if it has one."""
    args = getattr(function, "args", None)
    if not isinstance(args, ast.arguments):
        return None
    positional = [*args.posonlyargs, *args.args]
    offset = len(positional) - len(args.defaults)
    for index, arg in enumerate(positional):
        if arg is param and index >= offset:
            return args.defaults[index - offset]
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        if arg is param:
            return default
    return None
