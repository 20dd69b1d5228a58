import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from memoryd_proto.v1 import common_pb2 as _common_pb2
from memoryd_proto.v1 import memory_service_pb2 as _memory_service_pb2
from memoryd_proto.v1 import snapshot_service_pb2 as _snapshot_service_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetStatsRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class CountByName(_message.Message):
    __slots__ = ("name", "count")
    NAME_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    name: str
    count: int
    def __init__(self, name: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class GetStatsResponse(_message.Message):
    __slots__ = ("memories", "by_memory_type", "by_security_level", "archived", "keys", "sessions", "working_scopes", "average_importance", "store_bytes", "last_maintenance_at", "by_embedding_model")
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    BY_MEMORY_TYPE_FIELD_NUMBER: _ClassVar[int]
    BY_SECURITY_LEVEL_FIELD_NUMBER: _ClassVar[int]
    ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    KEYS_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    WORKING_SCOPES_FIELD_NUMBER: _ClassVar[int]
    AVERAGE_IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    STORE_BYTES_FIELD_NUMBER: _ClassVar[int]
    LAST_MAINTENANCE_AT_FIELD_NUMBER: _ClassVar[int]
    BY_EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    memories: int
    by_memory_type: _containers.RepeatedCompositeFieldContainer[CountByName]
    by_security_level: _containers.RepeatedCompositeFieldContainer[CountByName]
    archived: int
    keys: int
    sessions: int
    working_scopes: int
    average_importance: float
    store_bytes: int
    last_maintenance_at: _timestamp_pb2.Timestamp
    by_embedding_model: _containers.RepeatedCompositeFieldContainer[CountByName]
    def __init__(self, memories: _Optional[int] = ..., by_memory_type: _Optional[_Iterable[_Union[CountByName, _Mapping]]] = ..., by_security_level: _Optional[_Iterable[_Union[CountByName, _Mapping]]] = ..., archived: _Optional[int] = ..., keys: _Optional[int] = ..., sessions: _Optional[int] = ..., working_scopes: _Optional[int] = ..., average_importance: _Optional[float] = ..., store_bytes: _Optional[int] = ..., last_maintenance_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., by_embedding_model: _Optional[_Iterable[_Union[CountByName, _Mapping]]] = ...) -> None: ...

class MemorySelector(_message.Message):
    __slots__ = ("ids", "namespace", "tags", "tag_match", "memory_types", "created_before", "created_after")
    IDS_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    TAG_MATCH_FIELD_NUMBER: _ClassVar[int]
    MEMORY_TYPES_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    namespace: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    tag_match: _common_pb2.TagMatch
    memory_types: _containers.RepeatedScalarFieldContainer[_common_pb2.MemoryType]
    created_before: _timestamp_pb2.Timestamp
    created_after: _timestamp_pb2.Timestamp
    def __init__(self, ids: _Optional[_Iterable[str]] = ..., namespace: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., tag_match: _Optional[_Union[_common_pb2.TagMatch, str]] = ..., memory_types: _Optional[_Iterable[_Union[_common_pb2.MemoryType, str]]] = ..., created_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ArchiveRequest(_message.Message):
    __slots__ = ("agent_id", "selector")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    selector: MemorySelector
    def __init__(self, agent_id: _Optional[str] = ..., selector: _Optional[_Union[MemorySelector, _Mapping]] = ...) -> None: ...

class ArchiveResponse(_message.Message):
    __slots__ = ("archived",)
    ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    archived: int
    def __init__(self, archived: _Optional[int] = ...) -> None: ...

class RestoreRequest(_message.Message):
    __slots__ = ("agent_id", "selector", "undo_consolidation")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SELECTOR_FIELD_NUMBER: _ClassVar[int]
    UNDO_CONSOLIDATION_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    selector: MemorySelector
    undo_consolidation: bool
    def __init__(self, agent_id: _Optional[str] = ..., selector: _Optional[_Union[MemorySelector, _Mapping]] = ..., undo_consolidation: _Optional[bool] = ...) -> None: ...

class RestoreResponse(_message.Message):
    __slots__ = ("restored", "consolidations_undone")
    RESTORED_FIELD_NUMBER: _ClassVar[int]
    CONSOLIDATIONS_UNDONE_FIELD_NUMBER: _ClassVar[int]
    restored: int
    consolidations_undone: int
    def __init__(self, restored: _Optional[int] = ..., consolidations_undone: _Optional[int] = ...) -> None: ...

class PruneRequest(_message.Message):
    __slots__ = ("agent_id", "created_before", "tags", "min_access_count", "memory_types", "dry_run", "namespace")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    MIN_ACCESS_COUNT_FIELD_NUMBER: _ClassVar[int]
    MEMORY_TYPES_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    created_before: _timestamp_pb2.Timestamp
    tags: _containers.RepeatedScalarFieldContainer[str]
    min_access_count: int
    memory_types: _containers.RepeatedScalarFieldContainer[_common_pb2.MemoryType]
    dry_run: bool
    namespace: str
    def __init__(self, agent_id: _Optional[str] = ..., created_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., tags: _Optional[_Iterable[str]] = ..., min_access_count: _Optional[int] = ..., memory_types: _Optional[_Iterable[_Union[_common_pb2.MemoryType, str]]] = ..., dry_run: _Optional[bool] = ..., namespace: _Optional[str] = ...) -> None: ...

class PruneResponse(_message.Message):
    __slots__ = ("pruned", "ids", "dry_run")
    PRUNED_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    pruned: int
    ids: _containers.RepeatedScalarFieldContainer[str]
    dry_run: bool
    def __init__(self, pruned: _Optional[int] = ..., ids: _Optional[_Iterable[str]] = ..., dry_run: _Optional[bool] = ...) -> None: ...

class ResetRequest(_message.Message):
    __slots__ = ("agent_id", "confirm")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIRM_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    confirm: bool
    def __init__(self, agent_id: _Optional[str] = ..., confirm: _Optional[bool] = ...) -> None: ...

class ResetResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: int
    def __init__(self, deleted: _Optional[int] = ...) -> None: ...

class EraseRequest(_message.Message):
    __slots__ = ("agent_id", "whole_agent", "ids", "dry_run", "subject", "key_prefix", "all_agents")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    WHOLE_AGENT_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    KEY_PREFIX_FIELD_NUMBER: _ClassVar[int]
    ALL_AGENTS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    whole_agent: bool
    ids: _containers.RepeatedScalarFieldContainer[str]
    dry_run: bool
    subject: str
    key_prefix: str
    all_agents: bool
    def __init__(self, agent_id: _Optional[str] = ..., whole_agent: _Optional[bool] = ..., ids: _Optional[_Iterable[str]] = ..., dry_run: _Optional[bool] = ..., subject: _Optional[str] = ..., key_prefix: _Optional[str] = ..., all_agents: _Optional[bool] = ...) -> None: ...

class EraseResponse(_message.Message):
    __slots__ = ("places", "ids", "digest", "dry_run")
    PLACES_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    places: _containers.RepeatedCompositeFieldContainer[CountByName]
    ids: _containers.RepeatedScalarFieldContainer[str]
    digest: str
    dry_run: bool
    def __init__(self, places: _Optional[_Iterable[_Union[CountByName, _Mapping]]] = ..., ids: _Optional[_Iterable[str]] = ..., digest: _Optional[str] = ..., dry_run: _Optional[bool] = ...) -> None: ...

class VerifyErasureRequest(_message.Message):
    __slots__ = ("needles",)
    NEEDLES_FIELD_NUMBER: _ClassVar[int]
    needles: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, needles: _Optional[_Iterable[str]] = ...) -> None: ...

class ErasureResidue(_message.Message):
    __slots__ = ("path", "needle", "count")
    PATH_FIELD_NUMBER: _ClassVar[int]
    NEEDLE_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    path: str
    needle: int
    count: int
    def __init__(self, path: _Optional[str] = ..., needle: _Optional[int] = ..., count: _Optional[int] = ...) -> None: ...

class VerifyErasureResponse(_message.Message):
    __slots__ = ("files_scanned", "bytes_scanned", "residue", "skipped")
    FILES_SCANNED_FIELD_NUMBER: _ClassVar[int]
    BYTES_SCANNED_FIELD_NUMBER: _ClassVar[int]
    RESIDUE_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    files_scanned: int
    bytes_scanned: int
    residue: _containers.RepeatedCompositeFieldContainer[ErasureResidue]
    skipped: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, files_scanned: _Optional[int] = ..., bytes_scanned: _Optional[int] = ..., residue: _Optional[_Iterable[_Union[ErasureResidue, _Mapping]]] = ..., skipped: _Optional[_Iterable[str]] = ...) -> None: ...

