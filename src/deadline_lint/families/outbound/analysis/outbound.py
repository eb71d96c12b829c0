"""The outbound views of each call of a file, as rules ask for them: `outbound_sites(ctx,
call)` (every view that takes a timeout, classified once by `outbound_calls.py`, or the call
to a project wrapper by `wrapper_sites.py`) and `outbound_call(ctx, call)`."""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Dict, FrozenSet, Optional, Tuple

from deadline_lint.families.outbound.analysis.catalog_imports import catalog_imports
from deadline_lint.families.outbound.analysis.outbound_calls import (
    OutboundCall,
    classify_call,
    classify_construction,
    file_methods,
    may_be_listed,
)
from deadline_lint.families.outbound.analysis.outbound_project import OutboundProject
from deadline_lint.families.outbound.analysis.timeout_objects import may_build_timeout_object
from deadline_lint.families.outbound.analysis.wrapper_sites import wrapper_site

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

_DEF_NAME = re.compile(r"\bdef\s+(\w+)")


class OutboundSites:
    """Per file (`ctx.analysis(OutboundSites)`): each call's outbound views, classified once,
    in the scope where the walk meets it."""

    def __init__(self, ctx: "FileView") -> None:
        self.ctx = ctx
        # Receivers of unlisted method names only matter when a gRPC stub could be the receiver.
        self._stubs_possible = any(p.module_suffix in ctx.source.text for p in ctx.catalog.stubs)
        self._file_methods: Optional[FrozenSet[str]] = None  # of the clients this file can build
        project = ctx.resolver.project
        # The prefilter's answer (already known for a file that passed it through its
        # project): when no imported project name is or leads to a wrapper or a client, the
        # calls of this file reach none either, and only its own functions can be wrappers.
        self._project = project if isinstance(project, OutboundProject) and project.brings_clients() else None
        self._through_project = self._project is not None
        # A wrapper defined in this file must call a client this file imports (or one its
        # project brings).
        self._defines_functions = "def " in ctx.source.text and (
            self._through_project or catalog_imports(ctx.catalog)(ctx.source.text)
        )
        self._defined_names: Optional[FrozenSet[str]] = None  # of this file's functions
        self._calls: Dict[int, Optional[OutboundCall]] = {}
        self._constructions: Dict[int, Optional[OutboundCall]] = {}
        self._sites: Dict[int, Tuple[OutboundCall, ...]] = {}
        self._looks: Dict[int, bool] = {}  # `first_look`, by call
        # The method names `sites` looks for (None: any), once known.
        self._first_look_methods: Optional[FrozenSet[str]] = None
        self._first_look_known = False

    def _client_methods(self) -> FrozenSet[str]:
        if self._file_methods is None:
            if self._through_project:
                # A client can arrive from a project module: any listed method may be its.
                self._file_methods = self.ctx.catalog.method_names
            else:
                self._file_methods = file_methods(self.ctx.catalog, self.ctx.source.text)
        return self._file_methods

    def _project_wrappers_possible(self, call: ast.Call) -> bool:
        """A cheap look before resolving a wrapper: the callee is a plain or dotted name, or a
        method of `self` / a project instance; the file defines a function or imports from
        the project."""
        if not (self._defines_functions or self._through_project):
            return False
        func = call.func
        # Only a function this file defines, or a wrapper its project modules define, can be
        # the wrapper: its name must match.
        if self._defined_names is None:
            # From the text, not a walk of the tree: a superset (a `def` in a string counts
            # too) that costs one regex pass.
            own = frozenset(_DEF_NAME.findall(self.ctx.source.text)) if self._defines_functions else frozenset()
            self._defined_names = own | self._project.wrapper_names() if self._project is not None else own
        final = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if final not in self._defined_names:
            return False
        while isinstance(func, ast.Attribute):
            func = func.value
        return isinstance(func, ast.Name)

    def call(self, call: ast.Call) -> Optional[OutboundCall]:
        key = id(call)
        if key not in self._calls:
            ctx = self.ctx
            self._calls[key] = classify_call(
                call, ctx.scope, ctx.resolver, ctx.catalog, self._stubs_possible, self._client_methods()
            )
        return self._calls[key]

    def construction(self, call: ast.Call) -> Optional[OutboundCall]:
        """The call builds a client whose constructor takes a timeout (`httpx.Client(...)`,
        `redis.Redis(...)`): that view of it, with api.kind == "client"; else None."""
        key = id(call)
        if key not in self._constructions:
            ctx = self.ctx
            self._constructions[key] = classify_construction(call, ctx.scope, ctx.resolver, ctx.catalog)
        return self._constructions[key]

    def sites(self, call: ast.Call) -> Tuple[OutboundCall, ...]:
        """Every view of `call` that takes a timeout: as an outbound call and as a client's
        construction (a factory such as `asyncpg.connect` is both); () for most calls."""
        key = id(call)
        sites = self._sites.get(key)
        if sites is None:
            sites = ()
            ctx = self.ctx
            # A first look: any method name at all when a gRPC stub may be the receiver.
            if not self._first_look_known:
                self._first_look_methods = (
                    None if self._stubs_possible else self._client_methods() | ctx.catalog.returning_methods
                )
                self._first_look_known = True
            methods = self._first_look_methods
            if may_be_listed(call.func, ctx.scope, ctx.resolver, ctx.catalog, methods):
                views = (self.call(call), self.construction(call))
                sites = tuple(view for view in views if view is not None)
            if not sites and self._project_wrappers_possible(call):
                wrapper, _ = wrapper_site(call, ctx.scope, ctx.resolver, ctx.catalog)
                if wrapper is not None:
                    sites = (wrapper,)
                    self._calls[key] = wrapper
            self._sites[key] = sites
        return sites


    def first_look(self, call: ast.Call) -> bool:
        """The outbound rules' first look at a call (see `common.outbound_first_look`),
        decided once per call: several rule groups and looks ask it of the same node."""
        key = id(call)
        found = self._looks.get(key)
        if found is None:
            ctx = self.ctx
            found = self._looks[key] = bool(self.sites(call)) or may_build_timeout_object(
                call, ctx.scope, ctx.resolver, ctx.catalog
            )
        return found


def outbound_sites(ctx: "FileView", call: ast.Call) -> Tuple[OutboundCall, ...]:
    # Every outbound rule asks this of every call: answer a repeat from the cache directly.
    analysis = ctx.analysis(OutboundSites)
    found = analysis._sites.get(id(call))
    return found if found is not None else analysis.sites(call)


def outbound_call(ctx: "FileView", call: ast.Call) -> Optional[OutboundCall]:
    """The call as an outbound call, after the cheap first look (`outbound_sites`)."""
    return ctx.analysis(OutboundSites).call(call) if outbound_sites(ctx, call) else None
