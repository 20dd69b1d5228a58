"""find_by_content from a loaded hot partition agrees with the store it fronts, through
writes that change, archive, hide and remove contents."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator

import numpy as np
import pytest

from memoryd.domain.models import MemoryFilter, Partition, SecurityLevel
from memoryd.storage.hot.cache import HotCacheStore
from memoryd.text import content_hash

from .helpers import DIM, GatedStore, P, memory, unit_vector

FILTERS = [
    MemoryFilter(),
    MemoryFilter(include_archived=True),
    MemoryFilter(max_security_level=SecurityLevel.PUBLIC),
    MemoryFilter(namespace="other"),
]


class CountingStore(GatedStore):
    def __init__(self) -> None:
        super().__init__()
        self.content_lookups = 0

    async def find_by_content(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.content_lookups += 1
        return await super().find_by_content(*args, **kwargs)


@pytest.fixture
async def stores() -> AsyncIterator[tuple[HotCacheStore, CountingStore]]:
    inner = CountingStore()
    cached = HotCacheStore(inner, dimension=DIM, budget_bytes=64 * 2**20)
    await cached.open()
    yield cached, inner
    await cached.close()


async def agree(cached: HotCacheStore, inner: CountingStore, texts: list[str]) -> None:
    digests = [content_hash(t) for t in texts]
    before = inner.content_lookups
    for flt in FILTERS:
        got = await cached.find_by_content(P, digests, flt)
        want = await inner.find_by_content(P, digests, flt)
        assert sorted(m.id for m in got) == sorted(m.id for m in want), flt
        assert all(m.vector is None for m in got)
    assert inner.content_lookups == before + len(FILTERS)  # only the reference calls


async def test_lookups_follow_every_write(stores: tuple[HotCacheStore, CountingStore]) -> None:
    cached, inner = stores
    texts = ["Alice likes tea", "alice LIKES tea!", "Bob likes coffee", "a secret"]
    await cached.upsert(P, [memory(id="a", content=texts[0]), memory(id="b", content=texts[2])])
    await cached.search(P, unit_vector(np.random.default_rng(0)), MemoryFilter(), 5)  # load
    await agree(cached, inner, texts)
    # New, same normalised content as "a", another namespace, restricted, archived.
    await cached.upsert(
        P,
        [
            memory(id="c", content=texts[1]),
            memory(id="d", content=texts[0], namespace="other"),
            memory(id="e", content=texts[3], security_level=SecurityLevel.RESTRICTED),
            memory(id="f", content=texts[2], archived=True),
        ],
    )
    await agree(cached, inner, texts)
    # A content change moves "b" to another hash; a removal forgets "c".
    b = (await inner.get(P, ["b"], with_vectors=True))[0]
    await cached.upsert(P, [dataclasses.replace(b, content="Bob now likes juice")])
    await cached.delete(P, ["c"])
    await agree(cached, inner, [*texts, "Bob now likes juice"])


async def test_an_unloaded_partition_is_loaded_rather_than_asked(
    stores: tuple[HotCacheStore, CountingStore],
) -> None:
    # A Remember's dedup looks up contents, then searches vectors: loading the
    # partition for the first makes a new agent's first write read the store once
    # (issue 31), and the search that follows is answered from memory.
    cached, inner = stores
    await cached.upsert(P, [memory(id="a", content="x")])
    found = await cached.find_by_content(P, [content_hash("x")], MemoryFilter())
    assert [m.id for m in found] == ["a"] and inner.content_lookups == 0
    assert P in cached.cached_partitions()


class ListCountingStore(CountingStore):
    def __init__(self) -> None:
        super().__init__()
        self.lists = 0

    async def list(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.lists += 1
        return await super().list(*args, **kwargs)


async def test_a_partition_the_store_never_held_is_loaded_without_reading_it() -> None:
    inner = ListCountingStore()
    await inner.open()
    await inner.upsert(P, [memory(id="a", content="x")])  # held before the cache opens
    cached = HotCacheStore(inner, dimension=DIM, budget_bytes=64 * 2**20)
    await cached.open()
    new = Partition(P.tenant_id, "brand-new")
    async with asyncio.timeout(10):
        while cached._stored.known_empty(new) is False:  # noqa: ASYNC110 - the listing at open
            await asyncio.sleep(0.01)
    assert await cached.find_by_content(new, [content_hash("x")], MemoryFilter()) == []
    assert inner.lists == 0 and inner.content_lookups == 0  # no scan, no lookup
    # A partition the store holds is scanned as before.
    assert [m.id for m in await cached.find_by_content(P, [content_hash("x")], MemoryFilter())] == [
        "a"
    ]
    assert inner.lists == 1
    await cached.close()
