"""search: exact cosine ranking and similarity values, filters applied before top-k."""

from __future__ import annotations

import numpy as np
import pytest

from memoryd.domain.models import MemoryFilter, Partition, unit_query
from memoryd.storage.base import Store

from .support import DIM, make_memory, unit_vector

P = Partition("tenant", "agent")


def brute_force(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine similarity in float64 (the reference the store must match)."""
    v = vectors.astype(np.float64)
    q = query.astype(np.float64)
    result: np.ndarray = (v @ q) / (np.linalg.norm(v, axis=1) * np.linalg.norm(q))
    return result


async def test_ranking_and_similarity_match_numpy(store: Store) -> None:
    rng = np.random.default_rng(1234)
    memories = [make_memory(P, id=f"s{i:03d}", vector=unit_vector(rng)) for i in range(200)]
    await store.upsert(P, memories)
    vectors = np.stack([m.vector for m in memories])
    for _ in range(5):
        query = unit_vector(rng)
        sims = brute_force(vectors, query)
        order = np.argsort(-sims, kind="stable")
        hits = await store.search(P, query, MemoryFilter(), limit=25)
        assert [h.memory.id for h in hits] == [memories[k].id for k in order[:25]]
        np.testing.assert_allclose(
            [h.similarity for h in hits], sims[order[:25]], rtol=0, atol=1e-5
        )
        assert all(h.memory.vector is None for h in hits)


async def test_similarity_extremes(store: Store) -> None:
    axis = np.zeros(DIM, np.float32)
    axis[0] = 1.0
    await store.upsert(
        P,
        [
            make_memory(P, id="same", vector=axis.copy()),
            make_memory(P, id="opposite", vector=-axis),
            make_memory(P, id="orthogonal", vector=np.roll(axis, 1)),
        ],
    )
    hits = await store.search(P, axis, MemoryFilter(), limit=10)
    assert [h.memory.id for h in hits] == ["same", "orthogonal", "opposite"]
    np.testing.assert_allclose([h.similarity for h in hits], [1.0, 0.0, -1.0], atol=1e-6)


async def test_a_scaled_query_finds_its_direction(store: Store) -> None:
    """Queries are scaled to unit length once, by ``unit_query`` (no layer again)."""
    rng = np.random.default_rng(5)
    m = make_memory(P, vector=unit_vector(rng))
    await store.upsert(P, [m])
    query = unit_query(np.asarray(m.vector) * 3.0, DIM)
    [hit] = await store.search(P, query, MemoryFilter(), limit=1)
    assert hit.similarity == pytest.approx(1.0, abs=1e-5)


async def test_limit_is_respected(store: Store) -> None:
    await store.upsert(P, [make_memory(P) for _ in range(10)])
    q = unit_vector(np.random.default_rng(0))
    assert len(await store.search(P, q, MemoryFilter(), limit=3)) == 3
    assert len(await store.search(P, q, MemoryFilter(), limit=100)) == 10
    assert await store.search(P, q, MemoryFilter(), limit=0) == []


async def test_small_partition_in_a_big_table_gets_limit_results(store: Store) -> None:
    rng = np.random.default_rng(2)
    query = unit_vector(rng)
    big = Partition("big", "agent")
    # The big partition's vectors are all closer to the query than the small one's:
    # a post-filter over a global top-k would return nothing for the small partition.
    await store.upsert(big, [make_memory(big, vector=_near(query, rng, 0.01)) for _ in range(500)])
    small = Partition("small", "agent")
    mine = [make_memory(small, vector=_near(-query, rng, 0.5)) for _ in range(8)]
    await store.upsert(small, mine)
    hits = await store.search(small, query, MemoryFilter(), limit=5)
    assert len(hits) == 5
    assert {h.memory.id for h in hits} <= {m.id for m in mine}


async def test_filter_inside_partition_is_applied_before_top_k(store: Store) -> None:
    rng = np.random.default_rng(3)
    query = unit_vector(rng)
    common = [make_memory(P, vector=_near(query, rng, 0.01)) for _ in range(300)]
    rare = [make_memory(P, tags=("rare",), vector=_near(-query, rng, 0.5)) for _ in range(7)]
    await store.upsert(P, common + rare)
    hits = await store.search(P, query, MemoryFilter(tags=("rare",)), limit=7)
    assert {h.memory.id for h in hits} == {m.id for m in rare}
    sims = brute_force(np.stack([m.vector for m in rare]), query)
    np.testing.assert_allclose([h.similarity for h in hits], np.sort(sims)[::-1], rtol=0, atol=1e-5)


def _near(center: np.ndarray, rng: np.random.Generator, spread: float) -> np.ndarray:
    v = center + spread * rng.normal(size=center.shape).astype(np.float32)
    out: np.ndarray = (v / np.linalg.norm(v)).astype(np.float32)
    return out
