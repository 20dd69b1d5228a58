"""Writes and loads interleave without losing an update; failures never leave the
cache stale; the wrapper defines every Store method itself."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator
from datetime import timedelta

import numpy as np
import pytest

from memoryd.domain.models import AccessUpdate, MemoryFilter
from memoryd.storage.base import Store, compact, disk_bytes
from memoryd.storage.hot.cache import HotCacheStore

from .helpers import BASE, DIM, GatedStore, P, memory, unit_vector

ALL = MemoryFilter(include_archived=True)


@pytest.fixture
async def inner() -> GatedStore:
    store = GatedStore()
    await store.open()
    return store


@pytest.fixture
async def cached(inner: GatedStore) -> AsyncIterator[HotCacheStore]:
    store = HotCacheStore(inner, dimension=DIM, budget_bytes=64 * 2**20)
    await store.open()
    yield store
    await store.close()


#: The protocol methods the hot cache leaves to its delegating base: reads that
#: neither change a memory nor can be answered from a partition in memory.
FORWARDED = {"list_partitions"}


def test_every_protocol_method_is_defined_explicitly() -> None:
    """A method the protocol gains must be delegated (and kept coherent) on purpose:
    the delegating base would forward a new write behind the cache's back."""
    members = [
        name
        for name, value in vars(Store).items()
        if not name.startswith("_") and inspect.iscoroutinefunction(value)
    ]
    assert "search" in members and "text_search" in members
    missing = [name for name in members if name not in vars(HotCacheStore)]
    assert missing == sorted(FORWARDED, key=members.index)


async def test_search_after_load_sees_writes_applied_to_the_cache(
    cached: HotCacheStore, inner: GatedStore
) -> None:
    q = unit_vector(np.random.default_rng(0))
    # Its own vector: memory()'s default comes from a process-wide counter, which is 0
    # (the vector q itself) when this test runs first in its worker.
    await cached.upsert(P, [memory(id="a", vector=unit_vector(np.random.default_rng(1)))])
    assert [h.memory.id for h in await cached.search(P, q, ALL, 10)] == ["a"]
    reads = inner.vector_reads
    await cached.upsert(P, [memory(id="b", vector=q)])
    hits = await cached.search(P, q, ALL, 10)
    assert hits[0].memory.id == "b"
    assert hits[0].similarity == pytest.approx(1.0, abs=1e-6)
    assert inner.vector_reads == reads, "a loaded partition must not be read again"
    assert (cached.hits, cached.misses, cached.loads) == (1, 1, 1)


@pytest.mark.parametrize("write", ["insert", "replace", "delete", "access"])
async def test_a_write_during_the_initial_load_is_not_lost(
    cached: HotCacheStore, inner: GatedStore, write: str
) -> None:
    q = unit_vector(np.random.default_rng(1))
    # Through the cache, as every write of the daemon's: a partition the cache has not
    # seen written since the store's listing at open is loaded without a read.
    await cached.upsert(P, [memory(id="old", vector=q, tags=("v1",))])
    inner.hold_next_read = True
    search = asyncio.create_task(cached.search(P, q, ALL, 10))
    await inner.held.wait()  # the load has read "old" and waits before publishing
    assert cached.partition_state(P) == "loading"
    if write == "insert":
        await cached.upsert(P, [memory(id="new", vector=q)])
    elif write == "replace":
        await cached.upsert(P, [memory(id="old", vector=q, tags=("v2",))])
    elif write == "delete":
        assert await cached.delete(P, ["old"]) == ["old"]
    else:
        await cached.record_access(P, {"old": AccessUpdate(3, BASE + timedelta(days=1))})
    inner.gate.set()
    await search  # answered from the load, which may predate the write
    hits = {h.memory.id: h.memory for h in await cached.search(P, q, ALL, 10)}
    truth = {h.memory.id: h.memory for h in await inner.search(P, q, ALL, 10)}
    assert hits.keys() == truth.keys()
    for memory_id, m in truth.items():
        assert hits[memory_id].tags == m.tags
        assert hits[memory_id].access_count == m.access_count  # never counted twice
        assert hits[memory_id].accessed_at == m.accessed_at


async def test_a_failed_write_drops_the_partition(cached: HotCacheStore, inner: GatedStore) -> None:
    q = unit_vector(np.random.default_rng(2))
    await cached.upsert(P, [memory(id="a")])
    await cached.search(P, q, ALL, 10)
    inner.fail_after_write = True
    with pytest.raises(RuntimeError):
        await cached.upsert(P, [memory(id="b", vector=q)])
    inner.fail_after_write = False
    assert cached.partition_state(P) == "absent"
    hits = await cached.search(P, q, ALL, 10)
    assert hits[0].memory.id == "b", "what the store committed is what search sees"
    assert cached.loads == 2


async def test_a_failed_load_is_retried(cached: HotCacheStore, inner: GatedStore) -> None:
    await cached.upsert(P, [memory(id="a")])
    q = unit_vector(np.random.default_rng(3))
    await inner.close()
    with pytest.raises(Exception, match="not open"):
        await cached.search(P, q, ALL, 10)
    await inner.open()
    await inner.upsert(P, [memory(id="b")])
    assert [h.memory.id for h in await cached.search(P, q, ALL, 10)] == ["b"]


async def test_concurrent_searches_share_one_load(cached: HotCacheStore, inner: GatedStore) -> None:
    await cached.upsert(P, [memory() for _ in range(5)])
    inner.hold_next_read = True
    q = unit_vector(np.random.default_rng(4))
    searches = [asyncio.create_task(cached.search(P, q, ALL, 3)) for _ in range(4)]
    await inner.held.wait()
    inner.gate.set()
    results = await asyncio.gather(*searches)
    assert all(len(r) == 3 for r in results)
    assert cached.loads == 1 and inner.vector_reads == 1


async def test_returned_memories_are_copies(cached: HotCacheStore) -> None:
    q = unit_vector(np.random.default_rng(5))
    await cached.upsert(P, [memory(id="a", vector=q, tags=("x",))])
    [hit] = await cached.search(P, q, ALL, 1)
    hit.memory.content = "mutated"
    hit.memory.access_count = 99
    [again] = await cached.search(P, q, ALL, 1)
    assert again.memory.content != "mutated" and again.memory.access_count == 0


async def test_backend_extras_are_explicit_and_keep_the_cache(
    cached: HotCacheStore, inner: GatedStore
) -> None:
    """Only the extras the services use reach the backend (optimize, disk_bytes),
    without dropping a loaded partition (they change no memory); anything else is
    an AttributeError, not a silent pass-through."""
    optimized: list[bool] = []

    async def optimize() -> bool:
        optimized.append(True)
        return True

    inner.optimize = optimize  # type: ignore[attr-defined]
    inner.disk_bytes = lambda: 1234  # type: ignore[attr-defined]
    inner.purge = optimize  # type: ignore[attr-defined]
    await cached.upsert(P, [memory()])
    await cached.search(P, unit_vector(np.random.default_rng(6)), ALL, 1)
    assert await compact(cached) is True and optimized == [True]
    assert disk_bytes(cached) == 1234
    assert cached.partition_state(P) != "absent"
    with pytest.raises(AttributeError):
        _ = cached.purge  # type: ignore[attr-defined]
    assert cached.dimension == DIM  # attributes of the wrapper itself
    assert cached.name == inner.name


async def test_extras_of_a_backend_without_files() -> None:
    cached = HotCacheStore(GatedStore(), dimension=DIM, budget_bytes=2**20)
    assert await compact(cached) is False
    assert disk_bytes(cached) == 0
