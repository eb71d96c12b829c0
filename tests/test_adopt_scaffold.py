"""Issue 34: `deadline-lint adopt --scaffold` writes one budget module for a project with none
(a monotonic `Budget`, a `ContextVar` with its accessors, the middleware or interceptor of the
frameworks its edges use) and prints the profile lines that make `fix.propagation = "context"`
read it. Each flavour is generated, parses, checks clean under every rule, and is run here:
the Budget on a fake clock, the header rules, the ASGI middleware with a hand-written app,
aiohttp's (when installed) and the gRPC interceptors and the Flask and Django hooks through
fakes of those frameworks."""
from __future__ import annotations

import ast
import asyncio
import importlib.util
import os
import shutil
import sys
import time
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, Dict, List, Optional, Sequence

import pytest

from deadline_lint.families.outbound.fixes.adoption import scaffold
from deadline_lint.families.registry import all_rules
from deadline_lint.fixes.writes import TEMP_SUFFIX, write_new
from deadline_lint.frontends.cli import main
from deadline_lint.settings.profile import build_profile, default_profile

ROOT = Path(__file__).resolve().parent.parent
WIDE = ROOT / "bench" / "wide.yaml"
PROJECT = ROOT / "fixtures" / "projects" / "scaffold_fastapi"
EVERY_RULE = ",".join(all_rules())  # the opt-in ones too
FRAMEWORK_MODULES = {"asgi": set(), "aiohttp": {"aiohttp"}, "flask": {"flask"}, "django": {"django"},
                     "grpc": {"grpc"}, "grpc.aio": {"grpc"}}
CASES: Dict[str, Sequence[str]] = {"none": (), **{name: (name,) for name in scaffold.FLAVOURS},
                                   "all": tuple(scaffold.FLAVOURS)}


def _render(names: Sequence[str], profile: Any = None) -> str:
    return scaffold.render([scaffold.FLAVOURS[n] for n in names], profile or default_profile())


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"scaffolded_{path.stem}_{id(path)}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _module(tmp_path: Path, names: Sequence[str] = (), profile: Any = None) -> ModuleType:
    path = tmp_path / f"budget_{'_'.join(n.replace('.', '_') for n in names) or 'core'}.py"
    path.write_text(_render(names, profile), encoding="utf-8")
    return _load(path)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


