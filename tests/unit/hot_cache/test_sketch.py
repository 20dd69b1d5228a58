"""The near-neighbour sketch (hot/sketch.py) is a filter, never an approximation: a
thresholded lookup through it finds exactly the pairs a full float64 product finds,
including pairs planted right at the cut, under filters, and after writes and refits."""

from __future__ import annotations

import numpy as np
import pytest

from memoryd.domain.models import MemoryFilter
from memoryd.domain.models import unit_rows as unit
from memoryd.storage.hot.ann import AnnParams, build_ann
from memoryd.storage.hot.partition import HotPartition
from memoryd.storage.hot.sketch import RANK

from .helpers import clustered, memory

DIM = 384
CUT = 0.95


def _clustered(n: int, rng: np.random.Generator) -> np.ndarray:
    return clustered(n, rng, DIM)


def _at(target: np.ndarray, similarity: float, rng: np.random.Generator) -> np.ndarray:
    """A unit vector whose cosine with unit ``target`` is ``similarity``."""
    other = rng.normal(size=DIM)
    other -= other.dot(target) * target
    other /= np.linalg.norm(other)
    return unit(similarity * target + np.sqrt(1 - similarity**2) * other)


def _truth(part: HotPartition, queries: np.ndarray, flt: MemoryFilter) -> list[dict[str, float]]:
    """Every (id, similarity) at or above the cut, from a float64 product."""
    n = part.high_water
    mask = part.columns.mask(flt, n)
    sims = queries.astype(np.float64) @ part.vectors[:n].astype(np.float64).T
    out = []
    for row in sims:
        hits = np.flatnonzero((row >= CUT) & mask)
        out.append({part.memories[s].id: float(row[s]) for s in hits})  # type: ignore[union-attr]
    return out


def _check(part: HotPartition, queries: np.ndarray, flt: MemoryFilter) -> int:
    """The lookup equals the truth up to float32 rounding at the cut; returns the
    number of hits clear of the cut (so callers can see there was something to find)."""
    found = part.search_many(queries, flt, 1000, min_similarity=CUT)
    truth = _truth(part, queries, flt)
    total = 0
    for got, want in zip(found, truth, strict=True):
        got_ids = {m.id: s for m, s in got}
        sure = {i for i, s in want.items() if s >= CUT + 1e-6}
        assert sure <= set(got_ids), f"missed {sure - set(got_ids)}"
        assert all(s >= CUT - 1e-6 for s in got_ids.values())
        assert set(got_ids) <= set(want) | {i for i, s in got_ids.items() if s < CUT + 1e-6}
        total += len(sure)
    return total


@pytest.fixture
def planted() -> tuple[HotPartition, np.ndarray, np.random.Generator]:
    """3,000 clustered rows, a third in namespace "ns", and 60 queries each with
    stored neighbours planted just above, at and just below the cut."""
    rng = np.random.default_rng(11)
    part = HotPartition(DIM, AnnParams())
    base = _clustered(3000, rng)
    memories = [
        memory(id=f"v{i}", vector=None, namespace="ns" if i % 3 else "") for i in range(3000)
    ]
    part.put_rows(memories, base)
    queries = _clustered(60, rng)
    planted = []
    for j, q in enumerate(queries):
        for similarity in (CUT + 0.01, CUT + 1e-4, CUT, CUT - 1e-4, CUT - 0.01, 0.999):
            planted.append(
                (f"near-{j}-{similarity:.5f}", _at(q.astype(np.float64), similarity, rng))
            )
    part.put_rows(
        [memory(id=i, vector=None) for i, _ in planted], np.stack([v for _, v in planted])
    )
    return part, queries, rng


def test_the_sketch_finds_exactly_what_a_full_product_finds(
    planted: tuple[HotPartition, np.ndarray, np.random.Generator],
) -> None:
    part, queries, _ = planted
    assert part.sketch is None
    hits = _check(part, queries, MemoryFilter())
    assert part.sketch is not None and part.sketch.basis.shape == (RANK, DIM)
    # Three planted neighbours per query clear the cut: 0.999, +0.01 and +1e-4.
    assert hits >= 3 * len(queries)
    # A filter applies to the candidates too.
    assert _check(part, queries, MemoryFilter(namespace="ns")) == 0
    assert _check(part, queries, MemoryFilter(namespace="")) == hits


