"""Search through the cache equals the store's own search (exact below the graph
threshold; recall@10 >= 0.98 above it, similarities always exact)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryd.domain.models import (
    AccessUpdate,
    MemoryFilter,
    MemoryOrder,
    MemoryType,
    PageCursor,
    SecurityLevel,
    TagMatch,
)
from memoryd.domain.models import unit_rows as unit
from memoryd.storage.base import ListPage, Nearest
from memoryd.storage.hot.ann import AnnParams, build_ann
from memoryd.storage.hot.cache import BULK_QUERIES, HotCacheStore
from memoryd.storage.hot.partition import HotPartition
from memoryd.storage.memory import InMemoryStore

from .helpers import BASE, DIM, P, memory, unit_vector

TAGS = ("a", "b", "c")
filters = st.builds(
    MemoryFilter,
    namespace=st.sampled_from([None, "", "ns"]),
    tags=st.lists(st.sampled_from(TAGS), max_size=2, unique=True).map(tuple),
    tag_match=st.sampled_from(list(TagMatch)),
    memory_types=st.lists(st.sampled_from(list(MemoryType)), max_size=2, unique=True).map(tuple),
    max_security_level=st.sampled_from(list(SecurityLevel)),
    created_after=st.sampled_from([None, BASE + timedelta(days=1)]),
    created_before=st.sampled_from([None, BASE + timedelta(days=2)]),
    include_archived=st.booleans(),
    not_expired_at=st.sampled_from([None, BASE + timedelta(days=1, hours=12)]),
    embedding_model=st.sampled_from([None, "m1", "m2", "m3"]),
    exclude_embedding_model=st.sampled_from([None, "m1", "m3"]),
)
records = st.fixed_dictionaries(
    {
        "id": st.sampled_from([f"r{i}" for i in range(12)]),
        "namespace": st.sampled_from(["", "ns"]),
        "tags": st.lists(st.sampled_from(TAGS), max_size=3, unique=True).map(tuple),
        "memory_type": st.sampled_from(list(MemoryType)),
        "security_level": st.sampled_from(list(SecurityLevel)),
        "created_at": st.integers(0, 72).map(lambda h: BASE + timedelta(hours=h)),
        "archived": st.booleans(),
        "expires_at": st.sampled_from([None, BASE + timedelta(days=1), BASE + timedelta(days=3)]),
        "embedding_model": st.sampled_from(["m1", "m2"]),
        "seed": st.integers(0, 50),
    }
)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), st.lists(records, min_size=1, max_size=4)),
        st.tuples(st.just("delete"), st.lists(st.sampled_from([f"r{i}" for i in range(12)]))),
        st.tuples(st.just("access"), st.sampled_from([f"r{i}" for i in range(12)])),
        st.tuples(st.just("search"), filters),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops, query_seed=st.integers(0, 1000))
def test_cached_search_matches_the_store(ops: list[tuple[str, object]], query_seed: int) -> None:
    asyncio.run(_run(ops, query_seed))


async def _run(ops: list[tuple[str, object]], query_seed: int) -> None:
    reference = InMemoryStore(DIM)
    cached = HotCacheStore(InMemoryStore(DIM), dimension=DIM, budget_bytes=2**24)
    await reference.open()
    await cached.open()
    query = unit_vector(np.random.default_rng(query_seed))
    for op, arg in [*ops, ("search", MemoryFilter(include_archived=True))]:
        if op == "upsert":
            assert isinstance(arg, list)
            batch = []
            for r in arg:
                fields = dict(r)
                # Distinct ids never share a vector: exact ties are ordered by float noise.
                seed = fields.pop("seed") * 100 + int(str(fields["id"])[1:])
                fields["vector"] = unit_vector(np.random.default_rng(seed))
                batch.append(memory(**fields))
            await reference.upsert(P, batch)
            await cached.upsert(P, batch)
        elif op == "delete":
            assert isinstance(arg, list)
            assert await cached.delete(P, arg) == await reference.delete(P, arg)
        elif op == "access":
            assert isinstance(arg, str)
            update = {arg: AccessUpdate(2, BASE + timedelta(days=5))}
            await reference.record_access(P, update)
            await cached.record_access(P, update)
        else:
            assert isinstance(arg, MemoryFilter)
            want = await reference.search(P, query, arg, 5)
            got = await cached.search(P, query, arg, 5)
            assert [h.memory.id for h in got] == [h.memory.id for h in want]
            np.testing.assert_allclose(
                [h.similarity for h in got], [h.similarity for h in want], atol=1e-5
            )
            for g, w in zip(got, want, strict=True):
                assert g.memory == w.memory
            await _same_reads(reference, cached, arg)
    await cached.close()


async def _same_reads(reference: InMemoryStore, cached: HotCacheStore, flt: MemoryFilter) -> None:
    """get, list (both orders, every page) and count agree with the store, whether
    the cache answers them (a loaded partition) or passes them on."""
    assert await cached.count(P, flt) == await reference.count(P, flt)
    ids = ["r3", "r0", "missing", "r3", *(f"r{i}" for i in range(12))]
    for with_vectors in (False, True):
        want_rows = await reference.get(P, ids, with_vectors=with_vectors)
        got_rows = await cached.get(P, ids, with_vectors=with_vectors)
        assert [m.id for m in got_rows] == [m.id for m in want_rows]
        for g, w in zip(got_rows, want_rows, strict=True):
            assert (g.vector is None) == (w.vector is None)
            if w.vector is not None:
                assert g.vector is not None
                np.testing.assert_allclose(g.vector, w.vector, atol=1e-6)
            g.vector = w.vector = None
            assert g == w
    for order in (MemoryOrder.CREATED_DESC, MemoryOrder.CREATED_ASC):
        after: PageCursor | None = None
        while True:
            want_page = await reference.list(P, flt, ListPage(order, after, 3))
            got_page = await cached.list(P, flt, ListPage(order, after, 3))
            assert got_page == want_page
            if len(want_page) < 3:
                break
            after = PageCursor(want_page[-1].created_at, want_page[-1].id)


def _clustered(n: int, rng: np.random.Generator, dim: int = 32) -> np.ndarray:
    centers = rng.normal(size=(40, dim)).astype(np.float32)
    x = centers[rng.integers(0, 40, n)] + 0.4 * rng.normal(size=(n, dim)).astype(np.float32)
    out: np.ndarray = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    return out


@pytest.fixture
async def indexed() -> tuple[HotCacheStore, InMemoryStore, np.ndarray]:
    rng = np.random.default_rng(0)
    vectors = _clustered(3000, rng)
    inner = InMemoryStore(32)
    await inner.open()
    rows = [
        memory(id=f"v{i:05d}", vector=v, tags=("rare",) if i % 300 == 0 else ())
        for i, v in enumerate(vectors)
    ]
    await inner.upsert(P, rows)
    store = HotCacheStore(inner, dimension=32, budget_bytes=2**28, ann=AnnParams(threshold=500))
    await store.open()
    return store, inner, vectors


async def test_graph_search_recall_against_exact(
    indexed: tuple[HotCacheStore, InMemoryStore, np.ndarray],
) -> None:
    store, inner, vectors = indexed
    rng = np.random.default_rng(1)
    await store.search(P, vectors[0], MemoryFilter(), 10)
    await store.wait_indexed(P)
    assert store.partition_state(P) == "ann"
    recalls = []
    for _ in range(100):
        q = unit(vectors[rng.integers(0, len(vectors))] + 0.3 * rng.normal(size=32))
        got = await store.search(P, q, MemoryFilter(), 10)
        sims = vectors @ q
        want = {f"v{i:05d}" for i in np.argsort(-sims)[:10]}
        recalls.append(len({h.memory.id for h in got} & want) / 10)
        for h in got:  # the re-rank is exact: similarities are the true ones
            assert h.similarity == pytest.approx(sims[int(h.memory.id[1:])], abs=1e-5)
    assert np.mean(recalls) >= 0.98
    # A selective filter falls back to an exact scan of the few rows that pass.
    rare = await store.search(P, vectors[1], MemoryFilter(tags=("rare",)), 10)
    want = await inner.search(P, vectors[1], MemoryFilter(tags=("rare",)), 10)
    assert [h.memory.id for h in rare] == [h.memory.id for h in want]
    await store.close()


async def test_writes_after_indexing_reach_the_graph(
    indexed: tuple[HotCacheStore, InMemoryStore, np.ndarray],
) -> None:
    store, _inner, vectors = indexed
    await store.search(P, vectors[0], MemoryFilter(), 10)
    await store.wait_indexed(P)
    q = unit(np.random.default_rng(9).normal(size=32))
    await store.upsert(P, [memory(id="fresh", vector=q)])
    [top] = await store.search(P, q, MemoryFilter(), 1)
    assert top.memory.id == "fresh"
    await store.delete(P, ["fresh"])
    assert "fresh" not in {h.memory.id for h in await store.search(P, q, MemoryFilter(), 10)}
    moved = unit(-q)
    await store.upsert(P, [memory(id="v00007", vector=moved)])
    [top] = await store.search(P, moved, MemoryFilter(), 1)
    assert top.memory.id == "v00007" and top.similarity == pytest.approx(1.0, abs=1e-5)
    await store.close()


def test_writes_during_a_graph_build_are_replayed() -> None:
    rng = np.random.default_rng(3)
    vectors = _clustered(800, rng)
    part = HotPartition(32, AnnParams(threshold=500))
    for i, v in enumerate(vectors):
        part.put(memory(id=f"v{i}", vector=None), v)
    assert part.wants_ann()
    slots, snapshot = part.start_ann_build()
    # Meanwhile (the build runs in a thread): one insert, one delete, one move.
    q = unit(rng.normal(size=32))
    part.put(memory(id="new", vector=None), q)
    part.remove("v1")
    part.put(memory(id="v2", vector=None), unit(-q))
    part.finish_ann_build(build_ann(32, part.params, slots, snapshot, lambda: True))
    assert part.ann is not None and len(part.ann) == 800
    assert part.search(q, MemoryFilter(), 1)[0][0].id == "new"
    assert part.search(unit(-q), MemoryFilter(), 1)[0][0].id == "v2"
    assert "v1" not in {m.id for m, _ in part.search(vectors[1], MemoryFilter(), 20)}


def test_a_build_asked_to_stop_returns_nothing() -> None:
    vectors = _clustered(5000, np.random.default_rng(4))
    slots = np.arange(len(vectors))
    assert build_ann(32, AnnParams(), slots, vectors, lambda: False) is None


@pytest.mark.parametrize("graph", [False, True], ids=["exact", "graph"])
def test_min_similarity_keeps_near_duplicates_only(graph: bool) -> None:
    """The thresholded lookup deduplication uses: same hits as a full search cut at
    the threshold, with and without the graph, under a selective filter too."""
    rng = np.random.default_rng(5)
    vectors = _clustered(800, rng)
    part = HotPartition(32, AnnParams(threshold=500))
    for i, v in enumerate(vectors):
        part.put(memory(id=f"v{i}", vector=None, namespace="ns" if i % 5 == 0 else ""), v)
    if graph:
        slots, snapshot = part.start_ann_build()
        part.finish_ann_build(build_ann(32, part.params, slots, snapshot, lambda: True))
        assert part.ann is not None
    queries = np.stack([unit(vectors[i] + 0.02 * rng.normal(size=32)) for i in (0, 7, 10)])
    queries = np.vstack([queries, unit(rng.normal(size=32))[None, :]])
    for flt in (MemoryFilter(), MemoryFilter(namespace="ns")):
        cut = part.search_many(queries, flt, 5, min_similarity=0.95)
        full = part.search_many(queries, flt, 50)
        for got, every in zip(cut, full, strict=True):
            assert all(s >= 0.95 for _, s in got)
            assert [m.id for m, _ in got] == [m.id for m, s in every if s >= 0.95][:5]
    exact = part.search_many(queries, MemoryFilter(), 5, min_similarity=0.95)
    # One query alone (the graph answers it in another shape).
    [alone] = part.search_many(queries[:1], MemoryFilter(), 5, min_similarity=0.95)
    assert [m.id for m, _ in alone] == [m.id for m, _ in exact[0]]
    assert [s for _, s in alone] == pytest.approx([s for _, s in exact[0]], abs=1e-5)
    assert exact[0][0][0].id == "v0" and exact[1][0][0].id == "v7"
    scoped = part.search_many(queries, MemoryFilter(namespace="ns"), 5, min_similarity=0.95)
    assert scoped[0][0][0].id == "v0"
    assert all(m.namespace == "ns" for hits in scoped for m, _ in hits)
    assert exact[3] == [] and scoped[3] == []


async def test_batched_searches_run_under_bulk_compute() -> None:
    """app.py gives big batched searches (a RememberBatch's duplicate lookup) more BLAS
    threads through ``bulk_compute``; single searches keep the process-wide setting."""
    entered: list[int] = []

    @contextlib.contextmanager
    def bulk() -> Iterator[None]:
        entered.append(1)
        yield

    rng = np.random.default_rng(8)
    inner = InMemoryStore(DIM)
    await inner.open()
    await inner.upsert(P, [memory(id=f"b{i}", vector=unit_vector(rng)) for i in range(50)])
    store = HotCacheStore(inner, dimension=DIM, budget_bytes=2**24, bulk_compute=bulk)
    await store.open()
    queries = [unit_vector(rng) for _ in range(BULK_QUERIES)]
    await store.search(P, queries[0], MemoryFilter(), 5)
    await store.search_many(P, queries[:2], MemoryFilter(), Nearest(5))
    assert entered == []
    found = await store.search_many(P, queries, MemoryFilter(), Nearest(5))
    assert entered == [1] and len(found) == BULK_QUERIES
    await store.close()


def test_ties_at_the_kth_place_are_broken_by_id() -> None:
    """Identical vectors straddling the k-th place: the lowest ids win, as in the
    stores, for one query and for a batch (a partial sort alone picks any of them)."""
    rng = np.random.default_rng(8)
    part = HotPartition(DIM, AnnParams())
    shared = unit_vector(rng)
    part.put_rows(
        [memory(id=f"t{i:02d}", vector=None) for i in reversed(range(30))],
        np.repeat(shared[None, :], 30, axis=0),
    )
    part.put_rows(
        [memory(id=f"o{i:02d}", vector=None) for i in range(30)],
        np.stack([unit_vector(rng) for _ in range(30)]),
    )
    want = [f"t{i:02d}" for i in range(5)]
    assert [m.id for m, _ in part.search(shared, MemoryFilter(), 5)] == want
    batch = part.search_many(np.stack([shared, shared]), MemoryFilter(), 5)
    assert [[m.id for m, _ in hits] for hits in batch] == [want, want]


def test_tied_hits_are_ordered_as_the_id_strings_sort_beyond_ascii() -> None:
    """Ties are broken on the ids' UTF-8 bytes, which must sort as the strings do
    (code point order) for any id an import may bring, and for the whole result, not
    only at the k-th place."""
    rng = np.random.default_rng(9)
    part = HotPartition(DIM, AnnParams())
    shared = unit_vector(rng)
    ids = ["z", "é", "e", "ÿ", "Ω", "中", "𝄞", "a-1", "a", "A", "ω", "~"]
    part.put_rows(
        [memory(id=i, vector=None) for i in ids], np.repeat(shared[None, :], len(ids), axis=0)
    )
    for k in (len(ids), 5):
        assert [m.id for m, _ in part.search(shared, MemoryFilter(), k)] == sorted(ids)[:k]
