"""The storage contract every backend implements (LanceDB, Qdrant, in-process).

Rules every backend follows (the conformance suite in tests/conformance checks them):
- Every call takes the partition explicitly and applies it *inside* the query; a
  record of another partition behaves exactly like one that does not exist.
- ``upsert`` is idempotent by id: writing the same record twice leaves one record.
- Records carry unit-length float32 vectors of the store's dimension.
- Filters (MemoryFilter) are applied by the backend, not after the fact.
- Stores never see protobuf types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from memoryd.domain.models import (
    AccessUpdate,
    Memory,
    MemoryFilter,
    MemoryOrder,
    PageCursor,
    Partition,
    Vector,
    VectorHit,
)


@runtime_checkable
class Store(Protocol):
    """Durable home of long-term memories."""

    #: Backend name as chosen in config ("lancedb", "memory", ...).
    name: str

    async def open(self) -> None:
        """Create or open the underlying tables / collections."""

    async def close(self) -> None:
        """Flush and release resources. Idempotent."""

    async def upsert(self, partition: Partition, memories: Sequence[Memory]) -> None:
        """Insert or replace by id. Every memory belongs to ``partition`` and has a vector."""

    async def get(
        self, partition: Partition, ids: Sequence[str], *, with_vectors: bool = False
    ) -> list[Memory]:
        """The memories with these ids in this partition; missing ids are omitted."""

    async def delete(self, partition: Partition, ids: Sequence[str]) -> list[str]:
        """Delete by id; returns the ids that existed (in this partition)."""

    async def search(
        self, partition: Partition, vector: Vector, flt: MemoryFilter, limit: int
    ) -> list[VectorHit]:
        """Nearest neighbours by cosine similarity, best first, filter applied in-query."""

    async def list(
        self,
        partition: Partition,
        flt: MemoryFilter,
        *,
        order: MemoryOrder = MemoryOrder.CREATED_DESC,
        after: PageCursor | None = None,
        limit: int = 50,
    ) -> list[Memory]:
        """A page ordered by (created_at, id) in ``order``, strictly after ``after``."""

    async def count(self, partition: Partition, flt: MemoryFilter) -> int:
        """How many memories match."""

    async def record_access(
        self, partition: Partition, updates: Mapping[str, AccessUpdate]
    ) -> None:
        """Add ``count`` to access_count and set accessed_at, in one batched write.
        Ids that no longer exist are ignored."""
