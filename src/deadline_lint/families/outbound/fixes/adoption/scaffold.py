"""`adopt --scaffold`: for a project with no budget type, the one module that gives it one (a
monotonic `Budget`, a `ContextVar` with its accessors, and the middleware or interceptor of
each framework whose edges `edges` found), and the profile lines that make
`fix.propagation = "context"` read it. The module's text is in scaffold_templates.py; the
front end (frontends/adoption.py) decides where it goes and writes it."""
from __future__ import annotations

import ast
import json
import os
from dataclasses import dataclass
from string import Template
from types import MappingProxyType
from typing import TYPE_CHECKING, FrozenSet, List, Mapping, Sequence, Tuple

from deadline_lint.families.outbound.fixes.adoption import scaffold_templates as templates
from deadline_lint.families.outbound.fixes.adoption.edges import Edge, dotted_module_name

if TYPE_CHECKING:
    from deadline_lint.settings.profile import Profile

MODULE_NAME = "deadline_budget.py"
ACCESSOR = "remaining_seconds"  # the template's function returning the seconds left


@dataclass(frozen=True)
class Flavour:
    """What one framework adds to the module: its source, its imports, how to install it."""

    name: str
    source: str
    typing: FrozenSet[str] = frozenset()  # names from collections.abc, and typing's Any
    stdlib: Tuple[str, ...] = ()
    imports: Tuple[str, ...] = ()  # third-party import lines
    usage: str = ""


ASGI = Flavour(
    "asgi", templates.ASGI, frozenset({"Any"}),
    usage="FastAPI / Starlette: `app.add_middleware(DeadlineBudgetMiddleware)`;\n"
          "  another ASGI app: `app = DeadlineBudgetMiddleware(app)` (Quart: its `app.asgi_app`).",
)
AIOHTTP = Flavour(
    "aiohttp", templates.AIOHTTP, frozenset({"Awaitable"}), imports=("from aiohttp import web",),
    usage="aiohttp: `web.Application(middlewares=[deadline_budget_middleware])`.",
)
FLASK = Flavour(
    "flask", templates.FLASK, frozenset(), imports=("from flask import Flask, g, request",),
    usage="Flask: `install_deadline_budget(app)` once the app is created.",
)
DJANGO = Flavour(
    "django", templates.DJANGO, imports=("from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest",),
    usage='Django: add "{module}.DjangoDeadlineBudgetMiddleware" near the top of settings.MIDDLEWARE.',
)
GRPC = Flavour(
    "grpc", templates.GRPC_SYNC, frozenset({"Any"}), imports=("import grpc",),
    usage="gRPC: `grpc.server(executor, interceptors=[DeadlineBudgetInterceptor()])`.",
)
GRPC_AIO = Flavour(
    "grpc.aio", templates.GRPC_AIO, frozenset({"Any", "AsyncIterator", "Awaitable"}), ("inspect",),
    ("import grpc", "import grpc.aio"),
    usage="gRPC asyncio: `grpc.aio.server(interceptors=[AioDeadlineBudgetInterceptor()])`.",
)
FLAVOURS: Mapping[str, Flavour] = MappingProxyType({f.name: f for f in (ASGI, AIOHTTP, FLASK, DJANGO, GRPC, GRPC_AIO)})
# An edge's framework (edges.py) -> the flavour that serves it; the others (tasks, Lambda, a
# CLI, the profile's entry points) have no middleware: the module alone.
_BY_FRAMEWORK = MappingProxyType({
    "fastapi": "asgi", "starlette": "asgi", "starlette middleware": "asgi", "quart": "asgi",
    "aiohttp": "aiohttp", "flask": "flask", "django": "django",
})


def flavours_for(edges: Sequence[Edge]) -> List[Flavour]:
    """The flavours the edges' frameworks need, in a fixed order (one module, each once)."""
    wanted = set()
    for edge in edges:
        if edge.framework == "grpc":
            wanted.add("grpc.aio" if isinstance(edge.node, ast.AsyncFunctionDef) else "grpc")
        elif edge.framework in _BY_FRAMEWORK:
            wanted.add(_BY_FRAMEWORK[edge.framework])
    return [flavour for name, flavour in FLAVOURS.items() if name in wanted]


def render(flavours: Sequence[Flavour], profile: "Profile", module: str = "deadline_budget") -> str:
    """The module's source for these flavours, with the profile's header and numbers."""
    names = {"Callable", "Iterator"}
    stdlib = {"contextlib", "contextvars", "math", "time"}
    third_party: List[str] = []
    for flavour in flavours:
        names |= flavour.typing
        stdlib.update(flavour.stdlib)
        third_party.extend(line for line in flavour.imports if line not in third_party)
    lines = [f"import {name}" for name in sorted(stdlib)]
    lines.append(f"from collections.abc import {', '.join(sorted(names - {'Any'}))}")
    if "Any" in names:
        lines.append("from typing import Any")
    if third_party:  # isort's order: `import x` lines first, then `from x import y`
        lines += ["", *sorted(third_party, key=lambda line: (line.startswith("from "), line))]
    usage = [flavour.usage.replace("{module}", module) for flavour in flavours]
    text = Template(templates.CORE).substitute(
        usage="\n\nInstall the edge's part:\n" + "\n".join(f"- {line}" for line in usage) if usage else
        "\n\nNo framework was found: create a `Budget` where each request or job enters and run its\n"
        "work inside `with budget_scope(budget):`.",
        imports="\n".join(lines),
        header=json.dumps(profile.budget_header),
        edge_total=repr(profile.edge_total_ms / 1000),
        hop_margin=repr(profile.hop_margin_ms / 1000),
        refuse_below=repr(profile.refuse_below_ms / 1000),
    )
    grpc = [f for f in flavours if f.name.startswith("grpc")]
    for flavour in flavours:
        if flavour is (grpc[0] if grpc else None):
            text += templates.GRPC_COMMON
        text += flavour.source
    return text


def budget_class_in(tree: ast.Module, types: Sequence[str]) -> "ast.ClassDef | None":
    """A class the profile's `budget.types` names, defined in this module: a project that has
    one already has a budget type, and a second one would split its budgets in two."""
    names = {name.rpartition(".")[2] for name in types}
    return next((node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name in names), None)


def default_target(edges: Sequence[Tuple[str, Edge]], paths: Sequence[str]) -> str:
    """Next to the edges: in the deepest folder holding every edge's file; with no edge, in
    the first folder named (or the first file's folder)."""
    if edges:
        folder = os.path.commonpath([os.path.dirname(os.path.abspath(path)) for path, _ in edges])
    else:
        first = os.path.abspath(paths[0] if paths else ".")
        folder = first if os.path.isdir(first) else os.path.dirname(first)
    return os.path.join(os.path.relpath(folder), MODULE_NAME)


def profile_lines(target: str) -> str:
    """The `pyproject.toml` lines that thread the ambient budget through the module's accessor."""
    accessor = f"{dotted_module_name(target)}.{ACCESSOR}"
    return (
        "[tool.deadline-lint.fix]\n"
        'propagation = "context"\n'
        f'context_accessor = "{accessor}"\n'
        "\n"
        "[tool.deadline-lint.budget]\n"
        f'accessors = ["{accessor}"]  # add to the list if your profile has one\n'
    )
