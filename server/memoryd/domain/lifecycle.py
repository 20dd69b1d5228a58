"""Domain objects of the LifecycleService: stats, selections, long operations'
progress and results, and the records of an export (``memoryd.export.v1``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memoryd.domain.agent_state import (
    AgentProfile,
    FixedZoneEntry,
    LongTermMemoryMode,
    SessionCompression,
    SessionMessage,
    WorkingMemory,
)
from memoryd.domain.keyed import KeyEntry
from memoryd.domain.models import Memory, MemoryType, TagMatch
from memoryd.domain.requests import Degradation
from memoryd.domain.snapshot import StateComponent

#: ExportHeader.format of this version of the export format.
EXPORT_FORMAT = "memoryd.export.v1"


@dataclass(frozen=True, slots=True)
class Progress:
    """One step of a long operation (streamed to the caller)."""

    phase: str
    done: int = 0
    total: int = 0
    message: str = ""


# ---------------------------------------------------------------- stats


@dataclass(frozen=True, slots=True)
class Stats:
    """Counts of a partition for GetStats, of what the caller may see."""

    #: Every memory the caller may see, archived ones included.
    memories: int
    by_memory_type: dict[str, int]
    #: Only levels at or below the caller's clearance.
    by_security_level: dict[str, int]
    archived: int
    keys: int
    sessions: int
    working_scopes: int
    average_importance: float
    #: Bytes of the whole store on disk (0 when the backend cannot tell, or the
    #: caller is not an admin: it covers every tenant).
    store_bytes: int
    last_maintenance_at: datetime | None
    by_embedding_model: dict[str, int]


# ---------------------------------------------------------------- selections


@dataclass(frozen=True, slots=True)
class MemorySelector:
    """Ids, or a filter (all its criteria must hold). Never empty."""

    ids: tuple[str, ...] = ()
    namespace: str | None = None
    tags: tuple[str, ...] = ()
    tag_match: TagMatch = TagMatch.ANY
    memory_types: tuple[MemoryType, ...] = ()
    created_before: datetime | None = None
    created_after: datetime | None = None


@dataclass(frozen=True, slots=True)
class PruneCriteria:
    """Memories matching every given criterion go; at least one must be given."""

    created_before: datetime | None = None
    tags: tuple[str, ...] = ()
    #: Memories accessed fewer times than this.
    min_access_count: int | None = None
    memory_types: tuple[MemoryType, ...] = ()
    dry_run: bool = False
    #: Only this namespace (None: every one); alone it deletes the namespace.
    namespace: str | None = None


@dataclass(frozen=True, slots=True)
class PruneOutcome:
    """What Prune deleted (or would, with dry_run)."""

    pruned: int
    ids: list[str]
    dry_run: bool


@dataclass(frozen=True, slots=True)
class EraseRequest:
    """The input of Erase (docs/erasure.md): the agent's whole partition, these memory
    ids of it, everything of it holding ``subject`` (of every agent of the tenant with
    ``all_agents``), or its keys under ``key_prefix`` (service/lifecycle/subject.py);
    ``dry_run`` reports what would go and changes nothing."""

    whole_agent: bool = False
    ids: tuple[str, ...] = ()
    dry_run: bool = False
    subject: str = ""
    #: Every key under this directory, with its whole history and mirror memories.
    key_prefix: str = ""
    #: The subject in every agent of the caller's tenant (admin, highest clearance).
    all_agents: bool = False


@dataclass(frozen=True, slots=True)
class EraseReceipt:
    """What Erase checked and removed: a count per place (every place it checked is
    listed, 0 included), the memory ids erased, and ``digest``: sha256 over the
    sorted ids and the sorted ``place=count`` lines."""

    places: dict[str, int]
    ids: tuple[str, ...]
    digest: str
    dry_run: bool


@dataclass(frozen=True, slots=True)
class VerifyErasureRequest:
    """The input of VerifyErasure: byte strings (text, ids) that must not be found."""

    needles: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Residue:
    """A file under the data directory that still holds ``needles[needle]``."""

    path: str
    needle: int
    count: int


@dataclass(frozen=True, slots=True)
class ErasureCheck:
    """What VerifyErasure scanned, and every residue found (none: erased)."""

    files_scanned: int
    bytes_scanned: int
    residue: tuple[Residue, ...]
    #: Top-level places of the data directory not scanned (shared by other tenants).
    skipped: tuple[str, ...] = ()


# ---------------------------------------------------------------- long operations


@dataclass(frozen=True, slots=True)
class CompactOptions:
    """Overrides of the configured near-duplicate merging for one Compact."""

    merge_group_threshold: int | None = None
    merge_similarity: float | None = None


@dataclass(frozen=True, slots=True)
class CompactResult:
    """What a Compact purged, merged and optimised."""

    tombstones_purged: int = 0
    expired_purged: int = 0
    merged: int = 0
    store_optimized: bool = False
    #: Key-history writes moved to the archive (history_policy "archive").
    history_archived: int = 0


@dataclass(frozen=True, slots=True)
class MaintenanceOptions:
    """Overrides of the configured maintenance policy for one run."""

    max_entries: int | None = None
    retention_days: int | None = None
    #: None: maintenance.consolidation.enabled.
    consolidate: bool | None = None


@dataclass(frozen=True, slots=True)
class MaintenanceResult:
    """What a maintenance run archived, deleted, expired, compacted and consolidated."""

    archived: int
    deleted_by_retention: int
    expired: int
    compacted: bool
    finished_at: datetime
    #: Memories archived into consolidated ones.
    consolidated: int = 0
    degraded: tuple[Degradation, ...] = ()


@dataclass(frozen=True, slots=True)
class ConsolidateOptions:
    """None: the value of maintenance.consolidation.*."""

    dry_run: bool = False
    min_age_days: int | None = None
    min_group_size: int | None = None
    #: Only groups of these tags (no similarity clusters); empty: every group.
    tags: tuple[str, ...] = ()
    #: Group by memory type instead of tags and similarity (the layered design's
    #: compression, maintenance.compression).
    by_type: bool = False
    #: Only memories accessed fewer times than this; None: any.
    max_access_count: int | None = None
    #: Derived memories a group may become (without an LLM); None: 1.
    max_parts: int | None = None


@dataclass(frozen=True, slots=True)
class ConsolidatedGroup:
    """One group a consolidation condensed (or would) into a derived memory."""

    #: "tag:<tag>", "cluster" or "type:<memory type>".
    group: str
    source_ids: tuple[str, ...]
    content: str
    #: "llm" or "merge".
    method: str
    #: Empty on a dry run.
    derived_id: str = ""


@dataclass(frozen=True, slots=True)
class ConsolidateResult:
    """What a Consolidate did (or would, with dry_run)."""

    groups: int
    consolidated: int
    dry_run: bool
    details: tuple[ConsolidatedGroup, ...] = ()
    degraded: tuple[Degradation, ...] = ()


@dataclass(frozen=True, slots=True)
class ReembedResult:
    """What a Reembed re-embedded, and into which model."""

    reembedded: int
    embedding_model: str


# ---------------------------------------------------------------- export / import


@dataclass(frozen=True, slots=True)
class ExportHeader:
    """The first record of an export: format, tenant, agent, time and embedding model."""

    tenant_id: str
    #: The exported agent; "" for a tenant-wide export.
    agent_id: str
    exported_at: datetime
    embedding_model: str
    embedding_dimension: int
    format: str = EXPORT_FORMAT


@dataclass(frozen=True, slots=True)
class ExportedMemory:
    """One memory of an export."""

    #: With its vector when vectors were requested.
    memory: Memory


@dataclass(frozen=True, slots=True)
class ExportedKeyEvent:
    """One write of a key's history in an export."""

    agent_id: str
    entry: KeyEntry
    #: The key's current slot is this write.
    current: bool = False


