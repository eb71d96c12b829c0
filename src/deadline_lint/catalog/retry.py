"""The retry machinery (retry.yaml): policy builders, their filters and stops, the predicates
and stops they are given, sleeps of hand-written loops, and clients with their own retries.
The schema is documented at the top of retry.yaml."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, FrozenSet, Mapping, Optional, Tuple

from deadline_lint.catalog.names import canonical_name

DECORATOR, OBJECT = "decorator", "object"
TYPES, PREDICATE, CALLABLE = "types", "predicate", "callable"
ALL, NONE = "all", "none"
ATTEMPTS, DELAY, STOP, NEVER, ANY = "attempts", "delay", "stop", "never", "any"
ALL_BUT, NOTHING = "all_but", "nothing"
TEST = "test"  # a predicate given a function of the exception: read when the file defines it

_FILE_KEYS = frozenset({
    "policies", "predicates", "stop_builders", "sleeps", "client_retries", "retry_objects", "aliases",
    "local_waits", "timeout_flags", "outside_requests",
})
_OUTSIDE_KEYS = frozenset({"names", "background", "spawns"})
_LOCAL_WAIT_KEYS = frozenset({"methods", "queue_methods", "wrappers", "sends"})
_POLICY_KEYS = frozenset({
    "form", "bare", "filter", "default", "giveup", "stops", "positions", "default_stop", "retries_results", "hint",
    "timeouts", "counts",
})
_TIMEOUTS_KEYS = frozenset({"type", "what", "unless", "hint"})
_PREDICATE_KEYS = frozenset({"admits", "position", "keyword", "default", "varargs"})


@dataclass(frozen=True)
class Argument:
    """Where an argument goes: by keyword, and by position when it may be positional."""

    keyword: Optional[str]
    position: Optional[int] = None


@dataclass(frozen=True)
class OwnTimeouts:
    """An expiry type a policy retries by itself when no filter is given (urllib3's read
    timeouts, redis's default `supported_errors`), unless a keyword of `unless` is 0/False/None."""

    type: str
    what: str
    unless: Tuple[str, ...] = ()
    hint: str = ""


@dataclass(frozen=True)
class RetryApi:
    qualname: str
    form: str  # DECORATOR or OBJECT
    bare: bool = False
    filter: Optional[Argument] = None
    filter_as: str = TYPES  # TYPES, PREDICATE or CALLABLE
    default: str = ALL  # retried without a filter: ALL or NONE
    giveup: Tuple[str, ...] = ()
    stops: Mapping[str, str] = field(default_factory=dict)  # keyword -> ATTEMPTS / DELAY / STOP
    positions: Mapping[str, int] = field(default_factory=dict)  # stop keyword -> positional index
    default_stop: str = NEVER
    retries_results: bool = False
    hint: str = ""  # how to keep expiry out of the filter
    timeouts: Optional[OwnTimeouts] = None
    counts_retries: bool = False  # its attempt stop counts retries after the first attempt (urllib3, redis)
    source: str = "catalog"  # or "profile": a decorator the profile names (nothing else known)

    @property
    def library(self) -> str:
        return self.qualname.split(".")[0]


@dataclass(frozen=True)
class Predicate:
    qualname: str
    admits: str  # TYPES, ALL_BUT, NOTHING, ALL or ANY
    argument: Argument = Argument(None)
    default: Optional[str] = None  # the class admitted when no argument is given
    varargs: bool = False


@dataclass(frozen=True)
class LocalWaits:
    """Calls that wait on this process, not on another service (see retry.yaml)."""

    methods: FrozenSet[str] = frozenset()  # `event.wait()`, `future.result(timeout=)`
    queue_methods: FrozenSet[str] = frozenset()  # `q.get(timeout=)`: only without a key or URL
    wrappers: FrozenSet[str] = frozenset()  # `asyncio.wait_for(q.get(), 1)`: judged by what they wrap
    sends: FrozenSet[str] = frozenset()  # methods that send: an attempt calling one re-sends


@dataclass(frozen=True)
class OutsideRequests:
    """Code no request waits for (see retry.yaml `outside_requests`)."""

    names: Tuple[str, ...] = ()  # patterns a function's whole name matches
    background: FrozenSet[str] = frozenset()  # calls running their function argument on its own
    spawns: FrozenSet[str] = frozenset()  # of those, the ones that do so only when not waited for
    scripts: bool = True  # every def of a module with an `if __name__ == "__main__":` block


@dataclass(frozen=True)
class RetryCatalog:
    policies: Mapping[str, RetryApi] = field(default_factory=dict)
    predicates: Mapping[str, Predicate] = field(default_factory=dict)
    stop_builders: Mapping[str, str] = field(default_factory=dict)
    sleeps: FrozenSet[str] = frozenset()
    client_retries: Mapping[str, Argument] = field(default_factory=dict)
    retry_objects: Mapping[str, Argument] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)
    local_waits: LocalWaits = LocalWaits()
    timeout_flags: Mapping[str, str] = field(default_factory=dict)
    outside_requests: OutsideRequests = OutsideRequests()

    def canonical(self, qualname: str) -> str:
        return canonical_name(self.aliases, qualname)

    def policy(self, qualname: Optional[str]) -> Optional[RetryApi]:
        return self.policies.get(self.canonical(qualname)) if qualname else None

    def predicate(self, qualname: Optional[str]) -> Optional[Predicate]:
        return self.predicates.get(self.canonical(qualname)) if qualname else None

    def stop_builder(self, qualname: Optional[str]) -> Optional[str]:
        return self.stop_builders.get(self.canonical(qualname)) if qualname else None

    def is_sleep(self, qualname: Optional[str]) -> bool:
        return bool(qualname) and self.canonical(qualname or "") in self.sleeps

    def timeout_flag(self, qualname: Optional[str]) -> Optional[str]:
        return self.timeout_flags.get(self.canonical(qualname)) if qualname else None

    def client_retry_argument(self, qualname: Optional[str]) -> Optional[Argument]:
        return self.client_retries.get(self.canonical(qualname)) if qualname else None

    def retry_object_argument(self, qualname: Optional[str]) -> Optional[Argument]:
        return self.retry_objects.get(self.canonical(qualname)) if qualname else None

    @property
    def modules(self) -> FrozenSet[str]:
        """Top-level modules any listed name lives in: the rules' trigger words."""
        names = [*self.policies, *self.predicates, *self.stop_builders, *self.client_retries, *self.retry_objects]
        return frozenset(n.split(".")[0] for n in names)

    def with_decorators(self, names: Tuple[str, ...]) -> "RetryCatalog":
        """Plus the profile's own retry decorators: known to retry, with nothing else known."""
        policies = dict(self.policies)
        for name in names:
            policies.setdefault(
                name, RetryApi(name, DECORATOR, bare=True, filter_as=CALLABLE, default_stop=STOP, source="profile")
            )
        return RetryCatalog(
            policies, self.predicates, self.stop_builders, self.sleeps, self.client_retries, self.retry_objects,
            self.aliases, self.local_waits, self.timeout_flags, self.outside_requests,
        )


