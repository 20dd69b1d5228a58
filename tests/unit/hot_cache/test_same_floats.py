"""The hot cache and the in-process store give a memory the very same similarity
(storage/cosine.py): an as-of read, answered over an in-process store rebuilt from
the history, ranks near-ties as the live read over the hot cache did (docs/as-of.md).
Fails when either scores by a matrix product (BLAS rounds a row by its place) or
rescales rows that are unit length already."""

from __future__ import annotations

import numpy as np
import pytest

from memoryd.domain.models import MemoryFilter, SecurityLevel, unit_query
from memoryd.storage.hot.cache import HotCacheStore
from memoryd.storage.memory import InMemoryStore

from .helpers import P, clustered, memory

DIM = 384
EVERYTHING = MemoryFilter(include_archived=True)
PUBLIC = MemoryFilter(include_archived=True, max_security_level=SecurityLevel.PUBLIC)


@pytest.mark.parametrize(
    ("rows", "flt"),
    [(300, EVERYTHING), (3000, EVERYTHING), (3000, PUBLIC)],
    ids=["small-partition", "quantized-candidates", "selective-filter"],
)
async def test_a_memory_scores_the_same_float_in_the_hot_cache_and_in_process(
    rows: int, flt: MemoryFilter
) -> None:
    rng = np.random.default_rng(rows)
    vectors = clustered(rows, rng, DIM)
    levels = [SecurityLevel.PUBLIC if i % 10 == 0 else SecurityLevel.INTERNAL for i in range(rows)]
    memories = [
        memory(vector=v, security_level=level) for v, level in zip(vectors, levels, strict=True)
    ]
    inner = InMemoryStore(DIM)
    await inner.open()
    await inner.upsert(P, memories)
    cached = HotCacheStore(InMemoryStore(DIM), dimension=DIM, budget_bytes=256 * 2**20)
    await cached.open()
    await cached.upsert(P, memories)
    for query in clustered(5, rng, DIM):
        unit = unit_query(query, DIM)
        live = await cached.search(P, unit, flt, 10)
        rebuilt = await inner.search(P, unit, flt, 10)
        assert [(h.memory.id, h.similarity) for h in live] == [
            (h.memory.id, h.similarity) for h in rebuilt
        ]
    assert cached.hits > 0  # answered from the cache, not passed through
    await cached.close()
