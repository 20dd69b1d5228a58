"""One composed repository: the layers every service call goes through, in order,
built in one place.

    services
      -> write-ahead log   (durability/facades.py: writes logged, reads overlaid with
                            what is logged and not yet applied; a shared store gets
                            WriteThrough instead: applied before answered, no log)
      -> metrics           (request traffic timed per operation)
      -> hot cache         (searches answered from memory; single-writer stores only)
      -> tracing           (spans of the backend's own calls, under the cache)
      -> backend           (LanceDB, Qdrant server / local / Edge, in-memory)

The records (keys, working memory, profiles, sessions) take the same log and their
own metrics and spans; they have no cache. What is in the chain follows from the
backend's declared ``Capabilities`` and from the parameters here, never from a
backend name. The stores are opened, and the log replayed into them, by
``compose_repository``; ``stack`` closes them in reverse (log, then stores).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import structlog

from memoryd.domain.errors import StoreError
from memoryd.durability.durable_store import Durability
from memoryd.durability.facades import DurableRecordStore, DurableStore
from memoryd.durability.wal import WriteAheadLog
from memoryd.durability.write_through import WriteThrough
from memoryd.observability.instrumented import InstrumentedRecordStore, InstrumentedStore
from memoryd.observability.metrics import Metrics
from memoryd.observability.tracing import NO_TRACING, Tracing
from memoryd.resilience.degradation import ComponentStates
from memoryd.security.audit import AuditLog
from memoryd.storage.base import Store
from memoryd.storage.failures import TRANSIENT
from memoryd.storage.hot.ann import AnnParams
from memoryd.storage.hot.cache import HotCacheStore
from memoryd.storage.records import RecordStore

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class HotCacheOptions:
    """The hot cache in front of a single-writer store (storage/hot/cache.py)."""

    budget_bytes: int
    ann: AnnParams | None = None
    #: Entered around batched searches (more BLAS threads for them).
    bulk_compute: Callable[[], AbstractContextManager[object]] | None = None


@dataclass(frozen=True, slots=True)
class LogOptions:
    """The write-ahead log in front of a single-writer store (durability/)."""

    wal_dir: Path
    #: Where the store keeps its files (the log checks the disk they are on).
    store_dir: Path
    segment_bytes: int
    checkpoint_interval_s: float
    apply_behind: int
    apply_delay_s: float
    #: Bytes of the log kept past the checkpoint for the change feed (docs/watch.md).
    retain_bytes: int = 0
    #: The store's table versions, recorded with each checkpoint (LanceDB).
    store_versions: Callable[[], Mapping[str, int]] | None = None


@dataclass(frozen=True, slots=True)
class Repository:
    """What the services use (``store``, ``records``) and the layers they sit on."""

    store: Store
    records: RecordStore
    #: The backend itself, and the records' backend.
    backend: Store
    backend_records: RecordStore
    #: The hot cache when there is one (its counters are exported as metrics).
    hot_cache: HotCacheStore | None
    #: The store under the metrics layer: what maintenance counts is not traffic.
    uncounted: Store
    #: The log's core (None: a shared store, or the log disabled).
    durability: Durability | None


def _layers(
    backend: Store,
    *,
    dimension: int,
    hot_cache: HotCacheOptions | None,
    metrics: Metrics | None,
    tracing: Tracing,
) -> tuple[Store, Store, HotCacheStore | None]:
    """backend -> spans -> hot cache -> metrics; returns (outermost, uncounted, cache)."""
    store = backend
    if tracing.enabled:
        # Spans for the backend's own calls, under the hot cache: what the cache
        # answers from memory takes less time than a span costs and is no I/O.
        store = InstrumentedStore(store, None, tracing)
    cache: HotCacheStore | None = None
    if hot_cache is not None:
        cache = HotCacheStore(
            store,
            dimension=dimension,
            budget_bytes=hot_cache.budget_bytes,
            ann=hot_cache.ann,
            bulk_compute=hot_cache.bulk_compute,
        )
        store = cache
        if metrics is not None:
            metrics.watch_hot_cache(cache)
    uncounted = store
    if metrics is not None:
        store = InstrumentedStore(store, metrics)
    return store, uncounted, cache


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

    async def first_open(self, *, tolerate_transient: bool) -> str | None:
        """Open both at start; with ``tolerate_transient`` a failure that passes by
        itself (unreachable, no space left, an I/O error) does not stop the start:
        returns why, and the log's core keeps trying in the background. Anything else
        raises."""
        try:
            await self.open()
        except StoreError as exc:
            if not tolerate_transient or exc.cause not in TRANSIENT:
                raise
            log.error("the store did not open; starting without it", error=exc.message)
            return exc.message
        return None


async def compose_repository(
    backend: Store,
    records: RecordStore,
    *,
    dimension: int,
    stack: AsyncExitStack,
    states: ComponentStates,
    wal: LogOptions | None,
    retry_max_s: float,
    hot_cache: HotCacheOptions | None = None,
    metrics: Metrics | None = None,
    tracing: Tracing = NO_TRACING,
    audit: AuditLog | None = None,
) -> Repository:
    """Compose, open and (with a log) replay; ``stack`` closes it all in reverse.

    ``audit``: the audit log whose STARTED events ride in the log's entries (synced
    before each checkpoint, restored from the entries a start replays).

    ``dimension``: of every vector stored and searched (the embedder's); writes and
    query vectors are checked against it where the services hand them over.

    ``wal`` None: no write-ahead log (acknowledged writes may be lost on a crash). A
    store other replicas share never gets one: its writes are applied before they are
    answered (WriteThrough), refused while it cannot take them. A store that does not
    open for a passing cause leaves the daemon serving degraded (``StoreOpener``)."""
    caps = backend.capabilities
    _refuse_what_would_lie(backend, records, hot_cache)
    store, uncounted, cache = _layers(
        backend, dimension=dimension, hot_cache=hot_cache, metrics=metrics, tracing=tracing
    )
    observed = metrics is not None or tracing.enabled
    recs = InstrumentedRecordStore(records, metrics, tracing) if observed else records
    stack.push_async_callback(store.close)
    stack.push_async_callback(recs.close)
    opener = StoreOpener(store, recs)
    open_error = await opener.first_open(tolerate_transient=wal is not None)
    durability: Durability | None = None
    if caps.shared:
        log.info(
            "shared store: a write is acknowledged once the store has applied it; "
            "no local write-ahead log"
        )
        through = WriteThrough(
            store, recs, states=states, retry_max_s=retry_max_s, reopen=opener.open
        )
        await through.open(open_error)
        stack.push_async_callback(through.close)
        store, recs = DurableStore(through, dimension=dimension), DurableRecordStore(through)
    elif wal is None:
        log.warning("write-ahead log disabled: acknowledged writes may be lost on a crash")
    else:
        durability = await _open_log(
            opener, wal, states, retry_max_s, metrics, tracing, open_error, audit
        )
        stack.push_async_callback(durability.close)
        store, recs = DurableStore(durability, dimension=dimension), DurableRecordStore(durability)
    return Repository(
        store=store,
        records=recs,
        backend=backend,
        backend_records=records,
        hot_cache=cache,
        uncounted=uncounted,
        durability=durability,
    )


def _refuse_what_would_lie(
    backend: Store, records: RecordStore, hot_cache: HotCacheOptions | None
) -> None:
    """A cache of what this process wrote is only complete for one process; a store
    other processes write needs conditional writes of its own."""
    caps = backend.capabilities
    if hot_cache is not None and not caps.single_writer:
        raise ValueError("a hot cache cannot front a store other processes write")
    if caps.shared and not (caps.conditional_writes and records.capabilities.conditional_writes):
        raise ValueError(
            f"the {backend.name} store is shared but cannot decide conditional writes "
            "itself: replicas would lose each other's read-modify-writes"
        )


async def _open_log(
    opener: StoreOpener,
    options: LogOptions,
    states: ComponentStates,
    retry_max_s: float,
    metrics: Metrics | None,
    tracing: Tracing,
    open_error: str | None,
    audit: AuditLog | None,
) -> Durability:
    """The write-ahead log in front of the opened stores, replayed into them."""
    wal = WriteAheadLog(
        options.wal_dir, segment_bytes=options.segment_bytes, retain_bytes=options.retain_bytes
    )
    core = Durability(
        wal,
        opener.store,
        opener.records,
        states=states,
        store_dir=options.store_dir,
        checkpoint_interval_s=options.checkpoint_interval_s,
        retry_max_s=retry_max_s,
        apply_behind=options.apply_behind,
        apply_delay_s=options.apply_delay_s,
        tracing=tracing,
        store_versions=options.store_versions,
        reopen=opener.open,
        audit=audit,
    )
    core.open_error = open_error or ""
    if metrics is not None:

        def observe_sync(seconds: float) -> None:
            metrics.wal_fsync(seconds)
            metrics.wal_backlog(len(core.pending))

        wal.on_sync = observe_sync
    await core.open(store_open=open_error is None)
    return core
