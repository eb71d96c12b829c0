"""The "not found" warning for budget roles: a profile's `budget.type_roles` names methods of
a budget type, and when that type is a class of the project (its module is a file under the
profile's folder, or under `src/` there) that defines none of them by that name, the profile
is out of date or misspelled. Like the "not used yet" warning for keys, it warns and the
run goes on. A class with bases other than `object` (or `Protocol`, `ABC`) may inherit the
method: no warning."""
from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import List, Optional, Tuple

from deadline_lint.settings.profile import Profile

_PLAIN_BASES = frozenset({"object", "Protocol", "ABC", "Generic"})


def role_warnings(profile: Profile) -> Tuple[str, ...]:
    warnings: List[str] = []
    root = Path(profile.root or os.getcwd())
    for type_name, roles in sorted(profile.budget.type_roles.items()):
        module, _, class_name = type_name.rpartition(".")
        if not module:
            continue  # a bare name: which module's class is meant is not ours to guess
        found = _find_class(root, module, class_name)
        if found is None:
            continue
        path, node = found
        defined = _methods(node)
        if defined is None:
            continue
        for role, methods in sorted(roles.items()):
            for method in methods:
                if method not in defined:
                    warnings.append(
                        f"{profile.source}: budget.type_roles: {type_name}: {role} method `{method}` not found "
                        f"(class `{class_name}` in {path} defines no such method)"
                    )
    return tuple(warnings)


def _find_class(root: Path, module: str, class_name: str) -> Optional[Tuple[str, ast.ClassDef]]:
    parts = module.split(".")
    for base in (root, root / "src"):
        for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
            if not candidate.is_file():
                continue
            try:
                tree = ast.parse(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
                return None  # the check reports the file itself
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and node.name == class_name:
                    return os.path.relpath(candidate, root), node
            return None
    return None


def _methods(node: ast.ClassDef) -> Optional[frozenset]:
    """The names the class body defines, or None when a base may define more."""
    for base in node.bases:
        name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", None)
        if isinstance(base, ast.Subscript):
            value = base.value
            name = value.attr if isinstance(value, ast.Attribute) else getattr(value, "id", None)
        if name not in _PLAIN_BASES:
            return None
    names = set()
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Assign):
            names.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    return frozenset(names)