def _argument(spec: Mapping[str, Any]) -> Argument:
    return Argument(spec.get("keyword"), spec.get("position"))


def build_retry_catalog(content: Optional[Mapping[str, Any]]) -> RetryCatalog:
    content = content or {}
    policies = {}
    for name, spec in (content.get("policies") or {}).items():
        filter_spec = spec.get("filter")
        policies[name] = RetryApi(
            qualname=name,
            form=spec["form"],
            bare=bool(spec.get("bare", False)),
            filter=_argument(filter_spec) if filter_spec else None,
            filter_as=(filter_spec or {}).get("as", TYPES),
            default=spec.get("default", ALL),
            giveup=tuple(spec.get("giveup") or ()),
            stops=dict(spec.get("stops") or {}),
            positions=dict(spec.get("positions") or {}),
            default_stop=spec.get("default_stop", NEVER),
            retries_results=bool(spec.get("retries_results", False)),
            hint=spec.get("hint") or "",
            timeouts=_own_timeouts(spec.get("timeouts")),
            counts_retries=spec.get("counts") == "retries",
        )
    predicates = {
        name: Predicate(name, spec["admits"], _argument(spec), spec.get("default"), bool(spec.get("varargs", False)))
        for name, spec in (content.get("predicates") or {}).items()
    }
    return RetryCatalog(
        policies=policies,
        predicates=predicates,
        stop_builders=dict(content.get("stop_builders") or {}),
        sleeps=frozenset(content.get("sleeps") or ()),
        client_retries={k: _argument(v or {}) for k, v in (content.get("client_retries") or {}).items()},
        retry_objects={k: _argument(v or {}) for k, v in (content.get("retry_objects") or {}).items()},
        aliases=dict(content.get("aliases") or {}),
        local_waits=_local_waits(content.get("local_waits") or {}),
        timeout_flags=dict(content.get("timeout_flags") or {}),
        outside_requests=_outside_requests(content.get("outside_requests") or {}),
    )


def _outside_requests(spec: Mapping[str, Any]) -> OutsideRequests:
    return OutsideRequests(
        tuple(spec.get("names") or ()), frozenset(spec.get("background") or ()), frozenset(spec.get("spawns") or ())
    )


def _own_timeouts(spec: Optional[Mapping[str, Any]]) -> Optional[OwnTimeouts]:
    if not spec:
        return None
    return OwnTimeouts(
        spec["type"], spec.get("what") or spec["type"], tuple(spec.get("unless") or ()), spec.get("hint") or ""
    )


def _local_waits(spec: Mapping[str, Any]) -> LocalWaits:
    return LocalWaits(*(frozenset(spec.get(key) or ()) for key in ("methods", "queue_methods", "wrappers", "sends")))


