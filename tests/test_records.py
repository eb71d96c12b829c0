"""`deadline_lint.support.records` behaves as `dataclasses` does for what the package uses: the same
class declared both ways builds, compares, hashes, prints, copies and pickles alike."""
from __future__ import annotations

import dataclasses
import pickle
from typing import ClassVar, Dict, Tuple

import pytest

from deadline_lint.support import records


def _declare(decorate, field):
    @decorate(frozen=True)
    class Point:
        x: int
        y: int = 2
        tags: Tuple[str, ...] = ()
        extra: Dict[str, int] = field(default_factory=dict, compare=False, repr=False)
        shared: ClassVar[int] = 7

    @decorate(frozen=True)
    class Labelled(Point):
        label: str = "a"

    @decorate(frozen=True, eq=False)
    class ByIdentity:
        x: int

    @decorate
    class Mutable:
        x: int
        seen: int = field(default=0, init=False)

        def __post_init__(self) -> None:
            self.seen = self.x * 2

    return Point, Labelled, ByIdentity, Mutable


PLAIN = _declare(dataclasses.dataclass, dataclasses.field)
RECORD = _declare(records.dataclass, records.field)


@records.dataclass(frozen=True)
class Pickled:  # pickle finds a class by its module and name
    x: int
    label: str = "a"


def test_fields_defaults_and_factories_in_declaration_order():
    for point, labelled, _, _ in (PLAIN, RECORD):
        made = labelled(1, tags=("t",))
        assert (made.x, made.y, made.tags, made.extra, made.label) == (1, 2, ("t",), {}, "a")
        assert made.extra is not labelled(1).extra  # a fresh default per instance
        assert point.shared == 7
    assert [f.name for f in records.fields(RECORD[1])] == [f.name for f in dataclasses.fields(PLAIN[1])]
    assert records.fields(RECORD[0])[3].metadata == {}


def test_equality_hash_and_repr_as_dataclasses_give_them():
    for plain_cls, record_cls in zip(PLAIN[:2], RECORD[:2]):
        a, b = plain_cls(1, 3, ("t",), {"k": 1}), record_cls(1, 3, ("t",), {"k": 1})
        assert hash(a) == hash(b)
        assert repr(a) == repr(b)
        assert b == record_cls(1, 3, ("t",))  # `extra` is not compared
        assert b != record_cls(2, 3, ("t",))
    assert RECORD[0](1) != RECORD[1](1)  # another class, even a subclass, is never equal
    assert RECORD[0](1).__eq__(1) is NotImplemented
    one = RECORD[2](1)
    assert one != RECORD[2](1) and one == one and hash(one) == object.__hash__(one)
    assert RECORD[3].__hash__ is None and PLAIN[3].__hash__ is None


def test_frozen_replace_post_init_and_pickle():
    point = RECORD[0](1)
    with pytest.raises(AttributeError):
        point.x = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del point.x  # type: ignore[misc]
    moved = records.replace(point, y=9)
    assert (moved.x, moved.y) == (1, 9) and point.y == 2
    mutable = RECORD[3](4)
    assert mutable.seen == 8 and records.replace(mutable, x=1).seen == 2
    mutable.x = 5
    assert records.is_record(mutable) and records.is_record(RECORD[3]) and not records.is_record(object())
    assert pickle.loads(pickle.dumps(Pickled(1, label="z"))) == Pickled(1, label="z")


def test_a_field_without_a_default_after_one_with_is_refused():
    with pytest.raises((TypeError, SyntaxError)):
        @records.dataclass(frozen=True)
        class Wrong:
            a: int = 1
            b: int  # type: ignore[misc]
