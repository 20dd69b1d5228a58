"""RecordStore basics: put / get / delete / count, idempotence, JSON round trip."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from memoryd.domain.models import Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.records import KeyPage, RecordStore

from .conftest import ReopenRecords
from .records_support import BASE, rec

P = Partition("tenant", "agent")

DOCS: list[dict[str, Any]] = [
    {},
    {"null": None, "t": True, "f": False},
    {"nested": {"a": [1, 2, {"b": [None, "x", [[]]]}], "empty": {}}},
    {"unicode": "漢字 🙂 ünïcødé", "quote": 'it\'s "quoted"', "nul": "a\x00b", "nl": "a\nb"},
    {"big": 2**63 + 1, "neg": -(2**70), "zero": 0, "int64max": 2**63 - 1},
    {"floats": [0.1, -2.5e-300, 1.7976931348623157e308, 5e-324, 1.0, -0.0, 123456.789]},
    {"deep": {"a": {"b": {"c": {"d": {"e": {"f": "g"}}}}}}},
    {"long": "x" * 100_000},
    {"list": list(range(1000))},
]


def same_json(a: Any, b: Any) -> bool:
    """Equality that also tells 1 from 1.0 and -0.0 from 0.0 (JSON keeps both apart)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def assert_record(got: Record, want: Record) -> None:
    assert got.kind == want.kind and got.key == want.key and got.version == want.version
    assert same_json(got.doc, want.doc), (got.doc, want.doc)
    assert got.updated_at == want.updated_at
    assert got.updated_at.utcoffset() == timedelta(0)
    assert got.expires_at == want.expires_at
    if got.expires_at is not None:
        assert got.expires_at.utcoffset() == timedelta(0)


async def test_put_then_get_round_trips_every_field(record_store: RecordStore) -> None:
    expiring = rec("/b", {"x": 1}, expires_at=BASE + timedelta(days=3, microseconds=7))
    plain = rec("/a", {"y": [1, 2]})
    await record_store.put_records(P, [expiring, plain])
    got = await record_store.get_records(P, RecordKind.KEY, ["/b", "/missing", "/a"])
    assert [r.key for r in got] == ["/b", "/a"]  # request order, missing omitted
    assert_record(got[0], expiring)
    assert_record(got[1], plain)


@pytest.mark.parametrize("doc", DOCS, ids=range(len(DOCS)))
async def test_documents_round_trip_as_json(record_store: RecordStore, doc: dict[str, Any]) -> None:
    r = rec("/doc", doc)
    await record_store.put_records(P, [r])
    [got] = await record_store.get_records(P, RecordKind.KEY, ["/doc"])
    assert same_json(got.doc, doc)
    [listed] = await record_store.list_records(P, RecordKind.KEY)
    assert same_json(listed.doc, doc)


async def test_documents_are_copies(record_store: RecordStore) -> None:
    doc: dict[str, Any] = {"a": [1]}
    await record_store.put_records(P, [rec("/k", doc)])
    doc["a"].append(2)
    [got] = await record_store.get_records(P, RecordKind.KEY, ["/k"])
    assert got.doc == {"a": [1]}
    got.doc["a"].append(3)
    [again] = await record_store.get_records(P, RecordKind.KEY, ["/k"])
    assert again.doc == {"a": [1]}


async def test_tuples_come_back_as_lists(record_store: RecordStore) -> None:
    await record_store.put_records(P, [rec("/k", {"t": (1, "a")})])
    [got] = await record_store.get_records(P, RecordKind.KEY, ["/k"])
    assert got.doc == {"t": [1, "a"]}


async def test_timestamps_are_stored_in_utc(record_store: RecordStore) -> None:
    plus2 = timezone(timedelta(hours=2))
    local = datetime(2024, 6, 1, 14, 30, 0, 123456, tzinfo=plus2)
    r = Record(RecordKind.KEY, "/tz", {}, 1, local, expires_at=datetime(2030, 1, 1))
    await record_store.put_records(P, [r])
    [got] = await record_store.get_records(P, RecordKind.KEY, ["/tz"])
    assert got.updated_at == datetime(2024, 6, 1, 12, 30, 0, 123456, tzinfo=UTC)
    assert got.updated_at.utcoffset() == timedelta(0)
    assert got.expires_at == datetime(2030, 1, 1, tzinfo=UTC)


async def test_put_is_an_idempotent_upsert(record_store: RecordStore) -> None:
    first = rec("/k", {"v": 1}, version=1)
    await record_store.put_records(P, [first])
    await record_store.put_records(P, [first])
    assert await record_store.count_records(P, RecordKind.KEY) == 1
    second = rec("/k", {"v": 2}, version=2)
    await record_store.put_records(P, [second])
    [got] = await record_store.get_records(P, RecordKind.KEY, ["/k"])
    assert_record(got, second)
    assert await record_store.count_records(P, RecordKind.KEY) == 1


