"""No module keeps a memo in its globals: every answer an analysis remembers lives in the run's
`semantics.session.Session` (issue 31), so two runs in one process never share one and a run's
memory goes with it. A module-level name bound to a mutable container (a dict, set or list
display or comprehension, or a constructor of one) and an `lru_cache`/`cache` on a module
function fail here, unless the allow-list below names it and says why. Constant tables are
immutable instead (tuples, frozensets, `types.MappingProxyType`)."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "deadline_lint"

CONTAINERS = {
    "dict", "set", "list", "bytearray", "defaultdict", "OrderedDict", "Counter", "deque", "ChainMap",
    "WeakKeyDictionary", "WeakValueDictionary", "WeakSet",
}
MEMO_DECORATORS = {"lru_cache", "cache", "cached_property"}

# (module, name): why it may stay. Keep it small: a new entry needs a reason a reviewer accepts.
ALLOWED: Dict[Tuple[str, str], str] = {
    # Constants filled at import and never written, kept plain dicts on purpose: the walk looks
    # them up for every node, and a read-only proxy's lookup costs twice a dict's.
    ("deadline_lint.engine.checker", "_FIELDS_BY_TYPE"): "constant; hot (per node of the walk)",
    ("deadline_lint.families.shared.lifecycle", "_FIELDS"): "constant; hot (per node of a lifecycle walk)",
    ("deadline_lint.semantics.local.scopes", "NESTED_STATEMENTS"): "constant; hot (per statement of a scan)",
    ("deadline_lint.semantics.local.scopes", "_NESTED_BODIES"): "constant; hot (per statement of a scan)",
    # The rule registry: filled by `@register` as the families are imported, then only read.
    ("deadline_lint.engine.rule", "REGISTRY"): "registry filled at import",
    # The process's runs per Options, for front ends that have none of their own (flake8 and
    # pylint call per file, the codemod per module): each Session owns its memos; reset() drops them.
    ("deadline_lint.run.api", "_SESSIONS"): "the process's sessions (runs), not a memo",
    # The fix tags' JSON keys: declared by `fix_tag()` as families/fix_tags.py is imported.
    ("deadline_lint.support.diagnostics", "_JSON_TAGS"): "registry filled at import",
    ("deadline_lint.frontends.cli_arguments", "_WIDTH"): "the terminal's width, once per parser built",
    # Pure functions of immutable arguments whose results are not mutated, bounded, and below
    # the layer that holds sessions (or, for the catalog, of the shipped YAML only).
    ("deadline_lint.catalog", "_builtin_files"): "the shipped YAML, parsed once per process",
    ("deadline_lint.catalog", "_builtin_vocabulary"): "built from the shipped YAML once per process",
    ("deadline_lint.catalog", "_builtin_retry"): "built from the shipped YAML once per process",
    ("deadline_lint.catalog", "_builtin_budget"): "built from the shipped YAML once per process",
    ("deadline_lint.catalog", "_builtin_cancellation"): "built from the shipped YAML once per process",
    ("deadline_lint.catalog", "_builtin_digest"): "the shipped YAML's digest",
    ("deadline_lint.settings.globs", "compile_patterns"): "pure: patterns -> compiled spec (256 kept)",
    ("deadline_lint.semantics.local.expressions", "_dotted_tails"): "pure: frozenset -> frozenset (256 kept)",
    ("deadline_lint.fixes.adding_imports", "_added_imports"): "pure: (text, imports) -> text (16 kept)",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _called_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _mutable(value: ast.expr) -> bool:
    if isinstance(value, (ast.Dict, ast.Set, ast.List, ast.DictComp, ast.SetComp, ast.ListComp)):
        return True
    return isinstance(value, ast.Call) and _called_name(value) in CONTAINERS


def _top_level(body: List[ast.stmt]) -> Iterator[ast.stmt]:
    """The module's own statements, into `if`, `try` and `with` blocks (still module level)."""
    for stmt in body:
        if isinstance(stmt, (ast.If, ast.Try, ast.With)):
            yield from _top_level(stmt.body)
            yield from _top_level(getattr(stmt, "orelse", []))
            yield from _top_level(getattr(stmt, "finalbody", []))
            for handler in getattr(stmt, "handlers", []):
                yield from _top_level(handler.body)
        else:
            yield stmt


def module_memos(path: Path) -> List[Tuple[str, int]]:
    """(name, line) of every module-level mutable binding and memoised module function."""
    found: List[Tuple[str, int]] = []
    for stmt in _top_level(ast.parse(path.read_text(encoding="utf-8")).body):
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None and _mutable(stmt.value):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            found.extend((t.id, stmt.lineno) for t in targets if isinstance(t, ast.Name) and t.id != "__all__")
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_called_name(d) in MEMO_DECORATORS for d in stmt.decorator_list):
                found.append((stmt.name, stmt.lineno))
    return found


