"""The engine: read a file once, parse it once, walk it once, dispatch each node to the rules
that asked for its type, and return diagnostics. Every front end sits on `Checker`."""
from __future__ import annotations

import ast
import contextlib
import gc
import os
import sys
import threading
import traceback
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Type, TypeVar

from deadline_lint.analysis.budget import Budget, BudgetAnalysis
from deadline_lint.analysis.imports import bind_imports
from deadline_lint.analysis.outbound import (
    OutboundCall,
    classify_call,
    classify_construction,
    file_methods,
    may_be_listed,
)
from deadline_lint.analysis.resolve import Resolver
from deadline_lint.analysis.scopes import Scope
from deadline_lint.catalog import Catalog, load_catalog
from deadline_lint.diagnostics import Applicability, Diagnostic, Edit, Fix
from deadline_lint.profile import Profile, code_selected, default_profile
from deadline_lint.rules.base import Rule, all_rules
from deadline_lint.source import DecodeError, SourceFile, decode_source
from deadline_lint.tool_codes import TOOL_CODES

MAX_FILE_BYTES = 10 * 1024 * 1024
_OWN_FRAMES = 10  # thread bootstrap and ast.parse: what a fresh-stack parse adds to a script's
_A = TypeVar("_A")

# Fields that never hold a node a rule cares about: expression contexts and operators.
_SKIPPED_FIELDS = frozenset({"ctx", "op", "ops", "type_ignores"})
_FIELDS_BY_TYPE: Dict[type, Tuple[str, ...]] = {}
_SCOPE_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_WITH_TYPES = (ast.With, ast.AsyncWith)
_STATEFUL_TYPES = frozenset(_SCOPE_TYPES + _WITH_TYPES)  # nodes the walk must also leave
# Nodes that never have children: not even pushed unless a selected rule asks for them.
_LEAF_TYPES = frozenset({ast.Name, ast.Constant, ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal, ast.alias})


def _child_fields(node_type: type) -> Tuple[str, ...]:
    fields = _FIELDS_BY_TYPE.get(node_type)
    if fields is None:
        fields = tuple(f for f in node_type._fields if f not in _SKIPPED_FIELDS)  # type: ignore[attr-defined]
        _FIELDS_BY_TYPE[node_type] = fields
    return fields


