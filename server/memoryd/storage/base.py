"""The storage contract every backend implements (LanceDB, Qdrant, in-process).

Rules every backend follows (the conformance suite in tests/conformance checks them):
- Every call takes the partition explicitly and applies it *inside* the query; a
  record of another partition behaves exactly like one that does not exist.
- ``upsert`` is idempotent by id: writing the same record twice leaves one record.
- Records carry unit-length float32 vectors of the store's dimension.
- Query vectors arrive as ``UnitVector`` (domain/models.py): checked and scaled to
  unit length once, where the services hand them over; no layer checks or scales
  them again.
- Filters (MemoryFilter) are applied by the backend, not after the fact.
- Stores never see protobuf types.
- ``upsert_if`` is exact: of concurrent conditional writes expecting the same
  version, exactly one lands; a read-modify-write never overwrites a change it did
  not read (storage/conditional.py).
- Full text is tokenised by :func:`memoryd.text.tokenize` on every backend, and
  exact-duplicate lookups use :func:`memoryd.text.content_hash` of the content.
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from memoryd.domain.models import (
    AccessUpdate,
    Memory,
    MemoryFilter,
    MemoryOrder,
    PageCursor,
    Partition,
    TextHit,
    UnitVector,
    VectorHit,
)
from memoryd.storage.bm25 import TermStatistics
from memoryd.storage.conditional import ConditionalWrite


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend declares about itself, so callers never test backend names."""

    #: Other processes (memoryd replicas) write the same data. Then this process's
    #: locks, counters and caches prove nothing: read-modify-writes go through the
    #: store's conditional writes (RecordStore.put_record_if, Store.upsert_if),
    #: nothing is cached, and an acknowledged write is one the store has applied (no
    #: local log).
    shared: bool = False
    #: What it holds outlives the process (a new instance on the same place sees it).
    persistent: bool = True
    #: Searches are worth answering from memory in front of it (an embedded store
    #: that scans files): the default of ``storage.hot_cache.enabled``.
    wants_hot_cache: bool = False
    #: ``put_record_if`` and ``upsert_if`` are decided by the store itself, atomically
    #: among every process that writes it; without it, only this process's lock (or
    #: log) makes them exact.
    conditional_writes: bool = False
    #: Each commit is costly (a new table version): the write-ahead log acknowledges
    #: writes once logged and applies them behind, many per commit (the default of
    #: ``durability.apply_behind``).
    group_commit: bool = False

    @property
    def single_writer(self) -> bool:
        """Only this process writes it: what this process saw and wrote is the whole
        truth, so a local log, locks and caches are exact."""
        return not self.shared


#: The embedded LanceDB database in the data directory.
LANCEDB = Capabilities(wants_hot_cache=True, group_commit=True)
#: In-process only (tests, the ``memory`` backend): gone with the process.
IN_PROCESS = Capabilities(persistent=False)


def qdrant_capabilities(*, shared: bool) -> Capabilities:
    """Qdrant in every mode (server, local, Edge): conditional upserts of its own;
    ``shared`` when other replicas write the same server."""
    return Capabilities(shared=shared, conditional_writes=True)


@runtime_checkable
class Compactable(Protocol):
    """A store with files to compact (LanceDB); every layer in front of one says so
    explicitly by defining ``optimize`` too."""

    async def optimize(self) -> bool:
        """Compact files, bring indexes up to date, drop old versions; False when
        there is nothing of the kind to do (no backend files behind this layer)."""


@runtime_checkable
class Shreddable(Protocol):
    """A store whose deletes leave copies on disk until they are shredded (LanceDB's
    old table versions and index files, the write-ahead log's segments); every layer
    in front of one says so by defining ``shred`` too."""

    async def shred(self) -> dict[str, int]:
        """Remove now every file that may still hold deleted data; returns how many
        went of each kind (e.g. ``log.segments``, ``store.memories.old_versions``)."""


@runtime_checkable
class DiskSized(Protocol):
    """A store that knows the bytes its files take."""

    def disk_bytes(self) -> int:
        """Bytes on disk; 0 when the store keeps no files of its own."""


@runtime_checkable
class ExactTextStatistics(Protocol):
    """A store whose full-text search scores with memoryd's own BM25
    (storage/bm25.py) and can tell the statistics it scores with (the in-process
    store, the hot cache's text index); every layer in front of one defines it too.
    The log's text overlay (durability/text_overlay.py) then scores the writes not yet
    applied exactly as the store will score them, rather than estimating the
    statistics from the store's hits."""

    async def text_statistics(
        self,
        partition: Partition,
        terms: Sequence[str],
        flt: MemoryFilter,
        excluding: AbstractSet[str] = frozenset(),
    ) -> TermStatistics | None:
        """The statistics ``text_search`` would score ``terms`` with under ``flt``
        now, computed without the memories ``excluding`` names; None when this store
        cannot tell them for the partition now (a layer in front of a store that does
        not know them, or a partition whose text index is not in memory)."""


