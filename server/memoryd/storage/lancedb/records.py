"""LanceDBRecordStore: documents in one LanceDB table ``records`` beside ``memories``.

Every query carries the partition and the kind in its SQL ``where`` clause (quoted by
filters.sql_str); a ``put_records`` batch is one ``merge_insert`` commit keyed on
(tenant_id, agent_id, kind, key), so records written together land together.
Prefix listing is a key range (``key >= prefix AND key < successor``): it needs no
LIKE escaping and can use the BTree index on ``key``.

Reads and deletes by key, and listings under a prefix, let the ``key`` index alone
choose the rows and check the partition and kind on those rows (:func:`_by_key`): LanceDB intersects the row sets of
every indexed predicate, and the tenant's, agent's and kind's are large (``kind =
'key'`` is every key of every partition), so a point read at 100k keys spent ~13 ms
intersecting them against ~0.15 ms for the key's own.

Records are written one small commit at a time (a SetMemory is one), and every
commit adds a fragment that each later query must open: after 300 writes a point
read took ~50 ms, after compaction ~2 ms. So the store compacts itself in a
background task, after ``compact_every`` commits at the soonest. A compaction
rewrites the whole table (every fragment is below LanceDB's 1M-row target), and the
table only grows (each SetMemory adds its history event), so a compaction every 16
commits cost O(every write ever made) per 16 passes of the log's apply, under the
write lock (issue 31). It waits, too, until a quarter of the table's rows (as of the
last compaction) were written since (each written row pays for a bounded number
rewritten), or ``MAX_COMMITS`` commits were made (bounding the fragments a read
opens).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import structlog
from lancedb.index import BTree
from lancedb.query import ColumnOrdering

from memoryd.domain.errors import StoreError
from memoryd.domain.models import Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.base import LANCEDB
from memoryd.storage.failures import backend_errors
from memoryd.storage.instants import from_micros, optional_instant, to_micros
from memoryd.storage.lancedb.filters import sql_str, sql_str_list, where
from memoryd.storage.lancedb.indexing import MAX_COMMITS, REFRESH_FRACTION
from memoryd.storage.lancedb.tables import (
    TableOwner,
    chunks,
    distinct_partitions,
    open_table,
    shred_table,
)
from memoryd.storage.memory_records import (
    decode_doc,
    encode_doc,
    prefix_upper_bound,
    unique_records,
)
from memoryd.storage.records import FIRST_PAGE, KeyPage, put_if_unchanged

log = structlog.get_logger(__name__)

TABLE_NAME = "records"
MERGE_KEY = ["tenant_id", "agent_id", "kind", "key"]
#: Scalar (BTree) indexes: every query filters on partition and kind, most on key.
INDEXED_COLUMNS = ("tenant_id", "agent_id", "kind", "key")

_TS = pa.timestamp("us", tz="UTC")

SCHEMA = pa.schema(
    [
        pa.field("tenant_id", pa.string(), nullable=False),
        pa.field("agent_id", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("key", pa.string(), nullable=False),
        pa.field("doc", pa.string(), nullable=False),
        pa.field("version", pa.int64(), nullable=False),
        pa.field("updated_at", _TS, nullable=False),
        pa.field("expires_at", _TS, nullable=True),
    ]
)
_COLUMNS = ["kind", "key", "doc", "version", "updated_at", "expires_at"]


def _backend(op: str) -> AbstractAsyncContextManager[None]:
    return backend_errors("lancedb records", op)


def _ts_array(values: Sequence[datetime | None]) -> pa.Array:
    return pa.array([None if v is None else to_micros(v) for v in values], pa.int64()).cast(_TS)


def _to_arrow(partition: Partition, records: Sequence[Record]) -> pa.Table:
    n = len(records)
    columns: list[pa.Array] = [
        pa.array([partition.tenant_id] * n, pa.string()),
        pa.array([partition.agent_id] * n, pa.string()),
        pa.array([str(RecordKind(r.kind).value) for r in records], pa.string()),
        pa.array([r.key for r in records], pa.string()),
        pa.array([encode_doc(r.doc) for r in records], pa.string()),
        pa.array([int(r.version) for r in records], pa.int64()),
        _ts_array([r.updated_at for r in records]),
        _ts_array([r.expires_at for r in records]),
    ]
    return pa.Table.from_arrays(columns, schema=SCHEMA)


def _from_arrow(table: pa.Table) -> list[Record]:
    kinds = table.column("kind").to_pylist()
    keys = table.column("key").to_pylist()
    docs = table.column("doc").to_pylist()
    versions = table.column("version").to_pylist()
    updated = table.column("updated_at").cast(pa.int64()).to_pylist()
    expires = table.column("expires_at").cast(pa.int64()).to_pylist()
    return [
        Record(
            kind=RecordKind(kinds[i]),
            key=keys[i],
            doc=decode_doc(docs[i]),
            version=versions[i],
            updated_at=from_micros(updated[i]),
            expires_at=optional_instant(expires[i]),
        )
        for i in range(table.num_rows)
    ]


def _kind_clause(kind: RecordKind) -> str:
    return f"(kind = {sql_str(RecordKind(kind).value)})"


def _by_key(partition: Partition, kind: RecordKind, *key_clauses: str) -> str:
    """``key_clauses`` (on ``key``: answered by its index) AND the partition and kind,
    checked on the rows the key index selects rather than looked up in their own
    indexes: ``column || ''`` is the column's value, which no index answers. Every
    row is still checked, so the result is the same."""
    own = [
        f"((tenant_id || '') = {sql_str(partition.tenant_id)})",
        f"((agent_id || '') = {sql_str(partition.agent_id)})",
        f"((kind || '') = {sql_str(RecordKind(kind).value)})",
    ]
    return " AND ".join([*key_clauses, *own])


class LanceDBRecordStore(TableOwner):
    """Records in the LanceDB table ``records`` under ``path`` (the memories' directory)."""

    name = "lancedb"
    label = "lancedb records"
    capabilities = LANCEDB

    def __init__(
        self,
        path: Path,
        *,
        cleanup_older_than: timedelta = timedelta(minutes=1),
        compact_every: int = 16,
    ) -> None:
        super().__init__(path)
        #: optimize() removes table versions older than this.
        self.cleanup_older_than = cleanup_older_than
        #: Writes (commits) between background compactions at least; 0 disables them.
        self.compact_every = compact_every
        #: The table's rows when it was last compacted (the pace of the next one).
        self.compacted_rows = 0
        self._rows_since_compaction = 0
        #: Serialises put_record_if's compare and write (this process is the only writer).
        self._conditional = asyncio.Lock()
        self._writes_since_compaction = 0
        self._compaction: asyncio.Task[None] | None = None

    # -- lifecycle ---------------------------------------------------------------

    async def open(self) -> None:
        if self._table is not None:
            return

        async def ready(table: Any, existed: bool) -> None:
            if existed:
                self._check_schema(await table.schema())
            await self._ensure_indexes(table)

        async with _backend("open"):
            self._db, self._table = await open_table(self.path, TABLE_NAME, SCHEMA, ready)

    @staticmethod
    async def _ensure_indexes(table: Any) -> None:
        have = {tuple(ix.columns) for ix in await table.list_indices()}
        for column in INDEXED_COLUMNS:
            if (column,) not in have:
                await table.create_index(column, config=BTree())

    def _check_schema(self, schema: pa.Schema) -> None:
        missing = [n for n in SCHEMA.names if n not in schema.names]
        if missing:
            raise StoreError(f"the LanceDB table {TABLE_NAME!r} at {self.path} lacks {missing}")

    async def close(self) -> None:
        compaction, self._compaction = self._compaction, None
        if compaction is not None:
            # Let a running compaction commit (it is short) rather than cut it off.
            await asyncio.gather(compaction, return_exceptions=True)
        await self._close_table()

    # -- writes ------------------------------------------------------------------

    async def put_records(self, partition: Partition, records: Sequence[Record]) -> None:
        await self.put_records_many([(partition, records)])

    async def put_records_many(self, writes: Sequence[tuple[Partition, Sequence[Record]]]) -> None:
        """Several partitions' records in one ``merge_insert`` commit (the merge key
        holds the partition): a pass of the write-ahead log's apply writes every
        agent's keys with one table version."""
        table = self._tbl()
        parts = [_to_arrow(p, unique) for p, batch in writes if (unique := unique_records(batch))]
        if not parts:
            return
        rows = pa.concat_tables(parts)
        async with self._write_lock, _backend("put"):
            await (
                table.merge_insert(MERGE_KEY)
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute(rows)
            )
        self._wrote(rows.num_rows)

    async def delete_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[str]:
        table = self._tbl()
        if not keys:
            return []
        async with self._write_lock, _backend("delete"):
            existing: set[str] = set()
            for chunk in chunks(keys):
                found = await self._select(partition, kind, chunk, ["key"])
                existing.update(found.column("key").to_pylist())
            gone = [k for k in dict.fromkeys(keys) if k in existing]
            for chunk in chunks(gone):
                await table.delete(_by_key(partition, kind, _keys_clause(chunk)))
        if gone:
            self._wrote()
        return gone

    def _wrote(self, rows: int = 0) -> None:
        """Count a commit of ``rows`` rows; start a background compaction when it is
        due (see the module docstring)."""
        self._writes_since_compaction += 1
        self._rows_since_compaction += rows
        commits = self._writes_since_compaction
        if not self.compact_every or commits < self.compact_every:
            return
        paced = self._rows_since_compaction >= self.compacted_rows // REFRESH_FRACTION
        if not paced and commits < MAX_COMMITS:
            return
        if self._compaction is not None and not self._compaction.done():
            return
        self._compaction = asyncio.create_task(self._compact(), name="records-compaction")

    async def _compact(self) -> None:
        try:
            await self.optimize()
        except Exception:
            # Only reads get slower until the next attempt; never fail a request.
            log.warning("records table compaction failed", exc_info=True)

    # -- reads -------------------------------------------------------------------

    async def _select(
        self, partition: Partition, kind: RecordKind, keys: list[str], columns: list[str]
    ) -> pa.Table:
        predicate = _by_key(partition, kind, _keys_clause(keys))
        result: pa.Table = await self._tbl().query().where(predicate).select(columns).to_arrow()
        return result

    async def get_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[Record]:
        self._tbl()
        by_key: dict[str, Record] = {}
        async with _backend("get"):
            for chunk in chunks(keys):
                rows = await self._select(partition, kind, chunk, _COLUMNS)
                by_key.update((r.key, r) for r in _from_arrow(rows))
        return [by_key[k] for k in dict.fromkeys(keys) if k in by_key]

    async def list_records(
        self, partition: Partition, kind: RecordKind, page: KeyPage = FIRST_PAGE
    ) -> list[Record]:
        table = self._tbl()
        prefix, after = page.prefix, page.after
        if page.limit <= 0:
            return []
        clauses = []
        if prefix:
            clauses.append(f"(key >= {sql_str(prefix)})")
            upper = prefix_upper_bound(prefix)
            if upper is not None:
                clauses.append(f"(key < {sql_str(upper)})")
        if after is not None:
            clauses.append(f"(key > {sql_str(after)})")
        # A prefix bounds the key range, so its index chooses the rows; without one
        # the partition's indexes do (a range open to the end of the table would hold
        # every later key of every partition).
        if prefix:
            predicate = _by_key(partition, kind, *clauses)
        else:
            predicate = where(partition, _kind_clause(kind), *clauses)
        async with _backend("list"):
            rows: pa.Table = await (
                table.query()
                .where(predicate)
                .order_by([ColumnOrdering(column_name="key", ascending=True)])
                .limit(page.limit)
                .select(_COLUMNS)
                .to_arrow()
            )
            return _from_arrow(rows)

    async def put_record_if(
        self, partition: Partition, record: Record, expected: Record | None
    ) -> bool:
        return await put_if_unchanged(self, self._conditional, partition, record, expected)

    async def count_records(self, partition: Partition, kind: RecordKind) -> int:
        table = self._tbl()
        async with _backend("count"):
            return int(await table.count_rows(where(partition, _kind_clause(kind))))

    async def list_partitions(self, tenant_id: str | None = None) -> list[Partition]:
        table = self._tbl()
        async with _backend("list_partitions"):
            return await distinct_partitions(table, tenant_id)

    # -- maintenance -------------------------------------------------------------

    async def optimize(self) -> bool:
        """Compact small fragments (one per write), bring the indexes up to date and
        remove versions older than ``cleanup_older_than``."""
        table = self._tbl()
        async with self._write_lock, _backend("optimize"):
            self._writes_since_compaction = self._rows_since_compaction = 0
            await self._ensure_indexes(table)
            await table.optimize(cleanup_older_than=self.cleanup_older_than)
            self.compacted_rows = await table.count_rows()
        return True

    async def shred(self) -> dict[str, int]:
        """Remove every old version of the table and rebuild its indexes, so deleted
        records leave no bytes behind (tables.shred_table); returns the old
        versions removed."""
        table = self._tbl()
        async with self._write_lock, _backend("optimize"):
            removed = await shred_table(table, [(c, BTree()) for c in INDEXED_COLUMNS])
        return {"store.records.old_versions": removed}


def _keys_clause(keys: Sequence[str]) -> str:
    return f"(key IN ({sql_str_list(keys)}))"