class CompactRequest(_message.Message):
    __slots__ = ("agent_id", "merge_group_threshold", "merge_similarity")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MERGE_GROUP_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    MERGE_SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    merge_group_threshold: int
    merge_similarity: float
    def __init__(self, agent_id: _Optional[str] = ..., merge_group_threshold: _Optional[int] = ..., merge_similarity: _Optional[float] = ...) -> None: ...

class CompactResult(_message.Message):
    __slots__ = ("tombstones_purged", "expired_purged", "merged", "store_optimized")
    TOMBSTONES_PURGED_FIELD_NUMBER: _ClassVar[int]
    EXPIRED_PURGED_FIELD_NUMBER: _ClassVar[int]
    MERGED_FIELD_NUMBER: _ClassVar[int]
    STORE_OPTIMIZED_FIELD_NUMBER: _ClassVar[int]
    tombstones_purged: int
    expired_purged: int
    merged: int
    store_optimized: bool
    def __init__(self, tombstones_purged: _Optional[int] = ..., expired_purged: _Optional[int] = ..., merged: _Optional[int] = ..., store_optimized: _Optional[bool] = ...) -> None: ...

class CompactResponse(_message.Message):
    __slots__ = ("progress", "result")
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    progress: _common_pb2.Progress
    result: CompactResult
    def __init__(self, progress: _Optional[_Union[_common_pb2.Progress, _Mapping]] = ..., result: _Optional[_Union[CompactResult, _Mapping]] = ...) -> None: ...

