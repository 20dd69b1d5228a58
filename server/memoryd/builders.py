"""The services, built from the repository and the embedder (app.py starts them in
this order after the stores; everything started here stops through ``stack``, in
reverse, before the stores close).

    writer, access statistics -> memories -> key indexes, keyed memory, its mirror
    -> working memory, profiles, sessions -> snapshots, default read, state
    -> lifecycle (and its maintenance scheduler, when enabled)

and the embedder's side of the composition: the model behind its fallback
(``resilient_embedder``, before the stores) and the re-embedding of what the
fallback embedded (``start_reembedder``, after them).
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

import structlog

from memoryd.aio import cancel_and_wait
from memoryd.config import Settings
from memoryd.domain.models import utcnow
from memoryd.durability.changes import ChangeLog
from memoryd.durability.repository import Repository
from memoryd.embedding import Embedder
from memoryd.model_catalog import profile_of
from memoryd.observability.metrics import Metrics
from memoryd.observability.tracing import Tracing
from memoryd.operations import Services
from memoryd.resilience.degradation import ComponentStates
from memoryd.resilience.embedder import FallbackEmbedder, Reembedder
from memoryd.security.masking import Masker
from memoryd.service.agent_state.profile import ProfileService
from memoryd.service.agent_state.state import StateService
from memoryd.service.agent_state.working import WorkingMemoryService
from memoryd.service.changes.cursor import CursorCodec
from memoryd.service.changes.service import ChangeFeedService
from memoryd.service.common.leases import MEMORIES_LEASE, PartitionLeases
from memoryd.service.common.llm import ChatClient
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.service.common.quotas import Quotas
from memoryd.service.common.tokens import TokenCounter, build_token_counter
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.keyed.docs import COUNTER_KEY
from memoryd.service.keyed.index import KeyIndexes
from memoryd.service.keyed.mirror import KeyMirror, keyed_read_back
from memoryd.service.keyed.pending import PendingMirrors
from memoryd.service.keyed.service import KeyedMemoryService
from memoryd.service.keyed.shared import KEYS_LEASE
from memoryd.service.lifecycle.bulk import LifecycleDeps
from memoryd.service.lifecycle.importer import ImportLimits
from memoryd.service.lifecycle.maintenance import MaintenanceScheduler
from memoryd.service.lifecycle.memory_views import MemoryViews
from memoryd.service.lifecycle.service import LifecycleService
from memoryd.service.memories.access_stats import AccessStatsBuffer
from memoryd.service.memories.contradiction import ContradictionResolver
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions.service import SessionService
from memoryd.service.sessions.summarize import Summarizer
from memoryd.service.snapshot.as_of import HISTORY_OFF, SHARED_AS_OF, AsOfReads
from memoryd.service.snapshot.default_read import DefaultReadService
from memoryd.service.snapshot.service import SnapshotService
from memoryd.storage.base import Store
from memoryd.storage.fenced import fenced
from memoryd.storage.history import MemoryHistory
from memoryd.storage.history_journal import HISTORY_DIR, HistoryJournal
from memoryd.storage.history_stores import HistoryRecordStore, HistoryStore, history_of
from memoryd.storage.records import RecordStore

log = structlog.get_logger("memoryd")


@dataclass(frozen=True, slots=True)
class Base:
    """What every service builder takes: the settings, the composed repository's
    faces, the embedder, and the stack that stops what they start."""

    settings: Settings
    data_dir: Path
    stack: AsyncExitStack
    store: Store
    records: RecordStore
    embedder: Embedder
    states: ComponentStates
    metrics: Metrics | None
    tracing: Tracing
    #: This daemon's id among replicas of a shared store (datadir.replica_id); None
    #: where it owns its store alone.
    replica: str | None = None
    #: The write-ahead log's change feed source (None: no log, no Watch).
    changes: ChangeLog | None = None


@dataclass(frozen=True, slots=True)
class Common:
    """Pieces several services share."""

    writer: WriteBatcher
    access: AccessStatsBuffer
    page_tokens: PageTokenCodec
    quotas: Quotas
    masker: Masker
    #: The optional chat endpoint (summaries, extraction, contradictions).
    llm: ChatClient | None
    counter: TokenCounter
    #: Key mirrors embedded behind the answer (None: before it).
    pending: PendingMirrors | None
    #: The store every service but keyed memory reads memories through: behind the
    #: mirrors' read fence where they are embedded behind the answer
    #: (storage/fenced.py); keyed memory, which writes the mirrors, holds the one beneath.
    store: Store


@dataclass(frozen=True, slots=True)
class Built:
    services: Services
    #: What low-clearance callers read masked with (the door masks every outcome).
    masker: Masker
    #: Scheduled maintenance (None when maintenance.enabled is false).
    scheduler: MaintenanceScheduler | None
    #: memory.md / learnings.md of each agent (None when the memory_root is off).
    views: MemoryViews | None = None


async def build_services(base: Base) -> Built:
    """Every service, in dependency order."""
    common = await _common(base)
    memories = _memories(base, common)
    indexes = _key_indexes(base)
    keyed = await _keyed(base, common, indexes)
    s = base.settings
    working = WorkingMemoryService(
        records=base.records,
        page_tokens=common.page_tokens,
        settings=s.working_memory,
        limits=s.limits,
    )
    profiles = ProfileService(records=base.records, settings=s.profile)
    sessions = _sessions(base, common, memories)
    lifecycle = _lifecycle(base, common, keyed, working, sessions)
    services = Services(
        memories=memories,
        keyed_memory=keyed,
        working_memory=working,
        profile_service=profiles,
        session_service=sessions,
        snapshot_service=_snapshots(base, common, memories, profiles, working, sessions),
        default_read_service=_default_read(base, common, indexes),
        state_service=StateService(records=base.records, settings=s.snapshot, sessions=s.sessions),
        lifecycle_service=lifecycle,
        change_feed=(
            None
            if base.changes is None
            else ChangeFeedService(base.changes, CursorCodec(common.page_tokens))
        ),
    )
    services = replace(services, as_of_reads=_as_of(base, services))
    views = _memory_views(base, memories, lifecycle)
    return Built(services, common.masker, _start_scheduler(base, lifecycle, views), views)


def with_history(
    settings: Settings, repository: Repository, data_dir: Path, stack: AsyncExitStack
) -> tuple[Store, RecordStore]:
    """The services' stores, recording the history of as-of reads (memories, and the
    profile, working memory and session records; none where replicas share the store:
    each would see only its own writes), in files under ``<data_dir>/as_of`` unless
    ``history.persist`` is off."""
    store = repository.store
    if store.capabilities.shared or not settings.history.enabled:
        return store, repository.records
    changes = None if repository.durability is None else repository.durability.changes
    history = MemoryHistory(
        timedelta(hours=settings.history.retention_hours),
        position=None if changes is None else changes.last_seq,
        max_versions=settings.history.max_versions,
        journal=(
            HistoryJournal(data_dir / HISTORY_DIR, fsync=settings.history.fsync)
            if settings.history.persist
            else None
        ),
    )
    if history.journal is not None:
        stack.callback(history.journal.close)
    return HistoryStore(store, history), HistoryRecordStore(repository.records, history)


def _as_of(base: Base, services: Services) -> AsOfReads:
    assert services.snapshot_service is not None and services.default_read_service is not None
    return AsOfReads(
        history=history_of(base.store),
        memories=services.memories,
        snapshots=services.snapshot_service,
        default_reads=services.default_read_service,
        keyed=services.keyed,
        records=base.records,
        store=base.store,
        dimension=base.embedder.dimension,
        clock=utcnow,
        unavailable=SHARED_AS_OF if base.store.capabilities.shared else HISTORY_OFF,
        sequence_of=None if services.change_feed is None else services.change_feed.sequence_of,
    )


async def _common(base: Base) -> Common:
    """The write batcher and the access statistics (started), page tokens, quotas,
    masking, the LLM and the token counter."""
    s, stack = base.settings, base.stack
    writer = WriteBatcher(base.store, max_batch=s.storage.write_batch_max, tracing=base.tracing)
    writer.start()
    stack.push_async_callback(writer.close)
    access = AccessStatsBuffer(
        base.store,
        interval_s=s.storage.access_flush_interval_s,
        max_pending=s.storage.access_flush_max_pending,
    )
    access.start()
    stack.push_async_callback(access.close)
    llm = ChatClient.from_settings(s.llm)
    if llm is not None:
        stack.push_async_callback(llm.close)
    pending = None
    if s.keys.mirror_embedding == "behind" and not base.records.capabilities.shared:
        pending = PendingMirrors()
        stack.push_async_callback(pending.close)
    store = fenced(base.store, None if pending is None else pending.settled)
    return Common(
        writer=writer,
        access=access,
        page_tokens=_page_tokens(base),
        quotas=Quotas(s.quotas, store),
        masker=Masker(s.masking),
        llm=llm,
        counter=await asyncio.to_thread(build_token_counter, s.sessions.token_counter),
        pending=pending,
        store=store,
    )


def _page_tokens(base: Base) -> PageTokenCodec:
    s = base.settings
    if s.page_token_secret:
        return PageTokenCodec(s.page_token_secret.get_secret_value().encode())
    if base.store.capabilities.shared:
        log.warning(
            "shared store without page_token_secret: page tokens are signed with this "
            "replica's own key and other replicas reject them; give every replica the "
            "same MEMORYD_PAGE_TOKEN_SECRET"
        )
    return PageTokenCodec.from_data_dir(base.data_dir)


def _memories(base: Base, common: Common) -> MemoryService:
    s = base.settings
    return MemoryService(
        store=common.store,
        embedder=base.embedder,
        writer=common.writer,
        access=common.access,
        page_tokens=common.page_tokens,
        limits=s.limits,
        recall=s.recall,
        quotas=common.quotas,
        dedup=s.dedup,
        contradictions=ContradictionResolver(
            common.store, base.embedder, s.contradictions, common.llm
        ),
        leases=_leases(base, MEMORIES_LEASE),
        relevance=profile_of(s.embedder).relevance,
    )


def _leases(base: Base, name: str, versions: str | None = None) -> PartitionLeases:
    """A partition lease of the shared store's settings, freed at shutdown."""
    q = base.settings.storage.qdrant
    leases = PartitionLeases(
        base.records,
        replica=base.replica,
        name=name,
        ttl_s=q.lease_ttl_s,
        linger_s=q.lease_linger_s,
        turn_s=q.lease_turn_s,
        versions=versions,
    )
    base.stack.push_async_callback(leases.close)
    return leases


