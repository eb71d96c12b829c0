"""What the clock rules share: the words a file must contain for any of them to fire, and
how a fix spells a monotonic clock read with the names the module already binds."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, FrozenSet, Optional, Tuple

from deadline_lint.analysis.scopes import IMPORT, Scope, import_qualname
from deadline_lint.catalog import Catalog

if TYPE_CHECKING:
    from deadline_lint.context import FileContext

# Every spelling of a wall-clock read contains one of these: `time.time()` and `t.time()`
# after `import time as t`, `from time import time`, `datetime.now()` in any import form.
CLOCK_WORDS = frozenset({"time.time", "time_ns", "from time import", "import time as", "datetime"})


def clock_text_filter(catalog: Catalog) -> Callable[[str], bool]:
    """The second look of the clock family (one shared callable): the trigger words again,
    since other families' filters are finer than their words and must not hide our files."""
    return catalog.cached("clock.text_filter", lambda: _mentions_any(CLOCK_WORDS))


def _mentions_any(words: FrozenSet[str]) -> Callable[[str], bool]:
    def text_filter(text: str) -> bool:
        return any(word in text for word in words)

    return text_filter


def module_name_bound_to(module: str, scope: Scope) -> Optional[str]:
    """A name that, seen from `scope`, is the module itself (`time`, or `t` after
    `import time as t`)."""
    bindings = scope.lookup(module)
    if bindings and import_qualname(bindings) == module:
        return module
    for name, found in scope.module.bindings().items():
        if any(b.kind == IMPORT and b.value == module for b in found):
            seen = scope.lookup(name)
            if seen and import_qualname(seen) == module:
                return name
    return None


def spell_function(qualname: str, ctx: "FileContext") -> Optional[Tuple[str, Tuple[str, ...]]]:
    """How to call `qualname` (`time.monotonic`) here: the text and the imports it needs.
    Uses the module's own name for it when bound (`t.monotonic` after `import time as t`);
    else imports the module if its name is free, else the function if its name is free."""
    module, _, attribute = qualname.rpartition(".")
    scope = ctx.scope
    bound = module_name_bound_to(module, scope)
    if bound is not None:
        return f"{bound}.{attribute}", ()
    if scope.lookup(module.split(".")[0]) is None:
        return qualname, (module,)
    existing = scope.lookup(attribute)
    if existing is None:
        return attribute, (f"from {module} import {attribute}",)
    if import_qualname(existing) == qualname:
        return attribute, ()
    return None
