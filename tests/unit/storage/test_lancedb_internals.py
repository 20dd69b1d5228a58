"""LanceDB-specific guarantees the backend-neutral conformance suite cannot see:
SQL literal building, the on-disk schema, one commit per call, error wrapping."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from memoryd.domain.errors import StoreError
from memoryd.domain.models import (
    AccessUpdate,
    Memory,
    MemoryFilter,
    MemoryType,
    Partition,
    SecurityLevel,
    TagMatch,
    unit_query,
)
from memoryd.storage.base import ListPage
from memoryd.storage.instants import to_micros
from memoryd.storage.lancedb import LanceDBStore
from memoryd.storage.lancedb.filters import filter_clauses, sql_str
from memoryd.storage.lancedb.schema import memory_schema
from memoryd.storage.lancedb.store import ACCESS_ROWS_PER_COMMIT

DIM = 8
NOW = datetime(2024, 1, 1, tzinfo=UTC)


def mem(p: Partition, i: int, **kw: Any) -> Memory:
    v = np.random.default_rng(i).normal(size=DIM).astype(np.float32)
    kw.setdefault("content", f"c{i}")
    return Memory(
        id=f"id-{i}",
        tenant_id=p.tenant_id,
        agent_id=p.agent_id,
        created_at=NOW + timedelta(seconds=i),
        updated_at=NOW,
        vector=v / np.linalg.norm(v),
        **kw,
    )


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[LanceDBStore]:
    s = LanceDBStore(tmp_path / "db", DIM)
    await s.open()
    yield s
    await s.close()


async def version(store: LanceDBStore) -> int:
    v: int = await store._table.version()
    return v


def test_sql_str_doubles_quotes_only() -> None:
    assert sql_str("x' OR '1'='1") == "'x'' OR ''1''=''1'"
    assert sql_str("back\\slash") == "'back\\slash'"
    assert sql_str("") == "''"


def test_to_micros_is_exact() -> None:
    assert to_micros(datetime(1970, 1, 1, tzinfo=UTC)) == 0
    assert to_micros(datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC)) == 1
    ist = timezone(timedelta(hours=5, minutes=30))
    assert to_micros(datetime(1970, 1, 1, 5, 30, tzinfo=ist)) == 0
    assert to_micros(datetime(1, 1, 1, tzinfo=UTC)) == -62_135_596_800_000_000
    assert to_micros(datetime(1970, 1, 1)) == 0  # naive is UTC


def test_filter_clauses_cover_every_field() -> None:
    flt = MemoryFilter(
        namespace="n'",
        tags=("a", "b'"),
        tag_match=TagMatch.ALL,
        memory_types=(MemoryType.FACT,),
        max_security_level=SecurityLevel.INTERNAL,
        created_after=NOW,
        created_before=NOW,
        not_expired_at=NOW,
    )
    sql = " AND ".join(filter_clauses(flt))
    for part in (
        "namespace = 'n'''",
        "array_has_all(tags, ['a', 'b'''])",
        "memory_type IN ('fact')",
        "security_level <= 2",
        "created_at > arrow_cast(1704067200000000",
        "created_at < arrow_cast(1704067200000000",
        "archived = false",
        "expires_at IS NULL OR expires_at > arrow_cast(1704067200000000",
    ):
        assert part in sql
    assert filter_clauses(MemoryFilter(include_archived=True)) == []


async def test_on_disk_schema(store: LanceDBStore) -> None:
    schema: pa.Schema = await store._table.schema()
    assert schema.field("vector").type == pa.list_(pa.float32(), DIM)
    assert schema.field("tags").type == pa.list_(pa.string())
    assert schema.field("created_at").type == pa.timestamp("us", tz="UTC")
    assert schema.field("expires_at").nullable
    assert schema.field("metadata").type == pa.string()
    assert schema.names == memory_schema(DIM).names


async def test_metadata_is_compact_json(store: LanceDBStore) -> None:
    p = Partition("t", "a")
    await store.upsert(p, [mem(p, 1, metadata={"a": [1, {"b": "漢"}]})])
    rows = await store._table.query().select(["metadata"]).to_list()
    assert rows == [{"metadata": '{"a":[1,{"b":"漢"}]}'}]


async def test_each_write_is_one_commit(store: LanceDBStore) -> None:
    p = Partition("t", "a")
    v0 = await version(store)
    await store.upsert(p, [mem(p, i) for i in range(100)])
    assert await version(store) == v0 + 1
    await store.record_access(p, {f"id-{i}": AccessUpdate(1, NOW) for i in range(50)})
    assert await version(store) == v0 + 2
    assert sorted(await store.delete(p, [f"id-{i}" for i in range(10)] + ["x"])) == sorted(
        f"id-{i}" for i in range(10)
    )
    assert await version(store) == v0 + 3
    # Nothing to do: no commit at all.
    await store.delete(p, ["x"])
    await store.record_access(p, {"x": AccessUpdate(1, NOW)})
    await store.upsert(p, [])
    assert await version(store) == v0 + 3


async def test_injected_tenant_cannot_read_other_partitions(store: LanceDBStore) -> None:
    victim, attacker = Partition("victim", "a"), Partition("x' OR '1'='1", "a")
    await store.upsert(victim, [mem(victim, i) for i in range(5)])
    assert await store.count(attacker, MemoryFilter()) == 0
    assert await store.list(attacker, MemoryFilter()) == []
    assert await store.get(attacker, ["id-1"]) == []
    assert await store.search(attacker, unit_query(np.ones(DIM), DIM), MemoryFilter(), 10) == []
    assert await store.delete(attacker, ["id-1"]) == []
    sneaky = MemoryFilter(namespace="' OR '1'='1", tags=("') OR true OR ('",))
    assert await store.count(victim, sneaky) == 0
    assert await store.count(victim, MemoryFilter()) == 5


async def test_a_large_access_flush_lets_writes_in_between_its_commits(
    store: LanceDBStore,
) -> None:
    # Issue 20: one flush of thousands of rows held the table's write lock for 9.3 s
    # under load, and every write waited. Now ACCESS_ROWS_PER_COMMIT rows a commit,
    # with the lock released between them.
    p = Partition("t", "a")
    n = ACCESS_ROWS_PER_COMMIT * 2 + 10
    await store.upsert(p, [mem(p, i) for i in range(n)])
    v0 = await version(store)
    order: list[str] = []
    first = asyncio.Event()
    real = store._record_access

    async def traced(*args: Any) -> None:
        await real(*args)
        order.append("access")
        first.set()
        await asyncio.sleep(0)  # where a waiting write gets the lock

    store._record_access = traced  # type: ignore[method-assign]
    flush = asyncio.ensure_future(
        store.record_access(p, {f"id-{i}": AccessUpdate(1, NOW) for i in range(n)})
    )
    await first.wait()
    await store.upsert(p, [mem(p, n + 1)])
    order.append("write")
    await flush
    assert order[0] == "access" and order.index("write") < len(order) - 1, order
    assert await version(store) == v0 + 4  # three access commits and the write
    counts = {m.id: m.access_count for m in await store.get(p, [f"id-{i}" for i in range(n)])}
    assert set(counts.values()) == {1} and len(counts) == n


async def test_backend_failures_become_store_errors(
    store: LanceDBStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*_: object, **__: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(store._table, "query", boom)
    # The backend's own text stays in the daemon's log (storage/failures.py).
    with pytest.raises(StoreError, match=r"^lancedb list failed: backend error$"):
        await store.list(Partition("t", "a"), MemoryFilter())


async def test_open_is_idempotent_and_optimize_keeps_data(store: LanceDBStore) -> None:
    p = Partition("t", "a")
    await store.open()
    for i in range(5):
        await store.upsert(p, [mem(p, i)])
    before = store.disk_bytes()
    assert before > 0
    await store.optimize()
    assert await store.count(p, MemoryFilter()) == 5
    assert [m.id for m in await store.get(p, ["id-3"])] == ["id-3"]


async def test_not_open_raises(tmp_path: Path) -> None:
    s = LanceDBStore(tmp_path, DIM)
    with pytest.raises(StoreError, match="not open"):
        await s.count(Partition("t", "a"), MemoryFilter())
    await s.close()


async def test_indexes_exist_and_partially_indexed_data_stays_correct(
    store: LanceDBStore,
) -> None:
    indexed = {tuple(ix.columns) for ix in await store._table.list_indices()}
    assert {("tenant_id",), ("agent_id",), ("id",)} <= indexed
    p, q = Partition("t", "a"), Partition("t", "b")
    await store.upsert(p, [mem(p, i) for i in range(20)])
    await store.upsert(q, [mem(q, i) for i in range(20)])
    await store.optimize()  # rows so far are indexed, later ones are not
    await store.upsert(p, [mem(p, i, content="new") for i in range(15, 25)])
    await store.upsert(q, [mem(q, 3, content="q3")])
    assert await store.delete(p, ["id-0", "id-20", "nope"]) == ["id-0", "id-20"]
    await store.record_access(p, {"id-1": AccessUpdate(2, NOW), "id-21": AccessUpdate(1, NOW)})

    assert await store.count(p, MemoryFilter()) == 23
    assert await store.count(q, MemoryFilter()) == 20
    got = {m.id: m for m in await store.get(p, [f"id-{i}" for i in range(25)])}
    assert len(got) == 23 and "id-0" not in got and "id-20" not in got
    assert [got[f"id-{i}"].content for i in (14, 15, 24)] == ["c14", "new", "new"]
    assert (got["id-1"].access_count, got["id-21"].access_count) == (2, 1)
    [q3] = await store.get(q, ["id-3"])
    assert q3.content == "q3"
    listed = await store.list(p, MemoryFilter(), ListPage(limit=100))
    assert [m.id for m in listed] == [f"id-{i}" for i in range(24, 0, -1) if i != 20]
    hits = await store.search(p, np.asarray(mem(p, 7).vector), MemoryFilter(), 100)
    assert hits[0].memory.id == "id-7" and len(hits) == 23
