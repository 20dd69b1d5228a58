"""The int8 copy (hot/quant.py) narrows a search, never approximates it: its bounds
hold for every row, however the row's values are spread, and a search through it
returns exactly what the full float32 product returns, ties broken by id, under
filters and after writes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from memoryd.domain.models import MemoryFilter, SecurityLevel
from memoryd.domain.models import unit_rows as unit
from memoryd.storage.hot.ann import AnnParams, new_ann_index
from memoryd.storage.hot.partition import _QUANT_MIN_ROWS, HotPartition
from memoryd.storage.hot.quant import Quantized

from .helpers import clustered, memory

DIM = 384
K = 10


def _clustered(n: int, rng: np.random.Generator) -> np.ndarray:
    return clustered(n, rng, DIM)


def _shaped(rng: np.random.Generator) -> np.ndarray:
    """Rows whose values are spread in the ways that stress a per-row int8 scale."""
    n = 64
    one_hot = np.eye(DIM, dtype=np.float32)[:n]
    spiky = rng.normal(size=(n, DIM)) * 1e-3
    spiky[:, 0] = 1.0
    flat = np.sign(rng.normal(size=(n, DIM)))
    tiny = rng.normal(size=(n, DIM)) * 1e-30  # normalised below: a plain unit row
    heavy = rng.standard_cauchy(size=(n, DIM))
    rows = np.concatenate([one_hot, spiky, flat, tiny, heavy, _clustered(n, rng)])
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _check(part: HotPartition, query: np.ndarray, flt: MemoryFilter, k: int) -> None:
    """The search's k best are the k best by a float64 product, up to float32
    rounding at the k-th place, with float32 similarities, best first."""
    n = part.high_water
    exact = part.vectors[:n].astype(np.float64) @ query.astype(np.float64)
    slots = np.flatnonzero(part.columns.mask(flt, n))
    kth = np.sort(exact[slots])[::-1][min(k, len(slots)) - 1]
    got = part.search(query, flt, k)
    assert len(got) == min(k, len(slots))
    got_slots = [part.slot_of[m.id] for m, _ in got]
    sims = [s for _, s in got]
    assert sims == sorted(sims, reverse=True)
    assert np.allclose(sims, exact[got_slots], rtol=0, atol=1e-6)
    assert set(got_slots) <= set(slots.tolist())
    assert all(exact[s] >= kth - 1e-6 for s in got_slots)
    must = {int(s) for s in slots if exact[s] > kth + 1e-6}
    assert must <= set(got_slots)


def _search_ids(part: HotPartition, query: np.ndarray, flt: MemoryFilter, k: int) -> list[str]:
    return [m.id for m, _ in part.search(query, flt, k)]


@pytest.fixture
def part() -> HotPartition:
    """6,000 clustered rows in two namespaces and two security levels, with groups of
    identical rows (exact ties) spread through them."""
    rng = np.random.default_rng(5)
    vectors = _clustered(6000, rng)
    vectors[1000:1040] = vectors[7]  # 41 identical rows: a tie across any k-th place
    vectors[2000:2003] = vectors[3000]
    memories = [
        memory(
            id=f"v{i:05d}",
            vector=None,
            namespace="ns" if i % 3 else "",
            security_level=SecurityLevel.CONFIDENTIAL if i % 5 == 0 else SecurityLevel.PUBLIC,
        )
        for i in range(len(vectors))
    ]
    out = HotPartition(DIM, AnnParams())
    out.put_rows(memories, vectors)
    return out


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    query=hnp.arrays(np.float32, DIM, elements=st.floats(-1, 1, width=32)),
)
def test_every_row_lies_within_its_bound(seed: int, query: np.ndarray) -> None:
    rows = _shaped(np.random.default_rng(seed))
    if not np.any(query):
        query[seed % DIM] = 1.0
    query = unit(query)
    quantized = Quantized(DIM, len(rows))
    quantized.put(np.arange(len(rows)), rows)
    estimate, bound = quantized.bounds(query, len(rows))
    exact = rows.astype(np.float64) @ query.astype(np.float64)
    assert np.all(np.abs(exact - estimate) <= bound)
    # A bound, but a useful one: a query concentrated on one dimension gives the
    # widest (hypothesis found 0.1008 with 0.9375 on one and 0.025 on the rest).
    assert bound < 0.15


def test_search_returns_exactly_the_full_products_top_k(part: HotPartition) -> None:
    rng = np.random.default_rng(9)
    queries = [*_clustered(40, rng), part.vectors[7], part.vectors[3000], part.vectors[1]]
    filters = [
        MemoryFilter(),
        MemoryFilter(namespace="ns"),
        MemoryFilter(max_security_level=SecurityLevel.INTERNAL),
    ]
    for flt in filters:
        for q in queries:
            for k in (1, K, 50):
                _check(part, q, flt, k)
    assert part.quantized is not None
    # The tie of identical rows is broken by id, as the full product's order is.
    tied = _search_ids(part, part.vectors[7], MemoryFilter(), K)
    assert tied == ["v00007", *[f"v{i:05d}" for i in range(1000, 1009)]]


def test_the_filter_keeps_few_candidates(part: HotPartition) -> None:
    rng = np.random.default_rng(4)
    n = part.high_water
    mask = part.columns.mask(MemoryFilter(), n)
    quantized = part._quantized()
    sizes = [len(quantized.candidates(q, n, mask, K)) for q in _clustered(50, rng)]
    assert min(sizes) >= K
    assert np.median(sizes) < n / 20


def test_writes_after_the_copy_is_built_are_seen(part: HotPartition) -> None:
    rng = np.random.default_rng(3)
    query = _clustered(1, rng)[0]
    _search_ids(part, query, MemoryFilter(), K)
    quantized = part.quantized
    assert quantized is not None
    # Rows right at the query, enough to grow the partition past its capacity.
    close = unit(query + 0.01 * rng.normal(size=DIM))
    fresh = np.concatenate([np.repeat(close[None, :], 5, axis=0), _clustered(3000, rng)])
    part.put_rows([memory(id=f"new{i:05d}", vector=None) for i in range(len(fresh))], fresh)
    part.put(memory(id="v00100", vector=None), query)  # an existing row moved to the query
    part.remove("new00000")
    got = _search_ids(part, query, MemoryFilter(), K)
    assert got[:5] == ["v00100", "new00001", "new00002", "new00003", "new00004"]
    _check(part, query, MemoryFilter(), K)
    assert part.quantized is quantized  # maintained, not rebuilt


def test_small_partitions_and_selective_filters_use_the_float_rows() -> None:
    rng = np.random.default_rng(1)
    part = HotPartition(DIM, AnnParams())
    vectors = _clustered(_QUANT_MIN_ROWS - 1, rng)
    part.put_rows(
        [
            memory(id=f"s{i}", vector=None, namespace="rare" if i < 100 else "")
            for i in range(len(vectors))
        ],
        vectors,
    )
    query = _clustered(1, rng)[0]
    _check(part, query, MemoryFilter(), K)
    assert part.quantized is None
    part.put_rows([memory(id="last", vector=None)], _clustered(1, rng))
    _check(part, query, MemoryFilter(namespace="rare"), K)
    assert part.quantized is None  # 100 of 4,096 rows: gathered, not scanned
    part.search(query, MemoryFilter(), K)
    assert part.quantized is not None


def test_the_copy_is_dropped_once_a_graph_answers_searches(part: HotPartition) -> None:
    part.search(part.vectors[0], MemoryFilter(), K)
    assert part.quantized is not None
    part.start_ann_build()
    part.finish_ann_build(None)
    assert part.quantized is not None  # a build that stopped changes nothing
    part.start_ann_build()
    part.finish_ann_build(new_ann_index(DIM, part.params))
    assert part.quantized is None


def test_one_thresholded_lookup_returns_exactly_the_full_products_cut(
    part: HotPartition, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Remember's duplicate lookup (one query, ``min_similarity``) goes through the
    int8 copy too, and finds exactly the rows a full product puts at or above the cut:
    the near copies planted, ties by id, none for a query far from every row."""
    rng = np.random.default_rng(12)
    calls: list[float | None] = []
    original = Quantized.candidates

    def spy(self: Quantized, *args: object, at_least: float | None = None) -> object:
        calls.append(at_least)
        return original(self, *args, at_least=at_least)  # type: ignore[arg-type]

    monkeypatch.setattr(Quantized, "candidates", spy)
    n = part.high_water
    near = [unit(part.vectors[i] + 0.01 * rng.normal(size=DIM)) for i in (7, 3000, 4321)]
    queries = [*near, part.vectors[1], *_clustered(5, rng)]
    for flt in (MemoryFilter(), MemoryFilter(namespace="ns")):
        slots = np.flatnonzero(part.columns.mask(flt, n))
        for q in queries:
            exact = part.vectors[:n].astype(np.float64) @ q.astype(np.float64)
            for cut in (0.95, 0.8):
                above = slots[exact[slots] >= cut]
                # No row within float32 rounding of the cut (the test would be moot).
                assert not np.any(np.abs(exact[slots] - cut) < 1e-5)
                want = sorted(
                    above.tolist(), key=lambda s: (-round(exact[s], 5), part.columns.ids[s])
                )
                [got] = part.search_many(q[None, :], flt, K, min_similarity=cut)
                assert [part.slot_of[m.id] for m, _ in got] == want[:K]
                assert all(s >= cut for _, s in got)
    assert calls and set(calls) == {0.95, 0.8}
    # The 41 identical rows tie at the top: the lowest ids win, as in a full product.
    [tied] = part.search_many(part.vectors[7][None, :], MemoryFilter(), K, min_similarity=0.95)
    assert [m.id for m, _ in tied] == ["v00007", *[f"v{i:05d}" for i in range(1000, 1009)]]
    [none] = part.search_many(-part.vectors[7][None, :], MemoryFilter(), K, min_similarity=0.95)
    assert none == []