def _key_indexes(base: Base) -> KeyIndexes:
    s = base.settings
    indexes = KeyIndexes(
        base.records,
        s.limits,
        max_entries=s.keys.read_index_max_entries,
        summary_chars=s.snapshot.default_read_summary_chars,
        # Replicas may share a Qdrant store; a LanceDB data dir has one writer.
        validate=base.records.capabilities.shared,
    )
    indexes.start()
    base.stack.push_async_callback(indexes.close)
    return indexes


async def _keyed(base: Base, common: Common, indexes: KeyIndexes) -> KeyedMemoryService:
    """Keyed memory; its partitions' version counters are read in the background (a
    key write during a later store outage then goes to the log)."""
    s = base.settings
    mirrors = _key_mirror(base)
    keyed = KeyedMemoryService(
        records=base.records,
        store=base.store,
        embedder=base.embedder,
        writer=common.writer,
        page_tokens=common.page_tokens,
        limits=s.limits,
        keys=s.keys,
        quotas=common.quotas,
        observers=[indexes, *mirrors],
        leases=_leases(base, KEYS_LEASE, versions=COUNTER_KEY),
        pending=common.pending,
        history=history_of(base.store),
    )
    for mirror in mirrors:  # a hand edit of an index file becomes the key's next version
        mirror.read_back = keyed_read_back(keyed, s.keys.mirror_clearance)
        await mirror.start()
        base.stack.push_async_callback(mirror.close)
    warming = asyncio.create_task(keyed.warm(), name="keyed-counters-warm")
    base.stack.push_async_callback(cancel_and_wait, warming)
    return keyed


