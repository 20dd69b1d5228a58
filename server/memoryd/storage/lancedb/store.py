"""LanceDBStore: the embedded default backend (one LanceDB table on local disk).

Every query carries the partition and the MemoryFilter in its SQL ``where`` clause
(see filters.py); writes are serialised by one asyncio lock and each call is a
single LanceDB commit (one ``merge_insert``, or one ``delete``). Full-text search uses
LanceDB's native inverted index on a pre-tokenised column (see fulltext.py); new rows
are folded into the indexes in the background (see indexing.py).
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
from lancedb.index import BTree
from lancedb.query import ColumnOrdering

from memoryd.domain.errors import StoreError
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
    LANCEDB,
    NEWEST,
    NO_HINTS,
    ListPage,
    Nearest,
    PartitionUpsert,
    UpsertHints,
)
from memoryd.storage.checks import check_upsert, count_access, dedupe_last
from memoryd.storage.conditional import ConditionalWrite, Counters, moved, with_counters
from memoryd.storage.failures import backend_errors
from memoryd.storage.lancedb.filters import (
    cursor_clause,
    filter_clauses,
    ids_clause,
    sql_str_list,
    where,
)
from memoryd.storage.lancedb.fulltext import TOKENS_COLUMN, fts_config, query_tokens
from memoryd.storage.lancedb.indexing import REFRESH_FRACTION, IndexRefresher
from memoryd.storage.lancedb.schema import (
    ADDED_COLUMNS,
    DERIVED_COLUMNS,
    HASH_COLUMN,
    INDEXED_COLUMNS,
    MERGE_KEY,
    SCALAR_COLUMNS,
    TABLE_NAME,
    VECTOR_COLUMN,
    from_arrow,
    memory_schema,
    to_arrow,
    vector_dimension,
)
from memoryd.storage.lancedb.tables import (
    TableOwner,
    chunks,
    directory_bytes,
    distinct_partitions,
    open_table,
    shred_table,
)

#: Partitions' id lists OR-ed into one lookup of a multi-partition upsert.
_PARTITIONS_PER_LOOKUP = 32
#: Rows rewritten per commit (and write-lock hold) by an access-statistics flush.
ACCESS_ROWS_PER_COMMIT = 256
#: Conversions of at least this many rows run in a worker thread.
_OFFLOAD_ROWS = 128
#: Rows rewritten per commit when a table from before the derived columns is upgraded.
_BACKFILL_ROWS = 4096
_T = TypeVar("_T")


def _backend(op: str) -> AbstractAsyncContextManager[None]:
    return backend_errors("lancedb", op)


async def _offload(fn: Callable[..., _T], *args: Any, rows: int) -> _T:
    """Run an Arrow <-> Memory conversion; big ones (~15 ms per 1000 rows) in a thread
    so they do not stall the event loop."""
    if rows >= _OFFLOAD_ROWS:
        return await asyncio.to_thread(fn, *args)
    return fn(*args)


async def _nearest(
    table: Any, query: UnitVector | list[UnitVector], predicate: str, limit: int
) -> pa.Table:
    """The ``limit`` nearest rows by cosine under ``predicate``, with ``_distance`` (and,
    for several query vectors, ``query_index``)."""
    rows: pa.Table = await (
        table.query()
        .nearest_to(query)
        .column(VECTOR_COLUMN)
        .distance_type("cosine")
        .where(predicate)
        .limit(limit)
        .select([*SCALAR_COLUMNS, "_distance"])
        .to_arrow()
    )
    return rows


class LanceDBStore(TableOwner):
    """Memories in one LanceDB table ``memories`` under ``path``."""

    name = "lancedb"
    capabilities = LANCEDB

    def __init__(
        self,
        path: Path,
        dimension: int,
        *,
        cleanup_older_than: timedelta = timedelta(minutes=1),
        index_refresh_rows: int = 20_000,
        index_refresh_idle_s: float = 30.0,
    ) -> None:
        if dimension <= 0:
            raise ValueError("dimension must be positive")
        super().__init__(path)
        self.dimension = dimension
        #: optimize() removes table versions older than this (readers in flight
        #: may still use a recent one, so not zero; no query runs for minutes). Every
        #: optimize rewrites the small fragments, so during a bulk load each kept
        #: version is another copy of the table: at 10 minutes a 300k-row (0.6 GB)
        #: ingest left 19 GB on disk.
        self.cleanup_older_than = cleanup_older_than
        self._refresh_rows = index_refresh_rows
        self._indexing = IndexRefresher(
            self.optimize, rows=index_refresh_rows, idle_s=index_refresh_idle_s
        )

    # -- lifecycle ---------------------------------------------------------------

    async def open(self) -> None:
        if self._table is not None:
            return
        unindexed = 0

        async def ready(table: Any, existed: bool) -> None:
            nonlocal unindexed
            if existed:
                self._check_schema(await table.schema())
                await self._add_missing_columns(table)
                await self._backfill_derived(table)
            await self._ensure_indexes(table)
            stats = await table.index_stats(f"{TOKENS_COLUMN}_idx")
            unindexed = 0 if stats is None else stats.num_unindexed_rows

        async with _backend("open"):
            schema = memory_schema(self.dimension)
            self._db, self._table = await open_table(self.path, TABLE_NAME, schema, ready)
        if unindexed:
            self._indexing.wrote(unindexed)

    @staticmethod
    async def _ensure_indexes(table: Any) -> None:
        """Create the scalar indexes that are missing. Rows written after an index was
        built are scanned without it (still correct) until optimize() folds them in."""
        have = {tuple(ix.columns) for ix in await table.list_indices()}
        for column in INDEXED_COLUMNS:
            if (column,) not in have:
                await table.create_index(column, config=BTree())
        if (TOKENS_COLUMN,) not in have:
            await table.create_index(TOKENS_COLUMN, config=fts_config())

    async def _add_missing_columns(self, table: Any) -> None:
        """Upgrade a table written before some columns existed: the derived ones are
        added empty (``_backfill_derived`` fills them), ADDED_COLUMNS all null (no row
        is rewritten); in schema order, so the table's columns line up with new rows."""
        schema = memory_schema(self.dimension)
        names = (await table.schema()).names
        derived = [c for c in DERIVED_COLUMNS if c not in names]
        if derived:
            await table.add_columns({c: "''" for c in derived})
        for name in ADDED_COLUMNS:
            if name not in names:
                await table.add_columns(schema.field(name))

    async def _backfill_derived(self, table: Any) -> None:
        """Rewrite the rows that lack the derived columns (resumable: a crash leaves
        rows with an empty hash, which the next open rewrites)."""
        columns = [*SCALAR_COLUMNS, VECTOR_COLUMN]
        while True:
            rows = await (
                table.query()
                .where(f"{HASH_COLUMN} = ''")
                .select(columns)
                .limit(_BACKFILL_ROWS)
                .to_arrow()
            )
            if rows.num_rows == 0:
                return
            memories = await asyncio.to_thread(from_arrow, rows)
            fresh = await asyncio.to_thread(to_arrow, memories, self.dimension)
            await table.merge_insert(MERGE_KEY).when_matched_update_all().execute(fresh)

    def _check_schema(self, schema: pa.Schema) -> None:
        found = vector_dimension(schema)
        if found != self.dimension:
            raise StoreError(
                f"the LanceDB table at {self.path} holds {found}-dimensional vectors but the "
                f"embedder produces {self.dimension}-dimensional ones; the embedder was "
                "changed without re-embedding (re-embed, or point data_dir elsewhere)"
            )
        missing = [
            n
            for n in memory_schema(self.dimension).names
            if n not in schema.names and n not in DERIVED_COLUMNS and n not in ADDED_COLUMNS
        ]
        if missing:
            raise StoreError(f"the LanceDB table at {self.path} lacks columns {missing}")

    async def close(self) -> None:
        await self._indexing.close()
        await self._close_table()

    # -- writes ------------------------------------------------------------------

    async def upsert(
        self, partition: Partition, memories: Sequence[Memory], hints: UpsertHints = NO_HINTS
    ) -> None:
        table = self._tbl()
        check_upsert(partition, memories, self.dimension)
        if not memories:
            return
        unique = dedupe_last(memories)
        async with self._write_lock, _backend("upsert"):
            # Ids the caller vouches for are not looked up (one filtered scan per call,
            # ~7 ms even for one id: most of a single Remember's store time).
            known = hints.known
            lookup = [m.id for m in unique if m.id not in known]
            stored = await self._stored_ids(table, partition, lookup) if lookup else set()
            await self._replace(table, partition, unique, stored | hints.stored_ids)
        self._indexing.wrote(len(unique))

    async def upsert_many(self, writes: Sequence[PartitionUpsert]) -> None:
        """Several partitions' upserts as one: one id lookup, one delete of the rows
        being replaced (their partitions' predicates OR-ed), one add. Behind the
        write-ahead log a pass applies every agent's writes with this, so a burst
        from many agents costs two table versions, not two per agent."""
        table = self._tbl()
        for w in writes:
            check_upsert(w.partition, w.memories, self.dimension)
        chosen = [(w, dedupe_last(w.memories)) for w in writes if w.memories]
        if not chosen:
            return
        rows = [m for _, unique in chosen for m in unique]
        async with self._write_lock, _backend("upsert"):
            lookups = [
                (w.partition, [m.id for m in unique if m.id not in known])
                for w, unique in chosen
                for known in [w.hints.known]
            ]
            stored = await self._stored_in(table, [(p, ids) for p, ids in lookups if ids])
            replaced = [
                where(w.partition, ids_clause(chunk))
                for w, unique in chosen
                for chunk in chunks(
                    [
                        m.id
                        for m in unique
                        if (w.partition, m.id) in stored or m.id in w.hints.stored_ids
                    ]
                )
            ]
            if replaced:
                await table.delete(" OR ".join(f"({clause})" for clause in replaced))
            await table.add(await _offload(to_arrow, rows, self.dimension, rows=len(rows)))
        self._indexing.wrote(len(rows))

    async def _stored_in(
        self, table: Any, lookups: Sequence[tuple[Partition, Sequence[str]]]
    ) -> set[tuple[Partition, str]]:
        """Which (partition, id) of ``lookups`` are stored, in one read per chunk of
        partitions (callers hold the write lock)."""
        found: set[tuple[Partition, str]] = set()
        clauses = [
            (partition, where(partition, ids_clause(chunk)))
            for partition, ids in lookups
            for chunk in chunks(ids)
        ]
        for start in range(0, len(clauses), _PARTITIONS_PER_LOOKUP):
            part = clauses[start : start + _PARTITIONS_PER_LOOKUP]
            predicate = " OR ".join(f"({clause})" for _, clause in part)
            rows = await self._select(table, predicate, ["tenant_id", "agent_id", "id"])
            for t, a, i in zip(
                rows.column("tenant_id").to_pylist(),
                rows.column("agent_id").to_pylist(),
                rows.column("id").to_pylist(),
                strict=True,
            ):
                found.add((Partition(t, a), i))
        return found

    async def upsert_if(self, write: ConditionalWrite) -> list[str]:
        table = self._tbl()
        partition, expected = write.partition, write.expected
        check_upsert(partition, write.memories, self.dimension)
        unique = dedupe_last(write.memories)
        ids = [*expected, *(m.id for m in unique)]
        async with self._write_lock, _backend("upsert_if"):
            # Checked and written under the write lock: this process is the table's
            # only writer (Capabilities), so nothing lands in between.
            found = await self._counters(table, partition, ids)
            conflicts = moved(expected, {i: version for i, (version, _) in found.items()})
            if conflicts:
                return conflicts
            counters = {i: c for i, (_, c) in found.items()}
            kept = with_counters(unique, expected, counters)
            for chunk in chunks([i for i in write.delete if i in found]):
                await table.delete(where(partition, ids_clause(chunk)))
            await self._replace(table, partition, kept, set(found))
        self._indexing.wrote(len(unique))
        return []

    async def _replace(
        self, table: Any, partition: Partition, memories: Sequence[Memory], stored: set[str]
    ) -> None:
        """Write ``memories`` (unique ids), ``stored`` naming those the table holds.
        Stored rows are replaced by a delete and an add rather than merge_insert,
        whose join against the whole table costs ~3x as much already at 2k rows (~1 s
        per 1,000 rows at 300k). Between the two commits the rows are missing from
        LanceDB: readers go through the log's overlay (durability/facades.py), which
        serves the write until its apply is done, and a crash in between replays it
        (an upsert is idempotent). Callers hold the write lock."""
        if not memories:
            return
        changed = [m.id for m in memories if m.id in stored]
        for chunk in chunks(changed):
            await table.delete(where(partition, ids_clause(chunk)))
        await table.add(await _offload(to_arrow, memories, self.dimension, rows=len(memories)))

    async def delete(self, partition: Partition, ids: Sequence[str]) -> list[str]:
        table = self._tbl()
        if not ids:
            return []
        async with self._write_lock, _backend("delete"):
            existing = await self._stored_ids(table, partition, ids)
            gone = [i for i in dict.fromkeys(ids) if i in existing]
            if gone:
                # One commit: the ids are known to exist, so one predicate suffices.
                await table.delete(where(partition, ids_clause(gone)))
        if gone:
            self._indexing.wrote(0)
        return gone

    async def record_access(
        self, partition: Partition, updates: Mapping[str, AccessUpdate]
    ) -> None:
        table = self._tbl()
        ids = list(dict.fromkeys(updates))
        for start in range(0, len(ids), ACCESS_ROWS_PER_COMMIT):
            # One commit per slice, the write lock released in between: a flush after
            # a burst of recalls rewrote thousands of rows in one hold (9.3 s measured
            # under load), and every write of every agent waited behind it.
            chunk = ids[start : start + ACCESS_ROWS_PER_COMMIT]
            await self._record_access(table, partition, {i: updates[i] for i in chunk})

    async def _record_access(
        self, table: Any, partition: Partition, updates: Mapping[str, AccessUpdate]
    ) -> None:
        columns = [*SCALAR_COLUMNS, VECTOR_COLUMN]
        async with self._write_lock, _backend("record_access"):
            # Read-modify-write of whole rows under the write lock: a column-subset
            # merge_insert exists but measured ~6x slower than rewriting full rows.
            rows = await self._select(table, where(partition, ids_clause(list(updates))), columns)
            current = await _offload(from_arrow, rows, rows=rows.num_rows)
            if not current:
                return
            for m in current:
                count_access(m, updates[m.id])
            # Matched rows only: an id deleted meanwhile is never resurrected.
            await (
                table.merge_insert(MERGE_KEY)
                .when_matched_update_all()
                .execute(await _offload(to_arrow, current, self.dimension, rows=len(current)))
            )
        self._indexing.wrote(len(current))

    async def _counters(
        self, table: Any, partition: Partition, ids: Sequence[str]
    ) -> dict[str, tuple[int, Counters]]:
        """id -> (version, access statistics) of the stored ``ids`` (write lock held)."""
        out: dict[str, tuple[int, Counters]] = {}
        columns = ["id", "version", "access_count", "accessed_at"]
        for chunk in chunks(ids):
            rows = await self._select(table, where(partition, ids_clause(chunk)), columns)
            for row in rows.to_pylist():
                out[row["id"]] = (row["version"], Counters(row["access_count"], row["accessed_at"]))
        return out

    async def _stored_ids(self, table: Any, partition: Partition, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` the partition holds (callers hold the write lock)."""
        stored: set[str] = set()
        for chunk in chunks(ids):
            found = await self._select(table, where(partition, ids_clause(chunk)), ["id"])
            stored.update(found.column("id").to_pylist())
        return stored

    # -- reads -------------------------------------------------------------------

    @staticmethod
    async def _select(table: Any, predicate: str, columns: list[str]) -> pa.Table:
        result: pa.Table = await table.query().where(predicate).select(columns).to_arrow()
        return result

    async def get(
        self, partition: Partition, ids: Sequence[str], *, with_vectors: bool = False
    ) -> list[Memory]:
        table = self._tbl()
        columns = [*SCALAR_COLUMNS, VECTOR_COLUMN] if with_vectors else SCALAR_COLUMNS
        by_id: dict[str, Memory] = {}
        async with _backend("get"):
            for chunk in chunks(ids):
                rows = await self._select(table, where(partition, ids_clause(chunk)), columns)
                found = await _offload(from_arrow, rows, rows=rows.num_rows)
                by_id.update((m.id, m) for m in found)
        return [by_id[i] for i in dict.fromkeys(ids) if i in by_id]

    async def search(
        self, partition: Partition, vector: UnitVector, flt: MemoryFilter, limit: int
    ) -> list[VectorHit]:
        table = self._tbl()
        if limit <= 0:
            return []
        predicate = where(partition, *filter_clauses(flt))
        async with _backend("search"):
            rows = await _nearest(table, vector, predicate, limit)
            memories = from_arrow(rows)
            distances = rows.column("_distance").to_pylist() if memories else []
        hits = [VectorHit(m, 1.0 - float(d)) for m, d in zip(memories, distances, strict=True)]
        hits.sort(key=lambda h: (-h.similarity, h.memory.id))
        return hits

    async def search_many(
        self, partition: Partition, vectors: Sequence[UnitVector], flt: MemoryFilter, best: Nearest
    ) -> list[list[VectorHit]]:
        table = self._tbl()
        queries = list(vectors)
        limit = best.limit
        if limit <= 0 or not queries:
            return [[] for _ in queries]
        if len(queries) == 1:
            return [best.kept(await self.search(partition, queries[0], flt, limit))]
        predicate = where(partition, *filter_clauses(flt))
        async with _backend("search_many"):
            # One multi-vector query: ~10x faster than one query per vector.
            rows = await _nearest(table, queries, predicate, limit)
            memories = await _offload(from_arrow, rows, rows=rows.num_rows)
            distances = rows.column("_distance").to_pylist() if memories else []
            which = rows.column("query_index").to_pylist() if memories else []
        out: list[list[VectorHit]] = [[] for _ in queries]
        for m, d, q in zip(memories, distances, which, strict=True):
            out[q].append(VectorHit(m, 1.0 - float(d)))
        for hits in out:
            hits.sort(key=lambda h: (-h.similarity, h.memory.id))
        return [best.kept(hits) for hits in out]

    async def text_search(
        self, partition: Partition, query: str, flt: MemoryFilter, limit: int
    ) -> list[TextHit]:
        table = self._tbl()
        text = query_tokens(partition, query, flt)
        if limit <= 0 or not text:
            return []
        predicate = where(partition, *filter_clauses(flt))
        async with _backend("text_search"):
            rows: pa.Table = await (
                table.query()
                .nearest_to_text(text, columns=TOKENS_COLUMN)
                .where(predicate)
                .limit(limit)
                .select([*SCALAR_COLUMNS, VECTOR_COLUMN, "_score"])
                .to_arrow()
            )
            memories = await _offload(from_arrow, rows, rows=rows.num_rows)
            scores = rows.column("_score").to_pylist() if memories else []
        hits = [TextHit(m, float(s)) for m, s in zip(memories, scores, strict=True) if s > 0]
        hits.sort(key=lambda h: (-h.score, h.memory.id))
        return hits

    async def find_by_content(
        self, partition: Partition, content_hashes: Sequence[str], flt: MemoryFilter
    ) -> list[Memory]:
        table = self._tbl()
        clauses = filter_clauses(flt)
        found: list[Memory] = []
        async with _backend("find_by_content"):
            for chunk in chunks(content_hashes):
                predicate = where(
                    partition, *clauses, f"({HASH_COLUMN} IN ({sql_str_list(chunk)}))"
                )
                rows = await self._select(table, predicate, SCALAR_COLUMNS)
                found.extend(await _offload(from_arrow, rows, rows=rows.num_rows))
        return found

    async def list(
        self, partition: Partition, flt: MemoryFilter, page: ListPage = NEWEST
    ) -> list[Memory]:
        table = self._tbl()
        clauses = filter_clauses(flt)
        if page.after is not None:
            clauses.append(cursor_clause(page.order, page.after))
        ascending = not page.descending
        async with _backend("list"):
            rows: pa.Table = await (
                table.query()
                .where(where(partition, *clauses))
                .order_by(
                    [
                        ColumnOrdering(column_name="created_at", ascending=ascending),
                        ColumnOrdering(column_name="id", ascending=ascending),
                    ]
                )
                .limit(page.limit)
                .select(SCALAR_COLUMNS)
                .to_arrow()
            )
            return await _offload(from_arrow, rows, rows=rows.num_rows)

    async def count(self, partition: Partition, flt: MemoryFilter) -> int:
        table = self._tbl()
        async with _backend("count"):
            return int(await table.count_rows(where(partition, *filter_clauses(flt))))

    async def list_partitions(self, tenant_id: str | None = None) -> builtins.list[Partition]:
        table = self._tbl()
        async with _backend("list_partitions"):
            return await distinct_partitions(table, tenant_id)

    # -- maintenance (used by Lifecycle) -----------------------------------------

    async def optimize(self) -> bool:
        """Compact small fragments, bring the scalar indexes up to date and remove
        versions older than ``cleanup_older_than``."""
        table = self._tbl()
        async with self._write_lock, _backend("optimize"):
            await self._ensure_indexes(table)
            await table.optimize(cleanup_older_than=self.cleanup_older_than)
            rows = await table.count_rows()
        # A run costs more the bigger the table (and writes wait for it): refresh after
        # a tenth of the table is new, so its cost per written row stays flat.
        self._indexing.rows = max(self._refresh_rows, rows // REFRESH_FRACTION)
        return True

    async def shred(self) -> dict[str, int]:
        """Remove every old version of the table and rebuild its indexes, so deleted
        memories leave no bytes behind (tables.shred_table); returns the versions
        removed."""
        table = self._tbl()
        indexes = [(c, BTree()) for c in INDEXED_COLUMNS] + [(TOKENS_COLUMN, fts_config())]
        async with self._write_lock, _backend("optimize"):
            removed = await shred_table(table, indexes)
        return {"store.memories.old_versions": removed}

    def disk_bytes(self) -> int:
        """Bytes used by the database directory."""
        return directory_bytes(self.path)
