"""The Store and RecordStore faces of ``Durability``: writes through the log, reads
from the store with pending (logged, not yet applied) writes laid over them. In front
of a store other replicas share the core is a ``WriteThrough`` (no log, nothing
pending): the same faces, writes applied before they are answered.

Without pending entries reads pass straight through. When the store fails a read:

- searches (vector, full text) and duplicate lookups are answered from what the log
  holds, and the call is told it was served degraded (Recall, Remember say so);
- a read by id or key is answered when the log holds every id or key asked for;
- anything else (the rest of a get, list, count, keys, records) raises
  ``StoreError``: UNAVAILABLE, never "not found" or an empty list, which a caller
  would take for the truth (an agent would overwrite the memory it thinks it lacks).
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TypeVar

import numpy as np

from memoryd.domain.errors import StoreError
from memoryd.domain.keyed import level_of
from memoryd.domain.models import (
    AccessUpdate,
    Memory,
    MemoryFilter,
    Partition,
    TextHit,
    UnitVector,
    VectorHit,
)
from memoryd.domain.records import Record, RecordKind
from memoryd.durability.durable_store import Durability
from memoryd.durability.ops import Op
from memoryd.durability.text_overlay import fitted_hits, overlaid_hits
from memoryd.durability.transaction import in_transaction
from memoryd.durability.watches import FlushGate, Watches
from memoryd.durability.write_through import WriteThrough
from memoryd.storage.base import (
    NEWEST,
    NO_HINTS,
    ListPage,
    Nearest,
    Store,
    UpsertHints,
    compact,
    disk_bytes,
    shred,
    text_statistics,
)
from memoryd.storage.bm25 import query_terms
from memoryd.storage.checks import admitted, copied_out, matches
from memoryd.storage.conditional import ConditionalWrite, Counters, moved, with_counters
from memoryd.storage.cosine import cosines, stored_rows
from memoryd.storage.memory_records import copied_record, stored_record, unique_records
from memoryd.storage.records import FIRST_PAGE, KeyPage, RecordStore, put_if_unchanged
from memoryd.text.normalize import content_hash

T = TypeVar("T")


def _memory_overlay(ops: Sequence[Op], partition: Partition) -> dict[str, Memory | None]:
    """id -> latest pending state in ``partition`` (None: deleted)."""
    state: dict[str, Memory | None] = {}
    for op in ops:
        if op.partition != partition:
            continue
        if op.kind == "upsert":
            for m in op.memories:
                state[m.id] = m
        elif op.kind == "delete":
            for i in op.ids:
                state[i] = None
    return state


def _record_overlay(
    ops: Sequence[Op], partition: Partition, kind: RecordKind
) -> dict[str, Record | None]:
    state: dict[str, Record | None] = {}
    for op in ops:
        if op.partition != partition:
            continue
        if op.kind == "put_records":
            for r in op.records:
                if r.kind == kind:
                    state[r.key] = r
        elif op.kind == "delete_records" and op.record_kind == kind:
            for k in op.keys:
                state[k] = None
    return state


class _Face:
    """What both faces share: they stop serving on close (the stores and the log are
    closed by their owner, the composition's stack), and the reads no overlay can
    answer."""

    def __init__(self, core: Durability | WriteThrough, inner: Store | RecordStore) -> None:
        self.core = core
        self.name = inner.name
        self.capabilities = inner.capabilities
        self._closed = False

    async def open(self) -> None:
        return None  # the inner stores are opened before the log is replayed

    async def close(self) -> None:
        self._closed = True

    def _serving(self) -> None:
        if self._closed:
            raise StoreError(f"the {self.name} store is closed")

    async def _applied_read(
        self, partition: Partition | None, read: Callable[[], Awaitable[T]]
    ) -> T:
        """``read()`` of the store once the logged writes to ``partition`` (every
        partition's without one) are applied; UNAVAILABLE when the store fails it."""
        self._serving()
        await self.core.caught_up(partition)
        return await self._read(read())

    async def _read(self, read: Awaitable[T]) -> T:
        """The store's answer to ``read``, or UNAVAILABLE when it fails."""
        try:
            return await read
        except Exception as exc:
            raise self.core.read_error(exc) from exc


class DurableStore(_Face):
    """The Store every service uses when the write-ahead log is on.

    Writes are checked and copied here, as a store checks and keeps them, before
    they are logged: a bad one is refused at the call (not set aside when applied),
    and what is read back while it waits in the log is what the store would return.
    Query vectors come checked and at unit length (``UnitVector``): the pending
    memories are scored against them as they are."""

    def __init__(self, core: Durability | WriteThrough, *, dimension: int) -> None:
        super().__init__(core, core.store)
        self.inner: Store = core.store
        self.dimension = dimension
        #: The conditional writes checking memories right now, and their order with
        #: access-statistics flushes (durability/watches.py).
        self._watches = Watches()
        self._gates = FlushGate()

    def _overlay(self, partition: Partition) -> dict[str, Memory | None]:
        self._serving()
        ops = self.core.pending_ops(partition)
        return _memory_overlay(ops, partition) if ops else {}

    # -- writes ----------------------------------------------------------------

    async def upsert(
        self, partition: Partition, memories: Sequence[Memory], hints: UpsertHints = NO_HINTS
    ) -> None:
        self._serving()
        stored = admitted(partition, memories, self.dimension)
        self._watches.wrote(partition, [m.id for m in stored])
        # No hint goes into the log: a replay must look every id up.
        await self.core.write(Op("upsert", partition, memories=tuple(stored)))

    async def upsert_if(self, write: ConditionalWrite) -> builtins.list[str]:
        """A shared store decides itself (WriteThrough). In front of a store only this
        process writes the log decides: the versions read through the overlay are
        compared, and the change is logged as one entry (all or nothing) with no
        await in between; a write logged while the versions were read is caught by
        the watches (durability/watches.py). Not part of a ``transaction()``: the
        entry is its own."""
        self._serving()
        partition, expected, delete = write.partition, write.expected, write.delete
        stored = admitted(partition, write.memories, self.dimension)
        if isinstance(self.core, WriteThrough):
            return await self.core.upsert_if(write.with_memories(stored))
        async with self._gates.write(partition):
            with self._watches.watch(partition, list(expected)) as watch:
                await self.core.settled(partition)
                found = await self.get(partition, list(expected)) if expected else []
            conflicts = moved(expected, {m.id: m.version for m in found})
            if conflicts or watch.touched:
                return conflicts or [i for i in expected if i in watch.touched]
            kept = with_counters(stored, expected, {m.id: Counters.of(m) for m in found})
            ops = [Op("upsert", partition, memories=tuple(kept))] if kept else []
            if delete:
                ops.append(_deletion(partition, delete, found))
            self._watches.wrote(partition, [*(m.id for m in kept), *delete])
            if ops:
                await self.core.commit(ops)  # logged before its first await
        return []

    async def delete(self, partition: Partition, ids: Sequence[str]) -> list[str]:
        self._serving()
        # In a transaction deletes return no ids (transaction()): no read, so a keyed
        # tombstone needs no store to delete its mirror memory.
        found = [] if in_transaction() else await self.get(partition, ids)
        self._watches.wrote(partition, ids)
        await self.core.write(_deletion(partition, ids, found))
        return [m.id for m in found]

    async def record_access(
        self, partition: Partition, updates: Mapping[str, AccessUpdate]
    ) -> None:
        # Best effort by contract: not logged, dropped while the store is down. The
        # store updates the rows it holds only: a recalled memory still waiting in
        # the log is applied first (a background flush, nobody waits for it).
        self._serving()
        try:
            # After the conditional writes in flight, before new ones: none of them
            # puts back a count older than this flush (durability/watches.py).
            async with self._gates.flush(partition):
                await self.core.caught_up(partition)
                await self.inner.record_access(partition, updates)
        except Exception as exc:
            self.core.note_read_failure(exc)

    # -- reads -----------------------------------------------------------------

    async def get(
        self, partition: Partition, ids: Sequence[str], *, with_vectors: bool = False
    ) -> list[Memory]:
        self.core.report_if_degraded()
        overlay = self._overlay(partition)
        wanted = [i for i in ids if i not in overlay]
        found: list[Memory] = []
        if wanted:
            found = await self._read(self.inner.get(partition, wanted, with_vectors=with_vectors))
        by_id = {m.id: m for m in found}
        for i in ids:
            pending = overlay.get(i)
            if pending is not None:
                by_id[i] = copied_out(pending, with_vectors)
        return [by_id[i] for i in dict.fromkeys(ids) if i in by_id]

    async def list(
        self, partition: Partition, flt: MemoryFilter, page: ListPage = NEWEST
    ) -> builtins.list[Memory]:
        self.core.report_if_degraded()
        overlay = self._overlay(partition)
        rows = await self._read(self.inner.list(partition, flt, page.widened(len(overlay))))
        limit = page.limit
        if not overlay:
            return rows[:limit]
        merged = {m.id: m for m in rows if m.id not in overlay}
        for i, m in overlay.items():
            if m is not None and matches(m, flt) and page.admits(m):
                merged[i] = m
        out = sorted(merged.values(), key=lambda m: (m.created_at, m.id), reverse=page.descending)
        # Only the pending memories on the page are copied.
        return [copied_out(m, False) if m.id in overlay else m for m in out[:limit]]

    async def search(
        self, partition: Partition, vector: UnitVector, flt: MemoryFilter, limit: int
    ) -> builtins.list[VectorHit]:
        return (await self.search_many(partition, [vector], flt, Nearest(limit)))[0]

    async def search_many(
        self, partition: Partition, vectors: Sequence[UnitVector], flt: MemoryFilter, best: Nearest
    ) -> builtins.list[builtins.list[VectorHit]]:
        self.core.report_if_degraded()
        overlay = self._overlay(partition)
        if not vectors:
            return []
        limit, min_similarity = best.limit, best.min_similarity
        try:
            wanted = best.widened(len(overlay))
            if len(vectors) == 1 and min_similarity is None:
                found = [await self.inner.search(partition, vectors[0], flt, wanted.limit)]
            else:
                found = await self.inner.search_many(partition, vectors, flt, wanted)
        except Exception as exc:
            self.core.note_read_failure(exc)
            found = [[] for _ in vectors]
        if not overlay:
            return [hits[:limit] for hits in found]
        extra = [
            m
            for m in overlay.values()
            if m is not None and m.vector is not None and matches(m, flt)
        ]
        # The pending rows as the store will hold them. One query (a search) is scored
        # row by row, the floats the store gives once they are applied
        # (storage/cosine.py); a batch (new memories looking for near-duplicates among
        # the ones still being applied) in one product, compared with a cut.
        sims = np.zeros((len(vectors), 0), dtype=np.float32)
        if extra:
            pending = stored_rows(np.stack([m.vector for m in extra if m.vector is not None]))
            if len(vectors) == 1:
                sims = cosines(pending, vectors[0])[None, :]
            else:
                sims = np.matmul(np.stack(vectors), pending.T)
        out = []
        for row, hits in zip(sims, found, strict=True):
            kept = [h for h in hits if h.memory.id not in overlay]
            # Only the pending memories that can make the cut become hits (a batch's
            # duplicate check would otherwise build batch x pending of them).
            near = (
                np.arange(len(extra))
                if min_similarity is None
                else np.flatnonzero(row >= min_similarity)
            )
            if len(near) > limit:  # the best ``limit`` and any tied with the last
                kth = np.partition(row[near], len(near) - max(limit, 1))[len(near) - max(limit, 1)]
                near = near[row[near] >= kth]
            kept.extend(
                VectorHit(copied_out(extra[i], False), float(row[i])) for i in near.tolist()
            )
            kept = best.kept(kept)
            kept.sort(key=lambda h: (-h.similarity, h.memory.id))
            out.append(kept[:limit])
        return out

    async def text_search(
        self, partition: Partition, query: str, flt: MemoryFilter, limit: int
    ) -> builtins.list[TextHit]:
        """The store's hits with the log's pending writes laid over them: a memory
        rewritten or deleted since is re-scored or dropped, a new one scored with the
        statistics the store will have once they are applied (text_overlay.py). No
        waiting for the apply."""
        self.core.report_if_degraded()
        overlay = self._overlay(partition)
        try:
            hits = await self.inner.text_search(partition, query, flt, limit + len(overlay))
        except Exception as exc:
            self.core.note_read_failure(exc)
            hits = []
        if not overlay:
            return hits[:limit]
        terms = query_terms(query)
        pending = [m for m in overlay.values() if m is not None and matches(m, flt)]
        rewritten = frozenset(overlay)
        found = await self._overlaid(partition, terms, flt, hits, rewritten, pending)
        found.sort(key=lambda h: (-h.score, h.memory.id))
        # Only the pending memories returned are copied (with their vectors, as a
        # store's text hits are); the store's hits are copies already.
        return [
            dataclasses.replace(h, memory=copied_out(h.memory, True))
            if h.memory.id in overlay
            else h
            for h in found[:limit]
        ]

    async def _overlaid(
        self,
        partition: Partition,
        terms: Sequence[str],
        flt: MemoryFilter,
        hits: Sequence[TextHit],
        rewritten: frozenset[str],
        pending: Sequence[Memory],
    ) -> builtins.list[TextHit]:
        """text_overlay's hits: exact with the store's statistics where it tells
        them, estimated from its hits otherwise."""
        try:
            exact = await text_statistics(self.inner, partition, terms, flt, rewritten)
        except Exception:  # the estimate serves
            exact = None
        if exact is not None:
            return overlaid_hits(terms, hits, rewritten, pending, exact)
        try:
            stored = await self.inner.count(partition, flt)
        except Exception:  # only a weight's estimate depends on it
            stored = len(hits)
        return fitted_hits(terms, hits, rewritten, pending, stored)

    async def find_by_content(
        self, partition: Partition, content_hashes: Sequence[str], flt: MemoryFilter
    ) -> builtins.list[Memory]:
        overlay = self._overlay(partition)
        found: list[Memory] = []
        try:
            found = await self.inner.find_by_content(partition, content_hashes, flt)
        except Exception as exc:
            self.core.note_read_failure(exc)
        if not overlay:
            return found
        wanted = set(content_hashes)
        kept = [m for m in found if m.id not in overlay]
        kept.extend(
            copied_out(m, False)
            for m in overlay.values()
            if m is not None and matches(m, flt) and content_hash(m.content) in wanted
        )
        return kept

    async def count(self, partition: Partition, flt: MemoryFilter) -> int:
        self.core.report_if_degraded()
        return await self._applied_read(partition, lambda: self.inner.count(partition, flt))

    async def list_partitions(self, tenant_id: str | None = None) -> builtins.list[Partition]:
        return await self._applied_read(None, lambda: self.inner.list_partitions(tenant_id))

    # -- backend extras (not logged: they change no memory) -----------------------

    async def optimize(self) -> bool:
        return await compact(self.inner)

    async def shred(self) -> dict[str, int]:
        """The log first: its drop waits until every write is applied, so the
        store's files are shredded with the deletes in them."""
        dropped = await self.core.shred_log()
        return {"log.segments": dropped, **await shred(self.inner)}

    def disk_bytes(self) -> int:
        return disk_bytes(self.inner)


def _deletion(partition: Partition, ids: Sequence[str], found: Sequence[Memory]) -> Op:
    """The log's delete of ``ids``, with the level of each one ``found`` (as stored)."""
    levels = {m.id: m.security_level for m in found}
    return Op(
        "delete",
        partition,
        ids=tuple(ids),
        levels=tuple(levels.get(i) for i in ids) if levels else (),
    )


class DurableRecordStore(_Face):
    """The RecordStore every service uses when the write-ahead log is on."""

    def __init__(self, core: Durability | WriteThrough) -> None:
        super().__init__(core, core.records)
        self.inner: RecordStore = core.records
        self._conditional = asyncio.Lock()

    def _overlay(self, partition: Partition, kind: RecordKind) -> dict[str, Record | None]:
        self._serving()
        ops = self.core.pending_ops(partition)
        return _record_overlay(ops, partition, kind) if ops else {}

    async def put_records(self, partition: Partition, records: Sequence[Record]) -> None:
        """Checked and copied as a store keeps them (one bad record: nothing logged)."""
        self._serving()
        stored = tuple(stored_record(r) for r in unique_records(records))
        await self.core.write(Op("put_records", partition, records=stored))

    async def delete_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[str]:
        self._serving()
        found = await self.get_records(partition, kind, keys)
        levels = {r.key: level_of(r) for r in found} if kind is RecordKind.KEY else {}
        keys = tuple(keys)
        op = Op(
            "delete_records",
            partition,
            record_kind=kind,
            keys=keys,
            levels=tuple(levels.get(k) for k in keys) if levels else (),
        )
        await self.core.write(op)
        return [r.key for r in found]

    async def get_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[Record]:
        overlay = self._overlay(partition, kind)
        keys = list(dict.fromkeys(keys))
        wanted = [k for k in keys if k not in overlay]
        found: list[Record] = []
        if wanted:
            found = await self._read(self.inner.get_records(partition, kind, wanted))
        by_key = {r.key: r for r in found}
        for k, r in overlay.items():
            if r is not None:
                by_key[k] = copied_record(r)
        return [by_key[k] for k in keys if k in by_key]

    async def list_records(
        self, partition: Partition, kind: RecordKind, page: KeyPage = FIRST_PAGE
    ) -> list[Record]:
        overlay = self._overlay(partition, kind)
        # Enough rows that the page is full even if every overlaid key is among them.
        wider = dataclasses.replace(page, limit=page.limit + len(overlay))
        rows = await self._read(self.inner.list_records(partition, kind, wider))
        if not overlay:
            return rows[: page.limit]
        merged = {r.key: r for r in rows if r.key not in overlay}
        for k, r in overlay.items():
            if r is not None and page.admits(k):
                merged[k] = copied_record(r)
        return sorted(merged.values(), key=lambda r: r.key.encode())[: page.limit]

    async def put_record_if(
        self, partition: Partition, record: Record, expected: Record | None
    ) -> bool:
        self._serving()
        if isinstance(self.core, WriteThrough):
            # A shared store: its own conditional write decides, among every replica.
            [stored] = (stored_record(r) for r in unique_records([record]))
            return await self.core.put_record_if(partition, stored, expected)
        # Compared with what the log overlays and written through the log: the log is
        # only in front of a store this process alone writes, so the lock is the whole
        # condition.
        return await put_if_unchanged(self, self._conditional, partition, record, expected)

    async def count_records(self, partition: Partition, kind: RecordKind) -> int:
        # A count cannot be overlaid.
        return await self._applied_read(
            partition, lambda: self.inner.count_records(partition, kind)
        )

    async def list_partitions(self, tenant_id: str | None = None) -> list[Partition]:
        return await self._applied_read(None, lambda: self.inner.list_partitions(tenant_id))

    async def optimize(self) -> bool:
        return await compact(self.inner)

    async def shred(self) -> dict[str, int]:
        return await shred(self.inner)
