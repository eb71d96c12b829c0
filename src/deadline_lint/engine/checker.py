"""The engine: read a file once, parse it once, walk it once, dispatch each node to the rules
that asked for its type, and return diagnostics. Every front end sits on `Checker`."""
from __future__ import annotations

import ast
import os
import sys
import threading
from typing import Callable, Dict, FrozenSet, Hashable, Iterable, List, Optional, Sequence, Tuple, Type

from deadline_lint.catalog import Catalog, load_catalog
from deadline_lint.engine.context import SCOPE_TYPES, FileContext
from deadline_lint.support.diagnostics import Applicability, Diagnostic, tool_diagnostic
from deadline_lint.engine.reading import decode, read_file
from deadline_lint.engine.requires import FileAnswers, Need, signature
from deadline_lint.engine.rule import Rule, registered_rules
from deadline_lint.support.source import SourceFile
from deadline_lint.settings.profile import Profile, default_profile
from deadline_lint.support.selector import Selector
from deadline_lint.support import records
from deadline_lint.support.collector import collector_paused as _collector_paused

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
_LEAF_TYPES = frozenset(
    {ast.Name, ast.Constant, ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal, ast.alias}
)


def _child_fields(node_type: type) -> Tuple[str, ...]:
    """The fields of `node_type` that can hold nodes, last first."""
    fields = _FIELDS_BY_TYPE.get(node_type)
    if fields is None:
        own = _SKIPPED_BY_TYPE.get(node_type.__name__, ())
        fields = tuple(reversed([f for f in node_type._fields if f not in _SKIPPED_FIELDS and f not in own]))  # type: ignore[attr-defined]
        _FIELDS_BY_TYPE[node_type] = fields
    return fields


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
        self._all: Selection = tuple((index, frozenset(), False) for index in range(len(self.rules)))
        self._tables_by_selection: Dict[Selection, Tables] = {}
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
        if not self.rules:
            return []
        # The prefilter's project needs parse and summarise other modules: as costly for the
        # cyclic collector as the check itself, so it is paused for both.
        with _collector_paused():
            selection, answers = self._selection_for(text, path)
            if not selection:
                return []
            return self._check_text(text, path, tree, selection, answers)

    def _check_text(
        self, text: str, path: str, tree: Optional[ast.Module], selection: "Selection", answers: Optional[FileAnswers]
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
        return any(answers.holds(needs.requires) for needs in self.needs)

    def _selection_for(self, text: str, path: str) -> Tuple["Selection", Optional[FileAnswers]]:
        """The rules that may fire in this file by their own needs, each with the node types it
        is not visited on here (`visit_requires` failing), and the file's answers, which the
        walk asks again about bodies."""
        if not self.prefilter:
            return self._all, None
        answers = FileAnswers(text, path)
        chosen = []
        held: Dict[Hashable, bool] = {}  # rules declaring the same need (the outbound family's) ask once
        for index, needs in enumerate(self.needs):
            holds = held.get(needs.requires_key)
            if holds is None:
                holds = held[needs.requires_key] = answers.holds(needs.requires)
            if holds:
                masked = frozenset(t for t, need in needs.visit_requires if not answers.holds(need))
                chosen.append((index, masked, needs.body_requires is not None))
        return tuple(chosen), answers

    def _tables_for(self, selection: "Selection") -> "Tables":
        tables = self._tables_by_selection.get(selection)
        if tables is None:
            tables = self._tables_by_selection[selection] = _tables(self.rules, self.needs, selection)
        return tables

    # -- the walk ------------------------------------------------------------------
    def _walk(self, ctx: FileContext, selection: "Selection", answers: Optional[FileAnswers]) -> None:
        """Pre-order, in source order. Each stack entry carries its depth, so the ancestors
        list is cut back to it on the way down instead of every node being visited a second
        time on the way up; only scopes and `with` statements need a "leave" step.

        A function or class whose text holds no `body_requires` of some rules is walked
        without them (their tables are switched for its subtree and switched back when the
        walk leaves it), and not at all when no rule is left. A rule whose need a function or
        class holds is not asked again inside it: what the rule judges there may come from
        the enclosing code (a closure's budget, a class's base)."""
        walk = _FileTables(self, selection)
        dispatch, leave_dispatch, tracked, skipped, bodies, selection = walk.current
        if answers is None:
            bodies = ()
        parents = ctx.parents
        line_starts = ctx.source.line_starts if bodies or walk.any_bodies else ()
        stats = self.stats

        def leave(depth: int, node: ast.AST, leave_dispatch: dict) -> None:
            del parents[depth:]
            for rule, on_leave in leave_dispatch.get(type(node)) or ():
                try:
                    on_leave(node, ctx)
                except Exception as exc:  # a rule bug must not end the run
                    self._rule_failed(ctx, rule, node, exc, walk)
            if type(node) in _SCOPE_TYPES:
                ctx.leave_scope()

        # Open scopes / `with`s: their depth, node, and the tables to go back to after them.
        entered: List[Tuple[int, ast.AST, Optional[list]]] = []
        stack: List[Tuple[ast.AST, int]] = [(ctx.tree, 0)]
        pop, push = stack.pop, stack.append
        fields_by_type = _FIELDS_BY_TYPE
        while stack:
            node, depth = pop()
            while entered and entered[-1][0] >= depth:
                left_depth, left, restore = entered.pop()
                leave(left_depth, left, leave_dispatch)
                if restore is not None:
                    walk.current = restore
                    dispatch, leave_dispatch, tracked, skipped, bodies, selection = restore
                    if answers is None:
                        bodies = ()
            del parents[depth:]
            node_type = type(node)
            restore = None
            if bodies and node_type in _BODY_TYPES:
                stats.bodies += 1
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])  # type: ignore[attr-defined]
                start, end = line_starts[first - 1], line_starts[node.end_lineno]  # type: ignore[attr-defined]
                dropped: set = set()
                for need, members in bodies:
                    if not answers.in_span(need, start, end):  # type: ignore[union-attr]
                        dropped.update(members)
                inner = tuple((i, m, False) for i, m, _ in selection if i not in dropped)
                if not inner:
                    stats.skipped += 1
                    stats.skipped_lines += node.end_lineno - first + 1  # type: ignore[attr-defined]
                    continue  # no rule can find anything in it: not walked at all
                if dropped:
                    stats.narrowed += 1
                restore = walk.current
                walk.current = walk.tables(inner)
                dispatch, leave_dispatch, tracked, skipped, bodies, selection = walk.current
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
                                self._rule_failed(ctx, rule, node, exc, walk)
                            continue
                    for rule, visit in members:
                        try:
                            visit(node, ctx)
                        except Exception as exc:  # a rule bug must not end the run
                            self._rule_failed(ctx, rule, node, exc, walk)
            if node_type in tracked:
                if node_type in _SCOPE_TYPES:
                    ctx.enter_scope(node)
                entered.append((depth, node, restore))
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
            left_depth, left, restore = entered.pop()
            leave(left_depth, left, leave_dispatch)
            if restore is not None:
                walk.current = restore
                leave_dispatch = restore[1]
        del parents[:]

    def _rule_failed(self, ctx: FileContext, rule: Rule, node: ast.AST, exc: Exception, walk: "_FileTables") -> None:
        walk.drop(rule)
        line = getattr(node, "lineno", 1)
        if isinstance(exc, RecursionError):  # the code, not the rule, is the problem
            message = f"too deeply nested to analyse; {rule.code} was skipped for this file"
            ctx.diagnostics.append(tool_diagnostic(ctx.source.path, "DL007", message, line=line))
            return
        import traceback  # only for a rule that failed

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


