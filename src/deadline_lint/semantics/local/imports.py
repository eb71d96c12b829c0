"""Which name reaches an import a fix needs, from where the fix goes.

A fix that needs `import aiohttp` is written as `aiohttp.ClientTimeout(...)` and LibCST adds
the import at the top of the module. That is only right when, at the fix's scope, the name
`aiohttp` then means the module: not when the module is already imported under another name
(`import aiohttp as ah`: the fix should say `ah.`), and not when something else binds the name
(`aiohttp = None` at module level, a local, a parameter): the added import would be shadowed.
"""
from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple

from deadline_lint.support.diagnostics import Edit
from deadline_lint.semantics.local.scopes import IMPORT, MODULE, Scope, import_qualname

_IMPORT_FROM = re.compile(r"^from\s+([\w.]+)\s+import\s+(\w+)(?:\s+as\s+(\w+))?$")
_IMPORT = re.compile(r"^(?:import\s+)?([\w.]+)(?:\s+as\s+(\w+))?$")


def parse_import(spec: str) -> Optional[Tuple[str, Optional[str], Optional[str]]]:
    """`time`, `import os.path`, `import x as y`, `from time import monotonic [as m]` as
    (module, imported name or None, alias or None); None when it is none of those."""
    spec = " ".join(spec.split())
    match = _IMPORT_FROM.match(spec)
    if match:
        return match.group(1), match.group(2), match.group(3)
    match = _IMPORT.match(spec)
    if match:
        return match.group(1), None, match.group(2)
    return None


def bind_imports(
    scope: Scope, edits: Sequence[Edit], imports: Sequence[str]
) -> Optional[Tuple[Tuple[Edit, ...], Tuple[str, ...]]]:
    """The edits (spelling each import by the name already bound to it, if any) and the
    imports still to add; None when an added import would not be what the name means here."""
    edits = tuple(edits)
    needed: List[str] = []
    for spec in imports:
        parsed = parse_import(spec)
        if parsed is None:
            return None
        module, name, alias = parsed
        target = module if name is None else f"{module}.{name}"
        # What the fix's text spells: `aiohttp.X`, `botocore.config.X`, `monotonic()`, `ah.X`.
        spelled = alias or (module if name is None else name)
        bound = _name_bound_to(scope, target)
        if bound == spelled:
            continue  # already imported under the name the fix uses
        if bound is not None:
            pattern = re.compile(rf"(?<![\w.]){re.escape(spelled)}\b")
            edits = tuple(Edit(e.start, e.end, pattern.sub(bound, e.text)) for e in edits)
            continue
        first = spelled.split(".")[0]
        bindings = scope.lookup(first)
        if bindings and import_qualname(bindings) != first:
            return None  # the name means something else here: the added import would not reach
        needed.append(spec)
    return edits, tuple(needed)


def _name_bound_to(scope: Scope, target: str) -> Optional[str]:
    """A module-level name imported as exactly `target` that means the same at `scope`."""
    module = scope.module
    if module.kind != MODULE:
        return None
    candidates = sorted(
        (name for name, bindings in module.bindings().items() if import_qualname(bindings) == target),
        key=lambda name: (name != target.rpartition(".")[2], name),  # its own name first
    )
    for name in candidates:
        found = scope.lookup(name)
        if found and all(b.kind == IMPORT for b in found) and import_qualname(found) == target:
            return name
    return None
