"""The HNSW graph (usearch) of a big hot partition: parameters, the build (a worker
thread, on a snapshot), and the candidate searches whose results
:class:`~memoryd.storage.hot.partition.HotPartition` re-ranks exactly.

Graph keys are partition slots; a key at or past the partition's high-water mark is
a slot added after the snapshot and is skipped.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from usearch.index import BatchMatches, Index

F32 = npt.NDArray[np.float32]
Slots = npt.NDArray[np.intp]


@dataclass(frozen=True, slots=True)
class AnnParams:
    """When and how a partition gets an HNSW graph (see docs/performance.md)."""

    #: Partitions with at least this many memories are searched through the graph.
    threshold: int = 20_000
    connectivity: int = 16
    expansion_add: int = 64
    expansion_search: int = 128
    #: Graph candidates fetched per requested result before the exact re-rank.
    oversample: int = 4
    min_candidates: int = 64
    #: "i8" keeps the graph small; the exact re-rank restores full precision.
    dtype: str = "i8"
    build_threads: int = max(1, min(2, os.cpu_count() or 1))


def new_ann_index(dimension: int, params: AnnParams) -> Index:
    return Index(
        ndim=dimension,
        metric="ip",
        dtype=params.dtype,
        connectivity=params.connectivity,
        expansion_add=params.expansion_add,
        expansion_search=params.expansion_search,
    )


def build_ann(
    dimension: int,
    params: AnnParams,
    slots: Slots,
    vectors: F32,
    keep_going: Callable[[], bool],
) -> Index | None:
    """An HNSW graph over ``vectors`` keyed by ``slots`` (runs in a worker thread;
    usearch releases the GIL). Returns None when ``keep_going`` turned false."""
    index = new_ann_index(dimension, params)

    def progress(processed: int, total: int) -> bool:
        return keep_going()

    # usearch checks the callback's annotations as types (this module's are strings).
    progress.__annotations__ = {"processed": int, "total": int, "return": bool}
    if len(slots):
        try:
            index.add(
                slots.astype(np.uint64), vectors, threads=params.build_threads, progress=progress
            )
        except RuntimeError:
            if keep_going():
                raise
            return None  # "Operation has been terminated": asked to stop
    return index if keep_going() else None


def ann_near(
    index: Index,
    params: AnnParams,
    queries: F32,
    mask: npt.NDArray[np.bool_],
    k: int,
) -> list[Slots]:
    """Each query's graph candidates that pass ``mask``, from one batched graph
    search: for near-duplicate lookups, which re-rank them exactly and keep those
    above a cut. A near-duplicate is among a query's closest neighbours, so there is
    no widening for the filter (an exact scan of a big partition per batch item is
    what this avoids); one the graph misses is written as a new memory, never lost."""
    n = len(mask)
    want = min(len(index), max(k * params.oversample, params.min_candidates))
    found = index.search(queries, want, threads=params.build_threads)
    keys = np.asarray(found.keys, dtype=np.intp).reshape(len(queries), -1)
    # One query gives Matches (only hits), several BatchMatches (padded rows).
    counts = found.counts.tolist() if isinstance(found, BatchMatches) else [keys.shape[1]]
    out: list[Slots] = []
    for row, got in zip(keys, counts, strict=True):
        slots = row[:got]
        slots = slots[slots < n]
        out.append(slots[mask[slots]])
    return out


def ann_candidates(
    index: Index,
    params: AnnParams,
    query: F32,
    mask: npt.NDArray[np.bool_],
    count: int,
    k: int,
) -> Slots | None:
    """Graph candidates that pass ``mask``; at least ``k`` of them, or None (then
    the caller falls back to an exact scan)."""
    n = len(mask)
    # A filter that keeps a fraction f of the rows needs ~1/f times more candidates.
    want = int(max(k * params.oversample, params.min_candidates) * (n / count))
    size = len(index)
    while True:
        want = min(want, size)
        keys = np.asarray(index.search(query, want, threads=1).keys, dtype=np.intp)
        keys = keys[keys < n]
        kept = keys[mask[keys]]
        if len(kept) >= k:
            return kept
        if want >= size or want >= count * 4:
            return None
        want *= 4
