"""Bulk writes for lifecycle operations, in batches that leave room for requests (see
common/scanning.py for the scans they start from).

Rewrites re-read each batch (with vectors) and write it conditionally
(service/common/memory_writes.py): a memory changed by a request a moment earlier is
rewritten from its current state, not from the scan's copy, and one changed between
that read and the write makes the batch read and change it again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memoryd.config import DedupSettings, LimitsSettings, MaintenanceSettings
from memoryd.domain.models import Memory, MemoryFilter, Partition, utcnow
from memoryd.domain.records import RecordKind
from memoryd.embedding.base import Embedder
from memoryd.service.agent_state.working import WorkingMemoryService
from memoryd.service.common import scanning
from memoryd.service.common.llm import ChatClient
from memoryd.service.common.memory_writes import MemoryWrites
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.keyed.service import KeyedMemoryService
from memoryd.service.sessions.service import SessionService
from memoryd.storage.base import Store
from memoryd.storage.records import RecordStore

#: Every memory of a partition: archived and expired ones included.
EVERYTHING = MemoryFilter(include_archived=True)
#: Record kinds that hold an agent's data (COUNTER records are bookkeeping).
DATA_KINDS = (
    RecordKind.KEY,
    RecordKind.KEY_EVENT,
    RecordKind.WORKING,
    RecordKind.PROFILE,
    RecordKind.SESSION,
    RecordKind.SESSION_MESSAGE,
    RecordKind.SESSION_ATTACHMENT,
    RecordKind.STATE,
)


@dataclass(slots=True)
class LifecycleDeps:
    """What the lifecycle operations work with."""

    store: Store
    records: RecordStore
    writer: WriteBatcher
    embedder: Embedder
    settings: MaintenanceSettings
    limits: LimitsSettings
    dedup: DedupSettings
    #: Root of the key-history archive (history_policy "archive").
    history_dir: Path
    keyed: KeyedMemoryService | None = None
    working: WorkingMemoryService | None = None
    sessions: SessionService | None = None
    #: The optional chat endpoint (consolidation summaries).
    llm: ChatClient | None = None
    clock: Callable[[], datetime] = utcnow

    @property
    def batch(self) -> int:
        return self.settings.batch_size

    @property
    def writes(self) -> MemoryWrites:
        """Read-modify-writes of the store's memories."""
        return MemoryWrites(self.store)


async def rewrite(
    deps: LifecycleDeps,
    partition: Partition,
    ids: Sequence[str],
    change: Callable[[Memory], Memory | None],
) -> int:
    """Apply ``change`` to each memory (re-read with its vector); None leaves one as it
    is. Returns how many were written."""
    return await deps.writes.rewrite(partition, ids, change, batch=deps.batch)


async def delete(deps: LifecycleDeps, partition: Partition, ids: Sequence[str]) -> int:
    gone = 0
    for chunk in scanning.chunks(ids, deps.batch):
        gone += len(await deps.store.delete(partition, chunk))
        await scanning.pause()
    return gone


async def delete_records(
    deps: LifecycleDeps, partition: Partition, kind: RecordKind, keys: Sequence[str]
) -> int:
    gone = 0
    for chunk in scanning.chunks(keys, deps.batch):
        gone += len(await deps.records.delete_records(partition, kind, chunk))
        await scanning.pause()
    return gone


async def delete_partition_records(
    deps: LifecycleDeps, partition: Partition, *, dry_run: bool = False
) -> dict[RecordKind, int]:
    """Every record of the partition, of every kind (counters included), deleted;
    returns how many went (with ``dry_run``: would go) of each kind."""
    counts: dict[RecordKind, int] = {}
    for kind in (*DATA_KINDS, RecordKind.COUNTER):
        keys: list[str] = []
        async for records in scanning.scan_records(deps.records, partition, kind, deps.batch):
            keys.extend(r.key for r in records)
        counts[kind] = len(keys) if dry_run else await delete_records(deps, partition, kind, keys)
    return counts