class RunMaintenanceRequest(_message.Message):
    __slots__ = ("agent_id", "max_entries", "retention_days", "consolidate")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MAX_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    RETENTION_DAYS_FIELD_NUMBER: _ClassVar[int]
    CONSOLIDATE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    max_entries: int
    retention_days: int
    consolidate: bool
    def __init__(self, agent_id: _Optional[str] = ..., max_entries: _Optional[int] = ..., retention_days: _Optional[int] = ..., consolidate: _Optional[bool] = ...) -> None: ...

class MaintenanceResult(_message.Message):
    __slots__ = ("archived", "deleted_by_retention", "expired", "compacted", "finished_at", "consolidated", "degraded")
    ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    DELETED_BY_RETENTION_FIELD_NUMBER: _ClassVar[int]
    EXPIRED_FIELD_NUMBER: _ClassVar[int]
    COMPACTED_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    CONSOLIDATED_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    archived: int
    deleted_by_retention: int
    expired: int
    compacted: bool
    finished_at: _timestamp_pb2.Timestamp
    consolidated: int
    degraded: _containers.RepeatedCompositeFieldContainer[_common_pb2.Degradation]
    def __init__(self, archived: _Optional[int] = ..., deleted_by_retention: _Optional[int] = ..., expired: _Optional[int] = ..., compacted: _Optional[bool] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., consolidated: _Optional[int] = ..., degraded: _Optional[_Iterable[_Union[_common_pb2.Degradation, _Mapping]]] = ...) -> None: ...

