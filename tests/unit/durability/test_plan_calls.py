"""The apply's store calls (ops.plan_calls): every partition's writes of one kind in
one call, each partition's memory writes and record writes in log order; and the
multi-partition calls on real LanceDB (one table version for a burst of agents)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memoryd.domain.models import Memory, MemoryFilter, Partition, utcnow
from memoryd.domain.records import Record, RecordKind
from memoryd.durability.ops import Op, apply_call, plan_calls
from memoryd.storage.base import PartitionUpsert
from memoryd.storage.lancedb import LanceDBStore
from memoryd.storage.lancedb.records import LanceDBRecordStore
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore

DIM = 8
AGENTS = [Partition("t", f"a{i}") for i in range(8)]


def memory(p: Partition, i: int, content: str = "") -> Memory:
    now = utcnow()
    vector = np.zeros(DIM, dtype=np.float32)
    vector[i % DIM] = 1.0
    return Memory(
        id=f"{p.agent_id}-m{i}", tenant_id=p.tenant_id, agent_id=p.agent_id,
        content=content or f"note {i}", created_at=now, updated_at=now, vector=vector,
    )  # fmt: skip


def record(key: str, version: int) -> Record:
    return Record(
        kind=RecordKind.KEY, key=key, doc={"v": version}, version=version, updated_at=utcnow()
    )


def keyed_write(p: Partition, i: int) -> list[Op]:
    """What a SetMemory logs: its records, then its mirror."""
    return [
        Op("put_records", p, records=(record(f"/k{i}", i),)),
        Op("upsert", p, memories=(memory(p, 0, f"value {i}"),)),
    ]


def test_a_burst_of_keyed_writes_from_many_agents_is_two_store_calls() -> None:
    ops = [op for i in range(5) for p in AGENTS for op in keyed_write(p, i)]
    calls = plan_calls(ops)
    # One call per store (in either order: their rows are independent).
    assert sorted((c.ops[0].kind, len(c.ops)) for c in calls) == [("put_records", 8), ("upsert", 8)]
    calls.sort(key=lambda c: c.ops[0].kind)
    assert sorted(i for c in calls for i in c.indices) == list(range(len(ops)))
    # The later write of each key and of each mirror wins.
    puts = {op.partition: op.records for op in calls[0].ops}
    assert all([r.key for r in puts[p]] == [f"/k{i}" for i in range(5)] for p in AGENTS)
    ups = {op.partition: op.memories for op in calls[1].ops}
    assert all([m.content for m in ups[p]] == ["value 4"] for p in AGENTS)


def test_a_partitions_order_of_upserts_and_deletes_is_kept() -> None:
    p, q = AGENTS[0], AGENTS[1]
    ops = [
        Op("upsert", p, memories=(memory(p, 1),)),
        Op("upsert", q, memories=(memory(q, 1),)),
        Op("delete", p, ids=(memory(p, 1).id,)),
        Op("upsert", p, memories=(memory(p, 1, "again"),)),
    ]
    calls = plan_calls(ops)
    shape = [(c.ops[0].kind, sorted(op.partition.agent_id for op in c.ops)) for c in calls]
    assert shape == [("upsert", ["a0", "a1"]), ("delete", ["a0"]), ("upsert", ["a0"])]


async def test_a_plan_applied_to_any_store_ends_as_the_log_says(tmp_path: Path) -> None:
    p, q = AGENTS[0], AGENTS[1]
    ops = [
        *keyed_write(p, 1),
        Op("upsert", q, memories=(memory(q, 1), memory(q, 2))),
        Op("delete", q, ids=(memory(q, 1).id,)),
        *keyed_write(p, 2),
        Op("delete_records", p, record_kind=RecordKind.KEY, keys=("/k1",)),
    ]
    lance, lance_records = LanceDBStore(tmp_path, DIM), LanceDBRecordStore(tmp_path)
    plain, plain_records = InMemoryStore(DIM), InMemoryRecordStore()
    for store, records in ((lance, lance_records), (plain, plain_records)):
        await store.open()
        await records.open()
        for call in plan_calls(ops):
            await apply_call(call, store, records)
        assert [m.content for m in await store.list(p, MemoryFilter())] == ["value 2"]
        assert [m.id for m in await store.list(q, MemoryFilter())] == [memory(q, 2).id]
        assert [r.key for r in await records.list_records(p, RecordKind.KEY)] == ["/k2"]
        await store.close()
        await records.close()


async def test_lancedb_takes_many_agents_writes_in_one_table_version(tmp_path: Path) -> None:
    store, records = LanceDBStore(tmp_path, DIM), LanceDBRecordStore(tmp_path)
    await store.open()
    await records.open()
    await store.upsert_many([PartitionUpsert(p, [memory(p, 1)]) for p in AGENTS])
    memories_before = await store._tbl().version()
    records_before = await records._tbl().version()
    # Every agent rewrites its memory and adds one: one delete and one add in all.
    await store.upsert_many(
        [PartitionUpsert(p, [memory(p, 1, "changed"), memory(p, 2)]) for p in AGENTS]
    )
    await records.put_records_many([(p, [record("/k", 1), record("/j", 1)]) for p in AGENTS])
    assert await store._tbl().version() == memories_before + 2
    assert await records._tbl().version() == records_before + 1
    for p in AGENTS:
        found = await store.list(p, MemoryFilter())
        assert sorted((m.id, m.content) for m in found) == [
            (memory(p, 1).id, "changed"),
            (memory(p, 2).id, "note 2"),
        ]
        assert [r.key for r in await records.list_records(p, RecordKind.KEY)] == ["/j", "/k"]
    await store.close()
    await records.close()
