"""How app.py puts the write-ahead log and the fallbacks in front of the stores and
the embedder (kept here so the wiring stays a few lines there)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path

import structlog

from memoryd.config import Settings
from memoryd.domain.errors import StoreError
from memoryd.durability.durable_store import Durability
from memoryd.durability.facades import DurableRecordStore, DurableStore
from memoryd.durability.wal import Checkpoint, WriteAheadLog, load_checkpoint
from memoryd.durability.write_through import WriteThrough
from memoryd.embedding.base import Embedder
from memoryd.observability.metrics import Metrics
from memoryd.observability.tracing import NO_TRACING, Tracing
from memoryd.resilience.degradation import ComponentStates
from memoryd.resilience.embedder import FallbackEmbedder, Reembedder
from memoryd.storage.base import Store
from memoryd.storage.failures import TRANSIENT
from memoryd.storage.records import RecordStore

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


class StoreOpener:
    """Opens the store and the record store, each once, whichever call succeeds."""

    def __init__(self, store: Store, records: RecordStore) -> None:
        self.store = store
        self.records = records
        self._opened: set[str] = set()

    async def open(self) -> None:
        for name, target in (("store", self.store), ("records", self.records)):
            if name not in self._opened:
                await target.open()
                self._opened.add(name)

    async def first_open(self, settings: Settings) -> str | None:
        """Open both at start; a failure that passes by itself (unreachable, no space
        left, an I/O error) does not stop a start with the log on: returns why, and
        the log's core keeps trying in the background. Anything else raises."""
        try:
            await self.open()
        except StoreError as exc:
            if not settings.durability.wal_enabled or exc.cause not in TRANSIENT:
                raise
            log.error("the store did not open; starting without it", error=exc.message)
            return exc.message
        return None


def resilient_embedder(settings: Settings, embedder: Embedder, states: ComponentStates) -> Embedder:
    """The provider behind a timeout, a breaker and the hashing fallback (the hashing
    embedder itself cannot fail)."""
    if settings.embedder == "hashing":
        return embedder
    r = settings.resilience
    return FallbackEmbedder(
        embedder,
        states=states,
        timeout_s=r.embedder_timeout_s,
        timeout_texts=settings.embedding.max_batch_size,
        failure_threshold=r.embedder_failure_threshold,
        probe_after_s=r.embedder_probe_after_s,
    )


async def make_durable(
    stack: AsyncExitStack,
    settings: Settings,
    data_dir: Path,
    opener: StoreOpener,
    states: ComponentStates,
    metrics: Metrics | None = None,
    tracing: Tracing = NO_TRACING,
) -> tuple[Store, RecordStore, Durability | None]:
    """Open the stores and replay the log into them; return their logged faces,
    closed through ``stack`` before the stores. A store that does not open for a
    passing cause leaves the daemon serving degraded (see ``StoreOpener``). A store
    other replicas share gets no log: its writes are applied before they are answered
    (WriteThrough), refused while it cannot take them."""
    store, records = opener.store, opener.records
    open_error = await opener.first_open(settings)
    d = settings.durability
    if store.capabilities.shared:
        if not (store.capabilities.conditional_writes and records.capabilities.conditional_writes):
            raise ValueError(
                f"the {store.name} store is shared but cannot decide conditional writes "
                "itself: replicas would lose each other's read-modify-writes"
            )
        log.info(
            "shared store: a write is acknowledged once the store has applied it; "
            "no local write-ahead log"
        )
        through = WriteThrough(
            store, records, states=states, retry_max_s=d.store_retry_max_s, reopen=opener.open
        )
        await through.open(open_error)
        stack.push_async_callback(through.close)
        return DurableStore(through), DurableRecordStore(through), None
    if not d.wal_enabled:
        log.warning("write-ahead log disabled: acknowledged writes may be lost on a crash")
        return store, records, None
    wal = WriteAheadLog(_wal_dir(settings, data_dir), segment_bytes=d.segment_mb * 2**20)
    core = Durability(
        wal,
        store,
        records,
        states=states,
        store_dir=data_dir,
        checkpoint_interval_s=d.checkpoint_interval_s,
        retry_max_s=d.store_retry_max_s,
        apply_behind=_apply_behind(settings, store),
        apply_delay_s=d.apply_delay_ms / 1000,
        tracing=tracing,
        store_versions=_store_versions(settings, data_dir),
        reopen=opener.open,
    )
    core.open_error = open_error or ""
    if metrics is not None:

        def observe_sync(seconds: float) -> None:
            metrics.wal_fsync(seconds)
            metrics.wal_backlog(len(core.pending))

        wal.on_sync = observe_sync
    await core.open(store_open=open_error is None)
    stack.push_async_callback(core.close)
    return DurableStore(core), DurableRecordStore(core), core


#: ``durability.apply_behind`` on the embedded store (see DurabilitySettings).
APPLY_BEHIND_EMBEDDED = 256


def _apply_behind(settings: Settings, store: Store) -> int:
    """The configured bound; by default one only where commits are costly (LanceDB):
    a store applied at once needs none, and other replicas read it directly."""
    configured = settings.durability.apply_behind
    if configured is not None:
        return configured
    return APPLY_BEHIND_EMBEDDED if store.capabilities.group_commit else 0


def start_reembedder(
    stack: AsyncExitStack, settings: Settings, store: Store, embedder: Embedder
) -> Reembedder | None:
    if not isinstance(embedder, FallbackEmbedder):
        return None
    r = settings.resilience
    reembedder = Reembedder(store, embedder, interval_s=r.reembed_interval_s, batch=r.reembed_batch)
    reembedder.start()
    stack.push_async_callback(reembedder.close)
    return reembedder
