"""The engine: read a file once, parse it once, walk it once, dispatch each node to the rules
that asked for its type, and return diagnostics. Every front end sits on `Checker`."""
from __future__ import annotations

import ast
import dataclasses
import os
import sys
import threading
import traceback
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple, Type

from deadline_lint.catalog import Catalog, load_catalog
from deadline_lint.collector import collector_paused as _collector_paused
from deadline_lint.context import SCOPE_TYPES, FileContext
from deadline_lint.diagnostics import Applicability, Diagnostic, tool_diagnostic
from deadline_lint.profile import Profile, default_profile
from deadline_lint.rules.base import Rule, all_rules
from deadline_lint.reading import decode, read_file
from deadline_lint.selector import Selector
from deadline_lint.source import SourceFile
from deadline_lint.syntax_versions import newer_syntax_message

_OWN_FRAMES = 10  # thread bootstrap and ast.parse: what a fresh-stack parse adds to a script's

# Fields that never hold a node a rule cares about: expression contexts and operators, and
# those holding names, numbers and flags (every Python the tool runs on, 3.8 to 3.13).
_SKIPPED_FIELDS = frozenset({
    "ctx", "op", "ops", "type_ignores",
    "id", "attr", "name", "asname", "module", "level", "arg", "kind", "type_comment", "conversion",
    "is_async", "simple", "rest", "kwd_attrs",
})
# ... and per node type: the constants' values, the names of `global` and `nonlocal`.
_SKIPPED_BY_TYPE = {"Constant": {"value"}, "MatchSingleton": {"value"}, "Global": {"names"}, "Nonlocal": {"names"}}
_FIELDS_BY_TYPE: Dict[type, Tuple[str, ...]] = {}  # the fields to walk, last first
_SCOPE_TYPES = frozenset(SCOPE_TYPES)  # nodes the walk must also leave
# Nodes that never have children: not even pushed unless a selected rule asks for them.
_LEAF_TYPES = frozenset({ast.Name, ast.Constant, ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal, ast.alias})


def _child_fields(node_type: type) -> Tuple[str, ...]:
    """The fields of `node_type` that can hold nodes, last first."""
    fields = _FIELDS_BY_TYPE.get(node_type)
    if fields is None:
        own = _SKIPPED_BY_TYPE.get(node_type.__name__, ())
        fields = tuple(reversed([f for f in node_type._fields if f not in _SKIPPED_FIELDS and f not in own]))  # type: ignore[attr-defined]
        _FIELDS_BY_TYPE[node_type] = fields
    return fields