class ConsolidateRequest(_message.Message):
    __slots__ = ("agent_id", "dry_run", "min_age_days", "min_group_size", "tags")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    MIN_AGE_DAYS_FIELD_NUMBER: _ClassVar[int]
    MIN_GROUP_SIZE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    dry_run: bool
    min_age_days: int
    min_group_size: int
    tags: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, agent_id: _Optional[str] = ..., dry_run: _Optional[bool] = ..., min_age_days: _Optional[int] = ..., min_group_size: _Optional[int] = ..., tags: _Optional[_Iterable[str]] = ...) -> None: ...

class ConsolidatedGroup(_message.Message):
    __slots__ = ("group", "source_ids", "derived_id", "content", "method")
    GROUP_FIELD_NUMBER: _ClassVar[int]
    SOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    DERIVED_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    group: str
    source_ids: _containers.RepeatedScalarFieldContainer[str]
    derived_id: str
    content: str
    method: str
    def __init__(self, group: _Optional[str] = ..., source_ids: _Optional[_Iterable[str]] = ..., derived_id: _Optional[str] = ..., content: _Optional[str] = ..., method: _Optional[str] = ...) -> None: ...

class ConsolidateResult(_message.Message):
    __slots__ = ("groups", "consolidated", "dry_run", "details", "degraded")
    GROUPS_FIELD_NUMBER: _ClassVar[int]
    CONSOLIDATED_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    groups: int
    consolidated: int
    dry_run: bool
    details: _containers.RepeatedCompositeFieldContainer[ConsolidatedGroup]
    degraded: _containers.RepeatedCompositeFieldContainer[_common_pb2.Degradation]
    def __init__(self, groups: _Optional[int] = ..., consolidated: _Optional[int] = ..., dry_run: _Optional[bool] = ..., details: _Optional[_Iterable[_Union[ConsolidatedGroup, _Mapping]]] = ..., degraded: _Optional[_Iterable[_Union[_common_pb2.Degradation, _Mapping]]] = ...) -> None: ...

class ConsolidateResponse(_message.Message):
    __slots__ = ("progress", "result")
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    progress: _common_pb2.Progress
    result: ConsolidateResult
    def __init__(self, progress: _Optional[_Union[_common_pb2.Progress, _Mapping]] = ..., result: _Optional[_Union[ConsolidateResult, _Mapping]] = ...) -> None: ...

class RunMaintenanceResponse(_message.Message):
    __slots__ = ("progress", "result")
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    progress: _common_pb2.Progress
    result: MaintenanceResult
    def __init__(self, progress: _Optional[_Union[_common_pb2.Progress, _Mapping]] = ..., result: _Optional[_Union[MaintenanceResult, _Mapping]] = ...) -> None: ...

class ExportHeader(_message.Message):
    __slots__ = ("format", "tenant_id", "agent_id", "exported_at", "embedding_model", "embedding_dimension")
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    EXPORTED_AT_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_DIMENSION_FIELD_NUMBER: _ClassVar[int]
    format: str
    tenant_id: str
    agent_id: str
    exported_at: _timestamp_pb2.Timestamp
    embedding_model: str
    embedding_dimension: int
    def __init__(self, format: _Optional[str] = ..., tenant_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., exported_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., embedding_model: _Optional[str] = ..., embedding_dimension: _Optional[int] = ...) -> None: ...

class ExportedMemory(_message.Message):
    __slots__ = ("memory", "vector")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    VECTOR_FIELD_NUMBER: _ClassVar[int]
    memory: _common_pb2.Memory
    vector: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, memory: _Optional[_Union[_common_pb2.Memory, _Mapping]] = ..., vector: _Optional[_Iterable[float]] = ...) -> None: ...

class ExportedKeyEvent(_message.Message):
    __slots__ = ("agent_id", "entry", "current")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    CURRENT_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    entry: _memory_service_pb2.KeyEntry
    current: bool
    def __init__(self, agent_id: _Optional[str] = ..., entry: _Optional[_Union[_memory_service_pb2.KeyEntry, _Mapping]] = ..., current: _Optional[bool] = ...) -> None: ...

