"""Start-up check of the LanceDB tables before the log is replayed.

LanceDB does not fsync its files, so after a machine crash (not merely a killed
process) the newest table version may reference data that never reached the disk.
Every table is opened and fully read at its latest version; a table that fails is
rolled back to the newest version that reads cleanly (``checkout`` + ``restore``).
Everything after that version is still in the write-ahead log, because the log's
checkpoint only advances after the store's files were synced.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import lancedb
import structlog

log = structlog.get_logger(__name__)


async def _readable(table: Any) -> bool:
    try:
        await table.count_rows()
        # One narrow column of every fragment: each data file is opened and read.
        first = (await table.schema()).names[0]
        await table.query().select([first]).to_arrow()
    except Exception as exc:
        log.warning(
            "LanceDB table version unreadable", version=await table.version(), error=str(exc)
        )
        return False
    return True


async def check_lancedb(path: Path) -> list[str]:
    """Roll every unreadable table under ``path`` back to its last good version;
    returns a description of each rollback. Raises when no version reads."""
    if not await asyncio.to_thread(path.is_dir):
        return []
    db: Any = await lancedb.connect_async(str(path))
    rolled: list[str] = []
    try:
        names = (await db.list_tables()).tables
        for name in names:
            table = await db.open_table(name)
            if await _readable(table):
                continue
            latest = await table.version()
            versions = sorted(
                (int(v["version"]) for v in await table.list_versions()), reverse=True
            )
            for version in versions:
                if version >= latest:
                    continue
                await table.checkout(version)
                if await _readable(table):
                    await table.restore()
                    rolled.append(f"{name}: version {latest} -> {version}")
                    log.warning("LanceDB table rolled back", table=name, to=version, was=latest)
                    break
            else:
                raise RuntimeError(f"no readable version of LanceDB table {name!r} at {path}")
    finally:
        db.close()
    return rolled
