"""What the clock rules share: the words a file must contain for any of them to fire, and
how a fix spells a monotonic clock read with the names the module already binds."""
from __future__ import annotations

from types import MappingProxyType
import ast
import re
from typing import TYPE_CHECKING, FrozenSet, Optional, Tuple

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
# A module-level alias of a clock function (`_now = datetime.datetime.now`, `now = time.time`).
_MODULE_ALIAS = re.compile(r"^\w+[ \t]*=[ \t]*(?:\w+\.)*(?:time|time_ns|now|utcnow)[ \t]*(?:#[^\n]*)?$", re.M)


class WallClockThroughProject:
    """DL201's `Project` need, `(text, path) -> bool`: the file reads the wall clock through
    the project (a module it imports reads it)."""

    def __init__(self, catalog: Catalog) -> None:
        self._fact = reads_wall_clock(clock_catalog(catalog))

    def __call__(self, text: str, path: str) -> bool:
        return reaches_wall_clock(self._fact, text, path)


class WallReadText:
    """The second look for DL201: the text spells a wall-clock read (`time.time(`, a
    `from time import time`, `t.time(` after `import time as t`, `datetime` and `.now(`)."""

    def __call__(self, text: str) -> bool:
        if "time.time(" in text or "time_ns(" in text:
            return True
        if "from time import" in text and _FROM_TIME.search(text):
            return True
        if "datetime" in text and (".now(" in text or "utcnow(" in text or ".today(" in text):
            return True
        if "import time as" in text and any(f"{alias}.time" in text for alias in _TIME_ALIAS.findall(text)):
            return True
        return ("time" in text or "now" in text) and bool(_MODULE_ALIAS.search(text))


class DateHeaderText:
    """The second look for DL203: a `Date` key, and the text names headers, metadata or a
    WSGI environ. (The engine parses a file when any selected rule's second look passes, so
    each one repeats its rule's own words.)"""

    _CONTAINERS = HEADER_WORDS | {"environ"}

    def __call__(self, text: str) -> bool:
        return any(w in text for w in DATE_WORDS) and any(w in text for w in self._CONTAINERS)


# Neither reads the catalog: one of each serves every checker.
WALL_READ_TEXT = WallReadText()
DATE_HEADER_TEXT = DateHeaderText()


READ, WRITE = "read", "write"  # the shapes of a header key literal in source text
# A short one-line literal holding a key word, where a key is read (`h["..."]`,
# `h.get("...")`) or written (`{"...": v}`, `("...", v)`, `h["..."] = v`).
_INSIDE = r"""[^"'\s=(){}\[\],:]{0,60}?"""
_SHAPES = MappingProxyType({
    READ: r"""[\[(]\s*[bBrRuU]?["']%s(?:%s)%s["']\s*[\]),]""",
    WRITE: r"""[{(,\[]\s*[bBrRuU]?["']%s(?:%s)%s["']\s*[:,\]]""",
})


class HeaderKeyText:
    """The second look for DL202 (shape WRITE) and DL204 (shape READ): one of the rule's own
    words, a headers/metadata word, and a string literal naming a deadline, a timeout or a
    budget (`"X-Request-Deadline"`, `'grpc-timeout'`, the profile's header) in that shape."""

    _CONTAINERS = HEADER_WORDS | {"environ"}

    def __init__(self, catalog: Catalog, profile_header: str, words: FrozenSet[str], shape: str) -> None:
        keys = [re.escape(w).replace("\\-", "[-_ ]?") for w in clock_catalog(catalog).wire.deadline_words]
        keys.append(re.escape(profile_header).replace("\\-", "[-_]"))
        self._pattern = re.compile(_SHAPES[shape] % (_INSIDE, "|".join(keys), _INSIDE), re.IGNORECASE)
        self._words = words

    def __call__(self, text: str) -> bool:
        if not any(w in text for w in self._words) or not any(w in text for w in self._CONTAINERS):
            return False
        return self._pattern.search(text) is not None


def key_text_filter(catalog: Catalog, profile_header: str, words: FrozenSet[str], shape: str) -> HeaderKeyText:
    """The catalog's one `HeaderKeyText` for this header, these words and this shape."""
    return catalog.derived(HeaderKeyText, profile_header, words, shape)


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