def _key_mirror(base: Base) -> list[KeyMirror]:
    """The live file mirror of keyed memory (the memory_root: Settings.memory_root),
    not started yet: once it can write hand edits back it is started (checked against
    the store and repaired in the background) and stopped before the stores."""
    s = base.settings
    root = s.memory_root()
    if root is None:
        return []
    return [KeyMirror(root.absolute(), base.records, s.limits, clearance=s.keys.mirror_clearance)]


def _memory_views(
    base: Base, memories: MemoryService, lifecycle: LifecycleService
) -> MemoryViews | None:
    """memory.md and learnings.md in the memory_root, refreshed after writes (the
    door tells them); stopped before the services they write through."""
    s = base.settings
    root = s.memory_root()
    if root is None:
        return None
    views = MemoryViews(root.absolute(), memories, lifecycle, clearance=s.keys.mirror_clearance)
    base.stack.push_async_callback(views.close)
    return views


def _sessions(base: Base, common: Common, memories: MemoryService) -> SessionService:
    s = base.settings
    return SessionService(
        records=base.records,
        memories=memories,
        summarizer=Summarizer(
            counter=common.counter, max_tokens=s.sessions.summary_max_tokens, llm=common.llm
        ),
        counter=common.counter,
        settings=s.sessions,
        limits=s.limits,
        quotas=common.quotas,
        page_tokens=common.page_tokens,
    )


