"""HotCacheStore: hot partitions held in memory in front of a durable Store.

The wrapped store (LanceDB) stays the source of truth: every write goes to it first
and reaches the cache only after it succeeded; reads other than vector and full-text
search go straight to it. A partition is loaded on its first search by one scan of
the store, then searched in memory (see hot/partition.py) until it is evicted: least
recently used partitions go first when the estimated bytes exceed the budget. Its
BM25 index (hot/text.py) is built on its first text search, in a worker thread
(tokenising costs ~25 µs per memory: 0.3 s at 10k). Text searches of a small
partition wait for the build; those of a larger one are answered by the store until
it is done. Writes during the build are recorded and replayed onto the index before
it is used.

Coherence with writes. A write that finishes while its partition is loading cannot
know whether the load's scan saw it, so it only marks its ids dirty; before the
loaded partition is published, the loader re-reads every dirty id from the store
(repeating until no new ids came in). Publishing happens with no ``await`` after
that last check, so a later write finds the partition loaded and applies itself. A
write that fails drops the partition (the store may hold part of it).

Metrics-ready counters are plain attributes: ``hits``, ``misses``, ``loads``,
``evictions``, ``text_builds`` (and ``bypasses``: searches of a partition larger
than the budget, answered by the store).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

import numpy as np
import structlog

from memoryd.domain.models import (
    AccessUpdate,
    Memory,
    MemoryFilter,
    Partition,
    TextHit,
    UnitVector,
    VectorHit,
)
from memoryd.storage.base import (
    NEWEST,
    NO_HINTS,
    ListPage,
    Nearest,
    PartitionUpsert,
    Store,
    UpsertHints,
    text_statistics,
    upsert_many,
)
from memoryd.storage.bm25 import TermStatistics, query_terms
from memoryd.storage.conditional import ConditionalWrite, Counters, with_counters
from memoryd.storage.delegating import DelegatingStore
from memoryd.storage.hot.ann import AnnParams, build_ann
from memoryd.storage.hot.known import StoredPartitions
from memoryd.storage.hot.load import SCAN_PAGE, put_many, scan
from memoryd.storage.hot.partition import HotPartition
from memoryd.storage.hot.text import build_text_base

log = structlog.get_logger(__name__)

#: Partitions up to this many memories are text-searched in memory from their first
#: text search on (it waits for a build of <= ~50 ms); bigger ones use the store
#: until their build is done.
TEXT_BUILD_WAIT = 2000
#: Batched searches of at least this many vectors run under ``bulk_compute``.
BULK_QUERIES = 32


@dataclass(slots=True)
class _Entry:
    """A partition in the cache: loading (``part`` None) or loaded."""

    load: asyncio.Task[HotPartition | None] | None = None
    part: HotPartition | None = None
    #: Ids written while loading; re-read from the store before publishing.
    dirty: set[str] = field(default_factory=set)
    ann_task: asyncio.Task[None] | None = None
    #: The text index's build; True once the index serves this entry.
    text_task: asyncio.Task[bool] | None = None


class HotCacheStore(DelegatingStore):
    """A Store that answers ``search``, ``search_many`` and ``text_search`` from memory
    (and ``get``, ``list``, ``count`` of a loaded partition), keeps itself coherent
    with every write, and delegates everything else."""

    def __init__(
        self,
        inner: Store,
        *,
        dimension: int,
        budget_bytes: int,
        ann: AnnParams | None = None,
        scan_page: int = SCAN_PAGE,
        text_build_wait: int = TEXT_BUILD_WAIT,
        bulk_compute: Callable[[], AbstractContextManager[object]] | None = None,
    ) -> None:
        if budget_bytes <= 0:
            raise ValueError("budget_bytes must be positive")
        #: A cache of what this process wrote is only complete for one process.
        if not inner.capabilities.single_writer:
            raise ValueError("a hot cache cannot front a store other processes write")
        super().__init__(inner)
        self.dimension = dimension
        self.budget_bytes = budget_bytes
        self.ann = ann or AnnParams()
        self.scan_page = scan_page
        self.text_build_wait = text_build_wait
        #: Entered around batched searches (app.py: more BLAS threads for them).
        self._bulk_compute = bulk_compute or contextlib.nullcontext
        self.hits = 0
        self.misses = 0
        self.loads = 0
        self.evictions = 0
        self.bypasses = 0
        self.text_builds = 0
        self._entries: OrderedDict[Partition, _Entry] = OrderedDict()
        self._stored = StoredPartitions()
        self._listing: asyncio.Task[None] | None = None
        #: Partitions too big for the whole budget: searched in the store.
        self._oversized: set[Partition] = set()
        self._closing = False

    # -- lifecycle -----------------------------------------------------------------

    async def open(self) -> None:
        self._closing = False
        await self.inner.open()
        # A partition the store does not hold is loaded without a scan (hot/known.py).
        self._listing = asyncio.create_task(self._stored.list(self.inner), name="hot-partitions")

    async def close(self) -> None:
        self._closing = True  # graph builds in worker threads stop at their next step
        if self._listing is not None:
            self._listing.cancel()
        entries = list(self._entries.values())
        self._entries.clear()
        self._oversized.clear()
        tasks = [t for e in entries for t in (e.load, e.ann_task, e.text_task) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        await self.inner.close()

    # The backend extras (optimize, disk_bytes) and list_partitions are the base's:
    # they change no memory, so the cache stays valid.

    # -- introspection ---------------------------------------------------------------

    def cached_bytes(self) -> int:
        return sum(e.part.nbytes() for e in self._entries.values() if e.part is not None)

    def cached_partitions(self) -> list[Partition]:
        return [p for p, e in self._entries.items() if e.part is not None]

    def partition_state(self, partition: Partition) -> str:
        """ "absent", "loading", "exact", "indexing" or "ann" (for tests and benches)."""
        entry = self._entries.get(partition)
        if entry is None:
            return "absent"
        if entry.part is None:
            return "loading"
        if entry.part.ann is not None:
            return "ann"
        return "indexing" if entry.ann_task is not None else "exact"

    async def wait_indexed(self, partition: Partition) -> None:
        """Wait for a graph build of ``partition`` under way, if any."""
        entry = self._entries.get(partition)
        if entry is not None and entry.ann_task is not None:
            await asyncio.shield(entry.ann_task)

    async def wait_text_indexed(self, partition: Partition) -> bool:
        """Wait for a text index build of ``partition`` under way, if any; whether
        the cached partition now has its text index."""
        entry = self._entries.get(partition)
        if entry is not None and entry.text_task is not None:
            await asyncio.shield(entry.text_task)
        entry = self._entries.get(partition)
        return entry is not None and entry.part is not None and entry.part.text is not None

    # -- writes: store first, then the cache -----------------------------------------

    async def upsert(
        self, partition: Partition, memories: Sequence[Memory], hints: UpsertHints = NO_HINTS
    ) -> None:
        self._stored.wrote(partition)
        # A loaded partition is complete and every write passes through here, so an
        # id it lacks is one the store lacks too, and one it holds is stored.
        w = self._hinted(PartitionUpsert(partition, memories, hints))
        try:
            await self.inner.upsert(partition, memories, w.hints)
        except BaseException:
            self._write_failed(partition, [m.id for m in memories])
            raise
        self._wrote(partition, memories)

    async def upsert_many(self, writes: Sequence[PartitionUpsert]) -> None:
        """``upsert`` of several partitions in one store call (the log's apply pass)."""
        for w in writes:
            self._stored.wrote(w.partition)
        hinted = [self._hinted(w) for w in writes]
        try:
            await upsert_many(self.inner, hinted)
        except BaseException:
            for w in writes:
                self._write_failed(w.partition, [m.id for m in w.memories])
            raise
        for w in writes:
            self._wrote(w.partition, w.memories)

    def _wrote(self, partition: Partition, memories: Sequence[Memory]) -> None:
        """Take what the store wrote (or mark it for a load under way to re-read)."""
        part = self._loaded_or_mark(partition, [m.id for m in memories])
        if part is not None:
            put_many(part, memories, from_store=False)
            self._after_growth(partition)

    def _hinted(self, write: PartitionUpsert) -> PartitionUpsert:
        """``write`` with what a loaded partition knows: which ids are new (it lacks
        them), which stored (it holds them)."""
        entry = self._entries.get(write.partition)
        if entry is None or entry.part is None:
            return write
        slot_of = entry.part.slot_of
        ids = [m.id for m in write.memories]
        hints = UpsertHints(
            new_ids=write.hints.new_ids | {i for i in ids if i not in slot_of},
            stored_ids=write.hints.stored_ids | {i for i in ids if i in slot_of},
        )
        return PartitionUpsert(write.partition, write.memories, hints)

    async def upsert_if(self, write: ConditionalWrite) -> builtins.list[str]:
        """Decided by the store behind; the cache then takes what it wrote (the
        counters it kept are the cache's own where higher: it holds what was stored)."""
        partition, expected = write.partition, write.expected
        try:
            conflicts = await self.inner.upsert_if(write)
        except BaseException:
            self._write_failed(partition, write.ids)
            raise
        if conflicts:
            return conflicts
        part = self._loaded_or_mark(partition, write.ids)
        if part is not None:
            cached = {m.id: Counters.of(m) for m in part.get(list(expected), with_vectors=False)}
            for memory_id in write.delete:
                part.remove(memory_id)
            put_many(part, with_counters(write.memories, expected, cached), from_store=False)
            self._after_growth(partition)
        return []

    async def delete(self, partition: Partition, ids: Sequence[str]) -> list[str]:
        try:
            gone = await self.inner.delete(partition, ids)
        except BaseException:
            self._write_failed(partition, ids)
            raise
        self._oversized.discard(partition)
        part = self._loaded_or_mark(partition, ids)
        if part is not None:
            for memory_id in ids:
                part.remove(memory_id)
            part.drop_ann_if_small()
        return gone

    async def record_access(
        self, partition: Partition, updates: Mapping[str, AccessUpdate]
    ) -> None:
        try:
            await self.inner.record_access(partition, updates)
        except BaseException:
            self._write_failed(partition, list(updates))
            raise
        part = self._loaded_or_mark(partition, list(updates))
        if part is not None:
            for memory_id, update in updates.items():
                part.touch(memory_id, update)

    def _loaded_or_mark(self, partition: Partition, ids: Sequence[str]) -> HotPartition | None:
        """The loaded partition to apply a successful write to; while it is loading,
        the ids are marked for the loader to re-read instead."""
        entry = self._entries.get(partition)
        if entry is None:
            return None
        if entry.part is None:
            entry.dirty.update(ids)
        return entry.part

    def _write_failed(self, partition: Partition, ids: Sequence[str]) -> None:
        entry = self._entries.get(partition)
        if entry is None:
            return
        if entry.part is None:
            entry.dirty.update(ids)
        else:
            self._drop(partition)

    # -- reads ---------------------------------------------------------------------

    async def search(
        self, partition: Partition, vector: UnitVector, flt: MemoryFilter, limit: int
    ) -> list[VectorHit]:
        if limit <= 0:
            return []
        part = await self._acquire(partition)
        if part is None:
            self.bypasses += 1
            return await self.inner.search(partition, vector, flt, limit)
        return [VectorHit(m, s) for m, s in part.search(vector, flt, limit)]

    async def search_many(
        self, partition: Partition, vectors: Sequence[UnitVector], flt: MemoryFilter, best: Nearest
    ) -> list[list[VectorHit]]:
        if best.limit <= 0 or not vectors:
            return [[] for _ in vectors]
        part = await self._acquire(partition)
        if part is None:
            self.bypasses += 1
            return await self.inner.search_many(partition, vectors, flt, best)
        context = self._bulk_compute() if len(vectors) >= BULK_QUERIES else contextlib.nullcontext()
        with context:
            found = part.search_many(
                np.stack(vectors), flt, best.limit, min_similarity=best.min_similarity
            )
        return [[VectorHit(m, s) for m, s in hits] for hits in found]

    async def text_search(
        self, partition: Partition, query: str, flt: MemoryFilter, limit: int
    ) -> list[TextHit]:
        terms = query_terms(query)
        if limit <= 0 or not terms:
            return []
        part = await self._acquire(partition)
        if part is not None and part.text is None:
            part = await self._text_indexed(partition, part)
        if part is None:
            self.bypasses += 1
            return await self.inner.text_search(partition, query, flt, limit)
        return part.text_search(terms, flt, limit)

    async def text_statistics(
        self,
        partition: Partition,
        terms: Sequence[str],
        flt: MemoryFilter,
        excluding: AbstractSet[str] = frozenset(),
    ) -> TermStatistics | None:
        """From the partition's text index when it is in memory (what a text search
        of it scores with now); the store's otherwise."""
        part = self._loaded(partition)
        if part is None or part.text is None:
            return await text_statistics(self.inner, partition, terms, flt, excluding)
        return part.text_statistics(terms, flt, excluding)

    async def find_by_content(
        self, partition: Partition, content_hashes: Sequence[str], flt: MemoryFilter
    ) -> list[Memory]:
        """From the partition in memory, loaded now if it is not (the dedup of a
        Remember, whose vector search comes next and would load it anyway: a new
        agent's first write then reads the store once, not twice); from the store
        when it is too big to hold."""
        part = await self._acquire(partition)
        if part is None:
            return await self.inner.find_by_content(partition, content_hashes, flt)
        return part.find_by_content(content_hashes, flt)

    # get, list and count of a loaded partition are answered from it (every write
    # passes through here, so it holds what the store holds): a LanceDB query costs
    # milliseconds, and BuildSnapshot makes two lists per call. A partition that is
    # not loaded is not loaded for them.

    async def get(
        self, partition: Partition, ids: Sequence[str], *, with_vectors: bool = False
    ) -> list[Memory]:
        part = self._loaded(partition)
        if part is None:
            return await self.inner.get(partition, ids, with_vectors=with_vectors)
        return part.get(ids, with_vectors=with_vectors)

    async def list(
        self, partition: Partition, flt: MemoryFilter, page: ListPage = NEWEST
    ) -> list[Memory]:
        part = self._loaded(partition)
        if part is None:
            return await self.inner.list(partition, flt, page)
        return part.list_page(flt, page)

    async def count(self, partition: Partition, flt: MemoryFilter) -> int:
        part = self._loaded(partition)
        if part is None:
            return await self.inner.count(partition, flt)
        return part.count(flt)

    def _loaded(self, partition: Partition) -> HotPartition | None:
        entry = self._entries.get(partition)
        if entry is None or entry.part is None:
            return None
        self._entries.move_to_end(partition)
        return entry.part

    # -- loading and eviction ------------------------------------------------------

    async def _acquire(self, partition: Partition) -> HotPartition | None:
        entry = self._entries.get(partition)
        if entry is not None and entry.part is not None:
            self.hits += 1
            self._entries.move_to_end(partition)
            return entry.part
        if partition in self._oversized:
            return None
        self.misses += 1
        if entry is None:
            entry = _Entry()
            self._entries[partition] = entry
            entry.load = asyncio.create_task(
                self._load(partition, entry), name=f"hot-cache-load {partition.agent_id}"
            )
        assert entry.load is not None
        # Shielded: a caller that gives up does not abort a load others wait for.
        return await asyncio.shield(entry.load)

    async def _load(self, partition: Partition, entry: _Entry) -> HotPartition | None:
        started = time.perf_counter()
        try:
            part = HotPartition(self.dimension, self.ann)
            if not self._stored.known_empty(partition):  # else: nothing to ask for
                async for page in scan(self.inner, partition, self.scan_page):
                    put_many(part, page, from_store=True)
            while entry.dirty:
                ids, entry.dirty = sorted(entry.dirty), set()
                fresh = await self.inner.get(partition, ids, with_vectors=True)
                found = {m.id for m in fresh}
                for memory_id in ids:
                    if memory_id not in found:
                        part.remove(memory_id)
                put_many(part, fresh, from_store=True)
        except BaseException:
            if self._entries.get(partition) is entry:
                del self._entries[partition]
            raise
        # No await since the last dirty check: from here on writes apply themselves.
        if self._entries.get(partition) is not entry:
            return part  # dropped by a failed write meanwhile: answer once, keep nothing
        entry.part = part
        entry.load = None
        self.loads += 1
        log.info(
            "hot partition loaded",
            agent=partition.agent_id,
            memories=len(part),
            mb=round(part.nbytes() / 2**20, 1),
            seconds=round(time.perf_counter() - started, 3),
        )
        self._after_growth(partition)
        return entry.part

    def _after_growth(self, partition: Partition) -> None:
        """Evict down to the budget; start a graph build when the partition is big."""
        self._evict(keep=partition)
        entry = self._entries.get(partition)
        if entry is None or entry.part is None:
            return
        if entry.part.wants_ann() and not self._closing:
            entry.ann_task = asyncio.create_task(
                self._build_ann(partition, entry, entry.part),
                name=f"hot-cache-ann {partition.agent_id}",
            )

    def _evict(self, *, keep: Partition) -> None:
        total = self.cached_bytes()
        for partition in list(self._entries):
            if total <= self.budget_bytes:
                return
            entry = self._entries[partition]
            if partition == keep or entry.part is None:
                continue
            total -= entry.part.nbytes()
            self._drop(partition)
            self.evictions += 1
        kept = self._entries.get(keep)
        if total > self.budget_bytes and kept is not None and kept.part is not None:
            log.warning(
                "partition larger than the hot cache budget; searched in the store",
                agent=keep.agent_id,
                mb=round(kept.part.nbytes() / 2**20, 1),
                budget_mb=round(self.budget_bytes / 2**20, 1),
            )
            self._drop(keep)
            self._oversized.add(keep)
            self.evictions += 1

    def _drop(self, partition: Partition) -> None:
        entry = self._entries.pop(partition, None)
        if entry is not None and entry.ann_task is not None:
            entry.ann_task.cancel()

    async def _text_indexed(self, partition: Partition, part: HotPartition) -> HotPartition | None:
        """``part`` once its text index is built; None (the caller asks the store)
        while a big partition's build runs, or when ``part`` stopped being cached."""
        entry = self._entries.get(partition)
        if entry is None or entry.part is not part:
            return None  # a load that was dropped while it ran: answered once
        if entry.text_task is None:
            entry.text_task = asyncio.create_task(
                self._build_text(partition, entry, part),
                name=f"hot-cache-text {partition.agent_id}",
            )
        if len(part) > self.text_build_wait:
            return None
        # Shielded: a caller that gives up does not abort a build others wait for.
        built = await asyncio.shield(entry.text_task)
        return part if built and self._entries.get(partition) is entry else None

    async def _build_text(self, partition: Partition, entry: _Entry, part: HotPartition) -> bool:
        started = time.perf_counter()
        docs = part.start_text_build()

        def keep_going() -> bool:
            return not self._closing and self._entries.get(partition) is entry

        base = None
        try:
            base = await asyncio.to_thread(build_text_base, docs, keep_going)
        except Exception:
            # Nobody may be waiting for this task; the store keeps answering, and the
            # next text search tries again.
            log.exception("hot partition text index build failed", agent=partition.agent_id)
        finally:
            part.finish_text_build(base if keep_going() else None)
            entry.text_task = None
        if part.text is None:
            return False
        self.text_builds += 1
        log.info(
            "hot partition text indexed",
            agent=partition.agent_id,
            memories=len(docs),
            mb=round(part.text.nbytes() / 2**20, 1),
            seconds=round(time.perf_counter() - started, 3),
        )
        self._evict(keep=partition)
        return self._entries.get(partition) is entry

    async def _build_ann(self, partition: Partition, entry: _Entry, part: HotPartition) -> None:
        started = time.perf_counter()
        slots, vectors = part.start_ann_build()

        def keep_going() -> bool:
            return not self._closing and self._entries.get(partition) is entry

        index = None
        try:
            index = await asyncio.to_thread(
                build_ann, self.dimension, self.ann, slots, vectors, keep_going
            )
        finally:
            part.finish_ann_build(index if keep_going() else None)
            entry.ann_task = None
        if index is not None and keep_going():
            log.info(
                "hot partition indexed",
                agent=partition.agent_id,
                memories=len(slots),
                seconds=round(time.perf_counter() - started, 3),
            )
            self._evict(keep=partition)