# --- the module as text ---------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(CASES))
def test_each_flavour_parses_checks_clean_and_imports_only_its_framework(case: str, tmp_path: Path, capsys) -> None:
    text = _render(CASES[case])
    tree = ast.parse(text, feature_version=(3, 11))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    defined = [n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
    assert len(defined) == len(set(defined))  # every flavour together too: no name defined twice
    frameworks = set().union(*FRAMEWORK_MODULES.values())
    assert imported & frameworks == set().union(set(), *(FRAMEWORK_MODULES[n] for n in CASES[case]))
    path = tmp_path / "deadline_budget.py"
    path.write_text(text, encoding="utf-8")
    assert main(["check", "--no-cache", "--profile", str(WIDE), "--select", EVERY_RULE, str(path)]) == 0, \
        capsys.readouterr().out
    assert main(["check", "--no-cache", "--select", EVERY_RULE, str(path)]) == 0


def test_the_profile_sets_the_header_and_numbers() -> None:
    profile = build_profile({"budget_header": "X-Deadline-Ms", "edge_total_ms": 5000, "hop_margin_ms": 20,
                             "refuse_below_ms": 30}, "p.yaml")
    text = _render((), profile)
    for line in ('BUDGET_HEADER = "X-Deadline-Ms"', "EDGE_TOTAL_S = 5.0", "HOP_MARGIN_S = 0.02",
                 "REFUSE_BELOW_S = 0.03"):
        assert line in text
    assert "time.time" not in text and "datetime" not in text  # the monotonic clock only


# --- Budget, the ContextVar, the header -----------------------------------------------------

def test_budget_counts_down_on_its_clock(tmp_path: Path) -> None:
    mod = _module(tmp_path)
    clock = FakeClock()
    budget = mod.Budget(2.0, clock=clock)
    assert budget.remaining() == pytest.approx(2.0) and not budget.expired()
    clock.now += 0.5
    assert budget.remaining() == pytest.approx(1.5)
    assert budget.timeout() == pytest.approx(1.5 - 0.05)
    assert budget.timeout(margin=0.2) == pytest.approx(1.3)
    assert budget.header_value() == "1450"
    budget.check()  # 1.5 s left: above the 100 ms refuse threshold
    clock.now += 1.42
    with pytest.raises(mod.BudgetExhausted):
        budget.check()  # 80 ms left
    with pytest.raises(mod.BudgetExhausted):
        budget.timeout(margin=0.08)  # the margin would take all of it
    assert budget.timeout() == pytest.approx(0.03)
    clock.now += 1.0
    assert budget.remaining() == 0.0 and budget.expired()
    with pytest.raises(TimeoutError):  # BudgetExhausted is an expiry
        budget.timeout()


def test_budget_never_exceeds_the_edge_total_and_runs_on_the_monotonic_clock(tmp_path: Path) -> None:
    mod = _module(tmp_path)
    assert mod.Budget(3600.0).remaining() <= 10.0
    assert mod.Budget(-1.0).expired()
    budget = mod.Budget(0.2)
    first = budget.remaining()
    time.sleep(0.02)
    assert 0.0 < budget.remaining() < first
    time.sleep(0.2)
    assert budget.expired()


@pytest.mark.parametrize("value", ["0", "-1", "abc", "nan", "inf", "-inf", "1e999", "12ms"])
def test_header_values_that_are_not_a_positive_number_of_milliseconds_are_rejected(tmp_path: Path,
                                                                                   value: str) -> None:
    mod = _module(tmp_path)
    with pytest.raises(ValueError, match="X-Request-Budget-Ms"):
        mod.seconds_from_header(value)


def test_header_values_are_capped_at_the_edge_total_and_missing_is_the_edge_total(tmp_path: Path) -> None:
    mod = _module(tmp_path)
    assert mod.seconds_from_header("250") == pytest.approx(0.25)
    assert mod.seconds_from_header(" 1500.5 ") == pytest.approx(1.5005)
    assert mod.seconds_from_header("9999") == pytest.approx(9.999)
    assert mod.seconds_from_header("99999") == 10.0
    assert mod.seconds_from_header(None) == mod.seconds_from_header("") == 10.0
    (tmp_path / "short").mkdir()
    short = _module(tmp_path / "short", profile=build_profile({"edge_total_ms": 5000}, "p.yaml"))
    assert short.seconds_from_header("9999") == 5.0


def test_the_context_var_scopes_the_budget_and_the_accessor_reads_it(tmp_path: Path) -> None:
    mod = _module(tmp_path)
    assert mod.current_budget() is None and mod.remaining_seconds() == 10.0  # no request: the edge total
    clock = FakeClock()
    with mod.budget_scope(mod.Budget(1.0, clock=clock)) as budget:
        assert mod.current_budget() is budget
        clock.now += 0.25
        assert mod.remaining_seconds() == pytest.approx(0.75)
        with mod.budget_scope(mod.Budget(0.1, clock=clock)):
            assert mod.remaining_seconds() == pytest.approx(0.1)
        assert mod.current_budget() is budget
    assert mod.current_budget() is None


# --- the middleware and interceptors ---------------------------------------------------------

def _asgi(mod: ModuleType, scope: Dict[str, Any]) -> tuple:
    seen: List[Optional[float]] = []
    sent: List[dict] = []

    async def app(scope: dict, receive: Any, send: Any) -> None:
        seen.append(None if mod.current_budget() is None else mod.remaining_seconds())
        await send({"type": "http.response.start", "status": 200, "headers": []})

    async def receive() -> dict:
        return {"type": "http.request", "body": b""}

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(mod.DeadlineBudgetMiddleware(app)(scope, receive, send))
    return seen, sent


def test_the_asgi_middleware_runs_each_request_in_its_budget(tmp_path: Path) -> None:
    mod = _module(tmp_path, ("asgi",))
    seen, sent = _asgi(mod, {"type": "http", "headers": [(b"accept", b"*/*"), (b"x-request-budget-ms", b"2000")]})
    assert seen[0] is not None and 1.9 < seen[0] <= 2.0 and sent[0]["status"] == 200
    seen, _ = _asgi(mod, {"type": "http", "headers": []})
    assert seen[0] is not None and 9.9 < seen[0] <= 10.0  # no header: the edge total
    seen, _ = _asgi(mod, {"type": "http", "headers": [(b"x-request-budget-ms", b"60000")]})
    assert seen[0] is not None and seen[0] <= 10.0  # capped
    assert mod.current_budget() is None  # reset after the request


@pytest.mark.parametrize("value", [b"0", b"-1", b"abc"])
def test_the_asgi_middleware_answers_400_to_a_bad_header_without_calling_the_app(tmp_path: Path,
                                                                                  value: bytes) -> None:
    mod = _module(tmp_path, ("asgi",))
    seen, sent = _asgi(mod, {"type": "http", "headers": [(b"x-request-budget-ms", value)]})
    assert seen == [] and sent[0]["status"] == 400 and b"X-Request-Budget-Ms" in sent[1]["body"]


def test_the_asgi_middleware_leaves_other_scopes_alone(tmp_path: Path) -> None:
    mod = _module(tmp_path, ("asgi",))
    seen, _ = _asgi(mod, {"type": "lifespan"})
    assert seen == [None]


def test_the_aiohttp_middleware(tmp_path: Path) -> None:
    web = pytest.importorskip("aiohttp.web")
    mod = _module(tmp_path, ("aiohttp",))
    seen: List[float] = []

    async def handler(request: Any) -> Any:
        seen.append(mod.remaining_seconds())
        return web.Response(text="ok")

    request = SimpleNamespace(headers={"X-Request-Budget-Ms": "1500"})
    response = asyncio.run(mod.deadline_budget_middleware(request, handler))
    assert response.status == 200 and 1.4 < seen[0] <= 1.5 and mod.current_budget() is None
    with pytest.raises(web.HTTPBadRequest):
        asyncio.run(mod.deadline_budget_middleware(SimpleNamespace(headers={"X-Request-Budget-Ms": "0"}), handler))
    assert len(seen) == 1


def _fake_grpc(monkeypatch) -> ModuleType:
    grpc = ModuleType("grpc")
    aio = ModuleType("grpc.aio")

    def maker(kind: str) -> Any:
        def make(behavior: Any, request_deserializer: Any = None, response_serializer: Any = None) -> Any:
            handler: Dict[str, Any] = dict.fromkeys(("unary_unary", "unary_stream", "stream_unary", "stream_stream"))
            handler[kind] = behavior
            return SimpleNamespace(request_deserializer=request_deserializer,
                                   response_serializer=response_serializer, **handler)
        return make

    for kind in ("unary_unary", "unary_stream", "stream_unary", "stream_stream"):
        setattr(grpc, f"{kind}_rpc_method_handler", maker(kind))
    grpc.ServerInterceptor = type("ServerInterceptor", (), {})  # type: ignore[attr-defined]
    aio.ServerInterceptor = type("ServerInterceptor", (), {})  # type: ignore[attr-defined]
    grpc.aio = aio  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "grpc", grpc)
    monkeypatch.setitem(sys.modules, "grpc.aio", aio)
    return grpc