def test_no_module_keeps_a_memo_in_its_globals() -> None:
    offending = []
    seen = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        for name, line in module_memos(path):
            seen.add((module, name))
            if (module, name) not in ALLOWED:
                offending.append(f"{path.relative_to(PACKAGE.parent)}:{line} {name}")
    assert offending == [], (
        "module-level mutable state (keep memos in semantics.session.Session; make constant "
        "tables immutable): " + ", ".join(offending)
    )
    stale = sorted(set(ALLOWED) - seen)
    assert stale == [], f"allowed but no longer there (drop them from ALLOWED): {stale}"


def test_the_check_finds_each_kind_of_memo(tmp_path) -> None:
    source = tmp_path / "memos.py"
    source.write_text(
        "import functools\nfrom collections import OrderedDict\n"
        "A = {}\nB: dict = dict()\nC = [None]\nD = OrderedDict()\nE = {k: 1 for k in 'ab'}\n"
        "try:\n    F = set()\nexcept ImportError:\n    pass\n"
        "@functools.lru_cache(maxsize=None)\ndef g(x):\n    return x\n"
        "@functools.cache\ndef h(x):\n    return x\n"
        "__all__ = ['g']\nT = (1, 2)\nS = frozenset({1})\n"
        "def f():\n    local = {}\n    return local\n"
    )
    assert [name for name, _ in module_memos(source)] == ["A", "B", "C", "D", "E", "F", "g", "h"]


def test_a_session_owns_its_memos_and_invalidate_keeps_lasting_ones() -> None:
    from deadline_lint.semantics.session import Session, current

    class Answers:
        pass

    class ByContent:
        pass

    first, second = Session(), Session()
    with first.active():
        current().memo(Answers)["k"] = 1
        current().memo(ByContent, lasting=True)["k"] = 2
        with second.active():
            assert current() is second and current().memo(Answers) == {}
        assert current() is first
    assert first.memo(Answers) == {"k": 1}
    first.invalidate(["/some/changed.py"])
    assert first.memo(Answers) == {} and first.memo(ByContent) == {"k": 2}


WRAPPER = "import requests\n\n\ndef fetch(url, timeout=None):\n    return requests.get(url, timeout=timeout)\n"
NOT_A_WRAPPER = "def fetch(url, timeout=None):\n    return url\n"


def _project(tmp_path) -> tuple:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "http.py").write_text(WRAPPER)
    app = tmp_path / "pkg" / "app.py"
    app.write_text("from pkg.http import fetch\n\nfetch('http://x')\n")
    return tmp_path / "pkg" / "http.py", app


def test_a_run_leaves_no_memo_behind(tmp_path) -> None:
    """What a run learnt about a project goes with it: the process's own session (outside
    any run) holds nothing after it, and a second run answers from the files as they are."""
    from deadline_lint.run import api
    from deadline_lint.semantics.session import Session, current
    from deadline_lint.semantics.summary import ModuleSummary

    http, app = _project(tmp_path)
    outside = Session()
    with outside.active():
        found = [d.code for r in api.lint_paths([str(app)], api.Options(select=("DL101",))) for d in r.diagnostics]
        assert found == ["DL101"]  # through pkg.http's summary
        assert current() is outside and outside.memo(ModuleSummary) == {}
    http.write_text(NOT_A_WRAPPER)  # no longer a client call
    found = [d.code for r in api.lint_paths([str(app)], api.Options(select=("DL101",))) for d in r.diagnostics]
    assert found == []


def test_the_servers_invalidate_keeps_its_unsaved_buffers(tmp_path) -> None:
    """The server's session outlives its files: `invalidate` drops what it learnt about the
    project and keeps the editor's unsaved buffers, which stand for the files on disk."""
    from deadline_lint.frontends.lsp.server_engine import Engine

    http, app = _project(tmp_path)
    engine = Engine()

    def codes() -> list:
        return [d.code for d in engine.check(app.read_text(), str(app)).diagnostics]

    assert codes() == ["DL101"]
    engine.use_unsaved(str(http), NOT_A_WRAPPER)
    engine.invalidate([str(http)])
    assert codes() == []  # the buffer, not the file on disk
    engine.invalidate([str(app)])
    assert codes() == []  # still the buffer: invalidating keeps it
    engine.use_unsaved(str(http), None)
    engine.invalidate([str(http)])
    assert codes() == ["DL101"]