def _snapshots(
    base: Base,
    common: Common,
    memories: MemoryService,
    profiles: ProfileService,
    working: WorkingMemoryService,
    sessions: SessionService,
) -> SnapshotService:
    s = base.settings
    return SnapshotService(
        memories=memories,
        store=common.store,
        dimension=base.embedder.dimension,
        counter=common.counter,
        settings=s.snapshot,
        limits=s.limits,
        profiles=profiles,
        working=working,
        sessions=sessions,
        states=base.states,
        masker=common.masker,
    )


def _default_read(base: Base, common: Common, indexes: KeyIndexes) -> DefaultReadService:
    s = base.settings
    return DefaultReadService(
        indexes=indexes,
        records=base.records,
        counter=common.counter,
        settings=s.snapshot,
        limits=s.limits,
        keys=s.keys,
        masker=common.masker,
    )


def _lifecycle(
    base: Base,
    common: Common,
    keyed: KeyedMemoryService,
    working: WorkingMemoryService,
    sessions: SessionService,
) -> LifecycleService:
    s = base.settings
    return LifecycleService(
        LifecycleDeps(
            store=common.store,
            records=base.records,
            writer=common.writer,
            embedder=base.embedder,
            settings=s.maintenance,
            limits=s.limits,
            dedup=s.dedup,
            history_dir=base.data_dir / "history",
            keyed=keyed,
            working=working,
            sessions=sessions,
            llm=common.llm,
        ),
        ImportLimits(
            keys=s.keys,
            working=s.working_memory,
            profile=s.profile,
            sessions=s.sessions,
            snapshot=s.snapshot,
        ),
        memory_root=root.absolute() if (root := s.memory_root()) is not None else None,
        data_dir=base.data_dir,
        sole_tenant=s.sidecar.tenant_id if s.auth.mode == "sidecar" else None,
    )


def _start_scheduler(
    base: Base, lifecycle: LifecycleService, views: MemoryViews | None
) -> MaintenanceScheduler | None:
    """Scheduled maintenance, each partition's views refreshed after it; stops before
    the writer and the stores close (and after the server drained)."""
    if not base.settings.maintenance.enabled:
        return None
    metrics = base.metrics
    scheduler = lifecycle.scheduler(
        on_run=None if metrics is None else metrics.maintenance_run,
        maintained=None if views is None else views.changed,
    )
    scheduler.start()
    base.stack.push_async_callback(scheduler.close)
    return scheduler


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


def start_reembedder(
    stack: AsyncExitStack, settings: Settings, store: Store, embedder: Embedder
) -> Reembedder | None:
    """The background re-embedding of the fallback's vectors (None: no fallback)."""
    if not isinstance(embedder, FallbackEmbedder):
        return None
    r = settings.resilience
    reembedder = Reembedder(store, embedder, interval_s=r.reembed_interval_s, batch=r.reembed_batch)
    reembedder.start()
    stack.push_async_callback(reembedder.close)
    return reembedder
