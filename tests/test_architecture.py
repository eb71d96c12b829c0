"""The engine knows no rule family, and the package has no import cycles (lazy imports inside
functions and imports for type checking count: they only hide a cycle)."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Dict, Set

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "deadline_lint"
# Name resolution, scopes and import binding are family-neutral; the rest of
# analysis/ is rules'.
NEUTRAL_ANALYSES = {
    "deadline_lint.analysis.resolve",
    "deadline_lint.analysis.scopes",
    "deadline_lint.analysis.imports",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> Set[str]:
    """Project modules a file imports, at any depth, `if TYPE_CHECKING:` blocks included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("deadline_lint"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("deadline_lint"))
    return found


def _graph() -> Dict[str, Set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {m for m in _imports(path) if m in modules and m != name} for name, path in modules.items()}


def test_engine_and_context_know_no_family() -> None:
    graph = _graph()
    for core in ("deadline_lint.engine", "deadline_lint.context"):
        family = {m for m in graph[core] if m.startswith("deadline_lint.analysis.") and m not in NEUTRAL_ANALYSES}
        family |= {m for m in graph[core] if m.startswith("deadline_lint.rules.") and m != "deadline_lint.rules.base"}
        assert not family, f"{core} imports family code: {sorted(family)}"


def test_no_import_cycles_between_modules() -> None:
    edges = _graph()
    state: Dict[str, int] = {}
    path: list = []

    def visit(name: str) -> None:
        state[name] = 1
        path.append(name)
        for dep in sorted(edges.get(name, ())):
            if state.get(dep) == 1:
                cycle = path[path.index(dep):] + [dep]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep)
        path.pop()
        state[name] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name)


def test_importing_the_rule_base_loads_no_rule() -> None:
    code = (
        "import sys, deadline_lint.rules.base; "
        "print(sorted(m for m in sys.modules"
        " if m.startswith('deadline_lint.rules.') and m != 'deadline_lint.rules.base'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
