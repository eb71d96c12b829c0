"""The semantics layer on its own: where modules are found, what names stand for across
modules, and how facts compose (cycles and disagreements answer None: rules stay quiet)."""
from __future__ import annotations

import ast
from pathlib import Path

from deadline_lint.catalog import load_catalog
from deadline_lint.families.spawn.spawn_catalog import spawn_catalog
from deadline_lint.families.spawn.spawn_facts import returns_task
from deadline_lint.semantics.facts import ProjectFacts
from deadline_lint.semantics.modules import ModuleSource, forget_projects, place_of, project_of
from deadline_lint.semantics.receivers import Receivers
from deadline_lint.semantics.summary import External, Names, Symbol, tree_of


def _project(tmp_path: Path, files: dict) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    forget_projects()
    return tmp_path


def _names(path: Path) -> Names:
    modules, name, is_package = project_of(str(path))
    return Names(modules, ModuleSource(name, str(path), is_package, path.read_text()))


def test_a_django_package_folder_is_searched(tmp_path) -> None:
    root = _project(tmp_path, {"site/__init__.py": "", "site/manage.py": "", "site/core/__init__.py": "",
                               "site/views.py": ""})
    name, _, paths = place_of(str(root / "site/views.py"))
    assert name == "site.views"
    assert str(root / "site") in paths


def test_a_namespace_portion_inside_a_package_is_named_from_the_package(tmp_path) -> None:
    """open-webui's `open_webui/routers/` has no `__init__.py`: its modules are
    `open_webui.routers.x` when the service runs, and import from `open_webui`."""
    root = _project(tmp_path, {"pyproject.toml": "", "src/app/__init__.py": "", "src/app/env.py": "X = 1\n",
                               "src/app/routers/chat.py": "from app.env import X\n", "scripts/tool.py": ""})
    name, _, paths = place_of(str(root / "src/app/routers/chat.py"))
    assert name == "app.routers.chat" and paths[0] == str(root / "src")
    names = _names(root / "src/app/routers/chat.py")
    assert names.module("app.env") is not None
    assert place_of(str(root / "scripts/tool.py"))[0] == "tool"  # a plain folder is no package


def test_re_exports_methods_and_outside_names_resolve(tmp_path) -> None:
    root = _project(tmp_path, {
        "pkg/__init__.py": "from pkg.impl import App as Application\nimport requests\n",
        "pkg/impl.py": "class Base:\n    def run(self):\n        pass\n\nclass App(Base):\n    x = 1\n",
        "pkg/use.py": "",
    })
    names = _names(root / "pkg/use.py")
    assert names.symbol("pkg.Application.run") == Symbol(names.module("pkg.impl"), ("Base", "run"), "function")
    assert names.symbol("pkg.Application.x") is None  # a class attribute, not a method
    assert names.resolve("pkg.requests.get") == External("requests.get")
    assert names.resolve("pkg.missing") is None


def test_a_name_bound_twice_stands_for_nothing(tmp_path) -> None:
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/compat.py": "try:\n    from a import spawn\nexcept ImportError:\n    def spawn(c):\n        return c\n",
        "pkg/use.py": "",
    })
    assert _names(root / "pkg/use.py").resolve("pkg.compat.spawn") is None


def test_facts_compose_through_modules_and_stop_at_cycles(tmp_path) -> None:
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "import asyncio\nfrom pkg import b\n\ndef start(c):\n    return asyncio.create_task(c)\n\n"
                    "def loop_a(c):\n    return b.loop_b(c)\n",
        "pkg/b.py": "from pkg import a\n\ndef via(c):\n    return a.start(c)\n\n"
                    "def loop_b(c):\n    return a.loop_a(c)\n",
        "pkg/use.py": "",
    })
    fact = returns_task(spawn_catalog(load_catalog(), ()))
    facts = ProjectFacts(_names(root / "pkg/use.py"))
    answer = facts.answer(fact, "pkg.b.via")
    assert answer is not None and answer.chain == ("via", "start", "asyncio.create_task")
    assert facts.answer(fact, "pkg.b.loop_b") is None  # a cycle of wrappers starts nothing


def test_an_attribute_assigned_two_classes_is_unknown(tmp_path) -> None:
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/m.py": "class A:\n    pass\n\nclass B:\n    pass\n\n"
                    "class Holder:\n    def __init__(self, flag):\n        self.x = A()\n        if flag:\n"
                    "            self.x = B()\n        self.y = A()\n",
    })
    names = _names(root / "pkg/m.py")
    receivers = Receivers(names)
    holder = names.symbol("pkg.m.Holder")
    assert receivers.attribute(holder, "x") is None
    assert receivers.attribute(holder, "y") == names.symbol("pkg.m.A")
    tree = tree_of(names.module("pkg.m"))
    assert tree is not None and isinstance(tree.node(("Holder", "__init__")), ast.FunctionDef)


