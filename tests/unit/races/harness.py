"""An in-process memoryd for race tests: the memory and lifecycle services over the
daemon's own composition of a real store (durability/repository.py, with the log
options the daemon uses), and helpers that run two operations on one memory at once,
many times.

Chains: ``lancedb`` is the daemon's default (write-ahead log applying behind, hot
cache, LanceDB on disk); ``memory`` the log in front of the in-process store (the
chain of every single-writer store without a cache: Qdrant local and Edge);
``qdrant-shared`` two replicas, each with its own services and no log, over one
real Qdrant server (the store's conditional writes decide between them).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

from memoryd.config import (
    ContradictionSettings,
    DedupSettings,
    DurabilitySettings,
    KeysSettings,
    LimitsSettings,
    MaintenanceSettings,
    ProfileSettings,
    RecallSettings,
    SessionSettings,
    SnapshotSettings,
    WorkingMemorySettings,
)
from memoryd.domain.lifecycle import MemorySelector
from memoryd.domain.models import Memory, Partition, SecurityLevel
from memoryd.domain.principal import CallScope, Principal, Role
from memoryd.domain.requests import MemoryDraft, MemoryPatch
from memoryd.durability.repository import HotCacheOptions, LogOptions, compose_repository
from memoryd.durability.wiring import APPLY_BEHIND_EMBEDDED
from memoryd.embedding import HashingEmbedder
from memoryd.resilience.degradation import ComponentStates
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.lifecycle.bulk import LifecycleDeps
from memoryd.service.lifecycle.importer import ImportLimits
from memoryd.service.lifecycle.service import LifecycleService
from memoryd.service.memories.access_stats import AccessStatsBuffer
from memoryd.service.memories.contradiction import ContradictionResolver
from memoryd.service.memories.service import MemoryService
from memoryd.storage.base import Store
from memoryd.storage.lancedb import LanceDBStore
from memoryd.storage.lancedb.records import LanceDBRecordStore
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from memoryd.storage.qdrant import QdrantOptions, QdrantRecordStore, QdrantStore
from memoryd.storage.records import RecordStore
from tests.clock import INSTANTS, SteppingClock
from tests.qdrant_server import QdrantServer

DIM = 64
#: Concurrent pairs of operations per race (issue 30: at least 150 each).
TRIALS = 150
#: Trials run at once.
PARALLEL = 10
#: Trials on LanceDB of the races that take many table commits or scans per trial
#: (an agent of its own, a consolidation, a flush of statistics); every race runs
#: TRIALS times on the ``memory`` chain, whose log's face decides exactly as it does
#: in front of LanceDB (durability/facades.py), and the cheap ones TRIALS times on
#: LanceDB too.
HEAVY_LANCEDB_TRIALS = 50


def trials_on(chain: str, *, heavy: bool = False) -> int:
    return HEAVY_LANCEDB_TRIALS if heavy and chain == "lancedb" else TRIALS


CHAINS = ["lancedb", "memory"]
#: Rows written between two optimize() runs of the LanceDB table.
REFRESH_ROWS = 300
T = TypeVar("T")


def scope_for(agent: str) -> CallScope:
    principal = Principal("race", "t1", frozenset({"*"}), SecurityLevel.RESTRICTED, frozenset(Role))
    return CallScope(principal, Partition("t1", agent))


@dataclass
class Replica:
    """One daemon's services over one composed store."""

    memories: MemoryService
    lifecycle: LifecycleService
    access: AccessStatsBuffer
    store: Store


@dataclass
class Rig:
    """The services race tests call (``other``: a second replica, or the same one)."""

    one: Replica
    other: Replica
    clock: SteppingClock

    @property
    def memories(self) -> MemoryService:
        return self.one.memories

    @property
    def lifecycle(self) -> LifecycleService:
        return self.one.lifecycle

    async def remember(self, scope: CallScope, content: str, **draft: Any) -> Memory:
        made = await self.memories.remember(scope, MemoryDraft(content, **draft), dedup=False)
        return made.memory

    async def stored(self, scope: CallScope, memory_id: str) -> Memory:
        [found] = await self.one.store.get(scope.partition, [memory_id])
        return found

    def older(self, days: int) -> dict[str, Any]:
        """Draft fields of a memory learned ``days`` ago (old enough to consolidate)."""
        return {"created_at": self.clock() - timedelta(days=days)}


def patch(**values: object) -> MemoryPatch:
    return MemoryPatch(fields=frozenset(values), values=dict(values))


def ids(*memory_ids: str) -> MemorySelector:
    return MemorySelector(ids=memory_ids)


async def both(first: Awaitable[T], second: Awaitable[object]) -> tuple[T, object]:
    """Run two operations at once; returns both outcomes (an exception is an outcome:
    the test decides whether it was acknowledged)."""
    a, b = await asyncio.gather(first, second, return_exceptions=True)
    if isinstance(a, BaseException) and not isinstance(a, Exception):
        raise a
    return a, b  # type: ignore[return-value]


def acknowledged(outcome: object) -> bool:
    if isinstance(outcome, BaseException):
        raise AssertionError(f"the operation failed: {outcome!r}") from outcome
    return True