class FileContext:
    """Everything a rule may ask about the file being checked; analyses are computed lazily
    and at most once per file (or per scope)."""

    def __init__(self, source: SourceFile, tree: ast.Module, checker: "Checker"):
        self.source = source
        self.tree = tree
        self.profile = checker.profile
        self.catalog = checker.catalog
        self.module_scope = Scope(tree, None)
        self._scopes_by_node: Dict[int, Scope] = {id(tree): self.module_scope}
        self.resolver = Resolver(self.catalog, self._scopes_by_node)
        self.budgets = BudgetAnalysis(self.resolver, self.catalog, self.profile)
        self.scope = self.module_scope
        self.parents: List[ast.AST] = []  # ancestors of the node being visited, innermost last
        self._cancel_depth: Dict[int, int] = {}  # per scope: enclosing `with <cancel scope>` count
        self._cancel_nodes: set = set()  # ids of the `with` statements that opened a cancel scope
        self._outbound: Dict[int, Optional[OutboundCall]] = {}
        self._constructions: Dict[int, Optional[OutboundCall]] = {}
        # Receivers of unlisted method names only matter when a gRPC stub could be the receiver.
        self._stubs_possible = any(p.module_suffix in source.text for p in self.catalog.stubs)
        self._file_methods: Optional[frozenset] = None  # of the clients this file can build
        self._sites: Dict[int, Tuple[OutboundCall, ...]] = {}
        self.diagnostics: List[Diagnostic] = []
        self._checker = checker
        self._analyses: Dict[type, object] = {}

    def analysis(self, kind: Type[_A]) -> _A:
        """The per-file instance of a shared analysis, built on first request as `kind(ctx)`.
        Analyses live in `analysis/`; the engine knows none of them."""
        found = self._analyses.get(kind)
        if found is None:
            found = self._analyses[kind] = kind(self)
        return found  # type: ignore[return-value]

    # -- questions rules ask ----------------------------------------------------
    @property
    def parent(self) -> Optional[ast.AST]:
        return self.parents[-1] if self.parents else None

    def outbound_call(self, call: ast.Call) -> Optional[OutboundCall]:
        key = id(call)
        if key not in self._outbound:
            self._outbound[key] = classify_call(
                call, self.scope, self.resolver, self.catalog, self._stubs_possible, self._client_methods()
            )
        return self._outbound[key]

    def _client_methods(self) -> frozenset:
        if self._file_methods is None:
            self._file_methods = file_methods(self.catalog, self.source.text)
        return self._file_methods

    def client_construction(self, call: ast.Call) -> Optional[OutboundCall]:
        """The call builds a client whose constructor takes a timeout (`httpx.Client(...)`,
        `redis.Redis(...)`): that view of it, with api.kind == "client"; else None."""
        key = id(call)
        if key not in self._constructions:
            self._constructions[key] = classify_construction(call, self.scope, self.resolver, self.catalog)
        return self._constructions[key]

    def outbound_sites(self, call: ast.Call) -> Tuple[OutboundCall, ...]:
        """Every view of `call` that takes a timeout: as an outbound call and as a client's
        construction (a factory such as `asyncpg.connect` is both); () for most calls."""
        key = id(call)
        sites = self._sites.get(key)
        if sites is None:
            sites = ()
            # A first look: any method name at all when a gRPC stub may be the receiver.
            methods = None if self._stubs_possible else self._client_methods() | self.catalog.returning_methods
            if may_be_listed(call.func, self.scope, self.resolver, self.catalog, methods):
                views = (self.outbound_call(call), self.client_construction(call))
                sites = tuple(view for view in views if view is not None)
            self._sites[key] = sites
        return sites

    def budget(self) -> Optional[Budget]:
        return self.budgets.budget_of(self.scope)

    def in_cancel_scope(self) -> bool:
        return self._cancel_depth.get(id(self.scope), 0) > 0

    def is_awaited(self, call: ast.Call) -> bool:
        """Awaited directly, or entered as `async with call(...)` / iterated by `async for`."""
        parent = self.parent
        if isinstance(parent, ast.Await):
            return True
        if isinstance(parent, ast.withitem) and len(self.parents) > 1:
            return isinstance(self.parents[-2], ast.AsyncWith)
        return isinstance(parent, ast.AsyncFor) and parent.iter is call

    def bounded_by_cancel_scope(self, call: ast.Call) -> bool:
        return self.in_cancel_scope() and self.is_awaited(call)

    def timeout_expression(self) -> Tuple[str, bool]:
        """The expression a fix inserts as a timeout, and whether it comes from a budget
        (True) or is the profile's edge default (False)."""
        budget = self.budget()
        if budget is not None:
            expression = budget.timeout_expression(self.profile)
            if expression is not None:
                return expression, True
        return self.profile.render("edge_expression"), False

    # -- reporting -----------------------------------------------------------------
    def report(
        self,
        rule: Rule,
        node: ast.AST,
        message: str,
        edits: Sequence[Edit] = (),
        applicability: Optional[Applicability] = None,
        description: str = "",
        imports: Tuple[str, ...] = (),
    ) -> None:
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
            fix = Fix(tuple(edits), safety, description or message, imports)
        self.diagnostics.append(_diagnostic(self.source, rule.code, rule.name, node, message, fix))

    # -- walking -------------------------------------------------------------------
    # The walk keeps `parents` itself; these two see only scopes and `with` statements.
    def _enter(self, node: ast.AST) -> None:
        if isinstance(node, _SCOPE_TYPES):
            self.scope = self.resolver.scope_of(node, self.scope)
        elif isinstance(node, _WITH_TYPES):
            if any(self.budgets.is_cancel_scope(item, self.scope) for item in node.items):
                key = id(self.scope)
                self._cancel_depth[key] = self._cancel_depth.get(key, 0) + 1
                self._cancel_nodes.add(id(node))

    def _leave(self, node: ast.AST) -> None:
        if isinstance(node, _SCOPE_TYPES):
            self.scope = self.scope.parent or self.module_scope
        elif id(node) in self._cancel_nodes:
            self._cancel_depth[id(self.scope)] -= 1


