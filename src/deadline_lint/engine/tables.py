"""The engine's dispatch tables: for the rules selected in a file (or a body), which rule
methods run on which node type, which nodes the walk must leave, and which rules still ask
their body needs (`Scope.BODY`) of the functions and classes inside."""
from __future__ import annotations

import ast
import dataclasses
from typing import Any, Callable, Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Tuple, Type

from deadline_lint.engine.context import SCOPE_TYPES
from deadline_lint.engine.requires import Need, NodeTest, bind_scoped, signature
from deadline_lint.engine.rule import Rule

# Scopes are left so the context can close them, even when no rule has a leave hook there.
SCOPE_NODE_TYPES = frozenset(SCOPE_TYPES)
# Nodes whose text the prefilter can ask about a rule's body need.
BODY_NODE_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
# Nodes that never have children: not even pushed unless a selected rule asks for them.
LEAF_NODE_TYPES = frozenset(
    {ast.Name, ast.Constant, ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal, ast.alias}
)

NodeHandler = Callable[[Any, Any], None]  # a rule's bound visit_/leave_ method: (node, ctx)


class SelectedRule(NamedTuple):
    """A rule chosen for a file or a body."""

    rule_index: int  # into `Checker.rules`
    masked: FrozenSet[type]  # node types it is not visited on here (its visit need failed)
    open_body: bool  # its body need is still to be asked of the bodies inside


Selection = Tuple[SelectedRule, ...]


class RuleHandler(NamedTuple):
    rule: Rule
    handle: NodeHandler


class Group(NamedTuple):
    """Rules visited behind one shared first look (None: visited at every node)."""

    first_look: Optional[NodeTest]
    members: Tuple[RuleHandler, ...]


class BodyNeed(NamedTuple):
    """One distinct body need and the rules (by index) declaring it."""

    need: Need
    members: FrozenSet[int]


Dispatch = Dict[Type[ast.AST], List[Group]]
LeaveDispatch = Dict[Type[ast.AST], List[RuleHandler]]


class SharedTables(NamedTuple):
    """The tables of one selection, shared by every file that selects the same rules."""

    dispatch: Dispatch
    leave_dispatch: LeaveDispatch
    tracked: FrozenSet[type]  # node types the walk must leave
    bodies: Tuple[BodyNeed, ...]


@dataclasses.dataclass
class WalkTables:
    """One file's copy of a selection's tables: a rule failing in the file is dropped from it."""

    dispatch: Dispatch
    leave_dispatch: LeaveDispatch
    tracked: FrozenSet[type]
    skipped: FrozenSet[type]  # leaf types no rule visits: never pushed
    bodies: Tuple[BodyNeed, ...]
    selection: Selection

    def drop(self, rule: Rule) -> None:
        for node_type, groups in list(self.dispatch.items()):
            kept = [Group(g.first_look, tuple(m for m in g.members if m.rule is not rule)) for g in groups]
            self.dispatch[node_type] = [group for group in kept if group.members]
        for node_type, handlers in list(self.leave_dispatch.items()):
            self.leave_dispatch[node_type] = [h for h in handlers if h.rule is not rule]


class BoundNeeds:
    """One rule's declared needs, bound to its profile and catalog."""

    __slots__ = ("file", "file_key", "visits", "body", "first_looks")

    def __init__(self, rule: Rule) -> None:
        self.file, self.visits, self.body = bind_scoped(rule.needs, rule)
        self.file_key = signature(self.file)  # equal for needs that answer alike
        self.first_looks = {t: look.bind(rule) for t, look in rule.first_looks.items()}


def shared_tables(rules: Sequence[Rule], needs: Sequence[BoundNeeds], selection: Selection) -> SharedTables:
    """Per node type, the selected rules to visit in groups behind their shared first look:
    rules declaring the same look join the group of the first of them, so it runs once per
    node for all of them. Then the end-of-node hooks, the node types the walk must leave, and
    the rules grouped by their body need."""
    dispatch: Dispatch = {}
    leave_dispatch: LeaveDispatch = {}
    bodies: Dict[object, Tuple[Need, List[int]]] = {}
    for chosen in selection:
        rule = rules[chosen.rule_index]
        for node_type in rule.node_types:
            if node_type not in chosen.masked:
                first_look = needs[chosen.rule_index].first_looks.get(node_type)
                _join(dispatch.setdefault(node_type, []), first_look, RuleHandler(rule, rule.visitor(node_type)))
        for node_type in rule.leave_node_types:
            leave_dispatch.setdefault(node_type, []).append(RuleHandler(rule, rule.leaver(node_type)))
        body = needs[chosen.rule_index].body
        if body is not None and chosen.open_body:
            bodies.setdefault(signature(body), (body, []))[1].append(chosen.rule_index)
    grouped = tuple(BodyNeed(need, frozenset(members)) for need, members in bodies.values())
    return SharedTables(dispatch, leave_dispatch, SCOPE_NODE_TYPES.union(leave_dispatch), grouped)


def _join(groups: List[Group], first_look: Optional[NodeTest], member: RuleHandler) -> None:
    """Add `member` to the group of its first look (kept in the order the groups were
    opened), or open a group of its own."""
    if first_look is not None:
        for position, group in enumerate(groups):
            if group.first_look is first_look:
                groups[position] = Group(first_look, group.members + (member,))
                return
    groups.append(Group(first_look, (member,)))


class FileTables:
    """The tables one file's walk uses, copied from the checker's on first use, so that a rule
    failing in this file is dropped from all of them (and from those made later)."""

    def __init__(
        self, shared: Callable[[Selection], SharedTables], selection: Selection, any_bodies: bool
    ) -> None:
        self._shared = shared
        self._local: Dict[Selection, WalkTables] = {}
        self._failed: List[Rule] = []
        self.any_bodies = any_bodies
        self.current = self.tables(selection)

    def tables(self, selection: Selection) -> WalkTables:
        found = self._local.get(selection)
        if found is None:
            shared = self._shared(selection)
            found = WalkTables(
                dispatch=dict(shared.dispatch),
                leave_dispatch=dict(shared.leave_dispatch),
                tracked=shared.tracked,
                skipped=frozenset(),
                bodies=shared.bodies,
                selection=selection,
            )
            for rule in self._failed:
                found.drop(rule)
            found.skipped = LEAF_NODE_TYPES.difference(found.dispatch).difference(shared.tracked)
            self._local[selection] = found
        return found

    def drop(self, rule: Rule) -> None:
        self._failed.append(rule)
        for found in self._local.values():
            found.drop(rule)


@dataclasses.dataclass
class PrefilterStats:
    """What the walk left out (functions and classes looked at, walked for fewer rules, not
    walked at all), for the benchmark."""

    bodies: int = 0
    narrowed: int = 0
    skipped: int = 0
    skipped_lines: int = 0