def test_the_editor_server_learns_which_files_a_buffer_depends_on(tmp_path) -> None:
    """Facts from other modules make a buffer's findings depend on them: the server records
    that reach (and re-checks the buffer when one changes) without the project index."""
    from deadline_lint.frontends.lsp.server_engine import Engine

    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/runtime.py": "import asyncio\n\ndef spawn(c):\n    return asyncio.create_task(c)\n",
        "pkg/handler.py": "from pkg.runtime import spawn\n\nasync def h(job):\n    spawn(job())\n",
    })
    handler = root / "pkg" / "handler.py"
    found = Engine().check(handler.read_text(), str(handler))
    assert [d.code for d in found.diagnostics] == ["DL501"]
    assert found.project_index and str(root / "pkg" / "runtime.py") in found.reach


def test_the_editor_server_follows_the_callers_a_finding_depends_on(tmp_path) -> None:
    """DL302 judges a retried def by its callers in every module: the buffer's findings
    depend on those files (a caller gained or lost there) and on the folders a new caller
    may appear in, and the server's forgetting drops the callers' tables too."""
    from deadline_lint.frontends.lsp.server_engine import Engine

    retried = "import backoff\n\nclass Db:\n    @backoff.on_exception(backoff.expo, Exception, max_tries=3)\n" \
              "    async def connect(self):\n        return self\n"
    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/db.py": retried,
        "pkg/app.py": "from pkg.db import Db\n\nasync def lifespan(app):\n    await Db().connect()\n",
    })
    db = root / "pkg" / "db.py"
    engine = Engine()
    engine.forget_project_facts()
    quiet = engine.check(db.read_text(), str(db))
    assert [d.code for d in quiet.diagnostics] == []  # only start-up calls it
    assert quiet.project_index and str(root / "pkg" / "app.py") in quiet.reach
    assert str(root / "pkg") in quiet.folders  # where a new caller may appear
    (root / "pkg" / "views.py").write_text(
        "from pkg.db import Db\n\nasync def route(request):\n    return await Db().connect()\n"
    )
    engine.forget_project_facts()  # what the server does when a watched file is created
    found = engine.check(db.read_text(), str(db))
    assert [d.code for d in found.diagnostics] == ["DL302"]  # a request handler calls it now
    assert str(root / "pkg" / "views.py") in found.reach


def test_callers_are_found_by_resolved_name_self_and_typed_receivers(tmp_path) -> None:
    from deadline_lint.semantics.callers import Callers, forget_callers
    from deadline_lint.semantics.summary import FUNCTION

    root = _project(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/db.py": "class Db:\n    def connect(self):\n        return self\n\n"
                     "    def reconnect(self):\n        return self.connect()\n\n"
                     "    def __init__(self):\n        pass\n\n"
                     "def helper():\n    return 1\n",
        "pkg/app.py": "from pkg import db\nfrom pkg.db import Db, helper\n\n"
                      "async def lifespan(app):\n    Db().connect()\n\n"
                      "def route(d: Db):\n    return d.connect()\n\n"
                      "def other(x):\n    x.connect()\n    handlers = [helper]\n    return db.helper()\n",
        "pkg/tests/test_db.py": "from pkg.db import Db\n\ndef test_it():\n    Db().connect()\n",
    })
    forget_callers()
    names = _names(root / "pkg/db.py")
    callers = Callers(names)
    own = names.own
    found = callers.of(Symbol(own, ("Db", "connect"), FUNCTION))
    assert found is not None
    sites = sorted((c.module.name, c.site.within, c.site.receiver, c.certain) for c in found)
    assert sites == [
        ("pkg.app", ("lifespan",), "c:pkg.db.Db", True),
        ("pkg.app", ("other",), "?", False),  # an unknown receiver may be one: kept
        ("pkg.app", ("route",), "c:pkg.db.Db", True),
        ("pkg.db", ("Db", "reconnect"), "s:Db", True),
    ]  # the test module is left out
    helper = callers.of(Symbol(own, ("helper",), FUNCTION))
    assert sorted((c.site.within, c.site.called) for c in helper or []) == [(("other",), False), (("other",), True)]
    assert callers.of(Symbol(own, ("Db", "__init__"), FUNCTION)) is None  # called by the language