async def test_last_record_of_a_key_in_one_batch_wins(record_store: RecordStore) -> None:
    batch = [rec("/k", {"v": 1}), rec("/other"), rec("/k", {"v": 2})]
    await record_store.put_records(P, batch)
    [got] = await record_store.get_records(P, RecordKind.KEY, ["/k"])
    assert got.doc == {"v": 2}
    assert await record_store.count_records(P, RecordKind.KEY) == 2


async def test_a_bad_batch_stores_nothing(record_store: RecordStore) -> None:
    with pytest.raises(ValueError):
        await record_store.put_records(P, [rec("/good"), rec("/bad", {"x": math.nan})])
    with pytest.raises(ValueError):
        await record_store.put_records(P, [rec("/good"), rec("/bad\udcff")])
    assert await record_store.count_records(P, RecordKind.KEY) == 0
    assert await record_store.get_records(P, RecordKind.KEY, ["/good"]) == []


async def test_empty_calls(record_store: RecordStore) -> None:
    await record_store.put_records(P, [])
    assert await record_store.get_records(P, RecordKind.KEY, []) == []
    assert await record_store.delete_records(P, RecordKind.KEY, []) == []
    assert await record_store.list_records(P, RecordKind.KEY) == []
    assert await record_store.list_records(P, RecordKind.KEY, KeyPage(limit=0)) == []
    assert await record_store.count_records(P, RecordKind.KEY) == 0


async def test_kinds_are_separate_namespaces(record_store: RecordStore) -> None:
    await record_store.put_records(
        P, [rec("same", {"k": "key"}), rec("same", {"k": "wm"}, kind=RecordKind.WORKING)]
    )
    [key] = await record_store.get_records(P, RecordKind.KEY, ["same"])
    [wm] = await record_store.get_records(P, RecordKind.WORKING, ["same"])
    assert key.doc == {"k": "key"} and wm.doc == {"k": "wm"}
    assert await record_store.get_records(P, RecordKind.PROFILE, ["same"]) == []
    assert await record_store.delete_records(P, RecordKind.WORKING, ["same"]) == ["same"]
    assert [r.key for r in await record_store.list_records(P, RecordKind.KEY)] == ["same"]
    for kind in RecordKind:
        expected = 1 if kind is RecordKind.KEY else 0
        assert await record_store.count_records(P, kind) == expected


async def test_delete_returns_the_keys_that_existed(record_store: RecordStore) -> None:
    await record_store.put_records(P, [rec("/a"), rec("/b"), rec("/c")])
    gone = await record_store.delete_records(P, RecordKind.KEY, ["/c", "/zz", "/a", "/a"])
    assert gone == ["/c", "/a"]
    assert await record_store.delete_records(P, RecordKind.KEY, ["/a"]) == []
    assert [r.key for r in await record_store.list_records(P, RecordKind.KEY)] == ["/b"]
    assert await record_store.count_records(P, RecordKind.KEY) == 1


async def test_many_keys_in_one_call(record_store: RecordStore) -> None:
    keys = [f"/k/{i:05d}" for i in range(2500)]
    await record_store.put_records(P, [rec(k, {"i": i}) for i, k in enumerate(keys)])
    assert await record_store.count_records(P, RecordKind.KEY) == 2500
    got = await record_store.get_records(P, RecordKind.KEY, list(reversed(keys)))
    assert [r.key for r in got] == list(reversed(keys))
    gone = await record_store.delete_records(P, RecordKind.KEY, keys[::2])
    assert gone == keys[::2]
    assert await record_store.count_records(P, RecordKind.KEY) == 1250


async def test_records_survive_a_reopen(
    record_store: RecordStore, reopen_records: ReopenRecords
) -> None:
    other = Partition("t2", "a2")
    kept = [rec("/a", {"big": 2**64, "f": 0.1, "u": "漢"}), rec("/b\x00c", expires_at=BASE)]
    await record_store.put_records(P, [*kept, rec("/gone")])
    await record_store.put_records(other, [rec("/a", {"other": True})])
    await record_store.delete_records(P, RecordKind.KEY, ["/gone"])
    new = await reopen_records()
    got = await new.list_records(P, RecordKind.KEY)
    assert [r.key for r in got] == ["/a", "/b\x00c"]
    for g, want in zip(got, kept, strict=True):
        assert_record(g, want)
    assert [r.doc for r in await new.get_records(other, RecordKind.KEY, ["/a"])] == [
        {"other": True}
    ]
    await new.put_records(P, [rec("/c")])
    assert await new.count_records(P, RecordKind.KEY) == 3