@dataclass(frozen=True, slots=True)
class ExportedWorkingMemory:
    """One working-memory scope of an export."""

    agent_id: str
    working: WorkingMemory


@dataclass(frozen=True, slots=True)
class ExportedProfile:
    """An agent's profile in an export."""

    agent_id: str
    profile: AgentProfile


@dataclass(frozen=True, slots=True)
class ExportedSession:
    """A session's header, fixed zone and summary in an export."""

    agent_id: str
    session_id: str
    created_at: datetime
    updated_at: datetime
    version: int
    ttl: timedelta
    fixed_zone: list[FixedZoneEntry] = field(default_factory=list)
    summary: str = ""
    messages: list[SessionMessage] = field(default_factory=list)
    expires_at: datetime | None = None
    closed: bool = False
    summarizer: str = ""
    summary_degraded: list[Degradation] = field(default_factory=list)
    message_count: int = 0
    #: ``messages`` are the turns after this seq; the earlier stored ones are
    #: ExportedSessionMessage items. None: an export from before they were kept
    #: (every message of it is in ``messages``).
    summarized_through_seq: int | None = None
    stored_messages: int | None = None
    compression: SessionCompression = field(default_factory=SessionCompression)
    long_term_memory_mode: LongTermMemoryMode = LongTermMemoryMode.AGENT_CONTROL


@dataclass(frozen=True, slots=True)
class ExportedSessionMessage:
    """A summarised message a session keeps until it expires."""

    agent_id: str
    session_id: str
    #: Its session's created_at (a session re-created under the same id is another).
    session_created_at: datetime
    message: SessionMessage


@dataclass(frozen=True, slots=True)
class ExportedSessionAttachment:
    """The full content of an offloaded session message (seq ``seq``)."""

    agent_id: str
    session_id: str
    #: Its session's created_at (a session re-created under the same id is another).
    session_created_at: datetime
    seq: int
    content: str


@dataclass(frozen=True, slots=True)
class ExportedState:
    """One saved component of a session in an export."""

    agent_id: str
    session_id: str
    component: StateComponent


ExportItem = (
    ExportHeader
    | ExportedMemory
    | ExportedKeyEvent
    | ExportedWorkingMemory
    | ExportedProfile
    | ExportedSession
    | ExportedSessionMessage
    | ExportedSessionAttachment
    | ExportedState
)


@dataclass(frozen=True, slots=True)
class ImportRejection:
    """One record an Import did not store, and why."""

    #: Position of the record in the import stream (0-based).
    index: int
    reason: str


@dataclass(slots=True)
class ImportOutcome:
    """What an Import stored, skipped and rejected."""

    imported: int = 0
    #: Already present at the same or a newer version.
    skipped: int = 0
    rejected: list[ImportRejection] = field(default_factory=list)
