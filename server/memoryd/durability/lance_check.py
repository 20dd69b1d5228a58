"""Start-up check of the LanceDB tables before the log is replayed.

LanceDB does not fsync its files, so after a machine crash (not merely a killed
process) the newest table version may reference data that never reached the disk,
or its manifest may be cut short (then the table does not even open: "does not have
sufficient data"). Every table is opened and fully read at its latest version; a
manifest that does not load is moved out of the table (to
``<data_dir>/lancedb-damaged/<table>/<time>/``) and the previous version tried, and a
version whose data does not read is rolled back to the newest version that reads
cleanly (``checkout`` + ``restore``).

The writes after that version are still in the write-ahead log only if the version
is not older than the one the log's checkpoint covered: the checkpoint records, per
table, the version that held every write up to it (:func:`table_versions`, read just
before the store's files are synced), and segments below the checkpoint are deleted.
A rollback below that version would lose acknowledged writes, so the start is
refused instead (``DataDirDamaged``), with everything put back as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lancedb
import structlog

from memoryd.datadir import DataDirDamaged

log = structlog.get_logger(__name__)

_VERSIONS = "_versions"
_MANIFEST = ".manifest"
#: LanceDB's newer manifest naming stores version v as u64::MAX - v (newest first).
_U64_MAX = 2**64 - 1
#: Where manifests that do not load are moved (next to the lancedb directory).
QUARANTINE = "lancedb-damaged"


def _manifest_version(path: Path) -> int | None:
    if path.suffix != _MANIFEST or not path.stem.isdigit():
        return None
    number = int(path.stem)
    return _U64_MAX - number if number > 2**63 else number


def _manifests(table_dir: Path) -> dict[int, Path]:
    found: dict[int, Path] = {}
    with contextlib.suppress(FileNotFoundError):
        for path in (table_dir / _VERSIONS).iterdir():
            version = _manifest_version(path)
            if version is not None:
                found[version] = path
    return found


def table_versions(path: Path) -> dict[str, int]:
    """The newest committed version of every table under ``path`` (from the manifest
    file names: no table is opened)."""
    versions: dict[str, int] = {}
    with contextlib.suppress(FileNotFoundError):
        for table_dir in path.iterdir():
            if table_dir.suffix == ".lance" and table_dir.is_dir():
                manifests = _manifests(table_dir)
                if manifests:
                    versions[table_dir.stem] = max(manifests)
    return versions


@dataclass(slots=True)
class _Moved:
    """Manifests moved out of one table, so they can be put back."""

    moves: list[tuple[Path, Path]] = field(default_factory=list)

    def undo(self) -> None:
        for src, dst in reversed(self.moves):
            os.replace(dst, src)
        self.moves.clear()


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


async def _open(db: Any, root: Path, name: str, moved: _Moved) -> Any:
    """Open table ``name``; while its newest manifest does not load, move it aside."""
    table_dir = root / f"{name}.lance"
    quarantine = root.parent / QUARANTINE / name / time.strftime("%Y%m%dT%H%M%S")
    while True:
        try:
            return await db.open_table(name)
        except Exception as exc:
            manifests = _manifests(table_dir)
            if len(manifests) <= 1:
                raise DataDirDamaged(
                    f"LanceDB table {name!r} at {table_dir} does not open and has no "
                    f"earlier version to fall back to: {exc}"
                ) from None
            newest = max(manifests)
            log.warning(
                "LanceDB table manifest unreadable; moved aside, trying the previous version",
                table=name,
                version=newest,
                error=str(exc),
                moved_to=str(quarantine),
            )
            await asyncio.to_thread(quarantine.mkdir, parents=True, exist_ok=True)
            dst = quarantine / manifests[newest].name
            os.replace(manifests[newest], dst)
            moved.moves.append((manifests[newest], dst))


async def _newest_readable(table: Any, name: str, root: Path) -> int:
    """The newest version of ``table`` that reads cleanly, checked out (unless it is
    the latest)."""
    latest = int(await table.version())
    if await _readable(table):
        return latest
    versions = sorted((int(v["version"]) for v in await table.list_versions()), reverse=True)
    for version in versions:
        if version >= latest:
            continue
        await table.checkout(version)
        if await _readable(table):
            return version
    raise DataDirDamaged(f"no readable version of LanceDB table {name!r} at {root}")


def _refusal(name: str, root: Path, version: int, floor: int, checkpoint: int) -> DataDirDamaged:
    return DataDirDamaged(
        f"LanceDB table {name!r} at {root / (name + '.lance')}: its newest readable "
        f"version is {version}, older than version {floor}, which held every write up "
        f"to the write-ahead log's checkpoint (seq {checkpoint}); those writes are no "
        "longer in the log, so rolling back would lose acknowledged writes. Nothing was "
        "changed. Restore the table's files from a backup (or the file the warnings "
        "above name), then start again"
    )


async def check_lancedb(
    path: Path, floor: Mapping[str, int] | None = None, checkpoint: int = 0
) -> list[str]:
    """Roll every unreadable table under ``path`` back to its last good version;
    returns a description of each rollback. ``floor``: per table, the oldest version
    a rollback may reach (the checkpoint's). Raises DataDirDamaged when no version
    reads, or only one below the floor (then nothing is changed)."""
    if not await asyncio.to_thread(path.is_dir):
        return []
    floor = floor or {}
    db: Any = await lancedb.connect_async(str(path))
    rolled: list[str] = []
    try:
        for name in (await db.list_tables()).tables:
            moved = _Moved()
            try:
                table = await _open(db, path, name, moved)
                opened = int(await table.version())
                version = await _newest_readable(table, name, path)
                if version < floor.get(name, 0):
                    raise _refusal(name, path, version, floor[name], checkpoint)
            except BaseException:
                moved.undo()
                raise
            if version < opened:
                await table.restore()  # the checked-out version becomes the latest
            was = max([opened, *(_manifest_version(src) or 0 for src, _ in moved.moves)])
            if version == was:
                continue
            rolled.append(f"{name}: version {was} -> {version}")
            log.warning("LanceDB table rolled back", table=name, to=version, was=was)
    finally:
        db.close()
    return rolled
