"""The services behind the operation layer; only operations reach them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from memoryd.domain.errors import Unimplemented
from memoryd.service.agent_state.profile import ProfileService
from memoryd.service.agent_state.state import StateService
from memoryd.service.agent_state.working import WorkingMemoryService
from memoryd.service.changes.service import ChangeFeedService
from memoryd.service.keyed.service import KeyedMemoryService
from memoryd.service.lifecycle.service import LifecycleService
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions.service import SessionService
from memoryd.service.snapshot.as_of import AsOfReads
from memoryd.service.snapshot.default_read import DefaultReadService
from memoryd.service.snapshot.service import SnapshotService

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Services:
    """Every feature service; one left out answers UNIMPLEMENTED."""

    memories: MemoryService
    keyed_memory: KeyedMemoryService | None = None
    working_memory: WorkingMemoryService | None = None
    profile_service: ProfileService | None = None
    session_service: SessionService | None = None
    snapshot_service: SnapshotService | None = None
    default_read_service: DefaultReadService | None = None
    state_service: StateService | None = None
    lifecycle_service: LifecycleService | None = None
    change_feed: ChangeFeedService | None = None
    as_of_reads: AsOfReads | None = None

    @property
    def keyed(self) -> KeyedMemoryService:
        """The keyed-memory service (UNIMPLEMENTED when this server has none)."""
        return _need(self.keyed_memory, "keyed memory is not enabled in this server")

    @property
    def working(self) -> WorkingMemoryService:
        """The working-memory service (UNIMPLEMENTED when this server has none)."""
        return _need(self.working_memory, "working memory is not enabled in this server")

    @property
    def profiles(self) -> ProfileService:
        """The agent-profile service (UNIMPLEMENTED when this server has none)."""
        return _need(self.profile_service, "agent profiles are not enabled in this server")

    @property
    def sessions(self) -> SessionService:
        """The session service (UNIMPLEMENTED when this server has none)."""
        return _need(self.session_service, "sessions are not enabled in this server")

    @property
    def snapshots(self) -> SnapshotService:
        """The snapshot builder (UNIMPLEMENTED when this server has none)."""
        return _need(self.snapshot_service, "BuildSnapshot is not enabled in this server")

    @property
    def default_read(self) -> DefaultReadService:
        """The default read over keyed memory (UNIMPLEMENTED when this server has none)."""
        return _need(
            self.default_read_service, "DefaultRead (keyed memory) is not enabled in this server"
        )

    @property
    def states(self) -> StateService:
        """The saved-state service (UNIMPLEMENTED when this server has none)."""
        return _need(
            self.state_service, "saved state (SaveState, LoadState) is not enabled in this server"
        )

    @property
    def as_of(self) -> AsOfReads:
        """Reads as of a past moment (UNIMPLEMENTED when this server has none)."""
        return _need(self.as_of_reads, "as-of reads are not enabled in this server")

    @property
    def lifecycle(self) -> LifecycleService:
        """The lifecycle service (UNIMPLEMENTED when this server has none)."""
        return _need(self.lifecycle_service, "the lifecycle service is not enabled in this server")

    @property
    def changes(self) -> ChangeFeedService:
        """The change feed (UNIMPLEMENTED without a write-ahead log, which it reads)."""
        return _need(
            self.change_feed,
            "Watch reads the write-ahead log, which this server runs without: a shared "
            "store (replicas have no local log; not offered yet) or "
            "durability.wal_enabled false (docs/watch.md)",
        )


def _need(service: T | None, message: str) -> T:
    if service is None:
        raise Unimplemented(message)
    return service
