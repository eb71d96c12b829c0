"""What the clock rules share: the words a file must contain for any of them to fire, and
how a fix spells a monotonic clock read with the names the module already binds."""
from __future__ import annotations

from types import MappingProxyType
import ast
import re
from typing import TYPE_CHECKING, Callable, FrozenSet, Optional, Tuple

from deadline_lint.catalog import Catalog
from deadline_lint.families.clock.wire import WireValues, literal_key_read
from deadline_lint.families.shared.time.clock_catalog import clock_catalog
from deadline_lint.families.shared.time.clock_facts import reaches_wall_clock, reads_wall_clock
from deadline_lint.families.shared.time.time_values import TimeValues
from deadline_lint.semantics.local.scopes import FUNCTION, IMPORT, Scope, import_qualname
from deadline_lint.semantics.scan import statement_pattern

if TYPE_CHECKING:
    from deadline_lint.semantics.file_view import FileView

# Every spelling of a wall-clock read contains one of these: `time.time()` and `t.time()`
# after `import time as t`, `from time import time`, `datetime.now()` in any import form.
CLOCK_WORDS = frozenset({"time.time", "time_ns", "from time import", "import time as", "datetime"})
# An instant on the wire may also be monotonic or a datetime spelled as text or a number.
WIRE_WORDS = CLOCK_WORDS | {"monotonic", "perf_counter", "isoformat", "timestamp", ".time()"}
# A `Date` header is read with its name as a string literal (or WSGI's HTTP_DATE).
DATE_WORDS = frozenset({'"Date"', "'Date'", '"date"', "'date'", "HTTP_DATE", '"DATE"', "'DATE'"})
# Headers and metadata are read from something named so.
HEADER_WORDS = frozenset({"header", "metadata", "META"})


def may_read_clock(node: ast.Call, ctx: "FileView") -> bool:
    """DL201's first look at a call: its name can be a clock's."""
    return ctx.analysis(TimeValues).may_read_clock(node, ctx.scope)


def reads_literal_key_in_function(node: ast.AST, ctx: "FileView") -> bool:
    """The first look of the rules judging an inbound header read (DL203, DL204): in a
    function, `x["key"]` or `x.get("key")` with a literal key."""
    return ctx.scope.kind == FUNCTION and literal_key_read(node) is not None


def inbound_header_read(node: ast.AST, ctx: "FileView") -> Optional[Tuple[WireValues, str]]:
    """The start of DL203/DL204's visit: the wire analysis and the header key this node reads
    in a function, or None."""
    if not reads_literal_key_in_function(node, ctx):
        return None
    wire = ctx.analysis(WireValues)
    key = wire.header_read(node, ctx.scope)
    return None if key is None else (wire, key)


_FROM_TIME = statement_pattern(r"from time import (?:\(|[^\r\n]*\btime(?:_ns)?\b)")
_TIME_ALIAS = statement_pattern(r"import time as (\w+)")


def wall_clock_project_test(catalog: Catalog) -> Callable[[str, str], bool]:
    """DL201's `Project` need: the file reads the wall clock through the project."""
    fact = reads_wall_clock(clock_catalog(catalog))
    return catalog.cached(
        wall_clock_project_test, lambda: lambda text, path: reaches_wall_clock(fact, text, path), fact.name
    )


def wall_read_text_filter(catalog: Catalog) -> Callable[[str], bool]:
    """The second look for DL201: the text spells a wall-clock read (`time.time(`, a
    `from time import time`, `t.time(` after `import time as t`, `datetime` and `.now(`)."""

    def build() -> Callable[[str], bool]:
        def text_filter(text: str) -> bool:
            if "time.time(" in text or "time_ns(" in text:
                return True
            if "from time import" in text and _FROM_TIME.search(text):
                return True
            if "datetime" in text and (".now(" in text or "utcnow(" in text or ".today(" in text):
                return True
            if "import time as" in text:
                return any(f"{alias}.time" in text for alias in _TIME_ALIAS.findall(text))
            return False

        return text_filter

    return catalog.cached(wall_read_text_filter, build)


def header_text_filter(catalog: Catalog) -> Callable[[str], bool]:
    """The second look for DL203: a `Date` key, and the text names headers, metadata or a
    WSGI environ. (The engine parses a file when any selected rule's second look passes, so
    each one repeats its rule's own words.)"""
    containers = HEADER_WORDS | {"environ"}

    def build() -> Callable[[str], bool]:
        return lambda text: any(w in text for w in DATE_WORDS) and any(w in text for w in containers)

    return catalog.cached(header_text_filter, build)


READ, WRITE = "read", "write"  # the shapes of a header key literal in source text
# A short one-line literal holding a key word, where a key is read (`h["..."]`,
# `h.get("...")`) or written (`{"...": v}`, `("...", v)`, `h["..."] = v`).
_INSIDE = r"""[^"'\s=(){}\[\],:]{0,60}?"""
_SHAPES = MappingProxyType({
    READ: r"""[\[(]\s*[bBrRuU]?["']%s(?:%s)%s["']\s*[\]),]""",
    WRITE: r"""[{(,\[]\s*[bBrRuU]?["']%s(?:%s)%s["']\s*[:,\]]""",
})


def key_text_filter(catalog: Catalog, profile_header: str, words: FrozenSet[str], shape: str) -> Callable[[str], bool]:
    """The second look for DL202 (shape WRITE) and DL204 (shape READ): one of the rule's own
    words, a headers/metadata word, and a string literal naming a deadline, a timeout or a
    budget (`"X-Request-Deadline"`, `'grpc-timeout'`, the profile's header) in that shape."""

    def build() -> Callable[[str], bool]:
        keys = [re.escape(w).replace("\\-", "[-_ ]?") for w in clock_catalog(catalog).wire.deadline_words]
        keys.append(re.escape(profile_header).replace("\\-", "[-_]"))
        pattern = re.compile(_SHAPES[shape] % (_INSIDE, "|".join(keys), _INSIDE), re.IGNORECASE)
        containers = HEADER_WORDS | {"environ"}

        def text_filter(text: str) -> bool:
            if not any(w in text for w in words) or not any(w in text for w in containers):
                return False
            return pattern.search(text) is not None

        return text_filter

    return catalog.cached(key_text_filter, build, profile_header, shape, tuple(sorted(words)))


def shown(ctx: "FileView", node: ast.AST) -> str:
    """The node's source for a message: one line, at most 60 characters."""
    text = " ".join(ctx.source.segment(node).split())
    return text if len(text) <= 60 else text[:57] + "..."


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


def spell_function(qualname: str, ctx: "FileView") -> Optional[Tuple[str, Tuple[str, ...]]]:
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
