"""The engine: read a file once, parse it once, walk it once, dispatch each node to the rules
that asked for its type, and return diagnostics. Every front end sits on `Checker`."""
from __future__ import annotations

import ast
import dataclasses
import os
import traceback
from types import MappingProxyType
from typing import Dict, FrozenSet, Hashable, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Type

from deadline_lint.catalog import Catalog, load_catalog
from deadline_lint.engine.context import FileContext
from deadline_lint.engine.file_answers import FileAnswers
from deadline_lint.engine.parsing import parse_source
from deadline_lint.engine.reading import decode, read_file, unusable_text
from deadline_lint.engine.rule import Rule, registered_rules
from deadline_lint.engine.tables import (
    BODY_NODE_TYPES,
    SCOPE_NODE_TYPES,
    BoundNeeds,
    FileTables,
    PrefilterStats,
    SelectedRule,
    Selection,
    SharedTables,
    WalkTables,
    shared_tables,
)
from deadline_lint.semantics.local.children import node_types
from deadline_lint.settings.profile import Profile, default_profile
from deadline_lint.support.collector import collector_paused
from deadline_lint.support.diagnostics import Applicability, Diagnostic, tool_diagnostic
from deadline_lint.support.selector import Selector
from deadline_lint.support.source import SourceFile

# Fields that never hold a node a rule cares about: expression contexts and operators, and
# those holding names, numbers and flags.
_SKIPPED_FIELDS = frozenset({
    "ctx", "op", "ops", "type_ignores",
    "id", "attr", "name", "asname", "module", "level", "arg", "kind", "type_comment", "conversion",
    "is_async", "simple", "rest", "kwd_attrs",
})
# ... and per node type: the constants' values, the names of `global` and `nonlocal`.
_SKIPPED_BY_TYPE: Mapping[str, FrozenSet[str]] = MappingProxyType({
    "Constant": frozenset({"value"}), "MatchSingleton": frozenset({"value"}),
    "Global": frozenset({"names"}), "Nonlocal": frozenset({"names"}),
})


def _child_fields(node_type: type) -> Tuple[str, ...]:
    """The fields of `node_type` that can hold nodes, last first."""
    own = _SKIPPED_BY_TYPE.get(node_type.__name__, frozenset())
    names: Tuple[str, ...] = getattr(node_type, "_fields", ())
    return tuple(reversed([f for f in names if f not in _SKIPPED_FIELDS and f not in own]))


