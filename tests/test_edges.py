"""Issue 34: where requests enter (`deadline-lint edges`), the budget minted there and only
there (`deadline-lint adopt`), and threading only what an edge reaches."""
from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import pytest

from deadline_lint.families.outbound.fixes.adoption.edges import find_edges
from deadline_lint.families.outbound.fixes.adoption.minting import mint_lines
from deadline_lint.frontends.cli import main
from deadline_lint.run import api
from deadline_lint.settings.profile import ProfileError, default_profile, explicit_profile


def _edges(source: str, name: str = "app.py", entry_points: Sequence[str] = ()) -> List[Tuple[str, str, str]]:
    tree = ast.parse(textwrap.dedent(source))
    return [(e.name, e.kind, e.source) for e in find_edges(tree, name, entry_points)]


@pytest.mark.parametrize(
    "source, expected",
    [
        ("""
         from fastapi import FastAPI, Request
         app = FastAPI()
         @app.get("/a")
         async def a(request: Request): ...
         @app.post("/b")
         async def b(order: dict): ...
         @app.middleware("http")
         async def mw(req: Request, call_next): ...
         """, [("a", "http", "header"), ("b", "http", "edge total"), ("mw", "http", "header")]),
        ("""
         from fastapi import APIRouter
         router = APIRouter()
         @router.put("/x")
         def x(request): ...
         """, [("x", "http", "header")]),
        ("""
         from flask import Flask, request
         app = Flask(__name__)
         @app.route("/")
         def index(): ...
         """, [("index", "http", "header")]),
        ("""
         from aiohttp import web
         routes = web.RouteTableDef()
         @routes.get("/")
         async def hello(request): ...
         async def other(request): ...
         async def third(request): ...
         @web.middleware
         async def mw(request, handler): ...
         app = web.Application()
         app.router.add_get("/o", other)
         app.add_routes([web.post("/t", third)])
         """, [("hello", "http", "header"), ("other", "http", "header"), ("third", "http", "header"),
               ("mw", "http", "header")]),
        ("""
         import inventory_pb2_grpc
         class Inventory(inventory_pb2_grpc.InventoryServicer):
             def Reserve(self, request, context): ...
             def _helper(self, a, b): ...
         class Plain:
             def Get(self, request, context): ...
         def serve(server):
             inventory_pb2_grpc.add_PlainServicer_to_server(Plain(), server)
         """, [("Inventory.Reserve", "grpc", "grpc context"), ("Plain.Get", "grpc", "grpc context")]),
        ("""
         def lambda_handler(event, context): ...
         """, [("lambda_handler", "lambda", "lambda context")]),
        ("""
         from celery import Celery, shared_task
         import dramatiq
         app = Celery("x")
         @app.task(bind=True)
         def t1(self): ...
         @shared_task
         def t2(): ...
         @dramatiq.actor
         def t3(): ...
         """, [("t1", "task", "edge total"), ("t2", "task", "edge total"), ("t3", "task", "edge total")]),
        ("""
         import sys
         def main(): ...
         if __name__ == "__main__":
             sys.exit(main())
         """, [("main", "cli", "edge total")]),
    ],
)
def test_the_frameworks_edges_are_found(source: str, expected: list) -> None:
    assert _edges(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        # Decorators that merely look like routes or tasks.
        """
        from cachetools import Cache
        cache = Cache()
        @cache.get("key")
        def cached(request): ...
        """,
        """
        import somewhere
        app = somewhere.make()
        @app.route("/")
        def index(): ...
        @app.task
        def job(): ...
        """,
        # An app bound twice: which one decorates cannot be told.
        """
        from fastapi import FastAPI
        app = FastAPI()
        app = wrap(app)
        @app.get("/")
        def index(request): ...
        """,
        # An undecorated `handler(event, context)` that no profile names; a `lambda_handler` of another shape.
        """
        def handler(event, context): ...
        def lambda_handler(event): ...
        """,
        # A class whose base is no servicer; a `main` never called under the main guard.
        """
        class Inventory(Base):
            def Reserve(self, request, context): ...
        def main(): ...
        if __name__ == "__main__":
            print("hi")
        """,
    ],
)
def test_near_misses_are_not_edges(source: str) -> None:
    assert _edges(source) == []


