"""A logged deletion carries the security level of each id or key it deleted (the
change feed hides a deletion above a watcher's clearance): levels round-trip, merged
deletes keep each id's level, and entries of older daemons (no levels) decode as
unknown."""

from __future__ import annotations

import msgpack  # type: ignore[import-untyped]

from memoryd.domain.models import Partition, SecurityLevel
from memoryd.domain.records import RecordKind
from memoryd.durability.ops import Op, decode, encode, plan_calls

P = Partition("t", "a")
HIGH, LOW = SecurityLevel.RESTRICTED, SecurityLevel.INTERNAL


def test_levels_round_trip_with_unknown_ones() -> None:
    logged = [
        Op("delete", P, ids=("m1", "m2", "m3"), levels=(HIGH, None, LOW)),
        Op("delete_records", P, record_kind=RecordKind.KEY, keys=("/k",), levels=(HIGH,)),
    ]
    memories, keys = decode(encode(logged))
    assert [memories.level_at(i) for i in range(3)] == [HIGH, None, LOW]
    assert keys.level_at(0) is HIGH and keys.level_at(1) is None


def test_an_older_daemons_delete_has_no_levels() -> None:
    old = [{"o": "delete", "p": ["t", "a"], "i": ["m1"]}]
    (op,) = decode(msgpack.packb(old, use_bin_type=True))
    assert op.levels == () and op.level_at(0) is None
    assert "l" not in msgpack.unpackb(encode([Op("delete", P, ids=("m1",))]), raw=False)[0]


def test_merged_deletes_keep_each_ids_level() -> None:
    first = Op("delete", P, ids=("m1", "m2"), levels=(HIGH, None))
    second = Op("delete", P, ids=("m2", "m3"), levels=(LOW, None))
    [call] = plan_calls([first, second])
    [merged] = call.ops
    assert merged.ids == ("m1", "m2", "m3")
    assert merged.levels == (HIGH, LOW, None)
