"""The storage contract for non-vector documents (see memoryd.domain.records).

Rules (checked by tests/conformance for every backend):
- Every call takes the partition and applies it inside the query; another
  partition's records behave exactly like missing ones.
- ``put`` upserts by (kind, key) and is idempotent; a batch is one store write.
- ``list`` is ordered by key (byte order of the UTF-8 key), prefix-filtered, and
  pages with ``after`` (exclusive). Expiry is not applied by the store: services
  decide what an expired record means.
- Documents round-trip as JSON (nested objects, lists, null, unicode, numbers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from memoryd.domain.models import Partition
from memoryd.domain.records import Record, RecordKind


@runtime_checkable
class RecordStore(Protocol):
    name: str

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def put_records(self, partition: Partition, records: Sequence[Record]) -> None:
        """Insert or replace by (kind, key), in one write."""

    async def get_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[Record]:
        """The records with these keys; missing keys are omitted; request order kept."""

    async def list_records(
        self,
        partition: Partition,
        kind: RecordKind,
        *,
        prefix: str = "",
        after: str | None = None,
        limit: int = 100,
    ) -> list[Record]:
        """Records whose key starts with ``prefix``, ordered by key, strictly after ``after``."""

    async def delete_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[str]:
        """Delete by key; returns the keys that existed."""

    async def count_records(self, partition: Partition, kind: RecordKind) -> int: ...

    async def list_partitions(self, tenant_id: str | None = None) -> list[Partition]:
        """Every partition holding at least one record (only ``tenant_id``'s when
        given), sorted by (tenant_id, agent_id)."""