def _diagnostic(
    source: SourceFile, code: str, name: str, node: Optional[ast.AST], message: str, fix: Optional[Fix] = None
) -> Diagnostic:
    if node is None or not hasattr(node, "lineno"):
        line, col, end_line, end_col = 1, 0, 1, 0
    else:
        line = node.lineno  # type: ignore[attr-defined]
        col = source.char_column(line, node.col_offset)  # type: ignore[attr-defined]
        end_line = getattr(node, "end_lineno", None) or line
        end_col = source.char_column(end_line, getattr(node, "end_col_offset", None) or 0)
    return Diagnostic(code, name, source.path, line, col + 1, end_line, end_col + 1, message, fix)


def tool_diagnostic(path: str, code: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    return Diagnostic(code, TOOL_CODES[code].name, path, line, column, line, column, message)


class Checker:
    """Selected rules, instantiated once per run (not per file), with their dispatch table."""

    def __init__(
        self,
        profile: Optional[Profile] = None,
        select: Iterable[str] = (),
        ignore: Iterable[str] = (),
        extend_select: Iterable[str] = (),
        catalog: Optional[Catalog] = None,
        apply_noqa: bool = True,
    ) -> None:
        self.profile = profile or default_profile()
        self.catalog = catalog or load_catalog(self.profile["outbound"])
        self.apply_noqa = apply_noqa
        select = tuple(select) or tuple(self.profile["select"])
        ignore = tuple(ignore) + tuple(self.profile["ignore"])
        self.rules: List[Rule] = [
            cls(self.profile, self.catalog)
            for code, cls in all_rules().items()
            if rule_enabled(cls, select, ignore, tuple(extend_select))
        ]
        self.dispatch: Dict[Type[ast.AST], List[Tuple[Rule, Callable]]] = {}
        # End-of-node hooks (a rule judging a whole scope once it has seen all of it).
        self.leave_dispatch: Dict[Type[ast.AST], List[Tuple[Rule, Callable]]] = {}
        for rule in self.rules:
            for node_type in rule.node_types:
                self.dispatch.setdefault(node_type, []).append((rule, rule.visit))
            for node_type in rule.leave_node_types:
                self.leave_dispatch.setdefault(node_type, []).append((rule, rule.leave))
        self._tracked_types = _STATEFUL_TYPES.union(self.leave_dispatch)
        words: Optional[set] = set()
        for rule in self.rules:
            rule_words = rule.trigger_words()
            if rule_words is None:
                words = None
                break
            words.update(rule_words)  # type: ignore[union-attr]
        self.trigger_words: Optional[Tuple[str, ...]] = tuple(sorted(words)) if words is not None else None
        # A finer second look, for rules that offer one (an optional `text_filter()` returning
        # a shared callable): the file is parsed if any selected rule may fire in it.
        filters: List[Callable[[str], bool]] = []
        for rule in self.rules:
            text_filter = getattr(rule, "text_filter", lambda: None)()
            if text_filter is None:
                filters = []  # this rule has no second look: trigger words decide alone
                break
            if all(text_filter is not known for known in filters):
                filters.append(text_filter)
        self.text_filters: Tuple[Callable[[str], bool], ...] = tuple(filters)

    @property
    def codes(self) -> List[str]:
        return [rule.code for rule in self.rules]

    # -- entry points ---------------------------------------------------------------
    def check_path(self, path: str, display: Optional[str] = None) -> List[Diagnostic]:
        shown = display or path
        try:
            size = os.path.getsize(path)
            if size > MAX_FILE_BYTES:
                return [tool_diagnostic(shown, "DL004", f"file too large to check ({size // (1024 * 1024)} MiB, limit 10 MiB)")]
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            return [tool_diagnostic(shown, "DL006", f"cannot read file: {exc.strerror or exc}")]
        return self.check_bytes(data, shown)

    def check_bytes(self, data: bytes, path: str) -> List[Diagnostic]:
        try:
            text = decode_source(data)
        except DecodeError as exc:
            return [tool_diagnostic(path, "DL002", f"cannot decode file: {exc}")]
        return self.check_text(text, path)

    def check_text(self, text: str, path: str, tree: Optional[ast.Module] = None) -> List[Diagnostic]:
        if not self.rules or not self.could_fire(text):
            return []
        with _collector_paused():
            return self._check_text(text, path, tree)

    def _check_text(self, text: str, path: str, tree: Optional[ast.Module]) -> List[Diagnostic]:
        if tree is None:
            tree_or_error = parse_source(text, path)
            if isinstance(tree_or_error, Diagnostic):
                return [tree_or_error]
            tree = tree_or_error
        source = SourceFile(text, path)
        ctx = FileContext(source, tree, self)
        self._walk(ctx)
        found = ctx.diagnostics
        if self.apply_noqa:
            found = [d for d in found if not source.is_suppressed(d.line, d.code)]
        return sorted(found, key=Diagnostic.sort_key)

    def could_fire(self, text: str) -> bool:
        """The text prefilter: skip parsing files that mention nothing any selected rule needs."""
        words = self.trigger_words
        if words is not None and not any(word in text for word in words):
            return False
        return not self.text_filters or any(text_filter(text) for text_filter in self.text_filters)

    # -- the walk ------------------------------------------------------------------
    def _walk(self, ctx: FileContext) -> None:
        """Pre-order, in source order. Each stack entry carries its depth, so the ancestors
        list is cut back to it on the way down instead of every node being visited a second
        time on the way up; only scopes and `with` statements need a "leave" step."""
        dispatch = dict(self.dispatch)  # per file: a failing rule is dropped for this file only
        leave_dispatch = dict(self.leave_dispatch)
        tracked = self._tracked_types
        skipped = _LEAF_TYPES.difference(dispatch).difference(tracked)
        parents = ctx.parents

        def leave(depth: int, node: ast.AST) -> None:
            del parents[depth:]
            for rule, on_leave in list(leave_dispatch.get(type(node)) or ()):
                try:
                    on_leave(node, ctx)
                except Exception as exc:  # a rule bug must not end the run
                    self._rule_failed(ctx, rule, node, exc, dispatch, leave_dispatch)
            ctx._leave(node)

        entered: List[Tuple[int, ast.AST]] = []  # open scopes / `with`s and their depth
        stack: List[Tuple[ast.AST, int]] = [(ctx.tree, 0)]
        pop, push = stack.pop, stack.append
        while stack:
            node, depth = pop()
            while entered and entered[-1][0] >= depth:
                leave(*entered.pop())
            del parents[depth:]
            node_type = type(node)
            handlers = dispatch.get(node_type)
            if handlers:
                for rule, visit in list(handlers):
                    try:
                        visit(node, ctx)
                    except Exception as exc:  # a rule bug must not end the run
                        self._rule_failed(ctx, rule, node, exc, dispatch, leave_dispatch)
            if node_type in tracked:
                ctx._enter(node)
                entered.append((depth, node))
            parents.append(node)
            depth += 1
            for field in reversed(_FIELDS_BY_TYPE.get(node_type) or _child_fields(node_type)):
                value = getattr(node, field, None)
                if value is None:
                    continue
                if type(value) is list:
                    for child in reversed(value):
                        if isinstance(child, ast.AST) and type(child) not in skipped:
                            push((child, depth))
                elif isinstance(value, ast.AST) and type(value) not in skipped:
                    push((value, depth))
        while entered:
            leave(*entered.pop())
        del parents[:]

    def _rule_failed(self, ctx: FileContext, rule: Rule, node: ast.AST, exc: Exception, *dispatches) -> None:
        for dispatch in dispatches:
            for node_type, handlers in list(dispatch.items()):
                dispatch[node_type] = [h for h in handlers if h[0] is not rule]
        line = getattr(node, "lineno", 1)
        if isinstance(exc, RecursionError):  # the code, not the rule, is the problem
            message = f"too deeply nested to analyse; {rule.code} was skipped for this file"
            ctx.diagnostics.append(tool_diagnostic(ctx.source.path, "DL007", message, line=line))
            return
        where = traceback.extract_tb(exc.__traceback__)[-1]
        ctx.diagnostics.append(
            tool_diagnostic(
                ctx.source.path,
                "DL003",
                f"internal error in {rule.code} ({type(exc).__name__}: {exc} at "
                f"{os.path.basename(where.filename)}:{where.lineno}); the rule was skipped for this file",
                line=line,
            )
        )


@contextlib.contextmanager
def _collector_paused():
    """A file's tree and findings are millions of objects in a large file, none of them in a
    reference cycle that must go before the file is done; each run of the cyclic collector
    walks them all, which made checking super-linear in file size."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_source(text: str, path: str):
    """An ast.Module, or the DL001 / DL002 / DL007 diagnostic that says why there is none."""
    try:
        return ast.parse(text, filename=path, type_comments=False)
    except SyntaxError as exc:
        return _syntax_error(exc, path)
    except (RecursionError, MemoryError):
        # CPython's parser limit shrinks with the caller's stack depth: try again from a
        # fresh thread's stack, where it is what `python file.py` accepts.
        outcome = _parse_on_fresh_stack(text, path)
        if isinstance(outcome, ast.Module):
            return outcome
        if isinstance(outcome, SyntaxError):
            return _syntax_error(outcome, path)
        return tool_diagnostic(path, "DL007", "too deeply nested to analyse (beyond the Python parser's limit)")
    except ValueError as exc:  # e.g. NUL bytes handed to us as text
        return tool_diagnostic(path, "DL002", f"cannot parse file: {exc}")


def _syntax_error(exc: SyntaxError, path: str) -> Diagnostic:
    return tool_diagnostic(path, "DL001", f"syntax error: {exc.msg}", exc.lineno or 1, max(exc.offset or 1, 1))


def _parse_on_fresh_stack(text: str, path: str):
    """ast.parse on a new thread: the Module, or the exception it raised."""
    outcome: List[object] = [None]

    def parse() -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + _OWN_FRAMES)  # the frames above this one are ours
        try:
            outcome[0] = ast.parse(text, filename=path, type_comments=False)
        except (SyntaxError, RecursionError, MemoryError, ValueError) as exc:
            outcome[0] = exc
        finally:
            sys.setrecursionlimit(limit)

    worker = threading.Thread(target=parse, name="deadline-lint-parse")
    worker.start()
    worker.join()
    return outcome[0]


def rule_enabled(
    cls: Type[Rule], select: Tuple[str, ...], ignore: Tuple[str, ...], extend_select: Tuple[str, ...] = ()
) -> bool:
    """Default-on rules follow select/ignore by prefix (longest match wins, like flake8);
    opt-in rules turn on only when their exact code is selected."""
    code = cls.code
    chosen = select + extend_select
    if cls.default_enabled:
        picked = code_selected(code, chosen) if select else True
        if extend_select and code_selected(code, extend_select):
            picked = True
    else:
        picked = code in chosen
    if not picked:
        return False
    ignored = [sel for sel in ignore if sel == "ALL" or code.startswith(sel)]
    if not ignored:
        return True
    selected = [sel for sel in chosen if sel == "ALL" or code.startswith(sel)]
    longest = lambda sels: max((0 if s == "ALL" else len(s)) for s in sels)  # noqa: E731
    return bool(selected) and longest(selected) > longest(ignored)
