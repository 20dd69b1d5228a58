"""The delegating bases of the store layers: a layer in front of a Store or a
RecordStore (the hot cache, the metrics and tracing wrappers) subclasses one and
overrides only what it changes; everything else reaches ``inner`` unchanged.

Every forwarded call passes through one method, :meth:`DelegatingStore.through`
(its operation's name and the inner store's awaitable), so a layer that does the same
for every call (a latency, a span) overrides that one method instead of each call.
Each protocol method is written out here, typed, rather than reached by
``__getattr__``: a method the protocol gains is forwarded (and timed) on purpose, and
mypy checks every layer against the protocol (tests/unit/observability checks that
nothing is missing). ``open`` and ``close`` and the backend extras (``optimize``,
``disk_bytes``) are forwarded directly: they are not request traffic. The batched
writes are forwarded too, so a layer in front of a backend that has them has them.
"""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Generic, Protocol, TypeVar

from memoryd.domain import models as m
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.base import (
    NEWEST,
    NO_HINTS,
    Capabilities,
    ListPage,
    Nearest,
    PartitionUpsert,
    Store,
    UpsertHints,
    compact,
    disk_bytes,
    shred,
    text_statistics,
    upsert_many,
)
from memoryd.storage.bm25 import TermStatistics
from memoryd.storage.conditional import ConditionalWrite
from memoryd.storage.records import FIRST_PAGE, KeyPage, RecordStore, put_records_many

T = TypeVar("T")
_Batch = Sequence[tuple[m.Partition, Sequence[Record]]]


class _Backend(Protocol):
    """What a Store and a RecordStore have in common."""

    name: str
    capabilities: Capabilities

    async def open(self) -> None: ...

    async def close(self) -> None: ...


S = TypeVar("S", bound=_Backend)


class _Layer(Generic[S]):
    """What both delegating bases share: the inner store's name and capabilities,
    ``open``, ``close``, ``optimize`` and ``shred`` forwarded, and :meth:`through`."""

    def __init__(self, inner: S) -> None:
        self.inner = inner
        self.name = inner.name
        self.capabilities = inner.capabilities

    async def through(
        self, operation: str, call: Awaitable[T], partition: m.Partition | None = None
    ) -> T:
        """Await ``call``, the inner store's ``operation`` (on ``partition``, where it
        is one partition's): what a layer that treats every call alike (timing,
        tracing, a read fence) overrides."""
        return await call

    async def open(self) -> None:
        await self.inner.open()

    async def close(self) -> None:
        await self.inner.close()

    async def optimize(self) -> bool:
        return await compact(self.inner)

    async def shred(self) -> dict[str, int]:
        return await shred(self.inner)


class DelegatingStore(_Layer[Store]):
    """A Store that forwards every call to ``inner`` through :meth:`through`."""

    async def upsert(
        self, partition: m.Partition, memories: Sequence[m.Memory], hints: UpsertHints = NO_HINTS
    ) -> None:
        await self.through("upsert", self.inner.upsert(partition, memories, hints), partition)

    async def upsert_many(self, writes: Sequence[PartitionUpsert]) -> None:
        await self.through("upsert_many", upsert_many(self.inner, writes))

    async def upsert_if(self, write: ConditionalWrite) -> builtins.list[str]:
        return await self.through("upsert_if", self.inner.upsert_if(write), write.partition)

    async def get(
        self, partition: m.Partition, ids: Sequence[str], *, with_vectors: bool = False
    ) -> builtins.list[m.Memory]:
        call = self.inner.get(partition, ids, with_vectors=with_vectors)
        return await self.through("get", call, partition)

    async def delete(self, partition: m.Partition, ids: Sequence[str]) -> builtins.list[str]:
        return await self.through("delete", self.inner.delete(partition, ids), partition)

    async def search(
        self, partition: m.Partition, vector: m.UnitVector, flt: m.MemoryFilter, limit: int
    ) -> builtins.list[m.VectorHit]:
        call = self.inner.search(partition, vector, flt, limit)
        return await self.through("search", call, partition)

    async def search_many(
        self,
        partition: m.Partition,
        vectors: Sequence[m.UnitVector],
        flt: m.MemoryFilter,
        best: Nearest,
    ) -> builtins.list[builtins.list[m.VectorHit]]:
        call = self.inner.search_many(partition, vectors, flt, best)
        return await self.through("search_many", call, partition)

    async def text_search(
        self, partition: m.Partition, query: str, flt: m.MemoryFilter, limit: int
    ) -> builtins.list[m.TextHit]:
        call = self.inner.text_search(partition, query, flt, limit)
        return await self.through("text_search", call, partition)

    async def text_statistics(
        self,
        partition: m.Partition,
        terms: Sequence[str],
        flt: m.MemoryFilter,
        excluding: AbstractSet[str] = frozenset(),
    ) -> TermStatistics | None:
        call = text_statistics(self.inner, partition, terms, flt, excluding)
        return await self.through("text_statistics", call, partition)

    async def find_by_content(
        self, partition: m.Partition, content_hashes: Sequence[str], flt: m.MemoryFilter
    ) -> builtins.list[m.Memory]:
        call = self.inner.find_by_content(partition, content_hashes, flt)
        return await self.through("find_by_content", call, partition)

    async def list(
        self, partition: m.Partition, flt: m.MemoryFilter, page: ListPage = NEWEST
    ) -> builtins.list[m.Memory]:
        return await self.through("list", self.inner.list(partition, flt, page), partition)

    async def count(self, partition: m.Partition, flt: m.MemoryFilter) -> int:
        return await self.through("count", self.inner.count(partition, flt), partition)

    async def record_access(
        self, partition: m.Partition, updates: Mapping[str, m.AccessUpdate]
    ) -> None:
        call = self.inner.record_access(partition, updates)
        await self.through("record_access", call, partition)

    async def list_partitions(self, tenant_id: str | None = None) -> builtins.list[m.Partition]:
        return await self.through("list_partitions", self.inner.list_partitions(tenant_id))

    # -- backend extras ------------------------------------------------------------

    def disk_bytes(self) -> int:
        return disk_bytes(self.inner)


class DelegatingRecordStore(_Layer[RecordStore]):
    """A RecordStore that forwards every call to ``inner`` through :meth:`through`."""

    async def put_records(self, partition: m.Partition, records: Sequence[Record]) -> None:
        await self.through("put_records", self.inner.put_records(partition, records), partition)

    async def put_records_many(self, writes: _Batch) -> None:
        await self.through("put_records_many", put_records_many(self.inner, writes))

    async def put_record_if(
        self, partition: m.Partition, record: Record, expected: Record | None
    ) -> bool:
        call = self.inner.put_record_if(partition, record, expected)
        return await self.through("put_record_if", call, partition)

    async def get_records(
        self, partition: m.Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[Record]:
        call = self.inner.get_records(partition, kind, keys)
        return await self.through("get_records", call, partition)

    async def list_records(
        self, partition: m.Partition, kind: RecordKind, page: KeyPage = FIRST_PAGE
    ) -> list[Record]:
        call = self.inner.list_records(partition, kind, page)
        return await self.through("list_records", call, partition)

    async def delete_records(
        self, partition: m.Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[str]:
        call = self.inner.delete_records(partition, kind, keys)
        return await self.through("delete_records", call, partition)

    async def count_records(self, partition: m.Partition, kind: RecordKind) -> int:
        call = self.inner.count_records(partition, kind)
        return await self.through("count_records", call, partition)

    async def list_partitions(self, tenant_id: str | None = None) -> list[m.Partition]:
        return await self.through("list_partitions", self.inner.list_partitions(tenant_id))