def fresh_scope() -> CallScope:
    return scope_for(f"race-{uuid.uuid4().hex[:12]}")


def _log(root: Path, store: Store) -> LogOptions:
    """The daemon's write-ahead log options (durability/wiring.py): on LanceDB writes
    are answered once logged and applied behind, 100 ms of them per commit."""
    return LogOptions(
        wal_dir=root / "wal",
        store_dir=root,
        segment_bytes=2**22,
        checkpoint_interval_s=1.0,
        apply_behind=APPLY_BEHIND_EMBEDDED if store.capabilities.group_commit else 0,
        apply_delay_s=DurabilitySettings().apply_delay_ms / 1000,
    )


async def _replica(
    stack: AsyncExitStack,
    root: Path,
    store: Store,
    records: RecordStore,
    clock: SteppingClock,
    relations: bool,
) -> Replica:
    repo = await compose_repository(
        store,
        records,
        dimension=DIM,
        stack=stack,
        states=ComponentStates(),
        wal=None if store.capabilities.shared else _log(root, store),
        retry_max_s=0.2,
        hot_cache=HotCacheOptions(64 * 2**20) if store.capabilities.wants_hot_cache else None,
    )
    embedder = HashingEmbedder(DIM)
    writer = WriteBatcher(repo.store, max_batch=1000)
    writer.start()
    stack.push_async_callback(writer.close)
    access = AccessStatsBuffer(repo.store, interval_s=3600, max_pending=1_000_000)
    access.start()
    stack.push_async_callback(access.close)
    # Every candidate related by the rules (the hashing embedder has no sense of
    # which values are of one kind).
    contradictions = ContradictionSettings(
        mode="rules" if relations else "off", value_similarity=0.0, min_similarity=0.3
    )
    memories = MemoryService(
        store=repo.store,
        embedder=embedder,
        writer=writer,
        access=access,
        page_tokens=PageTokenCodec(b"r" * 32),
        limits=LimitsSettings(),
        recall=RecallSettings(),
        dedup=DedupSettings(),
        contradictions=ContradictionResolver(repo.store, embedder, contradictions),
        clock=clock,
    )
    deps = LifecycleDeps(
        store=repo.store,
        records=repo.records,
        writer=writer,
        embedder=embedder,
        settings=MaintenanceSettings(),
        limits=LimitsSettings(),
        dedup=DedupSettings(),
        history_dir=root / "history",
        clock=clock,
    )
    limits = ImportLimits(
        KeysSettings(),
        WorkingMemorySettings(),
        ProfileSettings(),
        SessionSettings(),
        SnapshotSettings(),
    )
    return Replica(memories, LifecycleService(deps, limits), access, repo.store)


@asynccontextmanager
async def rig(
    chain: str, root: Path, server: QdrantServer | None = None, *, relations: bool = True
) -> AsyncIterator[Rig]:
    """``relations`` False: Remember relates no memories (contradictions "off"), so
    trials sharing an agent never archive each other's memories."""
    clock = SteppingClock(INSTANTS[0])
    async with AsyncExitStack() as stack:
        if chain == "lancedb":
            db = root / "lancedb"
            # The daemon folds new fragments into the table in the background every
            # 20k rows; here every few hundred, so thousands of small commits do not
            # slow every later read.
            lance = LanceDBStore(db, DIM, index_refresh_rows=REFRESH_ROWS)
            one = await _replica(stack, root, lance, LanceDBRecordStore(db), clock, relations)
            yield Rig(one, one, clock)
        elif chain == "memory":
            one = await _replica(
                stack, root, InMemoryStore(DIM), InMemoryRecordStore(), clock, relations
            )
            yield Rig(one, one, clock)
        else:
            assert server is not None
            options = QdrantOptions(
                url=server.url,
                grpc_port=server.grpc_port,
                collection_prefix=f"race{uuid.uuid4().hex[:10]}_",
                shared=True,
            )
            replicas = []
            for n in range(2):
                store = QdrantStore.from_options(options, DIM)
                records = QdrantRecordStore.from_options(options)
                replicas.append(
                    await _replica(stack, root / f"r{n}", store, records, clock, relations)
                )
            yield Rig(replicas[0], replicas[1], clock)


#: A trial's last step, after every trial of its group ran: whether what it
#: acknowledged is all there.
Check = Callable[[], Awaitable[bool]]


async def reverted(
    run: Callable[[int], Awaitable[Check]], n: int = TRIALS, parallel: int = PARALLEL
) -> str:
    """Run ``n`` trials, ``parallel`` at a time (each races its own pair of operations on
    its own memory; the groups add load, and LanceDB commits them together), then
    check each; "" when no acknowledged change was lost, else how many and which."""
    lost: list[int] = []
    for start in range(0, n, parallel):
        group = range(start, min(n, start + parallel))
        checks = await asyncio.gather(*(run(i) for i in group))
        lost.extend([i for i, check in zip(group, checks, strict=True) if not await check()])
    return f"{len(lost)}/{n} trials lost an acknowledged change: {lost[:10]}" if lost else ""