def _shortest(words) -> Tuple[str, ...]:
    """The words none of the others occurs in, sorted: any of them occurs in a text exactly
    when any of `words` does."""
    return tuple(sorted(w for w in set(words) if not any(o != w and o in w for o in words)))


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
        extend_safe_fixes: Iterable[str] = (),
        extend_unsafe_fixes: Iterable[str] = (),
        only: Optional[Iterable[str]] = None,
    ) -> None:
        """Selection: `select` (the command line's) replaces the profile's; `extend_select`,
        `ignore` and the fix-class options add to the profile's. `only` (the pylint plugin:
        the codes whose messages are enabled) further restricts the rules that run."""
        self.profile = profile or default_profile()
        self.catalog = catalog or load_catalog(self.profile.outbound)
        self.apply_noqa = apply_noqa
        selected = Selector(tuple(select) or self.profile.select)
        ignored = Selector((*ignore, *self.profile.ignore))
        extended = Selector((*extend_select, *self.profile.extend_select))
        self.fix_classes = FixClasses(
            Selector((*extend_safe_fixes, *self.profile.extend_safe_fixes)),
            Selector((*extend_unsafe_fixes, *self.profile.extend_unsafe_fixes)),
        )
        restricted = None if only is None else frozenset(only)
        self.rules: List[Rule] = [
            cls(self.profile, self.catalog)
            for code, cls in all_rules().items()
            if rule_enabled(cls, selected, ignored, extended) and (restricted is None or code in restricted)
        ]
        self.dispatch, self.leave_dispatch, self._tracked_types = _tables(self.rules)
        words: Optional[set] = set()
        for rule in self.rules:
            rule_words = rule.trigger_words()
            if rule_words is None:
                words = None
                break
            words.update(rule_words)  # type: ignore[union-attr]
        # A word containing another is found whenever that one is: only the shortest are searched.
        self.trigger_words: Optional[Tuple[str, ...]] = _shortest(words) if words is not None else None
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
        # A file the text says nothing about may still reach what a rule knows through the
        # modules of its project (a wrapper, a re-export): rules may offer `path_filter()`,
        # a shared callable (text, path) -> bool, asked only when the text alone says no.
        path_filters: List[Callable[[str, str], bool]] = []
        for rule in self.rules:
            path_filter = getattr(rule, "path_filter", lambda: None)()
            if path_filter is not None and all(path_filter is not known for known in path_filters):
                path_filters.append(path_filter)
        self.path_filters: Tuple[Callable[[str, str], bool], ...] = tuple(path_filters)
        # The same three looks per rule: a file let in for one rule is walked only for the
        # rules whose own looks let it in (see `_rules_for`). Off: every rule on every file.
        self.per_rule_prefilter = True
        self._looks = tuple(
            (rule, rule.trigger_words(), getattr(rule, "text_filter", lambda: None)(),
             getattr(rule, "path_filter", lambda: None)())
            for rule in self.rules
        )
        self._tables_by_rules: Dict[Tuple[int, ...], Tables] = {}

    @property
    def codes(self) -> List[str]:
        return [rule.code for rule in self.rules]

    # -- entry points ---------------------------------------------------------------
    def check_path(self, path: str, display: Optional[str] = None) -> List[Diagnostic]:
        read = read_file(path, display or path)
        return [read] if isinstance(read, Diagnostic) else self.check_bytes(read.data, display or path)

    def check_bytes(self, data: bytes, path: str) -> List[Diagnostic]:
        text = decode(data, path)
        return [text] if isinstance(text, Diagnostic) else self.check_text(text, path)

    def check_text(self, text: str, path: str, tree: Optional[ast.Module] = None) -> List[Diagnostic]:
        if not self.rules or not self.could_fire(text, path):
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
        ctx = FileContext(source, tree, self.profile, self.catalog)
        try:
            self._walk(ctx, self._rules_for(text, path))
        finally:
            ctx.close()
        found = self.fix_classes.apply(ctx.diagnostics, source)
        # The suppression stage: `# deadline-lint: ignore[...]` always; noqa comments unless a
        # host reads it itself (flake8).
        found = [d for d in found if not source.is_suppressed(d.line, d.code, include_noqa=self.apply_noqa)]
        return sorted(found, key=Diagnostic.sort_key)

    def could_fire(self, text: str, path: str = "") -> bool:
        """The text prefilter: skip parsing files that mention nothing any selected rule needs
        (themselves, or through their project's modules)."""
        words = self.trigger_words
        if words is None or any(word in text for word in words):
            if not self.text_filters or any(text_filter(text) for text_filter in self.text_filters):
                return True
        return any(path_filter(text, path) for path_filter in self.path_filters)

    def _rules_for(self, text: str, path: str) -> "Tables":
        """The dispatch tables of the rules that may fire in this file by their own looks
        (trigger words, then text filter, else path filter): each is sound for its rule, so
        a rule left out could not have reported anything here."""
        if not self.per_rule_prefilter:
            return self.dispatch, self.leave_dispatch, self._tracked_types
        found: Dict[object, bool] = {}  # each word and filter asked once per file

        def asked(key: object, answer: Callable[[], bool]) -> bool:
            known = found.get(key)
            if known is None:
                known = found[key] = bool(answer())
            return known

        chosen = []
        for index, (_, words, text_filter, path_filter) in enumerate(self._looks):
            may = words is None or any(asked(word, lambda w=word: w in text) for word in words)
            if may and text_filter is not None:
                may = asked(text_filter, lambda f=text_filter: f(text))
            if not may and path_filter is not None:
                may = asked(path_filter, lambda f=path_filter: f(text, path))
            if may:
                chosen.append(index)
        if len(chosen) == len(self._looks):
            return self.dispatch, self.leave_dispatch, self._tracked_types
        key = tuple(chosen)
        tables = self._tables_by_rules.get(key)
        if tables is None:
            tables = self._tables_by_rules[key] = _tables([self._looks[i][0] for i in chosen])
        return tables

    # -- the walk ------------------------------------------------------------------
    def _walk(self, ctx: FileContext, tables: Optional["Tables"] = None) -> None:
        """Pre-order, in source order. Each stack entry carries its depth, so the ancestors
        list is cut back to it on the way down instead of every node being visited a second
        time on the way up; only scopes and `with` statements need a "leave" step."""
        rules_dispatch, rules_leave, tracked = tables or (self.dispatch, self.leave_dispatch, self._tracked_types)
        dispatch = dict(rules_dispatch)  # per file: a failing rule is dropped for this file only
        leave_dispatch = dict(rules_leave)
        skipped = _LEAF_TYPES.difference(dispatch).difference(tracked)
        parents = ctx.parents

        def leave(depth: int, node: ast.AST) -> None:
            del parents[depth:]
            for rule, on_leave in leave_dispatch.get(type(node)) or ():
                try:
                    on_leave(node, ctx)
                except Exception as exc:  # a rule bug must not end the run
                    self._rule_failed(ctx, rule, node, exc, dispatch, leave_dispatch)
            if type(node) in _SCOPE_TYPES:
                ctx.leave_scope()

        entered: List[Tuple[int, ast.AST]] = []  # open scopes / `with`s and their depth
        stack: List[Tuple[ast.AST, int]] = [(ctx.tree, 0)]
        pop, push = stack.pop, stack.append
        fields_by_type = _FIELDS_BY_TYPE
        while stack:
            node, depth = pop()
            while entered and entered[-1][0] >= depth:
                leave(*entered.pop())
            del parents[depth:]
            node_type = type(node)
            groups = dispatch.get(node_type)
            if groups:
                # A failing rule gets new lists in `dispatch`: these stay safe to iterate.
                for first_look, members in groups:
                    if first_look is not None:
                        try:
                            if not first_look(node, ctx):
                                continue
                        except Exception as exc:  # each rule would have failed on it in turn
                            for rule, _ in members:
                                self._rule_failed(ctx, rule, node, exc, dispatch, leave_dispatch)
                            continue
                    for rule, visit in members:
                        try:
                            visit(node, ctx)
                        except Exception as exc:  # a rule bug must not end the run
                            self._rule_failed(ctx, rule, node, exc, dispatch, leave_dispatch)
            if node_type in tracked:
                if node_type in _SCOPE_TYPES:
                    ctx.enter_scope(node)
                entered.append((depth, node))
            parents.append(node)
            depth += 1
            fields = fields_by_type.get(node_type)
            if fields is None:
                fields = _child_fields(node_type)
            for field in fields:  # last first: the stack pops them in source order
                value = getattr(node, field, None)
                if value is None:
                    continue
                if type(value) is list:
                    # The lists left hold nodes, or None (a `**spread` key, a keyword-only
                    # parameter without a default).
                    for child in reversed(value):
                        if child is not None and type(child) not in skipped:
                            push((child, depth))
                elif isinstance(value, ast.AST) and type(value) not in skipped:
                    push((value, depth))
        while entered:
            leave(*entered.pop())
        del parents[:]

    def _rule_failed(
        self, ctx: FileContext, rule: Rule, node: ast.AST, exc: Exception, dispatch: dict, leave_dispatch: dict
    ) -> None:
        for node_type, groups in list(dispatch.items()):
            kept = [(look, tuple(m for m in members if m[0] is not rule)) for look, members in groups]
            dispatch[node_type] = [(look, members) for look, members in kept if members]
        for node_type, handlers in list(leave_dispatch.items()):
            leave_dispatch[node_type] = [h for h in handlers if h[0] is not rule]
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


