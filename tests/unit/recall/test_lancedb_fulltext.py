"""LanceDB full-text specifics: the salted token column, the background index refresh
and the upgrade of tables written before the derived columns existed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from memoryd.domain.models import Memory, MemoryFilter, Partition, SecurityLevel
from memoryd.storage.lancedb import LanceDBStore
from memoryd.storage.lancedb.fulltext import TOKENS_COLUMN, document_tokens, query_tokens
from memoryd.storage.lancedb.schema import (
    ADDED_COLUMNS,
    DERIVED_COLUMNS,
    TABLE_NAME,
    memory_schema,
    to_arrow,
)
from memoryd.text import content_hash

DIM = 8
NOW = datetime(2024, 1, 1, tzinfo=UTC)
P = Partition("t", "a")


def mem(i: int, content: str, **kw: Any) -> Memory:
    v = np.random.default_rng(i).normal(size=DIM).astype(np.float32)
    return Memory(
        id=f"id-{i}",
        tenant_id=P.tenant_id,
        agent_id=P.agent_id,
        content=content,
        created_at=NOW + timedelta(seconds=i),
        updated_at=NOW,
        vector=v / np.linalg.norm(v),
        **kw,
    )


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[LanceDBStore]:
    s = LanceDBStore(tmp_path / "db", DIM, index_refresh_rows=50, index_refresh_idle_s=0)
    await s.open()
    yield s
    await s.close()


def test_tokens_are_salted_by_partition_and_level() -> None:
    m = mem(1, "Hello world")
    doc = document_tokens(m).split()
    assert len(doc) == 2 and all(t.endswith((":hello", ":world")) for t in doc)
    other = document_tokens(mem(1, "Hello world", security_level=SecurityLevel.RESTRICTED))
    assert set(other.split()).isdisjoint(doc)
    # The query asks for each term at each level up to the ceiling, in this partition.
    q = query_tokens(P, "hello", MemoryFilter(max_security_level=SecurityLevel.INTERNAL))
    assert doc[0] in q.split() and len(q.split()) == 2
    assert query_tokens(Partition("t", "b"), "hello", MemoryFilter()).split()[1] not in doc
    assert query_tokens(P, "the of", MemoryFilter()) == ""


async def test_new_rows_searchable_before_and_after_the_background_refresh(
    store: LanceDBStore,
) -> None:
    await store.upsert(P, [mem(i, f"filler {i}") for i in range(49)])
    assert store._indexing.task is None  # below the threshold: nothing scheduled
    await store.upsert(P, [mem(100, "needle in the haystack")])
    refresh = store._indexing.task
    assert refresh is not None
    # Searchable while the refresh runs, and after it.
    hits = await store.text_search(P, "needle", MemoryFilter(), 10)
    assert [h.memory.id for h in hits] == ["id-100"]
    await refresh
    stats = await store._table.index_stats(f"{TOKENS_COLUMN}_idx")
    assert stats.num_unindexed_rows == 0 and stats.num_indexed_rows == 50
    # Indexed rows and rows written after the refresh are found together.
    await store.upsert(P, [mem(101, "another needle")])
    hits = await store.text_search(P, "needle", MemoryFilter(), 10)
    assert {h.memory.id for h in hits} == {"id-100", "id-101"}
    # A rewrite of an indexed row drops its old terms.
    await store.upsert(P, [mem(100, "moved away")])
    hits = await store.text_search(P, "needle", MemoryFilter(), 10)
    assert [h.memory.id for h in hits] == ["id-101"]


async def test_close_waits_for_a_running_refresh(tmp_path: Path) -> None:
    s = LanceDBStore(tmp_path / "db", DIM, index_refresh_rows=1)
    await s.open()
    await s.upsert(P, [mem(1, "one")])
    refresh = s._indexing.task
    assert refresh is not None
    await s.close()
    assert refresh.done() and refresh.exception() is None


async def test_upgrades_a_table_without_the_derived_columns(tmp_path: Path) -> None:
    path = tmp_path / "db"
    memories = [mem(i, f"Legacy row {i}") for i in range(10)]
    legacy = (*DERIVED_COLUMNS, *ADDED_COLUMNS)
    old_schema = pa.schema([f for f in memory_schema(DIM) if f.name not in legacy])
    db = await lancedb.connect_async(str(path))
    rows = to_arrow(memories, DIM).select(old_schema.names).cast(old_schema)
    table = await db.create_table(TABLE_NAME, data=rows, schema=old_schema)
    table.close()
    db.close()

    store = LanceDBStore(path, DIM)
    await store.open()
    try:
        assert (await store._table.schema()).names == memory_schema(DIM).names
        hits = await store.text_search(P, "legacy row 3", MemoryFilter(), 20)
        assert len(hits) == 10 and hits[0].memory.id == "id-3"
        found = await store.find_by_content(P, [content_hash("legacy ROW 7")], MemoryFilter())
        assert [m.id for m in found] == ["id-7"]
        assert await store.count(P, MemoryFilter()) == 10
    finally:
        await store.close()


async def test_upgrades_a_table_without_the_event_time(tmp_path: Path) -> None:
    """A table written before occurred_at existed gets the column, all null, in the
    schema's place; old rows read back without an event time and new rows keep theirs."""
    path = tmp_path / "db"
    old_schema = pa.schema([f for f in memory_schema(DIM) if f.name not in ADDED_COLUMNS])
    db = await lancedb.connect_async(str(path))
    rows = to_arrow([mem(1, "Before the event time")], DIM).select(old_schema.names)
    table = await db.create_table(TABLE_NAME, data=rows.cast(old_schema), schema=old_schema)
    table.close()
    db.close()

    when = datetime(2023, 12, 29, 20, 0, tzinfo=UTC)
    new = mem(2, "After it")
    new.occurred_at = when
    for _ in range(2):  # the second open finds nothing to add
        store = LanceDBStore(path, DIM)
        await store.open()
        try:
            assert (await store._table.schema()).names == memory_schema(DIM).names
            await store.upsert(P, [new])
            found = {m.id: m for m in await store.get(P, ["id-1", "id-2"])}
            assert found["id-1"].occurred_at is None
            assert found["id-2"].occurred_at == when
        finally:
            await store.close()


