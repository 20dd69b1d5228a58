"""LanceDBRecordStore internals: background compaction keeps fragments few."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memoryd.domain.models import Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.lancedb.records import LanceDBRecordStore
from memoryd.storage.records import KeyPage

P = Partition("t", "a")
#: Generous; compaction of a tiny table takes milliseconds. Not a performance assertion.
DEADLINE_S = 30.0


def rec(i: int) -> Record:
    return Record(RecordKind.KEY, f"/k/{i:03d}", {"i": i}, i, datetime.now(UTC))


async def fragments(store: LanceDBRecordStore) -> int:
    stats: dict[str, Any] = await store._tbl().stats()
    count: int = stats["fragment_stats"]["num_fragments"]
    return count


async def test_writes_trigger_background_compaction(tmp_path: Path) -> None:
    store = LanceDBRecordStore(tmp_path / "lancedb", compact_every=8)
    await store.open()
    try:
        for i in range(8):
            await store.put_records(P, [rec(i)])
        assert store._compaction is not None, "the 8th write starts a compaction"
        await asyncio.wait_for(store._compaction, DEADLINE_S)
        assert await fragments(store) == 1
        listed = await store.list_records(P, RecordKind.KEY, KeyPage(limit=100))
        assert [r.doc["i"] for r in listed] == list(range(8))
    finally:
        await store.close()


async def test_without_compaction_every_write_is_a_fragment(tmp_path: Path) -> None:
    store = LanceDBRecordStore(tmp_path / "lancedb", compact_every=0)
    await store.open()
    try:
        for i in range(5):
            await store.put_records(P, [rec(i)])
        assert await fragments(store) == 5
        await store.optimize()
        assert await fragments(store) == 1
    finally:
        await store.close()


async def test_close_waits_for_a_running_compaction(tmp_path: Path) -> None:
    store = LanceDBRecordStore(tmp_path / "lancedb", compact_every=2)
    await store.open()
    await store.put_records(P, [rec(0)])
    await store.put_records(P, [rec(1)])  # starts a compaction
    await store.close()  # must neither raise nor leave it running
    reopened = LanceDBRecordStore(tmp_path / "lancedb")
    await reopened.open()
    try:
        assert await reopened.count_records(P, RecordKind.KEY) == 2
    finally:
        await reopened.close()


async def test_a_batch_is_one_commit(tmp_path: Path) -> None:
    """Slot, history event and counter of a SetMemory land together or not at all."""
    store = LanceDBRecordStore(tmp_path / "lancedb", compact_every=0)
    await store.open()
    try:
        before = await store._tbl().version()
        batch = [
            Record(RecordKind.KEY, "/k", {"v": 1}, 1, datetime.now(UTC)),
            Record(RecordKind.KEY_EVENT, "/k\x00" + "1".zfill(20), {"v": 1}, 1, datetime.now(UTC)),
            Record(RecordKind.COUNTER, "keys", {}, 1, datetime.now(UTC)),
        ]
        await store.put_records(P, batch)
        assert await store._tbl().version() == before + 1
        await store.delete_records(P, RecordKind.KEY, ["/k", "/missing"])
        assert await store._tbl().version() == before + 2
        await store.delete_records(P, RecordKind.KEY, ["/missing"])  # nothing to delete
        assert await store._tbl().version() == before + 2
    finally:
        await store.close()


class _QuerySpy:
    """The records table's ``query()``, noting each predicate the store gives it."""

    def __init__(self, table: Any) -> None:
        self.table = table
        self.predicates: list[str] = []

    def query(self) -> Any:
        query = self.table.query()
        where = query.where

        def noted(predicate: str) -> Any:
            self.predicates.append(predicate)
            return where(predicate)

        query.where = noted
        return query


async def test_reads_by_key_use_only_the_key_index(tmp_path: Path) -> None:
    """At 100k keys a GetKey took 25 ms: LanceDB intersected the row sets of the
    tenant, agent, kind and key indexes (kind = 'key' is every key of every
    partition). The key index alone now chooses the rows; the partition and kind are
    checked on them, so another partition's same keys never come back."""
    store = LanceDBRecordStore(tmp_path / "lancedb", compact_every=0)
    await store.open()
    other = Partition("t", "b")
    try:
        for partition in (P, other):
            await store.put_records(partition, [rec(i) for i in range(20)])
        await store.optimize()  # the indexes cover every row
        table = store._tbl()
        spy = _QuerySpy(table)
        store._table = spy
        got = await store.get_records(P, RecordKind.KEY, ["/k/003", "/k/007"])
        listed = await store.list_records(P, RecordKind.KEY, KeyPage(prefix="/k/", after="/k/015"))
        store._table = table
        assert [r.key for r in got] == ["/k/003", "/k/007"]
        assert [r.key for r in listed] == ["/k/016", "/k/017", "/k/018", "/k/019"]
        assert len(spy.predicates) == 2
        for predicate in spy.predicates:
            plan = await table.query().where(predicate).explain_plan(True)
            assert "key_idx" in plan, plan
            for index in ("tenant_id_idx", "agent_id_idx", "kind_idx"):
                assert index not in plan, plan
        assert [r.key for r in await store.get_records(other, RecordKind.KEY, ["/k/003"])] == [
            "/k/003"
        ]
        await store.delete_records(P, RecordKind.KEY, ["/k/003"])
        assert await store.get_records(P, RecordKind.KEY, ["/k/003"]) == []
        assert len(await store.get_records(other, RecordKind.KEY, ["/k/003"])) == 1
    finally:
        await store.close()


async def test_compaction_is_paced_by_the_tables_size(tmp_path: Path) -> None:
    """A compaction rewrites the whole table, which only grows: after one that left
    100 rows, the next waits for a quarter of that to be written (issue 31), not for
    ``compact_every`` commits alone."""
    store = LanceDBRecordStore(tmp_path / "lancedb", compact_every=2)
    await store.open()
    try:
        await store.put_records(P, [rec(i) for i in range(100)])
        await store.optimize()
        assert store.compacted_rows == 100
        for i in range(100, 124):  # 24 rows in 24 commits: not yet
            await store.put_records(P, [rec(i)])
        assert store._compaction is None
        await store.put_records(P, [rec(124)])  # the 25th row
        assert store._compaction is not None
        await asyncio.wait_for(store._compaction, DEADLINE_S)
        assert store.compacted_rows == 125
    finally:
        await store.close()
