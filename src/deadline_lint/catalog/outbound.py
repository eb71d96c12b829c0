"""The outbound catalog's entries (outbound.yaml): the APIs that go over the network, the
client classes whose methods do, stubs, and timeout objects; each entry inherits what it does
not say from its group or class."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, Mapping, Optional, Tuple

from deadline_lint.catalog.schema import CALL

CLIENT = "client"  # besides CALL and WAIT, what an API does: see OutboundApi.kind

_UNSET: Any = object()


@dataclass(frozen=True)
class OutboundApi:
    qualname: str
    library: str
    keyword: Optional[str]  # None: the API takes no timeout at all
    position: Optional[int]  # positional index of the timeout, counting from 0
    default_timeout: Optional[float]  # None: waits forever
    # CALL goes over the wire; WAIT bounds the awaitable at `wraps` (asyncio.wait_for);
    # CLIENT builds a client whose timeout bounds its later calls (a constructor).
    kind: str = CALL
    wraps: Optional[int] = None
    wrap: Optional[str] = None  # no timeout parameter: how a fix bounds it ({call}, {timeout})
    timeout_template: str = "{timeout}"  # how this library spells N seconds as a timeout
    imports: Tuple[str, ...] = ()  # modules `timeout_template` / `wrap` need
    headers_keyword: Optional[str] = None  # HTTP APIs: where request headers go
    headers_position: Optional[int] = None
    blocking: bool = True  # False: starts the call and returns a future (grpc `.future`)
    checked: bool = True  # CLIENT only: a constructor reported itself when its timeout is missing

    def render_timeout(self, seconds_expression: str) -> str:
        return self.timeout_template.format(timeout=seconds_expression)


@dataclass(frozen=True)
class ClientClass:
    qualname: str
    library: str
    constructor_keyword: Optional[str]
    constructor_position: Optional[int]
    default_timeout: Optional[float]
    methods: Mapping[str, OutboundApi] = field(default_factory=dict)
    checked: bool = False  # the constructor is reported when it sets no timeout (redis.Redis)
    none_is_default: bool = False  # `timeout=None` at construction means the library default
    configured_by: FrozenSet[str] = frozenset()  # keywords that hand over a configured connection
    returns: Mapping[str, Tuple[str, bool]] = field(default_factory=dict)  # method -> (class, inherits)
    # Instance attributes holding another client (`locust.HttpUser.client`): name -> class.
    attributes: Mapping[str, str] = field(default_factory=dict)
    any_method: bool = False  # a gRPC stub: every attribute is a remote method
    timeout_template: str = "{timeout}"
    imports: Tuple[str, ...] = ()


@dataclass(frozen=True)
class StubPattern:
    """Generated gRPC stubs: `<module ending in module_suffix>.<Name ending in class_suffix>`."""

    library: str
    module_suffix: str
    class_suffix: str
    keyword: Optional[str]
    position: Optional[int]  # of the timeout in a method call: `stub.Method(request, timeout)`
    default_timeout: Optional[float]
    blocking_attributes: FrozenSet[str]  # `stub.Method.with_call(...)`: the same call
    future_attributes: FrozenSet[str]  # `stub.Method.future(...)`: started, not waited for

    def matches(self, qualname: str) -> bool:
        module, _, name = qualname.rpartition(".")
        return bool(module) and name.endswith(self.class_suffix) and module.endswith(self.module_suffix)


@dataclass(frozen=True)
class TimeoutObject:
    """A value object that carries a timeout (`httpx.Timeout`, `aiohttp.ClientTimeout`)."""

    qualname: str
    library: str
    fields: Mapping[str, Optional[int]]  # argument name -> positional index (None: keyword only)
    unbounded_if_none: FrozenSet[str]  # any of these given as None / inf: no limit at all
    unbounded_if_empty: bool  # built with no field at all: no limit at all

    @property
    def primary_field(self) -> str:
        return next(iter(self.fields))


def inherited_value(spec: Mapping[str, Any], key: str, inherited: Any) -> Any:
    value = spec.get(key, _UNSET)
    return inherited if value is _UNSET else value


def outbound_api(spec: Mapping[str, Any], qualname: str, library: str, base: Mapping[str, Any]) -> OutboundApi:
    """An API from an entry, inheriting what it does not say from `base` (group or class)."""
    imports = tuple(spec.get("imports", ())) or tuple(base.get("imports", ()))
    return OutboundApi(
        qualname=qualname,
        library=library,
        keyword=inherited_value(spec, "keyword", base.get("keyword", "timeout")),
        position=spec.get("position"),
        default_timeout=inherited_value(spec, "default_timeout", base.get("default_timeout")),
        kind=spec.get("kind", CALL),
        wraps=spec.get("wraps"),
        wrap=spec.get("wrap"),
        timeout_template=base.get("timeout_template", "{timeout}"),
        imports=imports,
        headers_keyword=base.get("headers_keyword"),
        headers_position=spec.get("headers_position"),
    )


def as_mapping(entry: Any) -> Dict[str, Any]:
    return {"name": entry} if isinstance(entry, str) else dict(entry)