def test_writes_after_the_sketch_is_built_are_seen(
    planted: tuple[HotPartition, np.ndarray, np.random.Generator],
) -> None:
    part, queries, rng = planted
    _check(part, queries, MemoryFilter())
    sketch = part.sketch
    assert sketch is not None
    # New rows (the partition grows past its capacity), a moved row, a removed one.
    fresh = [(f"late-{j}", _at(q.astype(np.float64), 0.97, rng)) for j, q in enumerate(queries)]
    part.put_rows([memory(id=i, vector=None) for i, _ in fresh], np.stack([v for _, v in fresh]))
    part.put(memory(id="v5", vector=None), _at(queries[0].astype(np.float64), 0.96, rng))
    part.remove("near-1-0.96000")
    assert part.sketch is sketch  # not refitted: maintained
    found = part.search_many(queries, MemoryFilter(), 1000, min_similarity=CUT)
    for j, hits in enumerate(found):
        ids = {m.id for m, _ in hits}
        assert f"late-{j}" in ids
        assert "near-1-0.96000" not in ids
    assert "v5" in {m.id for m, _ in found[0]}
    _check(part, queries, MemoryFilter())


def test_the_sketch_is_refitted_when_the_partition_doubles(
    planted: tuple[HotPartition, np.ndarray, np.random.Generator],
) -> None:
    part, queries, rng = planted
    _check(part, queries, MemoryFilter())
    first = part.sketch
    assert first is not None
    more = _clustered(2 * len(part), rng)
    part.put_rows([memory(id=f"more-{i}", vector=None) for i in range(len(more))], more)
    _check(part, queries, MemoryFilter())
    assert part.sketch is not first and part.sketch is not None
    assert part.sketch.fitted_rows == len(part)


def test_small_partitions_low_cuts_and_single_lookups_use_the_full_product() -> None:
    rng = np.random.default_rng(2)
    part = HotPartition(DIM, AnnParams())
    vectors = _clustered(500, rng)
    part.put_rows([memory(id=f"v{i}", vector=None) for i in range(500)], vectors)
    part.search_many(vectors[:20], MemoryFilter(), 5, min_similarity=CUT)
    assert part.sketch is None
    big = _clustered(3000, rng)
    part.put_rows([memory(id=f"w{i}", vector=None) for i in range(3000)], big)
    found = part.search_many(big[:20], MemoryFilter(), 5, min_similarity=0.5)
    assert part.sketch is None and found[0][0][0].id == "w0"
    # One Remember's lookup: a product over the partition, no sketch built for it.
    [hits] = part.search_many(big[:1], MemoryFilter(), 5, min_similarity=CUT)
    assert part.sketch is None and hits[0][0].id == "w0"
    part.search_many(big[:20], MemoryFilter(), 5, min_similarity=CUT)
    assert part.sketch is not None


def test_pairs_whose_difference_the_projection_keeps_whole_still_pass(
    planted: tuple[HotPartition, np.ndarray, np.random.Generator],
) -> None:
    """The hardest case for the filter: query and neighbour both inside the sketch's
    subspace, so the projected distance is the whole distance and only the slack
    keeps a pair just above the cut."""
    part, queries, rng = planted
    _check(part, queries, MemoryFilter())
    assert part.sketch is not None
    basis = part.sketch.basis.astype(np.float64)  # orthonormal rows
    inside = []
    for _ in range(20):
        q = basis.T @ rng.normal(size=RANK)
        q /= np.linalg.norm(q)
        o = basis.T @ rng.normal(size=RANK)
        o -= o.dot(q) * q
        o /= np.linalg.norm(o)
        inside.append((q, o))
    qs = np.stack([q for q, _ in inside]).astype(np.float32)
    for similarity in (CUT + 1e-4, CUT + 2e-5):
        rows = [unit(similarity * q + np.sqrt(1 - similarity**2) * o) for q, o in inside]
        ids = [f"inside-{j}-{similarity}" for j in range(len(rows))]
        part.put_rows([memory(id=i, vector=None) for i in ids], np.stack(rows))
    assert _check(part, qs, MemoryFilter()) >= 20


def test_the_sketch_is_dropped_once_a_graph_answers_near_lookups(
    planted: tuple[HotPartition, np.ndarray, np.random.Generator],
) -> None:
    part, queries, _ = planted
    _check(part, queries, MemoryFilter())
    assert part.sketch is not None
    with_sketch = part.nbytes()
    slots, vectors = part.start_ann_build()
    part.finish_ann_build(build_ann(DIM, part.params, slots, vectors, lambda: True))
    assert part.ann is not None and part.sketch is None
    assert part.nbytes() - int(part.ann.memory_usage) < with_sketch