async def test_rows_are_indexed_once_writes_pause(tmp_path: Path) -> None:
    s = LanceDBStore(tmp_path / "db", DIM, index_refresh_rows=10_000, index_refresh_idle_s=0.01)
    await s.open()
    try:
        await s.upsert(P, [mem(i, f"row {i}") for i in range(3)])
        deadline = asyncio.get_running_loop().time() + 30
        while s._indexing.task is None:
            assert asyncio.get_running_loop().time() < deadline, "no refresh after the pause"
            await asyncio.sleep(0.01)
        await s._indexing.task
        stats = await s._table.index_stats(f"{TOKENS_COLUMN}_idx")
        assert stats.num_unindexed_rows == 0 and stats.num_indexed_rows == 3
    finally:
        await s.close()


async def test_reopening_picks_up_unindexed_rows(tmp_path: Path) -> None:
    s = LanceDBStore(tmp_path / "db", DIM, index_refresh_idle_s=0)
    await s.open()
    await s.upsert(P, [mem(i, f"row {i}") for i in range(5)])
    await s.close()
    again = LanceDBStore(tmp_path / "db", DIM, index_refresh_rows=5, index_refresh_idle_s=0)
    await again.open()
    try:
        assert again._indexing.task is not None  # 5 unindexed rows found at open
        await again._indexing.task
        stats = await again._table.index_stats(f"{TOKENS_COLUMN}_idx")
        assert stats.num_unindexed_rows == 0
    finally:
        await again.close()