_BODY_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
FirstLook = Callable[..., object]  # (node, ctx) -> truthy
Group = Tuple[Optional[FirstLook], Tuple[Tuple[Rule, Callable], ...]]
# The rules chosen for a file (or a body): each rule's index, the node types it skips there,
# and whether its `body_requires` is still to be asked of the functions and classes inside.
Selection = Tuple[Tuple[int, FrozenSet[type], bool], ...]
Dispatch = Dict[Type[ast.AST], List[Group]]
LeaveDispatch = Dict[Type[ast.AST], List[Tuple[Rule, Callable]]]
# Per node type the groups to visit, the end-of-node hooks, the node types the walk must
# leave, and, per distinct `body_requires`, the rules (by index) that need it.
Tables = Tuple[Dispatch, LeaveDispatch, FrozenSet[type], Tuple[Tuple[Need, FrozenSet[int]], ...]]


class BoundNeeds:
    """One rule's declared needs, bound to its profile and catalog."""

    __slots__ = ("requires", "requires_key", "visit_requires", "body_requires", "first_looks")

    def __init__(self, rule: Rule) -> None:
        self.requires = rule.requires.bind(rule) if rule.requires is not None else None
        self.requires_key = signature(self.requires)  # equal for needs that answer alike
        self.visit_requires = tuple((t, need.bind(rule)) for t, need in rule.visit_requires.items())
        self.body_requires = rule.body_requires.bind(rule) if rule.body_requires is not None else None
        self.first_looks = {t: look.bind(rule) for t, look in rule.first_looks.items()}