# The fields to walk of every node type the interpreter defines, last first: a table filled at
# import and never written (a type missing from it is computed each time). A plain dict: the
# walk looks it up for every node, and a read-only proxy's lookup costs twice a dict's.
_FIELDS_BY_TYPE: Dict[type, Tuple[str, ...]] = {t: _child_fields(t) for t in node_types()}


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
            for code, cls in registered_rules().items()
            if rule_enabled(cls, selected, ignored, extended) and (restricted is None or code in restricted)
        ]
        # Every rule's needs, bound to its profile and catalog once: the one matcher all files ask.
        self.needs = tuple(BoundNeeds(rule) for rule in self.rules)
        self._all: Selection = tuple(SelectedRule(index, frozenset(), False) for index in range(len(self.rules)))
        self._tables_by_selection: Dict[Selection, SharedTables] = {}
        # Off (the benchmark's "every rule on every node of every file"): no file, body or
        # visit is left out for any rule.
        self.prefilter = True
        self.stats = PrefilterStats()

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
        unusable = unusable_text(text, path)
        if unusable is not None:
            return [unusable]
        if not self.rules:
            return []
        # The prefilter's project needs parse and summarise other modules: as costly for the
        # cyclic collector as the check itself, so it is paused for both.
        with collector_paused():
            selection, answers = self._selection_for(text, path)
            if not selection:
                return []
            return self._check_text(text, path, tree, selection, answers)

    def _check_text(
        self, text: str, path: str, tree: Optional[ast.Module], selection: Selection, answers: Optional[FileAnswers]
    ) -> List[Diagnostic]:
        if tree is None:
            tree_or_error = parse_source(text, path)
            if isinstance(tree_or_error, Diagnostic):
                return [tree_or_error]
            tree = tree_or_error
        source = SourceFile(text, path)
        ctx = FileContext(source, tree, self.profile, self.catalog)
        try:
            self._walk(ctx, selection, answers)
        finally:
            ctx.close()
        found = self.fix_classes.apply(ctx.diagnostics, source)
        # The suppression stage: `# deadline-lint: ignore[...]` always; noqa comments unless a
        # host reads it itself (flake8).
        found = [d for d in found if not source.is_suppressed(d.line, d.code, include_noqa=self.apply_noqa)]
        return sorted(found, key=Diagnostic.sort_key)

    def could_fire(self, text: str, path: str = "") -> bool:
        """The prefilter: does any selected rule's need hold for this text (or its project)?
        Files it rejects are not parsed."""
        answers = FileAnswers(text, path)
        return any(answers.holds(needs.file) for needs in self.needs)

    def _selection_for(self, text: str, path: str) -> Tuple[Selection, Optional[FileAnswers]]:
        """The rules that may fire in this file by their own needs, each with the node types it
        is not visited on here (its visit need failing), and the file's answers, which the
        walk asks again about bodies."""
        if not self.prefilter:
            return self._all, None
        answers = FileAnswers(text, path)
        chosen = []
        held: Dict[Hashable, bool] = {}  # rules declaring the same need (the outbound family's) ask once
        for index, needs in enumerate(self.needs):
            holds = held.get(needs.file_key)
            if holds is None:
                holds = held[needs.file_key] = answers.holds(needs.file)
            if holds:
                masked = frozenset(t for t, need in needs.visits if not answers.holds(need))
                chosen.append(SelectedRule(index, masked, needs.body is not None))
        return tuple(chosen), answers

    def _tables_for(self, selection: Selection) -> SharedTables:
        tables = self._tables_by_selection.get(selection)
        if tables is None:
            tables = self._tables_by_selection[selection] = shared_tables(self.rules, self.needs, selection)
        return tables

    # -- the walk ------------------------------------------------------------------
    def _walk(self, ctx: FileContext, selection: Selection, answers: Optional[FileAnswers]) -> None:
        """Pre-order, in source order. Each stack entry carries its depth, so the ancestors
        list is cut back to it on the way down instead of every node being visited a second
        time on the way up; only scopes and `with` statements need a "leave" step.

        A function or class whose text holds no body need of some rules is walked
        without them (their tables are switched for its subtree and switched back when the
        walk leaves it), and not at all when no rule is left. A rule whose need a function or
        class holds is not asked again inside it: what the rule judges there may come from
        the enclosing code (a closure's budget, a class's base)."""
        any_bodies = any(n.body is not None for n in self.needs)
        walk = FileTables(self._tables_for, selection, any_bodies)
        tables = walk.current
        narrow_bodies = answers is not None  # without the prefilter's answers no body is left out
        parents = ctx.parents
        line_starts = ctx.source.line_starts if narrow_bodies and (tables.bodies or any_bodies) else ()

        def leave(depth: int, node: ast.AST, tables: WalkTables) -> None:
            del parents[depth:]
            for rule, on_leave in tables.leave_dispatch.get(type(node)) or ():
                try:
                    on_leave(node, ctx)
                except Exception as exc:  # a rule bug must not end the run
                    self._rule_failed(ctx, rule, node, exc, walk)
            if type(node) in SCOPE_NODE_TYPES:
                ctx.leave_scope()

        # Open scopes / `with`s: their depth, node, and the tables to go back to after them.
        entered: List[Tuple[int, ast.AST, Optional[WalkTables]]] = []
        stack: List[Tuple[ast.AST, int]] = [(ctx.tree, 0)]
        pop, push = stack.pop, stack.append
        fields_by_type = _FIELDS_BY_TYPE
        while stack:
            node, depth = pop()
            while entered and entered[-1][0] >= depth:
                left_depth, left, restore = entered.pop()
                leave(left_depth, left, tables)
                if restore is not None:
                    walk.current = tables = restore
            del parents[depth:]
            node_type = type(node)
            restore = None
            if narrow_bodies and tables.bodies and node_type in BODY_NODE_TYPES:
                inner = self._narrowed(node, tables, answers, line_starts)
                if not inner:
                    continue  # no rule can find anything in it: not walked at all
                restore = tables
                walk.current = tables = walk.tables(inner)
            groups = tables.dispatch.get(node_type)
            if groups:
                # A failing rule gets new lists in `dispatch`: these stay safe to iterate.
                for first_look, members in groups:
                    if first_look is not None:
                        try:
                            if not first_look(node, ctx):
                                continue
                        except Exception as exc:  # each rule would have failed on it in turn
                            for rule, _ in members:
                                self._rule_failed(ctx, rule, node, exc, walk)
                            continue
                    for rule, visit in members:
                        try:
                            visit(node, ctx)
                        except Exception as exc:  # a rule bug must not end the run
                            self._rule_failed(ctx, rule, node, exc, walk)
            if node_type in tables.tracked:
                if node_type in SCOPE_NODE_TYPES:
                    ctx.enter_scope(node)
                entered.append((depth, node, restore))
            parents.append(node)
            depth += 1
            fields = fields_by_type.get(node_type)
            if fields is None:
                fields = _child_fields(node_type)
            skipped = tables.skipped
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
            left_depth, left, restore = entered.pop()
            leave(left_depth, left, tables)
            if restore is not None:
                walk.current = tables = restore
        del parents[:]

    def _narrowed(
        self, node: ast.AST, tables: WalkTables, answers: Optional[FileAnswers], line_starts: Sequence[int]
    ) -> Selection:
        """The rules still to walk a function or class with: those whose body need its
        text (decorators, signature and body) holds, none of them asking again inside it: what
        a rule judges there may come from the enclosing code (a closure's budget, a class's
        base)."""
        assert answers is not None and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        self.stats.bodies += 1
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        end_line = node.end_lineno or node.lineno
        start, end = line_starts[first - 1], line_starts[end_line]
        dropped: Set[int] = set()
        for need, members in tables.bodies:
            if not answers.in_span(need, start, end):
                dropped.update(members)
        kept = (chosen for chosen in tables.selection if chosen.rule_index not in dropped)
        inner = tuple(SelectedRule(chosen.rule_index, chosen.masked, False) for chosen in kept)
        if not inner:
            self.stats.skipped += 1
            self.stats.skipped_lines += end_line - first + 1
        elif dropped:
            self.stats.narrowed += 1
        return inner

    def _rule_failed(self, ctx: FileContext, rule: Rule, node: ast.AST, exc: Exception, walk: FileTables) -> None:
        walk.drop(rule)
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
            if fix is not None and wanted is not None and wanted is not fix.applicability:
                if wanted is Applicability.UNSAFE or not any(
                    source.touches_comment(e.start, e.end) for e in fix.edits
                ):
                    diagnostic = dataclasses.replace(diagnostic, fix=dataclasses.replace(fix, applicability=wanted))
            adjusted.append(diagnostic)
        return adjusted


_NO_SELECTORS = Selector()  # immutable, so one shared default is safe


def rule_enabled(
    cls: Type[Rule], select: Selector, ignore: Selector, extend_select: Selector = _NO_SELECTORS
) -> bool:
    """Default-on rules follow select/ignore by prefix (longest match wins, like flake8);
    opt-in rules turn on only when their exact code is selected."""
    code = cls.code
    chosen = select + extend_select
    if cls.default_enabled:
        picked = (select.matches(code) if select else True) or extend_select.matches(code)
    else:
        picked = chosen.names_exactly(code)
    return picked and (not ignore.matches(code) or chosen.beats(ignore, code))