class FakeContext:
    def __init__(self, left: Optional[float]) -> None:
        self.left = left

    def time_remaining(self) -> Optional[float]:
        return self.left


def test_the_grpc_interceptor_reads_the_clients_deadline(tmp_path: Path, monkeypatch) -> None:
    grpc = _fake_grpc(monkeypatch)
    mod = _module(tmp_path, ("grpc",))
    seen: List[float] = []

    def unary(request: Any, context: Any) -> str:
        seen.append(mod.remaining_seconds())
        return "done"

    def streaming(request: Any, context: Any) -> Any:
        for item in ("a", "b"):
            seen.append(mod.remaining_seconds())
            yield item

    interceptor = mod.DeadlineBudgetInterceptor()
    assert interceptor.intercept_service(lambda details: None, "details") is None  # unknown method
    handler = interceptor.intercept_service(lambda details: grpc.unary_unary_rpc_method_handler(unary, "de", "se"),
                                            "details")
    assert handler.request_deserializer == "de" and handler.response_serializer == "se"
    assert handler.unary_unary("req", FakeContext(0.7)) == "done" and 0.6 < seen[-1] <= 0.7
    assert handler.unary_unary("req", FakeContext(None)) == "done" and 9.9 < seen[-1] <= 10.0  # no deadline
    assert handler.unary_unary("req", FakeContext(600.0)) == "done" and seen[-1] <= 10.0  # capped
    stream = interceptor.intercept_service(lambda d: grpc.stream_stream_rpc_method_handler(streaming), "d")
    assert list(stream.stream_stream(iter(()), FakeContext(2.0))) == ["a", "b"]
    assert all(1.9 < s <= 2.0 for s in seen[-2:]) and mod.current_budget() is None
    assert mod.budget_from_context(FakeContext(-3.0)).expired()