@records.dataclass
class PrefilterStats:
    """What the walk left out (functions and classes looked at, walked for fewer rules, not
    walked at all), for the benchmark."""

    bodies: int = 0
    narrowed: int = 0
    skipped: int = 0
    skipped_lines: int = 0


class _FileTables:
    """The tables one file's walk uses, copied from the checker's on first use, so that a rule
    failing in this file is dropped from all of them (and from those made later)."""

    def __init__(self, checker: Checker, selection: Selection) -> None:
        self._checker = checker
        self._local: Dict[Selection, list] = {}
        self._failed: List[Rule] = []
        self.current = self.tables(selection)
        self.any_bodies = any(n.body_requires is not None for n in checker.needs)

    def tables(self, selection: Selection) -> list:
        found = self._local.get(selection)
        if found is None:
            dispatch, leave_dispatch, tracked, bodies = self._checker._tables_for(selection)
            found = [dict(dispatch), dict(leave_dispatch), tracked, None, bodies, selection]
            for rule in self._failed:
                _drop_rule(found, rule)
            found[3] = _LEAF_TYPES.difference(found[0]).difference(tracked)
            self._local[selection] = found
        return found

    def drop(self, rule: Rule) -> None:
        self._failed.append(rule)
        for found in self._local.values():
            _drop_rule(found, rule)


def _drop_rule(tables: list, rule: Rule) -> None:
    dispatch, leave_dispatch = tables[0], tables[1]
    for node_type, groups in list(dispatch.items()):
        kept = [(look, tuple(m for m in members if m[0] is not rule)) for look, members in groups]
        dispatch[node_type] = [(look, members) for look, members in kept if members]
    for node_type, handlers in list(leave_dispatch.items()):
        leave_dispatch[node_type] = [h for h in handlers if h[0] is not rule]


def _tables(rules: Sequence[Rule], needs: Sequence[BoundNeeds], selection: Selection) -> Tables:
    """Per node type, the selected rules to visit in groups behind their shared first look
    (None: visited at every node): rules declaring the same look join the group of the first
    of them, so it runs once per node for all of them. Then the end-of-node hooks, the node
    types the walk must leave, and the rules grouped by their `body_requires`."""
    dispatch: Dispatch = {}
    leave_dispatch: LeaveDispatch = {}
    bodies: Dict[object, Tuple[Need, List[int]]] = {}
    for index, masked, open_body in selection:
        rule = rules[index]
        for node_type in rule.node_types:
            if node_type not in masked:
                _join(dispatch.setdefault(node_type, []), needs[index].first_looks.get(node_type), rule, node_type)
        for node_type in rule.leave_node_types:
            leave_dispatch.setdefault(node_type, []).append((rule, rule.leaver(node_type)))
        body = needs[index].body_requires
        if body is not None and open_body:
            bodies.setdefault(signature(body), (body, []))[1].append(index)
    grouped = tuple((need, frozenset(members)) for need, members in bodies.values())
    return dispatch, leave_dispatch, _SCOPE_TYPES.union(leave_dispatch), grouped


def _join(groups: List[Group], first_look: Optional[FirstLook], rule: Rule, node_type: Type[ast.AST]) -> None:
    """Add `rule` to the group of its first look (kept in the order the groups were opened),
    or open a group of its own."""
    member = (rule, rule.visitor(node_type))
    if first_look is not None:
        for index, (look, members) in enumerate(groups):
            if look is first_look:
                groups[index] = (look, members + (member,))
                return
    groups.append((first_look, (member,)))


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
                    diagnostic = records.replace(diagnostic, fix=records.replace(fix, applicability=wanted))
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
        return tool_diagnostic(
            path, "DL007", "too deeply nested to analyse (beyond the Python parser's limit)", line, column
        )
    from deadline_lint.engine.syntax_versions import newer_syntax_message  # its patterns: only for syntax errors

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