class ExportedWorkingMemory(_message.Message):
    __slots__ = ("agent_id", "working_memory", "ttl")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    WORKING_MEMORY_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    working_memory: _memory_service_pb2.WorkingMemory
    ttl: _duration_pb2.Duration
    def __init__(self, agent_id: _Optional[str] = ..., working_memory: _Optional[_Union[_memory_service_pb2.WorkingMemory, _Mapping]] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class ExportedProfile(_message.Message):
    __slots__ = ("agent_id", "profile", "version")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    profile: _memory_service_pb2.AgentProfile
    version: int
    def __init__(self, agent_id: _Optional[str] = ..., profile: _Optional[_Union[_memory_service_pb2.AgentProfile, _Mapping]] = ..., version: _Optional[int] = ...) -> None: ...

class ExportedSession(_message.Message):
    __slots__ = ("agent_id", "session_id", "fixed_zone", "summary", "messages", "expires_at", "closed", "created_at", "updated_at", "ttl", "summarizer", "summary_degraded", "message_count", "version", "summarized_through_seq", "stored_messages", "compression", "long_term_memory_mode")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FIXED_ZONE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    CLOSED_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZER_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_DEGRADED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZED_THROUGH_SEQ_FIELD_NUMBER: _ClassVar[int]
    STORED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    COMPRESSION_FIELD_NUMBER: _ClassVar[int]
    LONG_TERM_MEMORY_MODE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    session_id: str
    fixed_zone: _containers.RepeatedCompositeFieldContainer[_memory_service_pb2.FixedZoneEntry]
    summary: str
    messages: _containers.RepeatedCompositeFieldContainer[_memory_service_pb2.SessionMessage]
    expires_at: _timestamp_pb2.Timestamp
    closed: bool
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    ttl: _duration_pb2.Duration
    summarizer: str
    summary_degraded: _containers.RepeatedCompositeFieldContainer[_common_pb2.Degradation]
    message_count: int
    version: int
    summarized_through_seq: int
    stored_messages: int
    compression: _memory_service_pb2.SessionCompression
    long_term_memory_mode: _memory_service_pb2.LongTermMemoryMode
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., fixed_zone: _Optional[_Iterable[_Union[_memory_service_pb2.FixedZoneEntry, _Mapping]]] = ..., summary: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_memory_service_pb2.SessionMessage, _Mapping]]] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., closed: _Optional[bool] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., summarizer: _Optional[str] = ..., summary_degraded: _Optional[_Iterable[_Union[_common_pb2.Degradation, _Mapping]]] = ..., message_count: _Optional[int] = ..., version: _Optional[int] = ..., summarized_through_seq: _Optional[int] = ..., stored_messages: _Optional[int] = ..., compression: _Optional[_Union[_memory_service_pb2.SessionCompression, _Mapping]] = ..., long_term_memory_mode: _Optional[_Union[_memory_service_pb2.LongTermMemoryMode, str]] = ...) -> None: ...

class ExportedSessionMessage(_message.Message):
    __slots__ = ("agent_id", "session_id", "session_created_at", "message")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    session_id: str
    session_created_at: _timestamp_pb2.Timestamp
    message: _memory_service_pb2.SessionMessage
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., session_created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., message: _Optional[_Union[_memory_service_pb2.SessionMessage, _Mapping]] = ...) -> None: ...

class ExportedSessionAttachment(_message.Message):
    __slots__ = ("agent_id", "session_id", "session_created_at", "seq", "content")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    session_id: str
    session_created_at: _timestamp_pb2.Timestamp
    seq: int
    content: str
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., session_created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., seq: _Optional[int] = ..., content: _Optional[str] = ...) -> None: ...

class ExportedState(_message.Message):
    __slots__ = ("agent_id", "session_id", "component")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    session_id: str
    component: _snapshot_service_pb2.StateComponent
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., component: _Optional[_Union[_snapshot_service_pb2.StateComponent, _Mapping]] = ...) -> None: ...

