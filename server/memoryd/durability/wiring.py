"""The settings' side of the stores' composition: the write-ahead log's options for
durability/repository.py and LanceDB's start check (kept here so app.py's builders
stay a few lines; the embedder's are in builders.py)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import structlog

from memoryd.config import Settings
from memoryd.durability.repository import LogOptions
from memoryd.durability.wal import Checkpoint, load_checkpoint
from memoryd.storage.base import Store

log = structlog.get_logger(__name__)


def _wal_dir(settings: Settings, data_dir: Path) -> Path:
    return settings.durability.wal_dir or data_dir / "wal"


async def check_store(settings: Settings, data_dir: Path) -> None:
    """Before the stores open: roll back a LanceDB table whose latest version is
    unreadable, never below the version the log's checkpoint covered (DataDirDamaged)."""
    if settings.storage.backend == "lancedb":
        # Imported for this backend only: a daemon on Qdrant never loads lancedb.
        from memoryd.durability.lance_check import check_lancedb

        checkpoint = load_checkpoint(_wal_dir(settings, data_dir))
        if not settings.durability.wal_enabled:
            checkpoint = Checkpoint()
        await check_lancedb(data_dir / "lancedb", checkpoint.tables, checkpoint.applied)


def _store_versions(settings: Settings, data_dir: Path) -> Callable[[], dict[str, int]] | None:
    """What a checkpoint records of the store: LanceDB's table versions."""
    if settings.storage.backend != "lancedb":
        return None
    from memoryd.durability.lance_check import table_versions

    return partial(table_versions, data_dir / "lancedb")


def log_options(settings: Settings, data_dir: Path, store: Store) -> LogOptions | None:
    """The write-ahead log's options from the settings (None: the log is disabled)."""
    d = settings.durability
    if not d.wal_enabled:
        return None
    return LogOptions(
        wal_dir=_wal_dir(settings, data_dir),
        store_dir=data_dir,
        segment_bytes=d.segment_mb * 2**20,
        checkpoint_interval_s=d.checkpoint_interval_s,
        apply_behind=_apply_behind(settings, store),
        apply_delay_s=d.apply_delay_ms / 1000,
        retain_bytes=d.feed_retention_mb * 2**20,
        store_versions=_store_versions(settings, data_dir),
    )


#: ``durability.apply_behind`` on the embedded store (see DurabilitySettings). Large
#: enough that a LanceDB compaction (seconds on a big table, holding the store's write
#: lock) is absorbed behind the answer instead of holding writers: at 256 a burst of
#: keyed writes (4 items each) passed it within a second of a slow commit and every
#: writer then applied itself (issue 31). What it costs is memory (a few KB an item)
#: and reads' overlays, which read their own partition's entries only.
APPLY_BEHIND_EMBEDDED = 16_384


def _apply_behind(settings: Settings, store: Store) -> int:
    """The configured bound; by default one only where commits are costly (LanceDB):
    a store applied at once needs none, and other replicas read it directly."""
    configured = settings.durability.apply_behind
    if configured is not None:
        return configured
    return APPLY_BEHIND_EMBEDDED if store.capabilities.group_commit else 0
