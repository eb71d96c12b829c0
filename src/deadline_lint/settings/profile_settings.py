"""Every profile setting, described once: a frozen dataclass per section whose fields carry
the default, the check (profile_values.py) and the doc, as ruff's `#[option]` fields do.
The loader's validation, the shipped JSON Schema (profile_schema.py) and the docs table
(docs/settings.md) are all derived from these classes; rules read the typed fields (`profile.budget.parameters`)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, Mapping, Optional, Tuple, Type

from deadline_lint.settings import profile_values as v

# The least timeout a fix ever inserts. A spent budget must still give a *positive* timeout:
# requests/urllib3 raise ValueError on 0, a socket timeout of 0 means non-blocking
# (http.client: BlockingIOError) and aiohttp reads `total=0` as "no limit". One millisecond
# makes the call fail at once with the library's own timeout error, the deadline path.
TIMEOUT_FLOOR_S = 0.001


def setting(default: Any, check: v.Check, doc: str) -> Any:
    """A field: its default (immutable: tuples, not lists), its check and its doc."""
    if isinstance(default, dict):
        return field(default_factory=lambda: dict(default), metadata={"check": check, "doc": doc})
    return field(default=default, metadata={"check": check, "doc": doc})


def section(cls: type, doc: str) -> Any:
    return field(default_factory=cls, metadata={"section": cls, "doc": doc})


Names = Tuple[str, ...]


@dataclass(frozen=True)
class BudgetSettings:
    parameters: Names = setting(("budget",), v.NAMES, "Parameter names that carry the request budget object.")
    seconds_parameters: Names = setting(
        ("budget_s",), v.NAMES,
        "Parameter names that carry the remaining time in seconds (`fix --thread-budget` adds `budget_s`); "
        "DL107 reports a second hop that spends one, so do not list a per-attempt `timeout` here.",
    )
    types: Names = setting(
        ("Budget",), v.NAMES,
        "Annotations that make a parameter a budget (a bare class name matches any module).",
    )
    accessors: Names = setting(
        (), v.NAMES,
        "Your own functions that return the remaining time in seconds (read into a name or called inline, "
        "they put the budget in scope).",
    )
    roles: Mapping[str, Names] = setting(
        {
            "raw_remainder": ("remaining", "time_remaining", "remaining_seconds"),
            "raw_remainder_ms": ("remaining_ms",),
            "hop_timeout": ("timeout",),
            "expired_check": ("expired", "is_expired"),
            "refuse_check": ("check", "raise_if_expired", "ensure"),
            "header_value": ("header_value", "to_header"),
        },
        v.ROLES,
        "What the methods of a budget type in `types` do: `raw_remainder` (seconds left, no hop margin "
        "taken off: DL104), `raw_remainder_ms` (the same in milliseconds), `hop_timeout` (the margin already "
        "taken off), `expired_check` and `refuse_check` (DL106 counts them as the refuse check), `header_value`.",
    )
    type_roles: Mapping[str, Mapping[str, Names]] = setting(
        {}, v.TYPE_ROLES,
        "Roles for one budget type, by its name in `types` (replacing `roles` for that type): "
        "`{Deadline: {raw_remainder: [left]}}`.",
    )
    context_vars: Names = setting(
        (), v.NAMES,
        "Module-level `contextvars.ContextVar` names whose `.get()` is the request budget (a var annotated "
        "`ContextVar[<budget type>]`, or created as `ContextVar(\"budget\")` with a name in `parameters`, counts "
        "without being listed).",
    )
    deadline_names: Names = setting(
        ("deadline", "deadline_at"), v.NAMES,
        "Parameter names that carry an absolute deadline instant this process set: compared with the wall "
        "clock, DL201 (add `expires_at` where it is your own deadline, not a server's expiry).",
    )
    clamps: Names = setting((), v.NAMES, "Your own functions that cap an inbound budget and reject negatives (DL204).")
    # Opt-in (measured on the corpus, see bench/results/notebook-to-stop-29.md).
    timeout_parameters: Names = setting(
        (), v.NAMES,
        "Parameter names whose numeric value is the time the caller gave the function (DL102); off when empty.",
    )


@dataclass(frozen=True)
class FixSettings:
    budget_expression: str = setting("{budget}.timeout()", v.TEMPLATE, "Timeout from a budget object.")
    seconds_expression: str = setting(
        f"max({TIMEOUT_FLOOR_S}, {{budget}} - {{margin}})", v.TEMPLATE,
        "Timeout from a budget in seconds; keep the hop margin and the 1 ms floor.",
    )
    grpc_context_expression: str = setting(
        f"max({TIMEOUT_FLOOR_S}, ({{edge}} if {{budget}}.time_remaining() is None "
        f"else {{budget}}.time_remaining()) - {{margin}})", v.TEMPLATE,
        "Timeout from a gRPC servicer context (whose `time_remaining()` is None when the client "
        "set no deadline: the edge total stands in).",
    )
    lambda_context_expression: str = setting(
        f"max({TIMEOUT_FLOOR_S}, {{budget}}.get_remaining_time_in_millis() / 1000 - {{margin}})", v.TEMPLATE,
        "Timeout from an AWS Lambda context.",
    )
    edge_expression: str = setting("{edge}", v.TEMPLATE, "Timeout where no budget is in scope (the edge total).")
    propagation: str = setting(
        "parameter", v.PROPAGATION,
        "How `fix --thread-budget` gives an interior function the budget: `parameter` (a keyword-only "
        "`budget_s` with no default, where every caller is in the run; else `context_accessor`, if set) or "
        "`context` (always `context_accessor`: no signature changes).",
    )
    context_accessor: str = setting(
        "", v.DOTTED_NAME,
        "The function that returns the ambient request budget's remaining seconds (a `ContextVar` read; "
        "`adopt --scaffold` writes one); also list it in `budget.accessors`. DL503 forwards it where a "
        "function has no budget of its own. Empty: no ambient budget.",
    )
    public_api: Names = setting(
        (), v.NAMES,
        "Functions and methods (`name`, `Class.method`, or dotted) whose signature `fix --thread-budget` keeps; "
        "names a package `__init__` defines or spells (a re-export; for a method, its class) are kept "
        "without being listed.",
    )


@dataclass(frozen=True)
class StatusSettings:
    expired: int = setting(504, v.HTTP_STATUS, "HTTP status for an expired deadline (DL401's fix writes it).")
    cancelled: int = setting(499, v.HTTP_STATUS, "HTTP status for a cancelled request.")
    refused: int = setting(503, v.HTTP_STATUS, "HTTP status for refusing too little remaining time.")
    grpc_expired: str = setting("DEADLINE_EXCEEDED", v.GRPC_STATUS, "gRPC status for an expired deadline.")
    grpc_cancelled: str = setting("CANCELLED", v.GRPC_STATUS, "gRPC status for a cancelled call.")
    grpc_refused: str = setting("DEADLINE_EXCEEDED", v.GRPC_STATUS, "gRPC status for refusing too little time.")


@dataclass(frozen=True)
class ExceptionSettings:
    expiry: Names = setting((), v.NAMES, "Exception types that mean the deadline expired.")
    cancel: Names = setting((), v.NAMES, "Exception types that mean the caller cancelled.")
    breaker: Names = setting((), v.NAMES, "Exception types that mean a circuit breaker is open.")


@dataclass(frozen=True)
class EdgeSettings:
    entry_points: Names = setting(
        (), v.NAMES,
        "More entry points for `edges` and `adopt`, besides the frameworks' own: dotted names of functions "
        "or methods (`pkg.handlers.handle`, `Worker.run`, or a bare name) or decorator names (`my_queue.job`; "
        "`@Route.get` for the decorator only, not the def `Route.get`). "
        "One taking `(event, context)` reads the AWS Lambda context.",
    )


@dataclass(frozen=True)
class Settings:
    """The top level of a profile."""

    edge_total_ms: int = setting(10000, v.MILLISECONDS, "The whole budget a request gets at the edge.")
    hop_margin_ms: int = setting(50, v.MILLISECONDS, "What each hop keeps for itself; less than edge_total_ms.")
    refuse_below_ms: int = setting(100, v.MILLISECONDS, "Below this remainder no downstream call starts.")
    max_bounded_default_s: float = setting(
        60, v.SECONDS, "The largest library default timeout that still counts as bounded.",
    )
    budget_header: str = setting(
        "X-Request-Budget-Ms", v.STRING, "The header or metadata key that carries the remaining time.",
    )
    trace_remaining_attribute: str = setting(
        "deadline.remaining_ms", v.STRING, "The span attribute that records the remaining milliseconds (DL601).",
    )
    # Retired: every family, the outbound one included, follows the project's own modules by
    # default. Accepted (and ignored) so that profiles written for earlier versions still load.
    project_index: bool = setting(
        False, v.BOOLEAN, "No effect (accepted for older profiles): every family follows the project's own modules."
    )
    budget: BudgetSettings = section(BudgetSettings, "Where the budget lives.")
    fix: FixSettings = section(FixSettings, "Python expression templates that fixes insert.")
    edge: EdgeSettings = section(EdgeSettings, "Where requests enter: the only places `adopt` mints a budget.")
    statuses: StatusSettings = section(StatusSettings, "The statuses expiry, cancellation and refusal answer with.")
    outbound: Tuple[Mapping[str, Any], ...] = setting(
        (), v.CLIENTS, "Your own outbound clients, in the built-in catalog's schema.",
    )
    exceptions: ExceptionSettings = section(ExceptionSettings, "Your own exception types, by meaning.")
    retry_decorators: Names = setting((), v.NAMES, "Decorators that retry.")
    spawn_helpers: Names = setting((), v.NAMES, "Helpers that start background work.")
    durable_enqueues: Names = setting(
        (), v.NAMES, "Your own functions that hand work to a durable queue (DL504), by qualified name.",
    )
    select: Names = setting((), v.CODES, "Rules to run (empty: every default-on rule).")
    extend_select: Names = setting((), v.CODES, "Rules added to the selection.")
    ignore: Names = setting((), v.CODES, "Rules never run.")
    per_path_ignores: Mapping[str, Names] = setting(
        {}, v.PATH_CODES, "Rules silenced for paths matching a glob (relative to the profile's folder).",
    )
    exclude: Names = setting((), v.NAMES, "Paths never checked (gitignore-style globs).")
    extend_safe_fixes: Names = setting((), v.CODES, "Rules whose unsafe fixes count as safe.")
    extend_unsafe_fixes: Names = setting((), v.CODES, "Rules whose safe fixes count as unsafe.")


@dataclass(frozen=True)
class Entry:
    """One setting as the derived views see it."""

    path: Tuple[str, ...]  # ("budget", "parameters")
    doc: str
    check: Optional[v.Check] = None  # None: a section
    section: Optional[type] = None
    default: Any = None

    @property
    def dotted(self) -> str:
        return ".".join(self.path)


def entries(cls: Type[Any] = Settings, prefix: Tuple[str, ...] = ()) -> Iterator[Entry]:
    """Every setting and section, depth first, in declaration order."""
    for f in dataclasses.fields(cls):
        path = (*prefix, f.name)
        if "section" in f.metadata:
            yield Entry(path, f.metadata["doc"], section=f.metadata["section"])
            yield from entries(f.metadata["section"], path)
        else:
            yield Entry(path, f.metadata["doc"], f.metadata["check"], default=default_of(f))


def default_of(f: "dataclasses.Field[Any]") -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    assert f.default_factory is not dataclasses.MISSING, f"{f.name} has no default"
    return f.default_factory()


def plain(value: Any) -> Any:
    """A setting's value as YAML would give it: tuples as lists."""
    if isinstance(value, tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def defaults(cls: Type[Any] = Settings) -> Dict[str, Any]:
    """The built-in defaults as a plain mapping (what a profile file overrides)."""
    result: Dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if "section" in f.metadata:
            result[f.name] = defaults(f.metadata["section"])
        else:
            result[f.name] = plain(default_of(f))
    return result


def checks(cls: Type[Any] = Settings) -> Dict[str, Any]:
    """Key -> Check, or a nested mapping for a section: what the loader validates against."""
    return {
        f.name: checks(f.metadata["section"]) if "section" in f.metadata else f.metadata["check"]
        for f in dataclasses.fields(cls)
    }


def typed_fields(cls: Type[Any], data: Mapping[str, Any]) -> Dict[str, Any]:
    """The constructor arguments of `cls` for a validated, merged mapping."""
    values: Dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if "section" in f.metadata:
            section_cls = f.metadata["section"]
            values[f.name] = section_cls(**typed_fields(section_cls, data[f.name]))
        else:
            values[f.name] = f.metadata["check"].freeze(data[f.name])
    return values