class ExportRecord(_message.Message):
    __slots__ = ("header", "memory", "key_event", "working_memory", "profile", "session", "state", "session_message", "session_attachment")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    KEY_EVENT_FIELD_NUMBER: _ClassVar[int]
    WORKING_MEMORY_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SESSION_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ATTACHMENT_FIELD_NUMBER: _ClassVar[int]
    header: ExportHeader
    memory: ExportedMemory
    key_event: ExportedKeyEvent
    working_memory: ExportedWorkingMemory
    profile: ExportedProfile
    session: ExportedSession
    state: ExportedState
    session_message: ExportedSessionMessage
    session_attachment: ExportedSessionAttachment
    def __init__(self, header: _Optional[_Union[ExportHeader, _Mapping]] = ..., memory: _Optional[_Union[ExportedMemory, _Mapping]] = ..., key_event: _Optional[_Union[ExportedKeyEvent, _Mapping]] = ..., working_memory: _Optional[_Union[ExportedWorkingMemory, _Mapping]] = ..., profile: _Optional[_Union[ExportedProfile, _Mapping]] = ..., session: _Optional[_Union[ExportedSession, _Mapping]] = ..., state: _Optional[_Union[ExportedState, _Mapping]] = ..., session_message: _Optional[_Union[ExportedSessionMessage, _Mapping]] = ..., session_attachment: _Optional[_Union[ExportedSessionAttachment, _Mapping]] = ...) -> None: ...

class ExportRequest(_message.Message):
    __slots__ = ("agent_id", "all_agents", "include_vectors")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ALL_AGENTS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_VECTORS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    all_agents: bool
    include_vectors: bool
    def __init__(self, agent_id: _Optional[str] = ..., all_agents: _Optional[bool] = ..., include_vectors: _Optional[bool] = ...) -> None: ...

class ExportResponse(_message.Message):
    __slots__ = ("record", "progress")
    RECORD_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    record: ExportRecord
    progress: _common_pb2.Progress
    def __init__(self, record: _Optional[_Union[ExportRecord, _Mapping]] = ..., progress: _Optional[_Union[_common_pb2.Progress, _Mapping]] = ...) -> None: ...

class ImportRequest(_message.Message):
    __slots__ = ("record", "target_agent_id")
    RECORD_FIELD_NUMBER: _ClassVar[int]
    TARGET_AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    record: ExportRecord
    target_agent_id: str
    def __init__(self, record: _Optional[_Union[ExportRecord, _Mapping]] = ..., target_agent_id: _Optional[str] = ...) -> None: ...

class ImportRejection(_message.Message):
    __slots__ = ("index", "reason")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    index: int
    reason: str
    def __init__(self, index: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class ImportResponse(_message.Message):
    __slots__ = ("imported", "skipped", "rejected")
    IMPORTED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    imported: int
    skipped: int
    rejected: _containers.RepeatedCompositeFieldContainer[ImportRejection]
    def __init__(self, imported: _Optional[int] = ..., skipped: _Optional[int] = ..., rejected: _Optional[_Iterable[_Union[ImportRejection, _Mapping]]] = ...) -> None: ...

class ReembedRequest(_message.Message):
    __slots__ = ("agent_id", "all_agents", "batch_size")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ALL_AGENTS_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    all_agents: bool
    batch_size: int
    def __init__(self, agent_id: _Optional[str] = ..., all_agents: _Optional[bool] = ..., batch_size: _Optional[int] = ...) -> None: ...

class ReembedResult(_message.Message):
    __slots__ = ("reembedded", "embedding_model")
    REEMBEDDED_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    reembedded: int
    embedding_model: str
    def __init__(self, reembedded: _Optional[int] = ..., embedding_model: _Optional[str] = ...) -> None: ...

class ReembedResponse(_message.Message):
    __slots__ = ("progress", "result")
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    progress: _common_pb2.Progress
    result: ReembedResult
    def __init__(self, progress: _Optional[_Union[_common_pb2.Progress, _Mapping]] = ..., result: _Optional[_Union[ReembedResult, _Mapping]] = ...) -> None: ...
