"""The house: layers import only downwards, a family never imports another family,
`semantics/` knows no family, modules and folders stay small, and there are no import cycles
(lazy imports inside functions and imports for type checking count: they only hide an arrow)."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional, Set

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "deadline_lint"
# Top to bottom: a module may import its own layer and the ones below it.
LAYERS = ("frontends", "run", "cache", "fixes", "families", "engine", "semantics", "settings", "catalog", "support")
# The package root: `__init__`, `__main__` and the public names users write in their
# configuration (`--load-plugins deadline_lint.pylint_plugin`, `deadline_lint.codemod.InsertBudget`).
ROOT_MODULES = {"__init__.py", "__main__.py", "pylint_plugin.py", "codemod.py"}
# A family import that crosses into another family, with the reason it is allowed. Empty is the aim.
CROSSINGS = {
    # A retry loop whose attempt makes an outbound call is retrying, not polling: the retry
    # family asks the outbound family's one definition of "leaves the process".
    ("deadline_lint.families.retry.analysis.polling", "deadline_lint.families.outbound.analysis.outbound"),
}
MAX_LINES = 400
# Modules over MAX_LINES, each with the reason it may be for now. Empty is the aim.
LONG_MODULES: Dict[str, str] = {}  # module -> why it may stay longer (none today)
MAX_MODULES_PER_FOLDER = 15


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


def _layer(module: str) -> Optional[int]:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def _family(module: str) -> Optional[str]:
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "families" and parts[2] != "registry":
        return parts[2]
    return None


def test_every_module_lives_in_a_layer() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in ROOT_MODULES)
    assert loose == [], f"modules at the package root, outside every layer: {loose}"
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert set(folders) <= set(LAYERS), f"folders that are no layer: {sorted(set(folders) - set(LAYERS))}"


def test_layers_import_only_downwards() -> None:
    upward = []
    for name, deps in _graph().items():
        here = _layer(name)
        for dep in deps:
            there = _layer(dep)
            if here is not None and there is not None and there < here:
                upward.append(f"{name} -> {dep}")
    assert upward == [], "imports running back up:\n" + "\n".join(sorted(upward))


def test_a_family_imports_no_other_family_and_semantics_none() -> None:
    crossings = []
    for name, deps in _graph().items():
        mine = _family(name)
        for dep in deps:
            theirs = _family(dep)
            if theirs is None or theirs == mine or (name, dep) in CROSSINGS:
                continue
            if mine is None and _layer(name) is not None and _layer(name) > LAYERS.index("families"):
                crossings.append(f"{name} -> {dep}")  # below the families: knows none
            elif mine is not None and theirs != "shared":
                crossings.append(f"{name} -> {dep}")
            elif mine == "shared":
                crossings.append(f"{name} -> {dep}")
    assert crossings == [], "family crossings:\n" + "\n".join(sorted(crossings))


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


def test_folders_hold_at_most_fifteen_modules() -> None:
    crowded = {}
    for folder in [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__")]:
        count = len([p for p in folder.glob("*.py") if p.name != "__init__.py"])
        if count > MAX_MODULES_PER_FOLDER:
            crowded[str(folder.relative_to(PACKAGE))] = count
    assert crowded == {}, f"folders over {MAX_MODULES_PER_FOLDER} modules: {crowded}"


def test_modules_stay_under_four_hundred_lines() -> None:
    lines = {
        path.relative_to(PACKAGE).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(PACKAGE.rglob("*.py"))
    }
    long = {name: count for name, count in lines.items() if count > MAX_LINES and name not in LONG_MODULES}
    assert long == {}, f"modules over {MAX_LINES} lines: {long}"
    fixed = sorted(name for name in LONG_MODULES if lines.get(name, 0) <= MAX_LINES)
    assert fixed == [], f"no longer over {MAX_LINES} lines, drop them from LONG_MODULES: {fixed}"


def test_the_editor_server_asks_only_the_run() -> None:
    """What a buffer depends on, and forgetting it, are the run's to answer (run/buffers):
    the server imports the run layer and the building blocks under `support`, nothing between."""
    between = set(LAYERS[LAYERS.index("run") + 1:LAYERS.index("support")])
    reaching = sorted(
        f"{name} -> {dep}"
        for name, deps in _graph().items() if name.startswith("deadline_lint.frontends.lsp")
        for dep in deps if _layer(dep) is not None and LAYERS[_layer(dep)] in between
    )
    assert reaching == [], "the server reaches below the run:\n" + "\n".join(reaching)


def test_importing_the_rule_base_loads_no_rule() -> None:
    code = (
        "import sys, deadline_lint.engine.rule; "
        "print(sorted(m for m in sys.modules if m.startswith('deadline_lint.families.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
