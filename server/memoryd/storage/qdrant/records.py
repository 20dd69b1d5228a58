"""QdrantRecordStore: the RecordStore protocol over Qdrant, one collection per kind.

Each RecordKind has its own payload-only collection (``<prefix>records_<kind>``),
partitioned like the memories (tenant index with ``is_tenant``, partition filter in
every request, retrieve checked against the payload partition). Listing is by UTF-8
key order: Qdrant orders by one numeric field, so each point carries the first six
key bytes as an integer (``key_order``) and pages break ties by the full key (see
paging.py). The prefix filter is a keyword ``MatchPrefix`` inside the request.

A batch of one kind is one write request; a batch mixing kinds writes one request per
kind, sent at once (Qdrant has no cross-collection transaction).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from typing import Any

from qdrant_client import models

from memoryd.domain.errors import StoreError, Unavailable
from memoryd.domain.models import Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.instants import to_micros
from memoryd.storage.memory_records import check_key, unique_records
from memoryd.storage.qdrant.connected import EngineOwner
from memoryd.storage.qdrant.engine import (
    ClientEngine,
    Engine,
    QdrantOptions,
)
from memoryd.storage.qdrant.filters import Condition, match, scoped, value_range
from memoryd.storage.qdrant.paging import Row, keyset_page
from memoryd.storage.qdrant.schema import (
    KEY_ORDER,
    LINEAGE,
    LINEAGE_LENGTH,
    RECORD_KEY,
    WRITE_ID,
    CollectionSpec,
    in_partition,
    key_order,
    record_collection,
    record_from_payload,
    record_payload,
    record_point_id,
)
from memoryd.storage.qdrant.store import chunks, delete_found, partitions_in, scroll_all
from memoryd.storage.records import FIRST_PAGE, KeyPage

_BATCH = 1000


class QdrantRecordStore(EngineOwner):
    """Keyed JSON documents in Qdrant (a server, local mode, or Qdrant Edge)."""

    label = "record store"

    def __init__(
        self,
        connect: Callable[[], Awaitable[Engine]],
        *,
        prefix: str = "memoryd_",
        where: str = "qdrant",
        name: str = "qdrant",
        shared: bool = False,
    ) -> None:
        super().__init__(connect, name=name, where=where, shared=shared)
        self.specs: dict[RecordKind, CollectionSpec] = {
            kind: record_collection(prefix, kind) for kind in RecordKind
        }

    @classmethod
    def from_options(cls, options: QdrantOptions) -> QdrantRecordStore:
        return cls(
            lambda: ClientEngine.connect(options),
            prefix=options.collection_prefix,
            where=options.where,
            shared=options.shared,
        )

    def _collections(self) -> list[CollectionSpec]:
        return list(self.specs.values())

    def _collection(self, kind: RecordKind) -> str:
        return self.specs[RecordKind(kind)].name

    # -- writes ------------------------------------------------------------------

    async def put_records(self, partition: Partition, records: Sequence[Record]) -> None:
        engine = self._eng()
        # Validate and encode everything first: one bad record stores nothing.
        by_kind: dict[RecordKind, list[models.PointStruct]] = {}
        for r in unique_records(records):
            kind = RecordKind(r.kind)
            point = models.PointStruct(
                id=record_point_id(partition, kind, r.key),
                vector={},
                payload=record_payload(partition, r),
            )
            by_kind.setdefault(kind, []).append(point)

        async def put(kind: RecordKind, points: list[models.PointStruct]) -> None:
            for i in range(0, len(points), _BATCH):
                await engine.upsert(self._collection(kind), points[i : i + _BATCH])

        # The kinds' collections at once: a key write (slot, event, counter) waits for
        # one round trip, not three. No lock: callers order writes of one record.
        async with self._errors("put_records"):
            await _all(put(kind, points) for kind, points in by_kind.items())

    async def put_record_if(
        self, partition: Partition, record: Record, expected: Record | None
    ) -> bool:
        """Qdrant's conditional upsert (insert only, or update only where the stored
        write id is the expected one), then the point read back: Qdrant does not say
        whether it wrote, so the record carries the ids of its latest writes
        (LINEAGE_LENGTH) and the write succeeded iff its id is among them. No lock:
        other processes race here too, and the store decides."""
        engine = self._eng()
        kind = RecordKind(record.kind)
        if not record.write_id:
            raise ValueError("put_record_if needs a record with a fresh write_id")
        [record] = unique_records([record])  # the key and document checks of put_records
        previous = () if expected is None else (expected.lineage or (expected.write_id,))
        kept = [i for i in previous if i][-(LINEAGE_LENGTH - 1) :]
        lineage = (*kept, record.write_id)
        point_id = record_point_id(partition, kind, record.key)
        point = models.PointStruct(
            id=point_id, vector={}, payload=record_payload(partition, record, lineage)
        )
        name = self._collection(kind)
        async with self._errors("put_record_if"):
            await engine.upsert_if(name, [point], _stored_as(partition, expected))
            found = await engine.retrieve(name, [point_id], with_vectors=False)
        writes = found[0].payload.get(LINEAGE) if found and found[0].payload else None
        ids = [str(i) for i in writes] if isinstance(writes, list) else []
        if record.write_id in ids:
            return True
        # The writes since the expected state are all listed while it still is (or while
        # the list is not full): then ours is not among them. Otherwise so many writes
        # followed that ours may have dropped out of the list.
        since_expected = expected is not None and expected.write_id in ids
        if not since_expected and len(ids) >= LINEAGE_LENGTH:
            raise Unavailable(
                f"{kind.value} record {record.key!r}: {LINEAGE_LENGTH} writes raced this one; "
                "it may or may not have been applied (read it before writing again)"
            )
        return False

    async def delete_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[str]:
        engine = self._eng()
        if not keys:
            return []
        async with self._write_lock, self._errors("delete_records"):
            found = {r.key for r in await self._get(engine, partition, kind, keys)}
            return await delete_found(
                engine,
                self._collection(kind),
                partition,
                keys,
                found,
                lambda k: record_point_id(partition, kind, k),
            )

    # -- reads -------------------------------------------------------------------

    async def _get(
        self, engine: Engine, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[Record]:
        kind = RecordKind(kind)
        by_key: dict[str, Record] = {}
        for chunk in chunks(keys):
            for k in chunk:
                check_key(k, "key")
            point_ids = [record_point_id(partition, kind, k) for k in chunk]
            for point in await engine.retrieve(
                self._collection(kind), point_ids, with_vectors=False
            ):
                if in_partition(point.payload, partition):
                    assert point.payload is not None
                    r = record_from_payload(kind, point.payload)
                    by_key[r.key] = r
        return [by_key[k] for k in dict.fromkeys(keys) if k in by_key]

    async def get_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[Record]:
        engine = self._eng()
        async with self._errors("get_records"):
            return await self._get(engine, partition, kind, keys)

    async def list_records(
        self, partition: Partition, kind: RecordKind, page: KeyPage = FIRST_PAGE
    ) -> list[Record]:
        engine = self._eng()
        kind = RecordKind(kind)
        name = self._collection(kind)
        base: list[Condition] = []
        if page.prefix:
            prefixed = models.MatchPrefix(prefix=page.prefix)
            base.append(models.FieldCondition(key=RECORD_KEY, match=prefixed))

        def row(point: models.Record) -> Row:
            if not in_partition(point.payload, partition):  # the filter guarantees it
                raise StoreError("qdrant returned a record outside the requested partition")
            assert point.payload is not None
            return Row(int(point.payload[KEY_ORDER]), str(point.payload[RECORD_KEY]), point)

        async def scan(beyond: int | None, n: int) -> list[Row]:
            extra = [] if beyond is None else [value_range(KEY_ORDER, gt=beyond)]
            ascending = models.OrderBy(key=KEY_ORDER, direction=models.Direction.ASC)
            request = models.ScrollRequest(
                filter=scoped(partition, *base, *extra), limit=n, order_by=ascending
            )
            points, _ = await engine.scroll(name, request)
            return [row(p) for p in points]

        async def group(value: int) -> list[Row]:
            flt = scoped(partition, *base, value_range(KEY_ORDER, gte=value, lte=value))
            return [row(p) for p in await scroll_all(engine, name, flt)]

        after = page.after
        if after is not None:
            check_key(after, "after")
        cursor = None if after is None else (key_order(after), after)
        async with self._errors("list_records"):
            rows = await keyset_page(
                descending=False, after=cursor, limit=page.limit, scan=scan, group=group
            )
            return [record_from_payload(kind, r.record.payload or {}) for r in rows]

    async def list_partitions(self, tenant_id: str | None = None) -> list[Partition]:
        engine = self._eng()
        names = [spec.name for spec in self.specs.values()]
        async with self._errors("list_partitions"):
            return await partitions_in(engine, names, tenant_id)

    async def count_records(self, partition: Partition, kind: RecordKind) -> int:
        engine = self._eng()
        async with self._errors("count_records"):
            return await engine.count(self._collection(kind), scoped(partition))


async def _all(calls: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Run ``calls`` at once; all have finished when the first failure is raised."""
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome


def _stored_as(partition: Partition, expected: Record | None) -> models.Filter | None:
    """The condition that a point still holds ``expected`` (None: the point must be
    absent). A record stored before write ids were kept matches by its fields."""
    if expected is None:
        return None
    if expected.write_id:
        return scoped(partition, match(WRITE_ID, expected.write_id))
    return scoped(
        partition,
        value_range("version", gte=expected.version, lte=expected.version),
        value_range(
            "updated_at", gte=to_micros(expected.updated_at), lte=to_micros(expected.updated_at)
        ),
    )
