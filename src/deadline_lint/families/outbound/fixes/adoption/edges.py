"""Where a request enters (`deadline-lint edges`, and the only places `adopt` mints a budget).

Read from the code shown, never guessed: a route decorator counts only on a receiver bound at
module level to the framework's own app or router (`app = FastAPI()`, `routes =
web.RouteTableDef()`), a Celery task only on `shared_task` or a `Celery()` app, a gRPC method
only in a class whose base is a generated `*Servicer` (or that is registered with
`add_*Servicer_to_server`), a Lambda handler only as `lambda_handler(event, context)` or named
in the profile's `edge.entry_points`, a CLI only as the def `if __name__ == "__main__":` calls.
A `cache.get(...)` decorator, an undecorated `handler`, a Django-looking function outside a
`views.py`: not an edge.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from types import MappingProxyType
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

from deadline_lint.families.shared.function_nodes import Function

# Kinds: where the budget comes from at each.
HTTP, GRPC, LAMBDA, TASK, CLI, PROFILE = "http", "grpc", "lambda", "task", "cli", "entry point"
HEADER, GRPC_CONTEXT, LAMBDA_CONTEXT, EDGE_TOTAL = "header", "grpc context", "lambda context", "edge total"

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Constructor -> the framework modules it is imported from.
_APPS = MappingProxyType({
    "FastAPI": ("fastapi",), "APIRouter": ("fastapi",), "Starlette": ("starlette",),
    "Flask": ("flask",), "Blueprint": ("flask",), "Quart": ("quart",),
    "RouteTableDef": ("aiohttp",), "Celery": ("celery",),
})
_ROUTE_VERBS = frozenset({"get", "post", "put", "delete", "patch", "head", "options", "route", "api_route",
                          "view", "websocket", "trace"})
_AIOHTTP_ADDERS = frozenset({"add_get", "add_post", "add_put", "add_delete", "add_patch", "add_route", "add_head"})
_AIOHTTP_VERBS = frozenset({"get", "post", "put", "delete", "patch", "route", "head", "view"})
_TASK_DECORATORS = MappingProxyType({"shared_task": ("celery",), "actor": ("dramatiq",)})
_MIDDLEWARE_BASES = frozenset({"BaseHTTPMiddleware"})


@dataclass(frozen=True)
class Edge:
    line: int
    kind: str  # http, grpc, lambda, task, cli, entry point
    name: str  # Class.method or function
    source: str  # HEADER, GRPC_CONTEXT, LAMBDA_CONTEXT, EDGE_TOTAL
    request: Optional[str] = None  # the expression whose `.headers` carry the inbound budget
    context: Optional[str] = None  # the gRPC or Lambda context parameter
    framework: str = ""
    node: Optional[Function] = None

    def describe(self, header: str) -> str:
        if self.source == HEADER:
            return f"inbound header {header} capped at edge_total"
        return self.source


def find_edges(tree: ast.Module, path: str, entry_points: Sequence[str] = ()) -> List[Edge]:
    """Every entry point of one module, in source order."""
    imports = _imported_from(tree)
    apps = _framework_bindings(tree, imports)
    found: Dict[int, Edge] = {}
    module_name = dotted_module_name(path)
    for function, klass in _functions(tree):
        edge = _decorated(function, klass, apps, imports) or _by_profile(function, klass, module_name, entry_points)
        if klass is None and edge is None:
            if function.name == "lambda_handler" and _lambda_shaped(function):
                edge = _edge(function, None, LAMBDA, "aws_lambda")
            elif os.path.basename(path) == "views.py" and _first_param(function) == "request":
                edge = _edge(function, None, HTTP, "django", request="request")
        if edge is not None:
            found[id(function)] = edge
    for function, kind, framework in _registered(tree, apps, imports):
        found.setdefault(id(function), _edge(function, None, kind, framework, imports=imports))
    servicers = _servicer_classes(tree)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in servicers:
            for method in node.body:
                if isinstance(method, DEFS) and not method.name.startswith("_") and len(method.args.args) == 3:
                    found.setdefault(id(method), _edge(method, node, GRPC, "grpc"))
        elif isinstance(node, ast.ClassDef) and any(_tail(b) in _MIDDLEWARE_BASES for b in node.bases):
            for method in node.body:
                if isinstance(method, DEFS) and method.name == "dispatch":
                    found.setdefault(id(method), _edge(method, node, HTTP, "starlette middleware"))
    main = _cli_main(tree)
    if main is not None:
        found.setdefault(id(main), _edge(main, None, CLI, "cli"))
    return sorted(found.values(), key=lambda e: e.line)


def _edge(function: Function, klass: Optional[ast.ClassDef], kind: str, framework: str,
          request: Optional[str] = None, imports: Optional[Dict[str, str]] = None) -> Edge:
    name = function.name if klass is None else f"{klass.name}.{function.name}"
    line = function.lineno
    params = [a.arg for a in function.args.args]
    if kind == GRPC:
        return Edge(line, kind, name, GRPC_CONTEXT, context=params[-1], framework=framework, node=function)
    if kind == LAMBDA:
        return Edge(line, kind, name, LAMBDA_CONTEXT, context=params[1], framework=framework, node=function)
    if kind == HTTP:
        request = request or _request_of(function, framework, imports or {})
        source = HEADER if request is not None else EDGE_TOTAL
        return Edge(line, kind, name, source, request=request, framework=framework, node=function)
    return Edge(line, kind, name, EDGE_TOTAL, framework=framework, node=function)


def _request_of(function: Function, framework: str, imports: Dict[str, str]) -> Optional[str]:
    """The request the handler can read headers from: a parameter named `request` or annotated
    `Request`; in Flask, `request` imported from flask (and not shadowed by a parameter)."""
    args = function.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    for arg in params:
        if arg.arg == "request" or (arg.annotation is not None and _tail(arg.annotation) in ("Request", "HttpRequest")):
            return arg.arg
    if framework == "flask" and imports.get("request", "").startswith("flask"):
        if not any(a.arg == "request" for a in params):
            return "request"
    return None


def _decorated(function: Function, klass: Optional[ast.ClassDef], apps: Dict[str, str],
               imports: Dict[str, str]) -> Optional[Edge]:
    for decorator in function.decorator_list:
        call = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(call, ast.Attribute) and isinstance(call.value, ast.Name):
            framework = apps.get(call.value.id)
            if framework is None:
                if call.attr == "middleware" and imports.get(call.value.id, "").startswith("aiohttp"):
                    return _edge(function, klass, HTTP, "aiohttp", imports=imports)
                if call.attr == "actor" and imports.get(call.value.id) == "dramatiq":
                    return _edge(function, klass, TASK, "dramatiq")
                continue
            if framework == "celery" and call.attr == "task":
                return _edge(function, klass, TASK, "celery")
            if framework != "celery" and (call.attr in _ROUTE_VERBS or call.attr == "middleware"):
                return _edge(function, klass, HTTP, framework, imports=imports)
        elif isinstance(call, ast.Name):
            origin = _TASK_DECORATORS.get(call.id)
            if origin is not None and imports.get(call.id, "").split(".")[0] in origin:
                return _edge(function, klass, TASK, origin[0])
    return None


def _by_profile(function: Function, klass: Optional[ast.ClassDef], module_name: str,
                entry_points: Sequence[str]) -> Optional[Edge]:
    if not entry_points:
        return None
    name = function.name if klass is None else f"{klass.name}.{function.name}"
    dotted = f"{module_name}.{name}" if module_name else name
    decorators = {_dotted(d.func if isinstance(d, ast.Call) else d) for d in function.decorator_list}
    for entry in entry_points:
        if entry.startswith("@"):
            matched = entry[1:] in decorators  # a decorator only, never the def of that name
        else:
            matched = entry in (name, dotted) or dotted.endswith("." + entry) or entry in decorators
        if matched:
            kind = LAMBDA if klass is None and _lambda_shaped(function) else PROFILE
            return _edge(function, klass, kind, "profile")
    return None


def _lambda_shaped(function: Function) -> bool:
    return [a.arg for a in function.args.args] == ["event", "context"]


def _first_param(function: Function) -> Optional[str]:
    args = function.args.args
    return args[0].arg if args else None


def _functions(tree: ast.Module) -> Iterator[Tuple[Function, Optional[ast.ClassDef]]]:
    for node in tree.body:
        if isinstance(node, DEFS):
            yield node, None
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, DEFS):
                    yield item, node


def _imported_from(tree: ast.Module) -> Dict[str, str]:
    """Name bound at module level -> the dotted name it was imported as."""
    names: Dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                names[alias.asname or top] = alias.name if alias.asname else top
    return names


def _framework_bindings(tree: ast.Module, imports: Dict[str, str]) -> Dict[str, str]:
    """Module-level names bound once to a framework's app or router: name -> framework."""
    bound: Dict[str, str] = {}
    seen: Set[str] = set()
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            if target.id in seen:
                bound.pop(target.id, None)  # bound twice: which one is the app cannot be told
                continue
            seen.add(target.id)
            value = getattr(node, "value", None)
            framework = _constructed_app(value, imports) if isinstance(value, ast.Call) else None
            if framework is not None:
                bound[target.id] = framework
    return bound