async def text_statistics(
    store: object,
    partition: Partition,
    terms: Sequence[str],
    flt: MemoryFilter,
    excluding: AbstractSet[str] = frozenset(),
) -> TermStatistics | None:
    """``store.text_statistics(...)`` where it has one; None otherwise."""
    if not isinstance(store, ExactTextStatistics):
        return None
    return await store.text_statistics(partition, terms, flt, excluding)


async def compact(store: object) -> bool:
    """``store.optimize()`` where it has one; False otherwise (nothing to compact)."""
    return await store.optimize() if isinstance(store, Compactable) else False


async def shred(store: object) -> dict[str, int]:
    """``store.shred()`` where it has one; nothing otherwise (no files of its own)."""
    return await store.shred() if isinstance(store, Shreddable) else {}


def disk_bytes(store: object) -> int:
    """``store.disk_bytes()`` where it has one; 0 otherwise (no files of its own)."""
    return store.disk_bytes() if isinstance(store, DiskSized) else 0


@dataclass(frozen=True, slots=True)
class UpsertHints:
    """What the caller of ``Store.upsert`` knows of the partition's ids, so a backend
    may skip looking them up. ``new_ids``: ids the partition does not hold (the hot
    cache, which holds the whole partition, says so). A wrong one may store a second
    row with that id, so only a complete view of the partition gives one (never a log
    replay). ``stored_ids``: ids it does hold; a wrong one costs nothing (the row is
    inserted anyway)."""

    new_ids: frozenset[str] = frozenset()
    stored_ids: frozenset[str] = frozenset()

    @property
    def known(self) -> frozenset[str]:
        """The ids a backend need not look up."""
        return self.new_ids | self.stored_ids


#: No hints: every id is looked up.
NO_HINTS = UpsertHints()


@dataclass(frozen=True, slots=True)
class PartitionUpsert:
    """One partition's part of a multi-partition upsert (``Store.upsert``'s arguments)."""

    partition: Partition
    memories: Sequence[Memory]
    hints: UpsertHints = NO_HINTS


@dataclass(frozen=True, slots=True)
class ListPage:
    """One page of ``Store.list``: memories ordered by (created_at, id) in ``order``,
    strictly after ``after``, at most ``limit``. Checked once when built (ValueError),
    so no backend or layer has to: ``limit`` is at least 1, and ``order`` is one of
    creation (the other orders are the service's, service/memories/ordering.py)."""

    order: MemoryOrder = MemoryOrder.CREATED_DESC
    after: PageCursor | None = None
    limit: int = 50

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise ValueError(f"a page holds at least one memory, not {self.limit}")
        if self.order not in (MemoryOrder.CREATED_DESC, MemoryOrder.CREATED_ASC):
            raise ValueError(f"the store lists by creation only, not {self.order.value}")

    @property
    def descending(self) -> bool:
        """Newest first."""
        return self.order is MemoryOrder.CREATED_DESC

    def admits(self, memory: Memory) -> bool:
        """Whether ``memory`` is listed on this page or a later one (the limit aside)."""
        if self.after is None:
            return True
        key, cursor = (memory.created_at, memory.id), (self.after.created_at, self.after.id)
        return key < cursor if self.descending else key > cursor

    def following(self, last: Memory) -> ListPage:
        """The next page, after ``last`` (the last memory of this one)."""
        return dataclasses.replace(self, after=PageCursor(last.created_at, last.id))

    def widened(self, extra: int) -> ListPage:
        """The same page with room for ``extra`` more (a layer that drops some)."""
        return dataclasses.replace(self, limit=self.limit + extra)


#: The 50 newest memories.
NEWEST = ListPage()


@dataclass(frozen=True, slots=True)
class Nearest:
    """Which hits ``Store.search_many`` returns per vector: the ``limit`` best, and
    with ``min_similarity`` only those at or above it (deduplication wants
    near-duplicates only, and most vectors have none)."""

    limit: int
    min_similarity: float | None = None

    def kept(self, hits: builtins.list[VectorHit]) -> builtins.list[VectorHit]:
        """``hits`` (best first) at or above ``min_similarity``; all of them without
        one. A backend's ``limit`` best then cut equal the ``limit`` best above the cut."""
        if self.min_similarity is None:
            return hits
        return [h for h in hits if h.similarity >= self.min_similarity]

    def widened(self, extra: int) -> Nearest:
        """The same cut with room for ``extra`` more hits (a layer that drops some)."""
        return dataclasses.replace(self, limit=self.limit + extra)


