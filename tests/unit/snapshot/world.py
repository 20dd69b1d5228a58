"""An in-process memoryd: every service of the Memory, Snapshot and Lifecycle APIs over
the in-memory stores (or LanceDB in a directory), the hashing embedder and a clock."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memoryd.config import (
    DedupSettings,
    KeysSettings,
    LimitsSettings,
    MaintenanceSettings,
    ProfileSettings,
    RecallSettings,
    SessionSettings,
    SnapshotSettings,
    WorkingMemorySettings,
)
from memoryd.domain.errors import EmbeddingError
from memoryd.domain.models import Partition, SecurityLevel
from memoryd.domain.principal import CallScope, Principal, Role
from memoryd.embedding import HashingEmbedder
from memoryd.embedding.base import EmbedKind
from memoryd.resilience.degradation import ComponentStates
from memoryd.service.agent_state.profile import ProfileService
from memoryd.service.agent_state.schema_evaluators import ThreadEvaluator
from memoryd.service.agent_state.schema_runner import SchemaRunner
from memoryd.service.agent_state.state import StateService
from memoryd.service.agent_state.working import WorkingMemoryService
from memoryd.service.common.llm import ChatClient
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.service.common.tokens import EstimateCounter, TokenCounter
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.keyed.index import KeyIndexes
from memoryd.service.keyed.pending import PendingMirrors
from memoryd.service.keyed.service import KeyedMemoryService
from memoryd.service.lifecycle.bulk import LifecycleDeps
from memoryd.service.lifecycle.importer import ImportLimits
from memoryd.service.lifecycle.service import LifecycleService
from memoryd.service.memories.access_stats import AccessStatsBuffer
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions.service import SessionService
from memoryd.service.sessions.summarize import Summarizer
from memoryd.service.snapshot.as_of import AsOfReads
from memoryd.service.snapshot.default_read import DefaultReadService
from memoryd.service.snapshot.service import SnapshotService
from memoryd.storage.base import Store
from memoryd.storage.fenced import fenced
from memoryd.storage.history import MemoryHistory
from memoryd.storage.history_stores import HistoryRecordStore, HistoryStore
from memoryd.storage.lancedb import LanceDBStore
from memoryd.storage.lancedb.records import LanceDBRecordStore
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from memoryd.storage.records import RecordStore
from tests.clock import CountingCpu

DIM = 64


@dataclass
class Clock:
    now: datetime = field(default_factory=lambda: datetime.now(UTC))

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> None:
        self.now += timedelta(**kwargs)


class SwitchableEmbedder:
    """The hashing embedder under another model name, which can be made to fail."""

    def __init__(self, dimension: int = DIM, model_id: str = "") -> None:
        self.inner = HashingEmbedder(dimension)
        self.model = model_id or self.inner.model_id
        self.down = False

    @property
    def model_id(self) -> str:
        return self.model

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed(
        self, texts: Sequence[str], *, kind: EmbedKind = "document"
    ) -> npt.NDArray[np.float32]:
        if self.down:
            raise EmbeddingError("embedding provider is down (test)")
        return await self.inner.embed(texts, kind=kind)

    async def close(self) -> None:
        await self.inner.close()


def scope_for(
    agent: str = "a1",
    tenant: str = "t1",
    clearance: SecurityLevel = SecurityLevel.RESTRICTED,
    roles: frozenset[Role] = frozenset(Role),
) -> CallScope:
    principal = Principal("test", tenant, frozenset({"*"}), clearance, roles)
    return CallScope(principal, Partition(tenant, agent))


@dataclass
class World:
    store: Store
    records: RecordStore
    embedder: SwitchableEmbedder
    writer: WriteBatcher
    access: AccessStatsBuffer
    memories: MemoryService
    keyed: KeyedMemoryService
    working: WorkingMemoryService
    profiles: ProfileService
    sessions: SessionService
    snapshots: SnapshotService
    default_read: DefaultReadService
    state: StateService
    lifecycle: LifecycleService
    clock: Clock
    counter: TokenCounter
    maintenance: MaintenanceSettings
    #: As-of reads (a world made with a ``history``), else None.
    as_of: AsOfReads | None = None


@asynccontextmanager
async def world(
    *,
    counter: TokenCounter | None = None,
    data_dir: Path | None = None,
    maintenance: MaintenanceSettings | None = None,
    snapshot: SnapshotSettings | None = None,
    embedder: SwitchableEmbedder | None = None,
    clock: Clock | None = None,
    history_dir: Path | None = None,
    llm: ChatClient | None = None,
    states: ComponentStates | None = None,
    history: MemoryHistory | None = None,
    pending: PendingMirrors | None = None,
) -> AsyncIterator[World]:
    """Services over in-memory stores, or LanceDB under ``data_dir``; with a
    ``history``, its store records every version and every service reads the clock
    (memories included), and ``as_of`` reads the past. With ``pending``, key mirrors
    are embedded behind the answer (keys.mirror_embedding "behind"), as the daemon's."""
    store: Store
    records: RecordStore
    if data_dir is None:
        store, records = InMemoryStore(DIM), InMemoryRecordStore()
    else:
        store = LanceDBStore(data_dir / "lancedb", DIM)
        records = LanceDBRecordStore(data_dir / "lancedb")
    await store.open()
    await records.open()
    if history is not None:
        store = HistoryStore(store, history)
        records = HistoryRecordStore(records, history)
    embedder = embedder or SwitchableEmbedder()
    clock = clock or Clock()
    counter = counter or EstimateCounter()
    maintenance = maintenance or MaintenanceSettings()
    snapshot = snapshot or SnapshotSettings()
    limits = LimitsSettings()
    sessions_settings = SessionSettings()
    writer = WriteBatcher(store, max_batch=1000)
    writer.start()
    access = AccessStatsBuffer(store, interval_s=3600, max_pending=100_000)
    access.start()
    page_tokens = PageTokenCodec(b"s" * 32)
    # Every service but keyed memory reads through the mirrors' fence (builders.py).
    read_store = fenced(store, None if pending is None else pending.settled)
    memories = MemoryService(
        store=read_store,
        embedder=embedder,
        writer=writer,
        access=access,
        page_tokens=page_tokens,
        limits=limits,
        recall=RecallSettings(),
        dedup=DedupSettings(),
        **({"clock": clock} if history is not None else {}),
    )
    indexes = KeyIndexes(
        records,
        limits,
        summary_chars=snapshot.default_read_summary_chars,
        validate=True,
        clock=clock,
    )
    keyed = KeyedMemoryService(
        records=records,
        store=store,
        embedder=embedder,
        writer=writer,
        page_tokens=page_tokens,
        limits=limits,
        keys=KeysSettings(),
        observers=[indexes],
        clock=clock,
        pending=pending,
    )
    working_settings = WorkingMemorySettings()
    working = WorkingMemoryService(
        records=records,
        page_tokens=page_tokens,
        settings=working_settings,
        limits=limits,
        clock=clock,
        # In threads, on a CPU clock of counted reads: the daemon's worker processes
        # are tested on their own.
        schemas=SchemaRunner(working_settings, evaluator=ThreadEvaluator(cpu_clock=CountingCpu())),
    )
    profiles = ProfileService(records=records, settings=ProfileSettings(), clock=clock)
    sessions = SessionService(
        records=records,
        memories=memories,
        summarizer=Summarizer(counter=counter, max_tokens=128, llm=None),
        counter=counter,
        settings=sessions_settings,
        limits=limits,
        page_tokens=page_tokens,
        clock=clock,
    )
    snapshots = SnapshotService(
        memories=memories,
        store=read_store,
        dimension=embedder.dimension,
        counter=counter,
        settings=snapshot,
        limits=limits,
        profiles=profiles,
        working=working,
        sessions=sessions,
        states=ComponentStates() if states is None else states,
        clock=clock,
    )
    default_read = DefaultReadService(
        indexes=indexes,
        records=records,
        counter=counter,
        settings=snapshot,
        limits=limits,
        keys=KeysSettings(),
        clock=clock,
    )
    state = StateService(
        records=records, settings=snapshot, sessions=sessions_settings, clock=clock
    )
    lifecycle = LifecycleService(
        LifecycleDeps(
            store=read_store,
            records=records,
            writer=writer,
            embedder=embedder,
            settings=maintenance,
            limits=limits,
            dedup=DedupSettings(),
            history_dir=history_dir or Path("/nonexistent-history"),
            keyed=keyed,
            working=working,
            sessions=sessions,
            llm=llm,
            clock=clock,
        ),
        ImportLimits(
            keys=KeysSettings(),
            working=WorkingMemorySettings(),
            profile=ProfileSettings(),
            sessions=sessions_settings,
            snapshot=snapshot,
        ),
    )
    w = World(
        store=store,
        records=records,
        embedder=embedder,
        writer=writer,
        access=access,
        memories=memories,
        keyed=keyed,
        working=working,
        profiles=profiles,
        sessions=sessions,
        snapshots=snapshots,
        default_read=default_read,
        state=state,
        lifecycle=lifecycle,
        clock=clock,
        counter=counter,
        maintenance=maintenance,
    )
    if history is not None:
        w.as_of = AsOfReads(
            history=history,
            memories=memories,
            snapshots=snapshots,
            default_reads=default_read,
            keyed=keyed,
            records=records,
            store=store,
            dimension=embedder.dimension,
            clock=clock,
        )
    try:
        yield w
    finally:
        if pending is not None:
            await pending.close()
        await access.close()
        await writer.close()
        await records.close()
        await store.close()


async def drain(events: AsyncIterator[Any]) -> list[Any]:
    return [e async for e in events]
