"""One partition's memories held in process memory for search (used by HotCacheStore).

Vectors live in one contiguous float32 matrix (a slot per memory; freed slots are
reused), and the fields a MemoryFilter reads live in parallel NumPy columns
(hot/columns.py), so a filtered search is a handful of vectorised comparisons, one matrix-vector product
and an ``argpartition``; from 2,048 rows an int8 copy (hot/quant.py) first rules out,
exactly, the rows that cannot make the top k. Past a size threshold an HNSW graph
(usearch) proposes an oversampled candidate set that is re-ranked exactly against the
matrix. Full-text
search has its own index (hot/text.py), built on the first text search and kept
coherent by every write from then on.

Nothing here awaits: every method runs to completion on the event loop, so callers
never observe a half-applied write. Only the graph's build (hot/ann.py) and the text index's
build run in a worker thread, on a snapshot of slots; writes meanwhile are recorded
and replayed onto the graph or the text index.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet

import numpy as np
import numpy.typing as npt
from usearch.index import Index

from memoryd.domain.models import AccessUpdate, Memory, MemoryFilter, TextHit
from memoryd.storage.base import ListPage
from memoryd.storage.bm25 import TermStatistics
from memoryd.storage.checks import count_access
from memoryd.storage.cosine import cosines, stored_rows
from memoryd.storage.hot.ann import AnnParams, ann_candidates, ann_near
from memoryd.storage.hot.columns import FilterColumns
from memoryd.storage.hot.hashes import ContentHashes
from memoryd.storage.hot.order import best, page
from memoryd.storage.hot.quant import Quantized
from memoryd.storage.hot.rows import grown, object_bytes
from memoryd.storage.hot.sketch import RANK, Sketch
from memoryd.storage.hot.text import TextBase, TextIndex
from memoryd.storage.instants import to_micros

F32 = npt.NDArray[np.float32]
Slots = npt.NDArray[np.intp]

_MIN_CAPACITY = 64
#: Similarities computed per block of an exact multi-query search (64 MB of float32).
_EXACT_BLOCK_CELLS = 16 * 2**20
#: Near-neighbour lookups (``min_similarity``) of at least _SKETCH_MIN_QUERIES vectors
#: (a batch write's deduplication; one vector is a cheap product anyway, and a partition
#: only ever written one memory at a time never pays the sketch's memory) go through
#: the sketch (hot/sketch.py) from this many rows, for cuts this high (a lower cut lets
#: too many pairs through).
_SKETCH_MIN_QUERIES = 16
_SKETCH_MIN_ROWS = 2048
_SKETCH_MIN_SIMILARITY = 0.8
#: Single-query searches over at least this many rows narrow the exact product to the
#: int8 copy's candidates (hot/quant.py). Measured per search, float32 product against
#: the int8 filter, in cache / after other memory traffic: 1,024 rows 28 / 92 us
#: against 29 / 111; 2,048 rows 108 / 154 against 42 / 138; 8,192 rows 453 / 514
#: against 173 / 271.
_QUANT_MIN_ROWS = 2048


class HotPartition:
    """The searchable in-memory copy of one partition."""

    def __init__(self, dimension: int, params: AnnParams) -> None:
        self.dimension = dimension
        self.params = params
        self.memories: list[Memory | None] = []
        self.slot_of: dict[str, int] = {}
        self._free: list[int] = []
        self._capacity = 0
        self.vectors: F32 = np.empty((0, dimension), dtype=np.float32)
        self.columns = FilterColumns()
        self._object_bytes = 0
        #: Content hashes, built on the first find_by_content and kept current after.
        self._hashes: ContentHashes | None = None
        #: The HNSW graph once built; keys are slots.
        self.ann: Index | None = None
        #: Slots written while a graph is being built (replayed onto it afterwards).
        self.ann_dirty: set[int] | None = None
        #: The BM25 index once built, and the slots whose content changed during its
        #: build (replayed onto it afterwards).
        self.text: TextIndex | None = None
        self.text_dirty: set[int] | None = None
        #: The projected rows for near-neighbour lookups, built on the first big one.
        self.sketch: Sketch | None = None
        #: The int8 rows for single-query searches, built on the first big one.
        self.quantized: Quantized | None = None

    def __len__(self) -> int:
        return len(self.slot_of)

    @property
    def high_water(self) -> int:
        """Slots ever used (the length of every column that searches read)."""
        return len(self.memories)

    # -- writes -------------------------------------------------------------------

    def put(self, memory: Memory, vector: npt.ArrayLike) -> None:
        """Insert or replace ``memory`` (already in stored form) with ``vector``."""
        self.put_rows([memory], np.asarray(vector, dtype=np.float32).reshape(1, -1))

    def put_rows(self, memories: Sequence[Memory], vectors: F32) -> None:
        """Insert or replace each memory (in stored form) with its row of ``vectors``;
        the column updates are vectorised (one batch of a write costs ~µs per row)."""
        if not memories:
            return
        last = {m.id: i for i, m in enumerate(memories)}  # a repeated id: the last wins
        if len(last) < len(memories):
            keep = sorted(last.values())
            memories, vectors = [memories[i] for i in keep], vectors[keep]
        slots = np.empty(len(memories), dtype=np.intp)
        # Only a new content changes the postings (archiving, tags, ... do not).
        reworded: list[int] = []
        for i, memory in enumerate(memories):
            slot = self.slot_of.get(memory.id)
            if slot is None:
                slot = self._free.pop() if self._free else self._append_slot()
                self.slot_of[memory.id] = slot
            else:
                self._forget_fields(slot)
            old = self.memories[slot]
            if old is None or old.content != memory.content:
                reworded.append(slot)
            self.memories[slot] = memory
            slots[i] = slot
            self._object_bytes += object_bytes(memory)
        # Stored vectors are unit length already (storage/cosine.py), and text search
        # returns the vectors exactly as stored.
        self.vectors[slots] = stored_rows(vectors)
        self.columns.put(slots, memories)
        if self.sketch is not None:
            self.sketch.put(slots, self.vectors[slots])
        if self.quantized is not None:
            self.quantized.put(slots, self.vectors[slots])
        self._ann_changed(slots)
        self._text_changed(reworded)
        if self._hashes is not None:
            for slot in reworded:
                self._hashes.put(slot, self.memories[slot].content)  # type: ignore[union-attr]

    def remove(self, memory_id: str) -> bool:
        slot = self.slot_of.pop(memory_id, None)
        if slot is None:
            return False
        self._forget_fields(slot)
        self.memories[slot] = None
        self.columns.alive[slot] = False
        self._free.append(slot)
        self._ann_changed(np.array([slot], dtype=np.intp))
        self._text_changed([slot])
        if self._hashes is not None:
            self._hashes.drop(slot)
        return True

    def find_by_content(self, digests: Sequence[str], flt: MemoryFilter) -> list[Memory]:
        """Memories whose content hash is one of ``digests`` under ``flt`` (copies,
        without vectors, in slot order), as ``Store.find_by_content``."""
        if self._hashes is None:
            self._hashes = ContentHashes()
            for slot, memory in enumerate(self.memories):
                if memory is not None:
                    self._hashes.put(slot, memory.content)
        slots = self._hashes.slots(digests)
        if not slots:
            return []
        mask = self.columns.mask(flt, self.high_water)
        return [self.memories[s].copy() for s in sorted(slots) if mask[s]]  # type: ignore[union-attr]

    def touch(self, memory_id: str, update: AccessUpdate) -> None:
        """Apply one access-statistics update exactly as the stores do."""
        slot = self.slot_of.get(memory_id)
        if slot is None:
            return
        memory = self.memories[slot]
        assert memory is not None
        count_access(memory, update)

    def _forget_fields(self, slot: int) -> None:
        old = self.memories[slot]
        if old is None:
            return
        self._object_bytes -= object_bytes(old)
        self.columns.forget(slot, old)

    def _append_slot(self) -> int:
        slot = len(self.memories)
        if slot >= self._capacity:
            self._grow(max(_MIN_CAPACITY, 2 * self._capacity))
        self.memories.append(None)
        return slot

    def _grow(self, capacity: int) -> None:
        self.vectors = grown(self.vectors, capacity)
        self.columns.grow(capacity)
        if self.sketch is not None:
            self.sketch.grow(capacity)
        if self.quantized is not None:
            self.quantized.grow(capacity)
        self._capacity = capacity

    def _ann_changed(self, slots: Slots) -> None:
        if self.ann_dirty is not None:
            self.ann_dirty.update(slots.tolist())
        if self.ann is not None:
            self._ann_sync(self.ann, slots)

    def _ann_sync(self, index: Index, slots: Slots) -> None:
        """Make the graph hold exactly the live vectors of ``slots``."""
        for slot in slots.tolist():
            if slot in index:
                index.remove(slot)
        live = slots[self.columns.alive[slots]]
        if len(live):
            index.add(live.astype(np.uint64), self.vectors[live], threads=1)

    def _text_changed(self, slots: Iterable[int]) -> None:
        if self.text_dirty is not None:
            self.text_dirty.update(slots)
        if self.text is not None:
            for slot in slots:
                memory = self.memories[slot]
                self.text.set(slot, None if memory is None else memory.content)

    # -- the text index's life cycle ---------------------------------------------

    def start_text_build(self) -> list[tuple[int, str]]:
        """The (slot, content) pairs to build from; writes from now on are recorded."""
        self.text_dirty = set()
        return [(slot, m.content) for slot, m in enumerate(self.memories) if m is not None]

    def finish_text_build(self, base: TextBase | None) -> None:
        dirty, self.text_dirty = self.text_dirty or set(), None
        if base is None:
            return
        index = TextIndex(base)
        for slot in sorted(dirty):
            memory = self.memories[slot]
            index.set(slot, None if memory is None else memory.content)
        self.text = index

    # -- the graph's life cycle --------------------------------------------------

    def wants_ann(self) -> bool:
        return self.ann is None and self.ann_dirty is None and len(self) >= self.params.threshold

    def start_ann_build(self) -> tuple[Slots, F32]:
        """The slots and vectors to build from; writes from now on are recorded."""
        self.ann_dirty = set()
        slots = np.flatnonzero(self.columns.alive[: self.high_water])
        return slots, self.vectors[slots]

    def finish_ann_build(self, index: Index | None) -> None:
        dirty, self.ann_dirty = self.ann_dirty or set(), None
        if index is None:
            return
        if dirty:
            self._ann_sync(index, np.fromiter(dirty, dtype=np.intp, count=len(dirty)))
        self.ann = index
        # The graph answers near-neighbour lookups and searches from now on.
        self.sketch = None
        self.quantized = None

    def drop_ann_if_small(self) -> None:
        """Below half the threshold exact search is cheaper than keeping the graph."""
        if self.ann is not None and len(self) < self.params.threshold // 2:
            self.ann = None

    # -- reads --------------------------------------------------------------------

    def nbytes(self) -> int:
        columns = self._capacity * self.dimension * 4 + self.columns.nbytes()
        graph = int(self.ann.memory_usage) if self.ann is not None else 0
        text = self.text.nbytes() if self.text is not None else 0
        hashes = self._hashes.nbytes() if self._hashes is not None else 0
        sketch = self.sketch.nbytes() if self.sketch is not None else 0
        quantized = self.quantized.nbytes() if self.quantized is not None else 0
        return columns + graph + text + hashes + sketch + quantized + self._object_bytes

    def search(self, query: F32, flt: MemoryFilter, limit: int) -> list[tuple[Memory, float]]:
        """The ``limit`` best (memory, cosine similarity) pairs under ``flt``, best first,
        ties by id; ``query`` must be unit length. The memories are copies."""
        return self.search_many(query[None, :], flt, limit)[0]

    def search_many(
        self,
        queries: F32,
        flt: MemoryFilter,
        limit: int,
        *,
        min_similarity: float | None = None,
    ) -> list[list[tuple[Memory, float]]]:
        """``search`` for each row of ``queries`` with one mask (and, for exact search,
        one matrix product per block of queries); with ``min_similarity``, only the
        hits at or above it."""
        n = self.high_water
        if limit <= 0 or n == 0:
            return [[] for _ in queries]
        mask = self.columns.mask(flt, n)
        count = int(np.count_nonzero(mask))
        if count == 0:
            return [[] for _ in queries]
        k = min(limit, count)
        out: list[list[tuple[Memory, float]]] = []
        if self.ann is not None and count >= self.params.threshold:
            if min_similarity is not None:
                found = ann_near(self.ann, self.params, queries, mask, k)
                return [
                    self._ranked(slots, sims, k)
                    for slots, sims in self._above(found, queries, min_similarity)
                ]
            for query in queries:
                slots = ann_candidates(self.ann, self.params, query, mask, count, k)
                if slots is None:
                    out.extend(self._exact(query[None, :], mask, count, k))
                else:
                    out.append(self._ranked(slots, cosines(self.vectors[slots], query), k))
            return out
        if min_similarity is not None and len(queries) >= _SKETCH_MIN_QUERIES:
            sketch = self._sketch_for(count, min_similarity)
            if sketch is not None:
                return self._near(sketch, queries, mask, k, min_similarity)
        block = max(1, _EXACT_BLOCK_CELLS // count)
        for start in range(0, len(queries), block):
            chunk = queries[start : start + block]
            out.extend(self._exact(chunk, mask, count, k, min_similarity))
        return out

    def _exact(
        self,
        queries: F32,
        mask: npt.NDArray[np.bool_],
        count: int,
        k: int,
        min_similarity: float | None = None,
    ) -> list[list[tuple[Memory, float]]]:
        n = len(mask)
        if len(queries) == 1 and count * 4 >= n and n >= _QUANT_MIN_ROWS and self.ann is None:
            # One query (a search, or a Remember's duplicate lookup): the int8 copy rules
            # out most rows. The rest are scored row by row (einsum), not by BLAS, which
            # rounds a row by its place in the block: identical rows could differ by an
            # ulp and their tie would no longer be broken by id.
            slots = self._quantized().candidates(
                queries[0], n, None if count == n else mask, k, at_least=min_similarity
            )
            sims = cosines(self.vectors[slots], queries[0])
            if min_similarity is not None:
                slots, sims = slots[sims >= min_similarity], sims[sims >= min_similarity]
            return [self._ranked(slots, sims, k)]
        if count * 4 < n:
            # A selective filter: gathering the few rows beats a full product.
            slots = np.flatnonzero(mask)
            rows = self.vectors[slots]
        else:
            slots = np.arange(n)
            rows = self.vectors[:n]
        # One query (a search): row by row, the float the in-process store gives too
        # (storage/cosine.py; not a one-row gemm either: OpenBLAS threads a gemm,
        # which measured ~10x slower for one query on a busy 2-core machine). Several
        # (a batch's duplicate lookup, compared with a cut): one row of similarities
        # per query, so each top-k reads contiguous memory.
        sims = cosines(rows, queries[0])[None, :] if len(queries) == 1 else queries @ rows.T
        if len(slots) == n and count < n:
            sims[:, ~mask] = -np.inf
        if min_similarity is None:  # k <= count: a masked row (-inf) never makes the k best
            return [self._ranked(slots, row, k) for row in sims]
        # Near-duplicate lookups: most queries have nothing above the cut, and one max
        # per row finds those that do (a top-k or nonzero over the whole block
        # measured 20-60x slower).
        found: list[list[tuple[Memory, float]]] = [[] for _ in queries]
        for j in np.flatnonzero(sims.max(axis=1) >= min_similarity).tolist():
            cols = np.flatnonzero(sims[j] >= min_similarity)
            found[j] = self._ranked(slots[cols], sims[j, cols], k)
        return found

    def _quantized(self) -> Quantized:
        if self.quantized is None:
            quantized = Quantized(self.dimension, self._capacity)
            live = np.flatnonzero(self.columns.alive[: self.high_water])
            quantized.put(live, self.vectors[live])
            self.quantized = quantized
        return self.quantized

    def _sketch_for(self, count: int, cut: float) -> Sketch | None:
        """The sketch for a near-neighbour lookup over ``count`` rows, (re)fitted
        when the partition has doubled since; None where a full product is as cheap."""
        n = self.high_water
        if (
            cut < _SKETCH_MIN_SIMILARITY
            or count < _SKETCH_MIN_ROWS
            or count * 4 < n  # a selective filter: _exact gathers the few rows instead
            or self.dimension < 4 * RANK
        ):
            return None
        if self.sketch is None or len(self) > 2 * self.sketch.fitted_rows:
            live = np.flatnonzero(self.columns.alive[:n])
            rng = np.random.default_rng(len(live))
            sketch = Sketch.fit(self.vectors[live], self._capacity, rng)
            sketch.put(live, self.vectors[live])
            self.sketch = sketch
        return self.sketch

    def _near(
        self, sketch: Sketch, queries: F32, mask: npt.NDArray[np.bool_], k: int, cut: float
    ) -> list[list[tuple[Memory, float]]]:
        """Each query's hits at or above ``cut``: the sketch's candidates, scored exactly."""
        found: list[list[tuple[Memory, float]]] = [[] for _ in queries]
        for j, slots in sketch.candidates(queries, self.high_water, mask, cut):
            sims = self.vectors[slots] @ queries[j]
            above = sims >= cut
            if above.any():
                found[j] = self._ranked(slots[above], sims[above], k)
        return found

    def _above(
        self, candidates: list[Slots], queries: F32, cut: float
    ) -> Iterable[tuple[Slots, F32]]:
        """Each query's candidates at or above ``cut`` by exact similarity."""
        for slots, query in zip(candidates, queries, strict=True):
            sims = self.vectors[slots] @ query
            above = sims >= cut
            yield slots[above], sims[above]

    def _ranked(self, slots: Slots, sims: F32, k: int) -> list[tuple[Memory, float]]:
        """The ``k`` best of ``slots`` by ``sims`` as (copy, similarity), ties by id."""
        # Copies: callers may set fields without touching the cached objects.
        return [
            (self._memory_at(slot).copy(), sim)
            for slot, sim in best(self.columns.ids, slots, sims, k)
        ]

    # -- reads besides search (the stores' semantics; copies) -------------------------

    def get(self, ids: Sequence[str], *, with_vectors: bool) -> list[Memory]:
        """The memories with these ids that are here, each once, in ``ids`` order."""
        out: list[Memory] = []
        for memory_id in dict.fromkeys(ids):
            slot = self.slot_of.get(memory_id)
            if slot is not None:
                found = self._memory_at(slot).copy()
                if with_vectors:
                    found.vector = self.vectors[slot].copy()
                out.append(found)
        return out

    def count(self, flt: MemoryFilter) -> int:
        return int(np.count_nonzero(self.columns.mask(flt, self.high_water)))

    def list_page(self, flt: MemoryFilter, wanted: ListPage) -> list[Memory]:
        """The memories of ``wanted`` under ``flt``, as ``Store.list``."""
        n = self.high_water
        if n == 0:
            return []
        after = wanted.after
        position = None if after is None else (to_micros(after.created_at), after.id.encode())
        slots = page(
            self.columns.ids[:n],
            self.columns.created[:n],
            self.columns.mask(flt, n),
            descending=wanted.descending,
            after=position,
            limit=wanted.limit,
        )
        return [self._memory_at(slot).copy() for slot in slots.tolist()]

    def _memory_at(self, slot: int) -> Memory:
        memory = self.memories[slot]
        assert memory is not None
        return memory

    def text_statistics(
        self, terms: Sequence[str], flt: MemoryFilter, excluding: AbstractSet[str]
    ) -> TermStatistics:
        """The statistics :meth:`text_search` scores ``terms`` with under ``flt``,
        without the memories ``excluding`` names. The text index must be built."""
        assert self.text is not None
        n = self.high_water
        mask = self.columns.mask(flt, n)
        for memory_id in excluding:
            slot = self.slot_of.get(memory_id)
            if slot is not None and slot < n:
                mask[slot] = False
        return self.text.statistics(terms, mask)

    def text_search(self, terms: Sequence[str], flt: MemoryFilter, limit: int) -> list[TextHit]:
        """The ``limit`` best BM25 hits for the distinct query ``terms`` under ``flt``,
        best first, ties by id, only scores > 0; the memories are copies *with* their
        vectors. The text index must be built."""
        assert self.text is not None
        n = self.high_water
        if limit <= 0 or n == 0 or not terms:
            return []
        slots, scores, informative = self.text.candidates(terms, self.columns.mask(flt, n), limit)
        ranked = best(self.columns.ids, slots, scores, limit)
        telling = dict(zip(slots.tolist(), informative.tolist(), strict=True))
        # One gather for every hit's vector; each copy gets a row of it.
        vectors = self.vectors[[slot for slot, _ in ranked]]
        out: list[TextHit] = []
        for (slot, score), vector in zip(ranked, vectors, strict=True):
            found = self._memory_at(slot).copy()
            found.vector = vector
            out.append(TextHit(found, score, telling[slot]))
        return out
