"""Record classes: the part of `dataclasses` this package uses, built for a short process.

Python 3.11's `dataclasses` compiles every generated method with its own `exec` (six for a
frozen class) and imports `inspect`; the package defines about 80 of them on the check path,
which cost a pre-commit run (one changed file) more CPU than its check. Here a class gets one
`exec`, for `__init__`, and shares `__eq__`, `__hash__`, `__repr__` and the frozen
`__setattr__` built from `operator.attrgetter`. The behaviour kept is the one the package
relies on, checked against `dataclasses` by tests/test_records.py: field order (bases first),
defaults and `field(default_factory=..., init=, repr=, compare=, metadata=)`, `__post_init__`,
`frozen`, `eq` (equal only to the same class; hash of the compared fields' tuple, as
`dataclasses` gives), `fields`, `replace`, `is_record`. Not kept: `order`, `slots`,
`kw_only`, `InitVar`, `__match_args__`.

For mypy the names are `dataclasses`' own, so every record is type-checked as a dataclass.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dataclasses import MISSING, Field, dataclass, field, fields, replace
    from dataclasses import is_dataclass as is_record
else:
    from operator import attrgetter
    from types import MappingProxyType

    class _Missing:
        def __repr__(self) -> str:
            return "MISSING"

    MISSING = _Missing()
    _EMPTY = MappingProxyType({})

    class FrozenRecordError(AttributeError):
        """Assigning to a field of a frozen record."""

    class Field:
        __slots__ = ("name", "type", "default", "default_factory", "init", "repr", "compare", "metadata")

        def __init__(self, default, default_factory, init, repr, compare, metadata):
            self.name = None
            self.type = None
            self.default = default
            self.default_factory = default_factory
            self.init = init
            self.repr = repr
            self.compare = compare
            self.metadata = _EMPTY if metadata is None else MappingProxyType(metadata)

        def __repr__(self) -> str:
            return f"Field(name={self.name!r}, default={self.default!r})"

    def field(*, default=MISSING, default_factory=MISSING, init=True, repr=True, compare=True, metadata=None):
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        return Field(default, default_factory, init, repr, compare, metadata)

    def _is_class_var(annotation) -> bool:
        # Annotations are strings here (every module has `from __future__ import annotations`);
        # an evaluated `typing.ClassVar[...]` reads the same.
        return str(annotation).startswith(("ClassVar", "typing.ClassVar"))

    def _own_fields(cls):
        own = []
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if _is_class_var(annotation):
                continue
            value = cls.__dict__.get(name, MISSING)
            spec = value if isinstance(value, Field) else Field(value, MISSING, True, True, True, None)
            spec.name, spec.type = name, annotation
            if isinstance(value, Field):
                if spec.default is MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, spec.default)
            own.append(spec)
        return own

    def _collected(cls):
        found = {}
        for base in reversed(cls.__mro__[1:]):
            for spec in getattr(base, "__record_fields__", {}).values():
                found[spec.name] = spec
        for spec in _own_fields(cls):
            found[spec.name] = spec
        return found

    def _init_source(specs, frozen, post_init):
        """`__init__`'s text; defaults and factories come in as `_default_<name>` and
        `_factory_<name>`, so no value is ever printed into the source."""
        parameters, body = [], []
        for spec in specs:
            name = spec.name
            if spec.default_factory is not MISSING:
                value = f"_factory_{name}() if {name} is _NO_VALUE else {name}" if spec.init else f"_factory_{name}()"
                default = "=_NO_VALUE"
            elif spec.default is not MISSING:
                value, default = (name if spec.init else f"_default_{name}"), f"=_default_{name}"
            elif spec.init:
                value, default = name, ""
            else:
                continue  # set by __post_init__ or never, as `dataclasses` leaves it
            if spec.init:
                parameters.append(name + default)
            body.append(f"_set(self, {name!r}, {value})" if frozen else f"self.{name} = {value}")
        if post_init:
            body.append("self.__post_init__()")
        return f"def __init__(self, {', '.join(parameters)}):\n    " + ("\n    ".join(body) or "pass") + "\n"

    def _make_init(cls, specs, frozen):
        namespace = {"_NO_VALUE": MISSING, "_set": object.__setattr__}
        for spec in specs:
            if spec.default_factory is not MISSING:
                namespace[f"_factory_{spec.name}"] = spec.default_factory
            elif spec.default is not MISSING:
                namespace[f"_default_{spec.name}"] = spec.default
        exec(_init_source(specs, frozen, hasattr(cls, "__post_init__")), namespace)  # noqa: S102
        init = namespace["__init__"]
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        return init

    def _getter(names):
        """The tuple of these attributes: what `dataclasses` compares and hashes."""
        if not names:
            return lambda instance: ()
        if len(names) == 1:
            one = attrgetter(names[0])
            return lambda instance: (one(instance),)
        return attrgetter(*names)

    def _frozen_setattr(self, name, value):
        if name in type(self).__record_fields__:
            raise FrozenRecordError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)

    def _frozen_delattr(self, name):
        if name in type(self).__record_fields__:
            raise FrozenRecordError(f"cannot delete field {name!r}")
        object.__delattr__(self, name)

    def _build(cls, frozen, eq):
        specs = _collected(cls)
        cls.__record_fields__ = specs
        cls.__init__ = _make_init(cls, list(specs.values()), frozen)
        shown = [(spec.name, attrgetter(spec.name)) for spec in specs.values() if spec.repr]

        def __repr__(self):
            inner = ", ".join(f"{name}={get(self)!r}" for name, get in shown)
            return f"{type(self).__qualname__}({inner})"

        cls.__repr__ = __repr__
        if eq:
            key = _getter([spec.name for spec in specs.values() if spec.compare])

            def __eq__(self, other):
                if other.__class__ is self.__class__:
                    return key(self) == key(other)
                return NotImplemented

            cls.__eq__ = __eq__
            if frozen:
                cls.__hash__ = lambda self: hash(key(self))
            elif "__hash__" not in cls.__dict__:
                cls.__hash__ = None
        if frozen:
            cls.__setattr__ = _frozen_setattr
            cls.__delattr__ = _frozen_delattr
        return cls

    def dataclass(cls=None, *, frozen=False, eq=True):
        if cls is None:
            return lambda inner: _build(inner, frozen, eq)
        return _build(cls, frozen, eq)

    def fields(record):
        return tuple(record.__record_fields__.values())

    def is_record(value) -> bool:
        return hasattr(type(value) if not isinstance(value, type) else value, "__record_fields__")

    def replace(record, **changes):
        for spec in type(record).__record_fields__.values():
            if spec.init and spec.name not in changes:
                changes[spec.name] = getattr(record, spec.name)
        return type(record)(**changes)


__all__ = ["MISSING", "Field", "dataclass", "field", "fields", "is_record", "replace"]