FirstLook = Callable[[ast.AST, FileContext], object]
Group = Tuple[Optional[FirstLook], Tuple[Tuple[Rule, Callable], ...]]


Tables = Tuple[Dict[Type[ast.AST], List[Group]], Dict[Type[ast.AST], List[Tuple[Rule, Callable]]], FrozenSet[type]]


def _tables(rules: Sequence[Rule]) -> Tables:
    """Per node type, the rules to visit in groups behind their shared first look (None:
    visited at every node): rules offering the same `first_look` callable join the group of
    the first of them, so the look runs once per node for all of them. Then the end-of-node
    hooks, and the node types the walk must leave."""
    dispatch: Dict[Type[ast.AST], List[Group]] = {}
    leave_dispatch: Dict[Type[ast.AST], List[Tuple[Rule, Callable]]] = {}
    for rule in rules:
        for node_type in rule.node_types:
            _join(dispatch.setdefault(node_type, []), rule.first_look(node_type), rule)
        for node_type in rule.leave_node_types:
            leave_dispatch.setdefault(node_type, []).append((rule, rule.leave))
    return dispatch, leave_dispatch, _SCOPE_TYPES.union(leave_dispatch)


def _join(groups: List[Group], first_look: Optional[FirstLook], rule: Rule) -> None:
    """Add `rule` to the group of its first look (kept in the order the groups were opened),
    or open a group of its own."""
    if first_look is not None:
        for index, (look, members) in enumerate(groups):
            if look is first_look:
                groups[index] = (look, members + ((rule, rule.visit),))
                return
    groups.append((first_look, ((rule, rule.visit),)))