@runtime_checkable
class BatchUpsert(Protocol):
    """A store that writes several partitions' upserts in one commit (LanceDB: every
    partition is one table, so a commit per partition would cost as many table
    versions); every layer in front of one defines it too."""

    async def upsert_many(self, writes: Sequence[PartitionUpsert]) -> None:
        """``upsert`` of each write, every partition still applied inside the query."""


async def upsert_many(store: Store, writes: Sequence[PartitionUpsert]) -> None:
    """One multi-partition commit where ``store`` has one; one upsert per partition
    otherwise."""
    if isinstance(store, BatchUpsert):
        await store.upsert_many(writes)
        return
    for w in writes:
        await store.upsert(w.partition, w.memories, w.hints)


@runtime_checkable
class Store(Protocol):
    """Durable home of long-term memories."""

    #: Backend name as chosen in config ("lancedb", "memory", ...).
    name: str
    #: What the backend declares about itself.
    capabilities: Capabilities

    async def open(self) -> None:
        """Create or open the underlying tables / collections."""

    async def close(self) -> None:
        """Flush and release resources. Idempotent."""

    async def upsert(
        self, partition: Partition, memories: Sequence[Memory], hints: UpsertHints = NO_HINTS
    ) -> None:
        """Insert or replace by id. Every memory belongs to ``partition`` and has a
        vector; ``hints`` say which ids need no lookup (UpsertHints)."""

    async def upsert_if(self, write: ConditionalWrite) -> builtins.list[str]:
        """The one conditional write of memories (storage/conditional.py): upsert
        ``write.memories`` and delete the ids ``write.delete``, all or nothing, only if
        every id of ``write.expected`` is still stored in ``write.partition`` at the
        version it maps to (None: not stored at all). Returns the ids found changed (nothing was written; a
        backend that cannot merge counters exactly also reports one whose access
        statistics changed meanwhile), or [] when everything was written. Memories not in ``expected`` are written
        as ``upsert`` writes them (new ids); every id of ``delete`` must be expected. A
        conditioned memory keeps stored access statistics above its own. Exact among
        every process the backend's capabilities allow to write."""

    async def get(
        self, partition: Partition, ids: Sequence[str], *, with_vectors: bool = False
    ) -> list[Memory]:
        """The memories with these ids in this partition; missing ids are omitted."""

    async def delete(self, partition: Partition, ids: Sequence[str]) -> list[str]:
        """Delete by id; returns the ids that existed (in this partition)."""

    async def search(
        self, partition: Partition, vector: UnitVector, flt: MemoryFilter, limit: int
    ) -> list[VectorHit]:
        """Nearest neighbours by cosine similarity, best first, filter applied in-query."""

    async def search_many(
        self, partition: Partition, vectors: Sequence[UnitVector], flt: MemoryFilter, best: Nearest
    ) -> list[list[VectorHit]]:
        """``search`` for each of ``vectors`` (one result list per vector, in order), in
        one pass where the backend can: deduplication looks up a whole batch at once.
        ``best`` says which hits: the ``best.limit`` best, at or above
        ``best.min_similarity`` if it has one."""

    async def text_search(
        self, partition: Partition, query: str, flt: MemoryFilter, limit: int
    ) -> list[TextHit]:
        """Full-text (BM25) matches of ``query``, best first, filter applied in-query;
        records *with* their vectors (hybrid recall reports the cosine of every match,
        and a second read costs more than selecting them). A record matches when it shares at least one term
        (``memoryd.text.tokenize``) with the query; no terms (only stop words or
        punctuation) means no matches. Scores are positive and comparable only within
        one call. Term statistics never come from another partition or from records
        above ``flt.max_security_level`` (they would reveal what those contain)."""

    async def find_by_content(
        self, partition: Partition, content_hashes: Sequence[str], flt: MemoryFilter
    ) -> list[Memory]:
        """Records whose ``memoryd.text.content_hash(content)`` is one of
        ``content_hashes`` (exact-duplicate detection), filter applied, without vectors,
        in no particular order."""

    async def list(
        self, partition: Partition, flt: MemoryFilter, page: ListPage = NEWEST
    ) -> list[Memory]:
        """The memories of ``page`` (ListPage) that match ``flt``."""

    async def count(self, partition: Partition, flt: MemoryFilter) -> int:
        """How many memories match."""

    async def record_access(
        self, partition: Partition, updates: Mapping[str, AccessUpdate]
    ) -> None:
        """Add ``count`` to access_count and set accessed_at, in one batched write.
        Ids that no longer exist are ignored."""

    async def list_partitions(self, tenant_id: str | None = None) -> builtins.list[Partition]:
        """Every partition holding at least one memory (only ``tenant_id``'s when
        given), sorted by (tenant_id, agent_id). For maintenance and tenant-wide
        export; never exposed to a caller as such."""