def test_the_grpc_aio_interceptor_reads_the_clients_deadline(tmp_path: Path, monkeypatch) -> None:
    grpc = _fake_grpc(monkeypatch)
    mod = _module(tmp_path, ("grpc.aio",))
    assert "import grpc.aio" in _render(("grpc.aio",)) and "DeadlineBudgetInterceptor(grpc." not in \
        _render(("grpc.aio",)).replace("AioDeadlineBudgetInterceptor", "")
    seen: List[float] = []

    async def unary(request: Any, context: Any) -> str:
        seen.append(mod.remaining_seconds())
        return "done"

    async def streaming(request: Any, context: Any) -> Any:
        seen.append(mod.remaining_seconds())
        yield "a"

    async def continuation_of(made: Any) -> Any:
        return made

    async def run() -> List[Any]:
        interceptor = mod.AioDeadlineBudgetInterceptor()
        one = await interceptor.intercept_service(
            lambda d: continuation_of(grpc.unary_unary_rpc_method_handler(unary)), "d")
        many = await interceptor.intercept_service(
            lambda d: continuation_of(grpc.unary_stream_rpc_method_handler(streaming)), "d")
        written = await interceptor.intercept_service(
            lambda d: continuation_of(grpc.unary_stream_rpc_method_handler(unary)), "d")  # writes itself
        return [await one.unary_unary("r", FakeContext(1.0)),
                [item async for item in many.unary_stream("r", FakeContext(None))],
                await written.unary_stream("r", FakeContext(0.5))]

    assert asyncio.run(run()) == ["done", ["a"], "done"]
    assert 0.9 < seen[0] <= 1.0 and 9.9 < seen[1] <= 10.0 and 0.4 < seen[2] <= 0.5


def test_the_flask_hooks(tmp_path: Path, monkeypatch) -> None:
    flask = ModuleType("flask")
    request = SimpleNamespace(headers={})
    g = SimpleNamespace()
    g.pop = lambda name, default=None: g.__dict__.pop(name, default)  # type: ignore[attr-defined]
    hooks: Dict[str, Any] = {}
    flask.Flask = object  # type: ignore[attr-defined]
    flask.g, flask.request = g, request  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "flask", flask)
    mod = _module(tmp_path, ("flask",))
    app = SimpleNamespace(before_request=lambda f: hooks.setdefault("before", f),
                          teardown_request=lambda f: hooks.setdefault("teardown", f))
    mod.install_deadline_budget(app)
    request.headers = {"X-Request-Budget-Ms": "300"}
    assert hooks["before"]() is None and 0.2 < mod.remaining_seconds() <= 0.3
    hooks["teardown"](None)
    assert mod.current_budget() is None
    request.headers = {"X-Request-Budget-Ms": "-1"}
    answer = hooks["before"]()
    assert answer[1] == 400 and mod.current_budget() is None
    hooks["teardown"](None)  # nothing set: nothing to reset


def test_the_django_middleware(tmp_path: Path, monkeypatch) -> None:
    django, http = ModuleType("django"), ModuleType("django.http")
    http.HttpRequest = http.HttpResponse = object  # type: ignore[attr-defined]
    http.HttpResponseBadRequest = lambda text: ("400", text)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "django", django)
    monkeypatch.setitem(sys.modules, "django.http", http)
    mod = _module(tmp_path, ("django",))
    middleware = mod.DjangoDeadlineBudgetMiddleware(lambda request: mod.remaining_seconds())
    assert 0.9 < middleware(SimpleNamespace(headers={"X-Request-Budget-Ms": "1000"})) <= 1.0
    assert middleware(SimpleNamespace(headers={"X-Request-Budget-Ms": "abc"}))[0] == "400"
    assert mod.current_budget() is None