class FixClasses:
    """ruff's escape hatch: `extend_safe_fixes` promotes the unsafe fixes of these codes (or
    prefixes) to safe, `extend_unsafe_fixes` demotes safe ones; the longer selector wins, and
    unsafe wins a tie. A fix that touches a comment is never promoted."""

    def __init__(self, safe: Selector, unsafe: Selector) -> None:
        self.safe = safe
        self.unsafe = unsafe

    def wanted(self, code: str) -> Optional[Applicability]:
        if not (self.safe.matches(code) or self.unsafe.matches(code)):
            return None
        return Applicability.SAFE if self.safe.beats(self.unsafe, code) else Applicability.UNSAFE

    def apply(self, found: List[Diagnostic], source: SourceFile) -> List[Diagnostic]:
        if not (self.safe or self.unsafe):
            return found
        adjusted = []
        for diagnostic in found:
            fix = diagnostic.fix
            wanted = self.wanted(diagnostic.code) if fix is not None else None
            if wanted is not None and wanted is not fix.applicability:  # type: ignore[union-attr]
                if wanted is Applicability.UNSAFE or not any(
                    source.touches_comment(e.start, e.end) for e in fix.edits  # type: ignore[union-attr]
                ):
                    diagnostic = dataclasses.replace(diagnostic, fix=dataclasses.replace(fix, applicability=wanted))
            adjusted.append(diagnostic)
        return adjusted


def parse_source(text: str, path: str):
    """An ast.Module, or the DL001 / DL002 / DL007 diagnostic that says why there is none."""
    try:
        return ast.parse(text, filename=path, type_comments=False)
    except SyntaxError as exc:
        return _syntax_error(exc, text, path)
    except (RecursionError, MemoryError):
        # CPython's parser limit shrinks with the caller's stack depth: try again from a
        # fresh thread's stack, where it is what `python file.py` accepts.
        outcome = _parse_on_fresh_stack(text, path)
        if isinstance(outcome, ast.Module):
            return outcome
        if isinstance(outcome, SyntaxError):
            return _syntax_error(outcome, text, path)
        return tool_diagnostic(path, "DL007", "too deeply nested to analyse (beyond the Python parser's limit)")
    except ValueError as exc:  # e.g. NUL bytes handed to us as text
        return tool_diagnostic(path, "DL002", f"cannot parse file: {exc}")


def _syntax_error(exc: SyntaxError, text: str, path: str) -> Diagnostic:
    line = exc.lineno or 1
    column = max(exc.offset or 1, 1)
    if "too many nested" in (exc.msg or ""):  # the parser's own nesting limit: valid code
        return tool_diagnostic(path, "DL007", "too deeply nested to analyse (beyond the Python parser's limit)", line, column)
    newer = newer_syntax_message(SourceFile(text, path).line_text(line))
    return tool_diagnostic(path, "DL001", newer or f"syntax error: {exc.msg}", line, column)


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


def rule_enabled(cls: Type[Rule], select: Selector, ignore: Selector, extend_select: Selector = Selector()) -> bool:
    """Default-on rules follow select/ignore by prefix (longest match wins, like flake8);
    opt-in rules turn on only when their exact code is selected."""
    code = cls.code
    chosen = select + extend_select
    if cls.default_enabled:
        picked = (select.matches(code) if select else True) or extend_select.matches(code)
    else:
        picked = chosen.names_exactly(code)
    return picked and (not ignore.matches(code) or chosen.beats(ignore, code))
