"""The memory budget: LRU eviction of whole partitions, oversized ones bypassed."""

from __future__ import annotations

import numpy as np

from memoryd.domain.models import MemoryFilter, Partition
from memoryd.storage.hot.cache import HotCacheStore

from .helpers import DIM, GatedStore, memory, unit_vector

ALL = MemoryFilter(include_archived=True)
A, B, C = Partition("t", "a"), Partition("t", "b"), Partition("t", "c")


async def _filled(budget: int, sizes: dict[Partition, int]) -> tuple[HotCacheStore, GatedStore]:
    inner = GatedStore()
    store = HotCacheStore(inner, dimension=DIM, budget_bytes=budget)
    await store.open()
    for p, n in sizes.items():
        await store.upsert(p, [memory(p) for _ in range(n)])
    return store, inner


async def test_least_recently_searched_partition_is_evicted_first() -> None:
    q = unit_vector(np.random.default_rng(0))
    probe, _ = await _filled(10**9, {A: 200})
    await probe.search(A, q, ALL, 1)
    one = probe.cached_bytes()
    await probe.close()

    store, _ = await _filled(int(one * 2.5), {A: 200, B: 200, C: 200})
    await store.search(A, q, ALL, 1)
    await store.search(B, q, ALL, 1)
    await store.search(A, q, ALL, 1)  # A is now the most recent
    await store.search(C, q, ALL, 1)  # over budget: B goes
    assert set(store.cached_partitions()) == {A, C}
    assert store.evictions == 1
    assert store.cached_bytes() <= store.budget_bytes
    assert len(await store.search(B, q, ALL, 5)) == 5  # reloaded from the store
    assert store.loads == 4
    await store.close()


async def test_a_partition_larger_than_the_budget_is_searched_in_the_store() -> None:
    q = unit_vector(np.random.default_rng(1))
    store, inner = await _filled(4096, {A: 300})
    first = await store.search(A, q, ALL, 3)
    second = await store.search(A, q, ALL, 3)
    assert [h.memory.id for h in first] == [h.memory.id for h in second]
    truth = await inner.search(A, q, ALL, 3)
    assert [h.memory.id for h in first] == [h.memory.id for h in truth]
    assert store.cached_partitions() == []
    assert store.bypasses == 1 and store.loads == 1, "not reloaded on every search"
    await store.close()


async def test_growth_by_writes_respects_the_budget() -> None:
    q = unit_vector(np.random.default_rng(2))
    store, _ = await _filled(10**9, {A: 300, B: 10})
    await store.search(A, q, ALL, 1)
    one = store.cached_bytes()
    await store.search(B, q, ALL, 1)
    store.budget_bytes = int(one * 1.6)
    await store.upsert(B, [memory(B) for _ in range(300)])  # B grows past A + B
    assert store.cached_partitions() == [B]
    assert store.cached_bytes() <= store.budget_bytes
    assert store.evictions == 1
    await store.close()