def _constructed_app(call: ast.Call, imports: Dict[str, str]) -> Optional[str]:
    func = call.func
    if isinstance(func, ast.Name):
        origins = _APPS.get(func.id)
        origin = imports.get(func.id, "")
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        origins = _APPS.get(func.attr)
        origin = imports.get(func.value.id, "")
    else:
        return None
    if origins is None or origin.split(".")[0] not in origins:
        return None
    return origin.split(".")[0]


def _registered(
    tree: ast.Module, apps: Dict[str, str], imports: Dict[str, str],
) -> Iterator[Tuple[Function, str, str]]:
    """aiohttp handlers named in `app.router.add_get(path, handler)` or `web.get(path, handler)`."""
    defs = {n.name: n for n in tree.body if isinstance(n, DEFS)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or len(node.args) < 2:
            continue
        handler = node.args[1]
        if not isinstance(handler, ast.Name) or handler.id not in defs:
            continue
        func = node.func
        receiver = func.value
        if func.attr in _AIOHTTP_ADDERS and isinstance(receiver, ast.Attribute) and receiver.attr == "router":
            yield defs[handler.id], HTTP, "aiohttp"
        elif (
            func.attr in _AIOHTTP_VERBS and isinstance(receiver, ast.Name)
            and imports.get(receiver.id, "") in ("aiohttp.web", "aiohttp")
        ):
            yield defs[handler.id], HTTP, "aiohttp"


def _servicer_classes(tree: ast.Module) -> Set[str]:
    names = {
        node.name for node in tree.body
        if isinstance(node, ast.ClassDef) and any(_tail(b).endswith("Servicer") for b in node.bases)
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call) and _tail(node.func).startswith("add_")
            and _tail(node.func).endswith("Servicer_to_server") and node.args
            and isinstance(node.args[0], ast.Call) and isinstance(node.args[0].func, ast.Name)
        ):
            names.add(node.args[0].func.id)
    return names


def _cli_main(tree: ast.Module) -> Optional[Function]:
    defs = {n.name: n for n in tree.body if isinstance(n, DEFS)}
    for node in tree.body:
        if not (isinstance(node, ast.If) and _is_main_guard(node.test)):
            continue
        for statement in node.body:
            value = statement.value if isinstance(statement, ast.Expr) else None
            if isinstance(value, ast.Call) and value.func.__class__ is ast.Attribute and _tail(value.func) == "exit":
                value = value.args[0] if value.args else None  # sys.exit(main())
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in defs:
                return defs[value.func.id]
    return None


def _is_main_guard(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
        and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _tail(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _tail(node.value)
    return ""


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def dotted_module_name(path: str) -> str:
    """`pkg/sub/mod.py` -> `pkg.sub.mod`, climbing while the folder is a package."""
    path = os.path.abspath(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    parts = [] if stem == "__init__" else [stem]
    folder = os.path.dirname(path)
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    return ".".join(parts)