# --- the command --------------------------------------------------------------------------

def _project(root: Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


FASTAPI = {"svc/__init__.py": "", "svc/api/__init__.py": "",
           "svc/api/app.py": "from fastapi import FastAPI, Request\napp = FastAPI()\n\n@app.get('/')\n"
                             "def index(request: Request):\n    return 1\n"}


def test_scaffold_writes_next_to_the_edges_and_prints_the_profile(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, {**FASTAPI, "svc/grpc_api.py": "import x_pb2_grpc\nclass S(x_pb2_grpc.XServicer):\n"
                                                      "    async def Get(self, request, context): ...\n"})
    assert main(["adopt", "--scaffold", "svc"]) == 0
    written = (tmp_path / "svc" / "deadline_budget.py").read_text()
    assert "class DeadlineBudgetMiddleware" in written and "AioDeadlineBudgetInterceptor" in written
    assert "class DeadlineBudgetInterceptor(" not in written and "aiohttp" not in written
    out, err = capsys.readouterr()
    assert 'context_accessor = "svc.deadline_budget.remaining_seconds"' in out
    assert 'accessors = ["svc.deadline_budget.remaining_seconds"]' in out and 'propagation = "context"' in out
    assert "wrote svc/deadline_budget.py (fastapi, grpc)" in err
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(TEMP_SUFFIX)]


def test_scaffold_never_overwrites(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, {**FASTAPI, "svc/api/deadline_budget.py": "# ours\n"})
    for argv in (["adopt", "--scaffold", "svc"], ["adopt", "--scaffold", "--dry-run", "svc"]):
        assert main(argv) == 2
        assert "svc/api/deadline_budget.py: already exists; not overwritten" in capsys.readouterr().err
    assert (tmp_path / "svc/api/deadline_budget.py").read_text() == "# ours\n"


def test_write_new_refuses_a_file_created_meanwhile(tmp_path: Path) -> None:
    target = tmp_path / "m.py"
    target.write_text("theirs\n")
    with pytest.raises(FileExistsError):
        write_new(str(target), "ours\n")
    assert target.read_text() == "theirs\n" and os.listdir(tmp_path) == ["m.py"]
    write_new(str(tmp_path / "n.py"), "ours\n")
    assert (tmp_path / "n.py").read_text() == "ours\n"


def test_scaffold_dry_run_writes_nothing(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, FASTAPI)
    assert main(["adopt", "--scaffold", "--diff", "svc"]) == 1  # as adopt --diff: 1, it would write
    out, err = capsys.readouterr()
    assert out.startswith("--- /dev/null\n+++ svc/api/deadline_budget.py\n") and "+class Budget:" in out
    assert "would write" in err and "context_accessor" in err
    assert not (tmp_path / "svc/api/deadline_budget.py").exists()


def test_scaffold_into_a_folder_that_is_not_there(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, FASTAPI)
    assert main(["adopt", "--scaffold", "--scaffold-path", "missing/budget.py", "svc"]) == 2
    assert "missing/budget.py: cannot be written (No such file or directory); nothing written" in \
        capsys.readouterr().err
    assert not (tmp_path / "missing").exists()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes anywhere")
def test_scaffold_into_an_unwritable_folder(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, FASTAPI)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert main(["adopt", "--scaffold", "--scaffold-path", "locked/budget.py", "svc"]) == 2
    finally:
        locked.chmod(0o700)
    assert "locked/budget.py: cannot be written" in capsys.readouterr().err and os.listdir(locked) == []


