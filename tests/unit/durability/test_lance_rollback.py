"""A LanceDB version whose data never reached the disk is rolled back on start."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from memoryd.datadir import DataDirDamaged
from memoryd.domain.models import Memory, MemoryFilter, Partition
from memoryd.durability.lance_check import check_lancedb, table_versions
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


async def _three_versions(path: Path) -> None:
    store = LanceDBStore(path, DIM)
    await store.open()
    for i in range(3):
        await store.upsert(P, [memory(i)])
    await store.close()


def _newest_manifest(table: Path) -> Path:
    return max((table / "_versions").glob("*.manifest"), key=lambda p: table_versions_of(p))


def table_versions_of(manifest: Path) -> int:
    number = int(manifest.stem)
    return 2**64 - 1 - number if number > 2**63 else number


async def test_a_truncated_newest_manifest_is_moved_aside_and_the_table_rolled_back(
    tmp_path: Path,
) -> None:
    path = tmp_path / "lancedb"
    await _three_versions(path)
    table = path / "memories.lance"
    latest = table_versions(path)["memories"]
    newest = _newest_manifest(table)
    newest.write_bytes(newest.read_bytes()[:10])  # a power loss mid-write

    rolled = await check_lancedb(path)
    assert rolled == [f"memories: version {latest} -> {latest - 1}"]
    assert table_versions(path)["memories"] == latest - 1
    (kept,) = (tmp_path / "lancedb-damaged" / "memories").glob("*/*.manifest")
    assert kept.name == newest.name and kept.stat().st_size == 10

    reopened = LanceDBStore(path, DIM)
    await reopened.open()
    try:
        ids = sorted(m.id for m in await reopened.list(P, MemoryFilter(include_archived=True)))
        assert ids == ["m0", "m1"]  # m2 comes back from the write-ahead log
        await reopened.upsert(P, [memory(3)])  # and the table takes writes again
    finally:
        await reopened.close()


async def test_no_rollback_below_the_checkpoint_version(tmp_path: Path) -> None:
    path = tmp_path / "lancedb"
    await _three_versions(path)
    table = path / "memories.lance"
    latest = table_versions(path)["memories"]
    before = {p: p.read_bytes() for p in table.rglob("*") if p.is_file()}
    # Every version from the checkpoint's on lost its newest data file.
    newest_data = max((table / "data").iterdir(), key=lambda p: p.stat().st_mtime_ns)
    newest_data.write_bytes(b"")
    before[newest_data] = b""

    with pytest.raises(
        DataDirDamaged, match=rf"version is {latest - 1}, older than version {latest},"
    ):
        await check_lancedb(path, {"memories": latest}, checkpoint=7)
    after = {p: p.read_bytes() for p in table.rglob("*") if p.is_file()}
    assert after == before  # nothing changed
    # Without a checkpoint above it the same damage is an ordinary rollback.
    assert await check_lancedb(path, {"memories": latest - 1}) == [
        f"memories: version {latest} -> {latest - 1}"
    ]


async def test_a_truncated_manifest_at_the_checkpoint_version_is_put_back(tmp_path: Path) -> None:
    path = tmp_path / "lancedb"
    await _three_versions(path)
    table = path / "memories.lance"
    latest = table_versions(path)["memories"]
    newest = _newest_manifest(table)
    newest.write_bytes(newest.read_bytes()[:10])
    with pytest.raises(DataDirDamaged, match="rolling back would lose acknowledged writes"):
        await check_lancedb(path, {"memories": latest}, checkpoint=3)
    assert newest.exists() and newest.stat().st_size == 10  # put back where it was
    assert table_versions(path)["memories"] == latest


async def test_a_table_no_version_of_which_reads_refuses_the_start(tmp_path: Path) -> None:
    path = tmp_path / "lancedb"
    await _three_versions(path)
    for manifest in (path / "memories.lance" / "_versions").glob("*.manifest"):
        manifest.write_bytes(b"")
    with pytest.raises(DataDirDamaged, match="memories"):
        await check_lancedb(path)
