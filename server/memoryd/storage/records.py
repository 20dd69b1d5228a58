"""The storage contract for non-vector documents (see memoryd.domain.records).

Rules (checked by tests/conformance for every backend):
- Every call takes the partition and applies it inside the query; another
  partition's records behave exactly like missing ones.
- ``put`` upserts by (kind, key) and is idempotent; a batch is one store write.
- ``list`` is ordered by key (byte order of the UTF-8 key), prefix-filtered, and
  pages with ``after`` (exclusive). Expiry is not applied by the store: services
  decide what an expired record means.
- Documents round-trip as JSON (nested objects, lists, null, unicode, numbers).
- ``put_record_if`` is exact: of concurrent conditional writes expecting the same
  state, exactly one succeeds and the caller learns which.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from memoryd.domain.models import Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.base import Capabilities


@dataclass(frozen=True, slots=True)
class KeyPage:
    """One page of ``RecordStore.list_records``: the keys that start with ``prefix``,
    in byte order of the UTF-8 key, strictly after ``after``, at most ``limit``."""

    prefix: str = ""
    after: str | None = None
    limit: int = 100

    def admits(self, key: str) -> bool:
        """Whether ``key`` is listed on this page or a later one (the limit aside).
        Python compares str by code point, which is the byte order of UTF-8."""
        return key.startswith(self.prefix) and (self.after is None or key > self.after)


#: The first 100 keys of a kind.
FIRST_PAGE = KeyPage()


def new_write_id() -> str:
    """A fresh id for one conditional write (Record.write_id)."""
    return uuid.uuid4().hex


def same_write(stored: Record | None, expected: Record | None) -> bool:
    """Whether ``stored`` is the state ``expected`` was read (or written) as: the same
    write id where the backend keeps one, else the same persisted fields."""
    if stored is None or expected is None:
        return stored is None and expected is None
    if stored.write_id:
        return stored.write_id == expected.write_id
    return (
        stored.doc == expected.doc
        and stored.version == expected.version
        and stored.updated_at == expected.updated_at
        and stored.expires_at == expected.expires_at
    )


async def put_if_unchanged(
    store: RecordStore,
    lock: asyncio.Lock,
    partition: Partition,
    record: Record,
    expected: Record | None,
) -> bool:
    """``put_record_if`` for a store only this process writes: compare and write under
    one lock (the backend's own conditional write, where it has one, is not needed)."""
    async with lock:
        found = await store.get_records(partition, record.kind, [record.key])
        if not same_write(found[0] if found else None, expected):
            return False
        await store.put_records(partition, [record])
        return True


@runtime_checkable
class RecordStore(Protocol):
    name: str
    #: What the backend declares about itself (see storage.base.Capabilities).
    capabilities: Capabilities

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def put_records(self, partition: Partition, records: Sequence[Record]) -> None:
        """Insert or replace by (kind, key), in one write."""

    async def get_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[Record]:
        """The records with these keys; missing keys are omitted; request order kept."""

    async def list_records(
        self, partition: Partition, kind: RecordKind, page: KeyPage = FIRST_PAGE
    ) -> list[Record]:
        """The records of ``page``: those whose key starts with ``page.prefix``,
        ordered by key, strictly after ``page.after``, at most ``page.limit``."""

    async def delete_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[str]:
        """Delete by key; returns the keys that existed."""

    async def count_records(self, partition: Partition, kind: RecordKind) -> int: ...

    async def list_partitions(self, tenant_id: str | None = None) -> list[Partition]:
        """Every partition holding at least one record (only ``tenant_id``'s when
        given), sorted by (tenant_id, agent_id)."""

    async def put_record_if(
        self, partition: Partition, record: Record, expected: Record | None
    ) -> bool:
        """Write ``record`` only if its (kind, key) still holds ``expected`` as read from
        this store (the same write), or holds nothing when ``expected`` is None; True
        when it was written. ``record.write_id`` must be fresh (:func:`new_write_id`).
        Exact among every process the backend's capabilities allow to write."""


@runtime_checkable
class BatchPut(Protocol):
    """A record store that writes several partitions' records in one commit (LanceDB);
    every layer in front of one defines it too."""

    async def put_records_many(self, writes: Sequence[tuple[Partition, Sequence[Record]]]) -> None:
        """``put_records`` of each partition's records, in one write."""


async def put_records_many(
    records: RecordStore, writes: Sequence[tuple[Partition, Sequence[Record]]]
) -> None:
    """One multi-partition write where the store has one; one per partition otherwise."""
    if isinstance(records, BatchPut):
        await records.put_records_many(writes)
        return
    for partition, batch in writes:
        await records.put_records(partition, batch)
