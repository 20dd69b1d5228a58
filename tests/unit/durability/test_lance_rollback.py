"""A LanceDB version whose data never reached the disk is rolled back on start."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from memoryd.domain.models import Memory, MemoryFilter, Partition
from memoryd.durability.lance_check import check_lancedb
from memoryd.storage.lancedb import LanceDBStore

DIM = 8
P = Partition("t", "a")


def memory(i: int) -> Memory:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    vec = np.zeros(DIM, dtype=np.float32)
    vec[i % DIM] = 1.0
    return Memory(id=f"m{i}", tenant_id="t", agent_id="a", content=f"fact {i}",
                  created_at=now, updated_at=now, vector=vec)  # fmt: skip


async def test_unreadable_latest_version_is_rolled_back(tmp_path: Path) -> None:
    path = tmp_path / "lancedb"
    store = LanceDBStore(path, DIM)
    await store.open()
    await store.upsert(P, [memory(0), memory(1)])
    data_dir = path / "memories.lance" / "data"
    before = set(data_dir.iterdir())
    await store.upsert(P, [memory(2)])
    await store.close()
    # The newest version's data file "never reached the disk" (a machine crash after
    # the manifest was written): its bytes are gone.
    new_files = set(data_dir.iterdir()) - before
    assert new_files
    for f in new_files:
        f.write_bytes(b"")

    rolled = await check_lancedb(path)
    assert len(rolled) == 1 and rolled[0].startswith("memories: version")

    reopened = LanceDBStore(path, DIM)
    await reopened.open()
    try:
        ids = sorted(m.id for m in await reopened.list(P, MemoryFilter(include_archived=True)))
        assert ids == ["m0", "m1"]  # the write-ahead log replays m2 after this
    finally:
        await reopened.close()


async def test_healthy_tables_are_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "lancedb"
    store = LanceDBStore(path, DIM)
    await store.open()
    await store.upsert(P, [memory(0)])
    await store.close()
    assert await check_lancedb(path) == []
    assert await check_lancedb(tmp_path / "missing") == []