def _argument_problem(spec: Any) -> Optional[str]:
    if not isinstance(spec, dict):
        return "a mapping with `keyword` and/or `position`"
    keyword, position = spec.get("keyword"), spec.get("position")
    if keyword is not None and not isinstance(keyword, str):
        return "`keyword` as a parameter name"
    if position is not None and (not isinstance(position, int) or isinstance(position, bool) or position < 0):
        return "`position` as a whole number from 0"
    return None


def validate_retry_catalog(content: Any) -> Optional[str]:
    """What was expected, or None when `content` follows the retry.yaml schema."""
    if not isinstance(content, dict) or set(content) - _FILE_KEYS:
        return f"a mapping with keys among {sorted(_FILE_KEYS)}"
    for name, spec in (content.get("policies") or {}).items():
        if not isinstance(spec, dict) or set(spec) - _POLICY_KEYS:
            return f"`policies.{name}` as a mapping with keys among {sorted(_POLICY_KEYS)}"
        if spec.get("form") not in (DECORATOR, OBJECT):
            return f"`policies.{name}.form` as decorator or object"
        if spec.get("default", ALL) not in (ALL, NONE):
            return f"`policies.{name}.default` as all or none"
        if spec.get("counts", "attempts") not in ("attempts", "retries"):
            return f"`policies.{name}.counts` as attempts or retries"
        if spec.get("default_stop", NEVER) not in (NEVER, ATTEMPTS, DELAY):
            return f"`policies.{name}.default_stop` as never, attempts or delay"
        if "filter" in spec:
            problem = _argument_problem(spec["filter"])
            if problem is None and spec["filter"].get("as", TYPES) not in (TYPES, PREDICATE, CALLABLE):
                problem = "`as` as types, predicate or callable"
            if problem:
                return f"`policies.{name}.filter` with {problem}"
        stops = spec.get("stops") or {}
        if not isinstance(stops, dict) or any(v not in (ATTEMPTS, DELAY, STOP) for v in stops.values()):
            return f"`policies.{name}.stops` as a mapping of keyword to attempts, delay or stop"
        timeouts = spec.get("timeouts")
        if timeouts is not None and (
            not isinstance(timeouts, dict) or set(timeouts) - _TIMEOUTS_KEYS
            or not isinstance(timeouts.get("type"), str)
        ):
            return f"`policies.{name}.timeouts` as a mapping with `type` and keys among {sorted(_TIMEOUTS_KEYS)}"
        positions = spec.get("positions") or {}
        if not isinstance(positions, dict) or set(positions) - set(stops):
            return f"`policies.{name}.positions` as a mapping of stop keyword to index"
    for name, spec in (content.get("predicates") or {}).items():
        if not isinstance(spec, dict) or set(spec) - _PREDICATE_KEYS:
            return f"`predicates.{name}` as a mapping with keys among {sorted(_PREDICATE_KEYS)}"
        if spec.get("admits") not in (TYPES, ALL_BUT, NOTHING, ALL, ANY, TEST):
            return f"`predicates.{name}.admits` as types, all_but, nothing, all, any or test"
        problem = _argument_problem(spec)
        if problem:
            return f"`predicates.{name}` with {problem}"
    builders = content.get("stop_builders") or {}
    if not isinstance(builders, dict) or any(v not in (ATTEMPTS, DELAY, NEVER, ANY) for v in builders.values()):
        return "`stop_builders` as a mapping of name to attempts, delay, never or any"
    sleeps = content.get("sleeps") or []
    if not isinstance(sleeps, list) or not all(isinstance(s, str) for s in sleeps):
        return "`sleeps` as a list of qualified names"
    for key in ("client_retries", "retry_objects"):
        for name, spec in (content.get(key) or {}).items():
            problem = _argument_problem(spec or {})
            if problem:
                return f"`{key}.{name}` with {problem}"
    flags = content.get("timeout_flags") or {}
    if not isinstance(flags, dict) or not all(isinstance(v, str) for v in flags.values()):
        return "`timeout_flags` as a mapping of constructor to keyword"
    waits = content.get("local_waits") or {}
    if not isinstance(waits, dict) or set(waits) - _LOCAL_WAIT_KEYS or not all(
        isinstance(v, list) and all(isinstance(n, str) for n in v) for v in waits.values()
    ):
        return f"`local_waits` as a mapping of {sorted(_LOCAL_WAIT_KEYS)} to lists of names"
    outside = content.get("outside_requests") or {}
    if not isinstance(outside, dict) or set(outside) - _OUTSIDE_KEYS or not all(
        isinstance(v, list) and all(isinstance(n, str) for n in v) for v in outside.values()
    ):
        return f"`outside_requests` as a mapping of {sorted(_OUTSIDE_KEYS)} to lists of names"
    problem = _pattern_problem(outside.get("names") or ())
    if problem:
        return problem
    aliases = content.get("aliases") or {}
    if not isinstance(aliases, dict) or not all(isinstance(v, str) for v in aliases.values()):
        return "`aliases` as a mapping of import path to canonical path"
    return None


def _pattern_problem(patterns: Any) -> Optional[str]:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            return f"`outside_requests.names` as regular expressions (`{pattern}`: {exc})"
    return None