def test_scaffold_path_and_no_framework(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, {"jobs/__init__.py": "", "jobs/run.py": "def main():\n    pass\n\n"
                                                                "if __name__ == '__main__':\n    main()\n"})
    assert main(["adopt", "--scaffold-path", "x.py", "jobs"]) == 2  # needs --scaffold
    assert main(["adopt", "--scaffold", "-"]) == 2
    assert main(["adopt", "--scaffold", "--select", "DL101", "jobs"]) == 2  # a flag that would do nothing
    assert "--select does nothing here" in capsys.readouterr().err
    capsys.readouterr()
    assert main(["adopt", "--scaffold", "--scaffold-path", "jobs", "jobs"]) == 0  # a folder: the name goes in it
    text = (tmp_path / "jobs" / "deadline_budget.py").read_text()
    assert "No framework was found" in text and "Middleware" not in text and "Interceptor" not in text
    out, err = capsys.readouterr()
    assert 'context_accessor = "jobs.deadline_budget.remaining_seconds"' in out
    assert "wrote jobs/deadline_budget.py (cli; no middleware); review it and add to pyproject.toml" in err


def test_scaffold_then_adopt_with_context_propagation(tmp_path: Path, monkeypatch, capsys) -> None:
    """The walkthrough's path: scaffold, add the printed lines, adopt, check."""
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    monkeypatch.chdir(project)
    assert main(["check", "--no-cache", "--select", "DL101,DL102,DL503", "shop"]) == 1
    capsys.readouterr()
    assert main(["adopt", "--scaffold", "shop"]) == 0
    (project / "pyproject.toml").write_text(capsys.readouterr().out, encoding="utf-8")
    main(["adopt", "shop"])
    capsys.readouterr()
    assert main(["check", "--no-cache", "--select", "DL101,DL102,DL503", "shop"]) == 0
    catalog = (project / "shop" / "catalog.py").read_text()
    assert "import shop.deadline_budget" in catalog
    assert "timeout=max(0.001, shop.deadline_budget.remaining_seconds() - 0.05)" in catalog
    assert "budget_s" not in catalog  # context propagation: no signature changed
    assert main(["check", "--no-cache", "--profile", str(WIDE), "--select", EVERY_RULE,
                 "shop/deadline_budget.py"]) == 0
    # The fixed module runs: a request's budget reaches the interior hop through the ContextVar.
    monkeypatch.syspath_prepend(str(project))
    timeouts: List[float] = []
    requests = ModuleType("requests")
    requests.get = lambda url, timeout: (timeouts.append(timeout), SimpleNamespace(ok=True))[1]  # type: ignore
    monkeypatch.setitem(sys.modules, "requests", requests)
    for name in ("shop", "shop.deadline_budget", "shop.catalog"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    budget = importlib.import_module("shop.deadline_budget")
    catalog_module = importlib.import_module("shop.catalog")
    with budget.budget_scope(budget.Budget(0.5)):
        assert catalog_module.ping()
    assert 0.4 < timeouts[0] <= 0.45


def test_scaffold_refuses_a_project_that_has_a_budget_type(tmp_path: Path, monkeypatch, capsys) -> None:
    """A second budget type would split the project's budgets in two: the scaffold is for a
    project with none. A class the profile does not list as a budget type is not one."""
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, {**FASTAPI, "svc/limits.py": "import time\n\nclass Budget:\n    def remaining(self):\n"
                                                    "        return 1.0\n"})
    assert main(["adopt", "--scaffold", "svc"]) == 2
    err = capsys.readouterr().err
    assert "svc/limits.py:3: the project already defines `Budget`, a budget type (`budget.types`)" in err
    assert "nothing written (exit 2)" in err and not (tmp_path / "svc/api/deadline_budget.py").exists()
    (tmp_path / "pyproject.toml").write_text('[tool.deadline-lint.budget]\ntypes = ["RequestBudget"]\n')
    assert main(["adopt", "--scaffold", "svc"]) == 0  # `Budget` here is the team's own word for something else
    assert (tmp_path / "svc/api/deadline_budget.py").exists()


def test_scaffold_refuses_a_profile_with_an_ambient_budget(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    _project(tmp_path, {**FASTAPI, "pyproject.toml": '[tool.deadline-lint.fix]\npropagation = "context"\n'
                                                     'context_accessor = "svc.ctx.remaining"\n'})
    assert main(["adopt", "--scaffold", "svc"]) == 2
    assert "already names an ambient budget (fix.context_accessor = svc.ctx.remaining)" in capsys.readouterr().err
    assert not (tmp_path / "svc/api/deadline_budget.py").exists()
