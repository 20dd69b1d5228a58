"""What both LanceDB stores (memories: store.py, records: records.py) do alike with
their one table: open or create it, close it, list its partitions, split a long id list into bounded ``IN (...)`` reads, measure
the directory, and shred what deletes leave behind."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import lancedb
import pyarrow as pa

from memoryd.domain.errors import StoreError
from memoryd.domain.models import Partition
from memoryd.storage.failures import backend_errors
from memoryd.storage.lancedb.filters import sql_str

#: Ids (or keys) per ``IN (...)`` predicate; bigger requests are split into several reads.
IDS_PER_QUERY = 1000


async def _table_names(db: Any) -> set[str]:
    names: set[str] = set()
    token: str | None = None
    while True:
        page = await db.list_tables(page_token=token)
        names.update(page.tables)
        token = page.page_token
        if not token:
            return names


async def open_table(
    path: Path, name: str, schema: pa.Schema, ready: Callable[[Any, bool], Awaitable[None]]
) -> tuple[Any, Any]:
    """(database, table): the table ``name`` under ``path``, created with ``schema``
    when missing; ``ready(table, existed)`` checks or upgrades it before it is used
    (the database is closed again when anything fails)."""
    await asyncio.to_thread(path.mkdir, parents=True, exist_ok=True)
    db: Any = await lancedb.connect_async(str(path))
    try:
        existed = name in await _table_names(db)
        if existed:
            table = await db.open_table(name)
        else:
            table = await db.create_table(name, schema=schema)
        await ready(table, existed)
    except BaseException:
        db.close()
        raise
    return db, table


class TableOwner:
    """A store of one LanceDB table under ``path``: its database and table while open
    (``_tbl()``: the table, StoreError when closed) and the lock its writes take."""

    #: The store's name in errors ("lancedb", "lancedb records").
    label = "lancedb"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._db: Any = None
        self._table: Any = None
        self._write_lock = asyncio.Lock()

    def _tbl(self) -> Any:
        if self._table is None:
            raise StoreError(f"{self.label} store is not open")
        return self._table

    async def _close_table(self) -> None:
        table, db = self._table, self._db
        self._table = self._db = None
        async with backend_errors(self.label, "close"):
            if table is not None:
                table.close()
            if db is not None:
                db.close()


async def distinct_partitions(table: Any, tenant_id: str | None) -> list[Partition]:
    """The (tenant_id, agent_id) pairs present in ``table``, sorted (one column scan)."""
    query = table.query().select(["tenant_id", "agent_id"])
    if tenant_id is not None:
        query = query.where(f"(tenant_id = {sql_str(tenant_id)})")
    rows: pa.Table = await query.to_arrow()
    if rows.num_rows == 0:
        return []
    pairs = rows.group_by(["tenant_id", "agent_id"]).aggregate([])
    found = zip(
        pairs.column("tenant_id").to_pylist(), pairs.column("agent_id").to_pylist(), strict=True
    )
    return sorted((Partition(t, a) for t, a in found), key=lambda p: (p.tenant_id, p.agent_id))


def chunks(ids: Sequence[str]) -> list[list[str]]:
    """``ids`` without repeats, in order, in lists of at most IDS_PER_QUERY."""
    unique = list(dict.fromkeys(ids))
    return [unique[i : i + IDS_PER_QUERY] for i in range(0, len(unique), IDS_PER_QUERY)]


def directory_bytes(path: Path) -> int:
    """Bytes of the files under ``path`` (a file removed meanwhile counts 0)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except FileNotFoundError:  # removed by a concurrent cleanup
                continue
    return total


async def shred_table(table: Any, indexes: Sequence[tuple[str, Any]]) -> int:
    """Leave no byte of a deleted row on disk; returns the old versions removed.

    A delete only marks rows: the data files of every earlier version keep them, and
    so do the indexes (full-text postings, B-tree pages) until they are rebuilt. So:
    compact the fragments, rebuild each index (``(column, config)``) from the rows
    that stand, and remove every version but the current one with its files. A read
    in flight on a removed version fails (and is retried by its caller)."""
    first = await table.optimize(cleanup_older_than=timedelta(0))
    for column, config in indexes:
        await table.create_index(column, config=config, replace=True)
    second = await table.optimize(cleanup_older_than=timedelta(0))
    return int(first.prune.old_versions_removed + second.prune.old_versions_removed)