def test_django_views_only_in_a_views_module() -> None:
    source = "def detail(request, pk): ...\n"
    assert _edges(source, "shop/views.py") == [("detail", "http", "header")]
    assert _edges(source, "shop/helpers.py") == []


def test_the_profile_names_more_entry_points() -> None:
    source = """
    import myqueue
    def handler(event, context): ...
    class Worker:
        def run(self, job): ...
    @myqueue.job
    def consume(message): ...
    """
    found = _edges(source, entry_points=("handler", "Worker.run", "myqueue.job"))
    assert found == [("handler", "lambda", "lambda context"), ("Worker.run", "entry point", "edge total"),
                     ("consume", "entry point", "edge total")]
    # `@name` is a decorator only: the decorator's own def is no edge.
    router = """
    class Route:
        @classmethod
        def get(cls, path): ...
    class Handlers:
        @Route.get("/x")
        def show(request, response): ...
    """
    assert _edges(router, entry_points=("@Route.get",)) == [("Handlers.show", "entry point", "edge total")]
    assert _edges(router, entry_points=("Route.get",))[0][0] == "Route.get"


def test_the_entry_points_key_is_validated(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("edge:\n  entry_points: [pkg.handler]\n", encoding="utf-8")
    assert explicit_profile(str(good)).edge.entry_points == ("pkg.handler",)
    bad = tmp_path / "bad.yaml"
    bad.write_text("edge:\n  entry_points: 3\n", encoding="utf-8")
    with pytest.raises(ProfileError):
        explicit_profile(str(bad))


# -- the command ---------------------------------------------------------------------------
def _write(root: Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


SERVICE = {
    "svc/__init__.py": "",
    "svc/app.py": """
        import requests
        from fastapi import FastAPI, Request

        from svc import backend

        app = FastAPI()


        @app.get("/items")
        def items(request: Request):
            \"\"\"List items.\"\"\"
            data = backend.fetch_items()
            return requests.get("http://catalog/items", params=data).json()


        @app.get("/health")
        def health():
            return backend.fetch_items()


        def orphan():
            return backend.fetch_other()
        """,
    "svc/backend.py": """
        import requests


        def fetch_items():
            return requests.get("http://items/list").json()


        def fetch_other():
            return requests.get("http://other/list").json()
        """,
    "svc/rpc.py": """
        import requests
        import inventory_pb2_grpc

        from svc import backend


        class Inventory(inventory_pb2_grpc.InventoryServicer):
            def Reserve(self, request, context):
                return requests.post("http://stock/reserve", json=backend.fetch_items()).json()


        def lambda_handler(event, context):
            return backend.fetch_items()
        """,
}


def test_edges_lists_each_edge_with_its_budget_source(tmp_path: Path, capsys, monkeypatch) -> None:
    _write(tmp_path, SERVICE)
    monkeypatch.chdir(tmp_path)
    assert main(["edges", "svc"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "svc/app.py:11  http  items  inbound header X-Request-Budget-Ms capped at edge_total",
        "svc/app.py:18  http  health  edge total",
        "svc/rpc.py:9  grpc  Inventory.Reserve  grpc context",
        "svc/rpc.py:13  lambda  lambda_handler  lambda context",
    ]
    assert main(["edges", "--format", "json", "svc/rpc.py"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["path"], r["line"], r["kind"], r["budget_source"]) for r in rows] == [
        ("svc/rpc.py", 9, "grpc", "grpc context"), ("svc/rpc.py", 13, "lambda", "lambda context"),
    ]


def test_edges_exits_2_on_bad_input(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["edges", "missing"]) == 2
    assert "missing: no such file or directory" in capsys.readouterr().err
    (tmp_path / "p.yaml").write_text("edge:\n  entry_points: [1]\n", encoding="utf-8")
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    assert main(["edges", "--profile", "p.yaml", "a.py"]) == 2


# -- minting at the edge and threading from it --------------------------------------------
@pytest.fixture
def adopted(tmp_path: Path, monkeypatch) -> Path:
    _write(tmp_path, SERVICE)
    monkeypatch.chdir(tmp_path)
    assert main(["adopt", "svc"]) == 0
    return tmp_path / "svc"


def _function(path: Path, name: str) -> ast.AST:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return next(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name)


def test_each_source_kind_mints_its_budget(adopted: Path) -> None:
    app = (adopted / "app.py").read_text(encoding="utf-8")
    assert ("budget_s = max(0.0, min(float(request.headers.get('X-Request-Budget-Ms', 10000)) / 1000, 10.0))"
            in app)
    assert "    except ValueError:\n        budget_s = 0.0\n" in app
    assert "def health():\n    budget_s = 10.0\n    return backend.fetch_items(budget_s=budget_s)\n" in app
    # A gRPC or Lambda context is a budget already: its edge forwards what is left of it.
    rpc = (adopted / "rpc.py").read_text(encoding="utf-8")
    assert ("backend.fetch_items(budget_s=max(0.001, (10.0 if context.time_remaining() is None "
            "else context.time_remaining()) - 0.05))") in rpc
    assert "backend.fetch_items(budget_s=max(0.001, context.get_remaining_time_in_millis() / 1000 - 0.05))" in rpc
    assert "budget_s = " not in rpc


@pytest.mark.parametrize(
    "source, expected",
    [
        ("import grpc\nclass S(x.FooServicer):\n    def Get(self, request, ctx): ...\n",
         ["budget_s = 10.0 if ctx.time_remaining() is None else max(0.0, min(ctx.time_remaining(), 10.0))"]),
        ("def lambda_handler(event, context): ...\n",
         ["budget_s = max(0.0, min(context.get_remaining_time_in_millis() / 1000, 10.0))"]),
        ("import celery\napp = celery.Celery()\n@app.task\ndef t(): ...\n", ["budget_s = 10.0"]),
    ],
)
def test_the_mint_reads_the_context_of_its_kind(source: str, expected: list) -> None:
    (edge,) = find_edges(ast.parse(source), "m.py")
    assert mint_lines(edge, default_profile(), "budget_s") == expected


def test_no_function_adopt_writes_has_a_default_budget(adopted: Path) -> None:
    for path in adopted.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for arg, default in zip(node.args.kwonlyargs, node.args.kw_defaults):
                    assert not (arg.arg == "budget_s" and default is not None), (path, node.name)
                assert all(a.arg != "budget_s" for a in node.args.args), (path, node.name)


def test_every_threaded_function_is_reachable_from_an_edge(adopted: Path) -> None:
    threaded = {
        node.name
        for path in adopted.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(a.arg == "budget_s" for a in node.args.kwonlyargs)
    }
    assert threaded == {"fetch_items"}  # called by the edges; fetch_other only by `orphan`
    assert "budget_s" not in ast.unparse(_function(adopted / "app.py", "orphan"))
    assert "budget_s" not in ast.unparse(_function(adopted / "backend.py", "fetch_other"))


def test_the_adopted_code_checks_clean_and_adopting_again_changes_nothing(adopted: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["check", "--no-cache", "--select", "DL1,DL204,DL503", "svc"]) == 0
    before = {p.name: p.read_text(encoding="utf-8") for p in adopted.glob("*.py")}
    assert main(["adopt", "--diff", "svc"]) == 0
    assert {p.name: p.read_text(encoding="utf-8") for p in adopted.glob("*.py")} == before
    for text in before.values():
        compile(text, "adopted", "exec")


def test_fix_thread_budget_without_adopt_mints_nothing(tmp_path: Path) -> None:
    _write(tmp_path, SERVICE)
    paths = [str(p) for p in sorted((tmp_path / "svc").glob("*.py"))]
    options = api.Options(unsafe_fixes=True, thread_budget=True, jobs=1, write=False)
    texts = [r.text or "" for r in api.Session(options).fix_paths(paths)]
    assert not any("budget_s = " in text for text in texts)


def test_an_edge_with_no_line_for_the_mint_does_not_forward(tmp_path: Path, monkeypatch) -> None:
    _write(tmp_path, {"svc/__init__.py": "", "svc/one.py": """
        import requests
        from fastapi import FastAPI

        app = FastAPI()


        def fetch():
            return requests.get("http://items/list").json()


        @app.get("/x")
        def x(): return fetch()
        """})
    monkeypatch.chdir(tmp_path)
    assert main(["adopt", "svc"]) == 0
    text = (tmp_path / "svc" / "one.py").read_text(encoding="utf-8")
    assert "budget_s" not in text  # fetch keeps its own fix: no edge can hand it a budget
    assert 'requests.get("http://items/list", timeout=10.0)' in text


def test_adopt_dry_run_writes_nothing(tmp_path: Path, capsys, monkeypatch) -> None:
    _write(tmp_path, SERVICE)
    monkeypatch.chdir(tmp_path)
    before = {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "svc").glob("*.py")}
    assert main(["adopt", "--dry-run", "svc"]) == 1  # as `fix --diff`: 1 when something would change
    assert "+def fetch_items(*, budget_s: float):" in capsys.readouterr().out
    assert {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "svc").glob("*.py")} == before
    assert main(["adopt", "-"]) == 2


@pytest.mark.parametrize("diff", [False, True])
def test_an_edge_that_takes_a_deadline_still_forwards_to_a_callee_elsewhere(
    tmp_path: Path, monkeypatch, capsys, diff: bool,
) -> None:
    """An edge with a hop before a call into another module takes a deadline from the budget
    it mints. The later pass that forwards to the callee read that edge as one holding a
    budget it cannot forward: `--diff` showed the callee requiring `budget_s` and the edge's
    call without it (a TypeError when run), and a real run threaded nothing. Both now forward
    what is left of the deadline."""
    service = dict(SERVICE)
    service["svc/app.py"] = service["svc/app.py"].replace(
        "data = backend.fetch_items()", 'requests.get("http://catalog/warm")\n            data = backend.fetch_items()'
    )
    _write(tmp_path, service)
    monkeypatch.chdir(tmp_path)
    forward = "data = backend.fetch_items(budget_s=max(0.001, (budget_deadline_s - time.monotonic()) - 0.05))"
    if diff:
        main(["adopt", "--diff", "svc"])
        shown = capsys.readouterr().out
        assert "+def fetch_items(*, budget_s: float):" in shown and f"+    {forward}" in shown
        return
    assert main(["adopt", "svc"]) == 0
    assert "def fetch_items(*, budget_s: float):" in (tmp_path / "svc" / "backend.py").read_text(encoding="utf-8")
    assert forward in (tmp_path / "svc" / "app.py").read_text(encoding="utf-8")


def test_an_edge_without_a_docstring_that_takes_a_deadline_mints_first(tmp_path: Path, monkeypatch) -> None:
    """The deadline taken on entry goes before the first body line's indentation; the mint
    was only written when an edit inside the body read `budget_s`, so an edge with no
    docstring and two hops got `budget_deadline_s = time.monotonic() + budget_s` and no
    `budget_s` (a NameError when run)."""
    service = dict(SERVICE)
    service["svc/app.py"] = service["svc/app.py"].replace(
        "def health():\n            return backend.fetch_items()",
        'def health():\n            requests.get("http://a/ping")\n            return requests.get("http://b/ping")',
    )
    assert 'requests.get("http://a/ping")' in service["svc/app.py"]
    _write(tmp_path, service)
    monkeypatch.chdir(tmp_path)
    assert main(["adopt", "svc"]) == 0
    app = (tmp_path / "svc" / "app.py").read_text(encoding="utf-8")
    assert "def health():\n    budget_s = 10.0\n    budget_deadline_s = time.monotonic() + budget_s\n" in app
