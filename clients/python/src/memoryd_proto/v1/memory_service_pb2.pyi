import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from memoryd_proto.v1 import common_pb2 as _common_pb2
from memoryd_proto.v1 import snapshot_service_pb2 as _snapshot_service_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ScoringPreset(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCORING_PRESET_UNSPECIFIED: _ClassVar[ScoringPreset]
    SCORING_PRESET_SIMILARITY: _ClassVar[ScoringPreset]
    SCORING_PRESET_DECAYED: _ClassVar[ScoringPreset]
    SCORING_PRESET_WEIGHTED: _ClassVar[ScoringPreset]
    SCORING_PRESET_RELEVANCE: _ClassVar[ScoringPreset]
    SCORING_PRESET_LAYERED: _ClassVar[ScoringPreset]
    SCORING_PRESET_BLENDED: _ClassVar[ScoringPreset]

class RecencyBasis(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RECENCY_BASIS_UNSPECIFIED: _ClassVar[RecencyBasis]
    RECENCY_BASIS_UPDATED: _ClassVar[RecencyBasis]
    RECENCY_BASIS_LAST_ACCESS: _ClassVar[RecencyBasis]

class MemoryOrder(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MEMORY_ORDER_UNSPECIFIED: _ClassVar[MemoryOrder]
    MEMORY_ORDER_CREATED_DESC: _ClassVar[MemoryOrder]
    MEMORY_ORDER_CREATED_ASC: _ClassVar[MemoryOrder]
    MEMORY_ORDER_ACCESS_COUNT_DESC: _ClassVar[MemoryOrder]
    MEMORY_ORDER_IMPORTANCE_DESC: _ClassVar[MemoryOrder]

class WorkingMemoryMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WORKING_MEMORY_MODE_UNSPECIFIED: _ClassVar[WorkingMemoryMode]
    WORKING_MEMORY_MODE_MERGE: _ClassVar[WorkingMemoryMode]
    WORKING_MEMORY_MODE_REPLACE: _ClassVar[WorkingMemoryMode]

class MessageRole(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MESSAGE_ROLE_UNSPECIFIED: _ClassVar[MessageRole]
    MESSAGE_ROLE_USER: _ClassVar[MessageRole]
    MESSAGE_ROLE_ASSISTANT: _ClassVar[MessageRole]
    MESSAGE_ROLE_SYSTEM: _ClassVar[MessageRole]
    MESSAGE_ROLE_TOOL: _ClassVar[MessageRole]

class LongTermMemoryMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LONG_TERM_MEMORY_MODE_UNSPECIFIED: _ClassVar[LongTermMemoryMode]
    LONG_TERM_MEMORY_MODE_AGENT_CONTROL: _ClassVar[LongTermMemoryMode]
    LONG_TERM_MEMORY_MODE_STATIC_CONTROL: _ClassVar[LongTermMemoryMode]
    LONG_TERM_MEMORY_MODE_BOTH: _ClassVar[LongTermMemoryMode]

class FixedZoneKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FIXED_ZONE_KIND_UNSPECIFIED: _ClassVar[FixedZoneKind]
    FIXED_ZONE_KIND_TRIGGER: _ClassVar[FixedZoneKind]
    FIXED_ZONE_KIND_FOCUS: _ClassVar[FixedZoneKind]
    FIXED_ZONE_KIND_INSTRUCTION: _ClassVar[FixedZoneKind]

class WatchStart(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WATCH_START_UNSPECIFIED: _ClassVar[WatchStart]
    WATCH_START_NOW: _ClassVar[WatchStart]
    WATCH_START_OLDEST: _ClassVar[WatchStart]

class ChangeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHANGE_KIND_UNSPECIFIED: _ClassVar[ChangeKind]
    CHANGE_KIND_MEMORY_CREATED: _ClassVar[ChangeKind]
    CHANGE_KIND_MEMORY_UPDATED: _ClassVar[ChangeKind]
    CHANGE_KIND_MEMORY_ARCHIVED: _ClassVar[ChangeKind]
    CHANGE_KIND_MEMORY_DELETED: _ClassVar[ChangeKind]
    CHANGE_KIND_KEY_SET: _ClassVar[ChangeKind]
    CHANGE_KIND_KEY_DELETED: _ClassVar[ChangeKind]
    CHANGE_KIND_WORKING_MEMORY_SET: _ClassVar[ChangeKind]
    CHANGE_KIND_WORKING_MEMORY_DELETED: _ClassVar[ChangeKind]
    CHANGE_KIND_PROFILE_SET: _ClassVar[ChangeKind]
    CHANGE_KIND_PROFILE_DELETED: _ClassVar[ChangeKind]
    CHANGE_KIND_SESSION_UPDATED: _ClassVar[ChangeKind]
    CHANGE_KIND_SESSION_DELETED: _ClassVar[ChangeKind]
    CHANGE_KIND_STATE_SAVED: _ClassVar[ChangeKind]
    CHANGE_KIND_STATE_DELETED: _ClassVar[ChangeKind]
SCORING_PRESET_UNSPECIFIED: ScoringPreset
SCORING_PRESET_SIMILARITY: ScoringPreset
SCORING_PRESET_DECAYED: ScoringPreset
SCORING_PRESET_WEIGHTED: ScoringPreset
SCORING_PRESET_RELEVANCE: ScoringPreset
SCORING_PRESET_LAYERED: ScoringPreset
SCORING_PRESET_BLENDED: ScoringPreset
RECENCY_BASIS_UNSPECIFIED: RecencyBasis
RECENCY_BASIS_UPDATED: RecencyBasis
RECENCY_BASIS_LAST_ACCESS: RecencyBasis
MEMORY_ORDER_UNSPECIFIED: MemoryOrder
MEMORY_ORDER_CREATED_DESC: MemoryOrder
MEMORY_ORDER_CREATED_ASC: MemoryOrder
MEMORY_ORDER_ACCESS_COUNT_DESC: MemoryOrder
MEMORY_ORDER_IMPORTANCE_DESC: MemoryOrder
WORKING_MEMORY_MODE_UNSPECIFIED: WorkingMemoryMode
WORKING_MEMORY_MODE_MERGE: WorkingMemoryMode
WORKING_MEMORY_MODE_REPLACE: WorkingMemoryMode
MESSAGE_ROLE_UNSPECIFIED: MessageRole
MESSAGE_ROLE_USER: MessageRole
MESSAGE_ROLE_ASSISTANT: MessageRole
MESSAGE_ROLE_SYSTEM: MessageRole
MESSAGE_ROLE_TOOL: MessageRole
LONG_TERM_MEMORY_MODE_UNSPECIFIED: LongTermMemoryMode
LONG_TERM_MEMORY_MODE_AGENT_CONTROL: LongTermMemoryMode
LONG_TERM_MEMORY_MODE_STATIC_CONTROL: LongTermMemoryMode
LONG_TERM_MEMORY_MODE_BOTH: LongTermMemoryMode
FIXED_ZONE_KIND_UNSPECIFIED: FixedZoneKind
FIXED_ZONE_KIND_TRIGGER: FixedZoneKind
FIXED_ZONE_KIND_FOCUS: FixedZoneKind
FIXED_ZONE_KIND_INSTRUCTION: FixedZoneKind
WATCH_START_UNSPECIFIED: WatchStart
WATCH_START_NOW: WatchStart
WATCH_START_OLDEST: WatchStart
CHANGE_KIND_UNSPECIFIED: ChangeKind
CHANGE_KIND_MEMORY_CREATED: ChangeKind
CHANGE_KIND_MEMORY_UPDATED: ChangeKind
CHANGE_KIND_MEMORY_ARCHIVED: ChangeKind
CHANGE_KIND_MEMORY_DELETED: ChangeKind
CHANGE_KIND_KEY_SET: ChangeKind
CHANGE_KIND_KEY_DELETED: ChangeKind
CHANGE_KIND_WORKING_MEMORY_SET: ChangeKind
CHANGE_KIND_WORKING_MEMORY_DELETED: ChangeKind
CHANGE_KIND_PROFILE_SET: ChangeKind
CHANGE_KIND_PROFILE_DELETED: ChangeKind
CHANGE_KIND_SESSION_UPDATED: ChangeKind
CHANGE_KIND_SESSION_DELETED: ChangeKind
CHANGE_KIND_STATE_SAVED: ChangeKind
CHANGE_KIND_STATE_DELETED: ChangeKind

class RememberRequest(_message.Message):
    __slots__ = ("agent_id", "content", "memory_type", "tags", "security_level", "importance", "confidence", "namespace", "metadata", "source", "expires_at", "embedding", "created_at", "metadata_json", "occurred_at", "session_id", "sequence")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    MEMORY_TYPE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    SECURITY_LEVEL_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    METADATA_JSON_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    content: str
    memory_type: _common_pb2.MemoryType
    tags: _containers.RepeatedScalarFieldContainer[str]
    security_level: _common_pb2.SecurityLevel
    importance: float
    confidence: float
    namespace: str
    metadata: _struct_pb2.Struct
    source: _common_pb2.Provenance
    expires_at: _timestamp_pb2.Timestamp
    embedding: _containers.RepeatedScalarFieldContainer[float]
    created_at: _timestamp_pb2.Timestamp
    metadata_json: str
    occurred_at: _timestamp_pb2.Timestamp
    session_id: str
    sequence: int
    def __init__(self, agent_id: _Optional[str] = ..., content: _Optional[str] = ..., memory_type: _Optional[_Union[_common_pb2.MemoryType, str]] = ..., tags: _Optional[_Iterable[str]] = ..., security_level: _Optional[_Union[_common_pb2.SecurityLevel, str]] = ..., importance: _Optional[float] = ..., confidence: _Optional[float] = ..., namespace: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., source: _Optional[_Union[_common_pb2.Provenance, _Mapping]] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., embedding: _Optional[_Iterable[float]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., metadata_json: _Optional[str] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., session_id: _Optional[str] = ..., sequence: _Optional[int] = ...) -> None: ...

class RememberResponse(_message.Message):
    __slots__ = ("memory", "deduplicated", "degraded")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATED_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    memory: _common_pb2.Memory
    deduplicated: bool
    degraded: _containers.RepeatedCompositeFieldContainer[_common_pb2.Degradation]
    def __init__(self, memory: _Optional[_Union[_common_pb2.Memory, _Mapping]] = ..., deduplicated: _Optional[bool] = ..., degraded: _Optional[_Iterable[_Union[_common_pb2.Degradation, _Mapping]]] = ...) -> None: ...

class RememberBatchRequest(_message.Message):
    __slots__ = ("agent_id", "items")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    items: _containers.RepeatedCompositeFieldContainer[RememberRequest]
    def __init__(self, agent_id: _Optional[str] = ..., items: _Optional[_Iterable[_Union[RememberRequest, _Mapping]]] = ...) -> None: ...

class RememberResult(_message.Message):
    __slots__ = ("memory", "deduplicated")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATED_FIELD_NUMBER: _ClassVar[int]
    memory: _common_pb2.Memory
    deduplicated: bool
    def __init__(self, memory: _Optional[_Union[_common_pb2.Memory, _Mapping]] = ..., deduplicated: _Optional[bool] = ...) -> None: ...

class RememberBatchResponse(_message.Message):
    __slots__ = ("results", "degraded")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[RememberResult]
    degraded: _containers.RepeatedCompositeFieldContainer[_common_pb2.Degradation]
    def __init__(self, results: _Optional[_Iterable[_Union[RememberResult, _Mapping]]] = ..., degraded: _Optional[_Iterable[_Union[_common_pb2.Degradation, _Mapping]]] = ...) -> None: ...

class Scoring(_message.Message):
    __slots__ = ("preset", "half_life_hours", "similarity_weight", "recency_weight", "importance_weight", "recency_basis")
    PRESET_FIELD_NUMBER: _ClassVar[int]
    HALF_LIFE_HOURS_FIELD_NUMBER: _ClassVar[int]
    SIMILARITY_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    RECENCY_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    RECENCY_BASIS_FIELD_NUMBER: _ClassVar[int]
    preset: ScoringPreset
    half_life_hours: float
    similarity_weight: float
    recency_weight: float
    importance_weight: float
    recency_basis: RecencyBasis
    def __init__(self, preset: _Optional[_Union[ScoringPreset, str]] = ..., half_life_hours: _Optional[float] = ..., similarity_weight: _Optional[float] = ..., recency_weight: _Optional[float] = ..., importance_weight: _Optional[float] = ..., recency_basis: _Optional[_Union[RecencyBasis, str]] = ...) -> None: ...

class ScoreComponents(_message.Message):
    __slots__ = ("similarity", "recency", "importance", "decayed", "weighted", "keyword", "fused", "relevance", "temporal")
    SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    RECENCY_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    DECAYED_FIELD_NUMBER: _ClassVar[int]
    WEIGHTED_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_FIELD_NUMBER: _ClassVar[int]
    FUSED_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    TEMPORAL_FIELD_NUMBER: _ClassVar[int]
    similarity: float
    recency: float
    importance: float
    decayed: float
    weighted: float
    keyword: float
    fused: float
    relevance: float
    temporal: float
    def __init__(self, similarity: _Optional[float] = ..., recency: _Optional[float] = ..., importance: _Optional[float] = ..., decayed: _Optional[float] = ..., weighted: _Optional[float] = ..., keyword: _Optional[float] = ..., fused: _Optional[float] = ..., relevance: _Optional[float] = ..., temporal: _Optional[float] = ...) -> None: ...

class RecallRequest(_message.Message):
    __slots__ = ("agent_id", "query", "limit", "namespace", "tags", "tag_match", "memory_types", "max_security_level", "scoring", "hybrid", "query_embedding", "created_after", "created_before", "include_archived", "min_score", "now", "min_relevance", "trust", "context_window", "as_of")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    TAG_MATCH_FIELD_NUMBER: _ClassVar[int]
    MEMORY_TYPES_FIELD_NUMBER: _ClassVar[int]
    MAX_SECURITY_LEVEL_FIELD_NUMBER: _ClassVar[int]
    SCORING_FIELD_NUMBER: _ClassVar[int]
    HYBRID_FIELD_NUMBER: _ClassVar[int]
    QUERY_EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    CREATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    NOW_FIELD_NUMBER: _ClassVar[int]
    MIN_RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    TRUST_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_WINDOW_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    query: str
    limit: int
    namespace: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    tag_match: _common_pb2.TagMatch
    memory_types: _containers.RepeatedScalarFieldContainer[_common_pb2.MemoryType]
    max_security_level: _common_pb2.SecurityLevel
    scoring: Scoring
    hybrid: bool
    query_embedding: _containers.RepeatedScalarFieldContainer[float]
    created_after: _timestamp_pb2.Timestamp
    created_before: _timestamp_pb2.Timestamp
    include_archived: bool
    min_score: float
    now: _timestamp_pb2.Timestamp
    min_relevance: float
    trust: _common_pb2.TrustFilter
    context_window: int
    as_of: _common_pb2.AsOf
    def __init__(self, agent_id: _Optional[str] = ..., query: _Optional[str] = ..., limit: _Optional[int] = ..., namespace: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., tag_match: _Optional[_Union[_common_pb2.TagMatch, str]] = ..., memory_types: _Optional[_Iterable[_Union[_common_pb2.MemoryType, str]]] = ..., max_security_level: _Optional[_Union[_common_pb2.SecurityLevel, str]] = ..., scoring: _Optional[_Union[Scoring, _Mapping]] = ..., hybrid: _Optional[bool] = ..., query_embedding: _Optional[_Iterable[float]] = ..., created_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., include_archived: _Optional[bool] = ..., min_score: _Optional[float] = ..., now: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., min_relevance: _Optional[float] = ..., trust: _Optional[_Union[_common_pb2.TrustFilter, _Mapping]] = ..., context_window: _Optional[int] = ..., as_of: _Optional[_Union[_common_pb2.AsOf, _Mapping]] = ...) -> None: ...

class RecallResult(_message.Message):
    __slots__ = ("memory", "score", "components", "relevance")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    memory: _common_pb2.Memory
    score: float
    components: ScoreComponents
    relevance: float
    def __init__(self, memory: _Optional[_Union[_common_pb2.Memory, _Mapping]] = ..., score: _Optional[float] = ..., components: _Optional[_Union[ScoreComponents, _Mapping]] = ..., relevance: _Optional[float] = ...) -> None: ...

class RecallResponse(_message.Message):
    __slots__ = ("results", "degraded", "embedding_model")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[RecallResult]
    degraded: _containers.RepeatedCompositeFieldContainer[_common_pb2.Degradation]
    embedding_model: str
    def __init__(self, results: _Optional[_Iterable[_Union[RecallResult, _Mapping]]] = ..., degraded: _Optional[_Iterable[_Union[_common_pb2.Degradation, _Mapping]]] = ..., embedding_model: _Optional[str] = ...) -> None: ...

class GetMemoryRequest(_message.Message):
    __slots__ = ("agent_id", "id")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    id: str
    def __init__(self, agent_id: _Optional[str] = ..., id: _Optional[str] = ...) -> None: ...

class GetMemoryResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: _common_pb2.Memory
    def __init__(self, memory: _Optional[_Union[_common_pb2.Memory, _Mapping]] = ...) -> None: ...

class ListMemoriesRequest(_message.Message):
    __slots__ = ("agent_id", "namespace", "tags", "tag_match", "memory_types", "max_security_level", "created_after", "created_before", "include_archived", "page_size", "page_token", "order")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    TAG_MATCH_FIELD_NUMBER: _ClassVar[int]
    MEMORY_TYPES_FIELD_NUMBER: _ClassVar[int]
    MAX_SECURITY_LEVEL_FIELD_NUMBER: _ClassVar[int]
    CREATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    namespace: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    tag_match: _common_pb2.TagMatch
    memory_types: _containers.RepeatedScalarFieldContainer[_common_pb2.MemoryType]
    max_security_level: _common_pb2.SecurityLevel
    created_after: _timestamp_pb2.Timestamp
    created_before: _timestamp_pb2.Timestamp
    include_archived: bool
    page_size: int
    page_token: str
    order: MemoryOrder
    def __init__(self, agent_id: _Optional[str] = ..., namespace: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., tag_match: _Optional[_Union[_common_pb2.TagMatch, str]] = ..., memory_types: _Optional[_Iterable[_Union[_common_pb2.MemoryType, str]]] = ..., max_security_level: _Optional[_Union[_common_pb2.SecurityLevel, str]] = ..., created_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., include_archived: _Optional[bool] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., order: _Optional[_Union[MemoryOrder, str]] = ...) -> None: ...

class ListMemoriesResponse(_message.Message):
    __slots__ = ("memories", "next_page_token")
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    memories: _containers.RepeatedCompositeFieldContainer[_common_pb2.Memory]
    next_page_token: str
    def __init__(self, memories: _Optional[_Iterable[_Union[_common_pb2.Memory, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class UpdateMemoryRequest(_message.Message):
    __slots__ = ("agent_id", "memory", "update_mask", "if_version", "embedding")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    IF_VERSION_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    memory: _common_pb2.Memory
    update_mask: _field_mask_pb2.FieldMask
    if_version: int
    embedding: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, agent_id: _Optional[str] = ..., memory: _Optional[_Union[_common_pb2.Memory, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ..., if_version: _Optional[int] = ..., embedding: _Optional[_Iterable[float]] = ...) -> None: ...

class UpdateMemoryResponse(_message.Message):
    __slots__ = ("memory", "degraded")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    memory: _common_pb2.Memory
    degraded: _containers.RepeatedCompositeFieldContainer[_common_pb2.Degradation]
    def __init__(self, memory: _Optional[_Union[_common_pb2.Memory, _Mapping]] = ..., degraded: _Optional[_Iterable[_Union[_common_pb2.Degradation, _Mapping]]] = ...) -> None: ...

class ForgetMemoriesRequest(_message.Message):
    __slots__ = ("agent_id", "ids")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, agent_id: _Optional[str] = ..., ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ForgetMemoriesResponse(_message.Message):
    __slots__ = ("forgotten_ids",)
    FORGOTTEN_IDS_FIELD_NUMBER: _ClassVar[int]
    forgotten_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, forgotten_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class KeyEntry(_message.Message):
    __slots__ = ("key", "content", "valid", "version", "updated_at", "source", "security_level", "memory_id", "namespace", "content_json")
    KEY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    VALID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SECURITY_LEVEL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_JSON_FIELD_NUMBER: _ClassVar[int]
    key: str
    content: _struct_pb2.Value
    valid: bool
    version: int
    updated_at: _timestamp_pb2.Timestamp
    source: _common_pb2.Provenance
    security_level: _common_pb2.SecurityLevel
    memory_id: str
    namespace: str
    content_json: str
    def __init__(self, key: _Optional[str] = ..., content: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., valid: _Optional[bool] = ..., version: _Optional[int] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., source: _Optional[_Union[_common_pb2.Provenance, _Mapping]] = ..., security_level: _Optional[_Union[_common_pb2.SecurityLevel, str]] = ..., memory_id: _Optional[str] = ..., namespace: _Optional[str] = ..., content_json: _Optional[str] = ...) -> None: ...

class SetMemoryRequest(_message.Message):
    __slots__ = ("agent_id", "key", "content", "source", "if_version", "security_level", "namespace", "content_json")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    IF_VERSION_FIELD_NUMBER: _ClassVar[int]
    SECURITY_LEVEL_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_JSON_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    key: str
    content: _struct_pb2.Value
    source: _common_pb2.Provenance
    if_version: int
    security_level: _common_pb2.SecurityLevel
    namespace: str
    content_json: str
    def __init__(self, agent_id: _Optional[str] = ..., key: _Optional[str] = ..., content: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., source: _Optional[_Union[_common_pb2.Provenance, _Mapping]] = ..., if_version: _Optional[int] = ..., security_level: _Optional[_Union[_common_pb2.SecurityLevel, str]] = ..., namespace: _Optional[str] = ..., content_json: _Optional[str] = ...) -> None: ...

class SetMemoryResponse(_message.Message):
    __slots__ = ("entry", "degraded")
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    entry: KeyEntry
    degraded: _containers.RepeatedCompositeFieldContainer[_common_pb2.Degradation]
    def __init__(self, entry: _Optional[_Union[KeyEntry, _Mapping]] = ..., degraded: _Optional[_Iterable[_Union[_common_pb2.Degradation, _Mapping]]] = ...) -> None: ...

class GetKeyRequest(_message.Message):
    __slots__ = ("agent_id", "key", "as_of")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    key: str
    as_of: _common_pb2.AsOf
    def __init__(self, agent_id: _Optional[str] = ..., key: _Optional[str] = ..., as_of: _Optional[_Union[_common_pb2.AsOf, _Mapping]] = ...) -> None: ...

class GetKeyResponse(_message.Message):
    __slots__ = ("entry",)
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    entry: KeyEntry
    def __init__(self, entry: _Optional[_Union[KeyEntry, _Mapping]] = ...) -> None: ...

class ListKeysRequest(_message.Message):
    __slots__ = ("agent_id", "prefix", "recursive", "page_size", "page_token", "as_of")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    RECURSIVE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    prefix: str
    recursive: bool
    page_size: int
    page_token: str
    as_of: _common_pb2.AsOf
    def __init__(self, agent_id: _Optional[str] = ..., prefix: _Optional[str] = ..., recursive: _Optional[bool] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., as_of: _Optional[_Union[_common_pb2.AsOf, _Mapping]] = ...) -> None: ...

class ListKeysResponse(_message.Message):
    __slots__ = ("entries", "directories", "next_page_token")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    DIRECTORIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[KeyEntry]
    directories: _containers.RepeatedScalarFieldContainer[str]
    next_page_token: str
    def __init__(self, entries: _Optional[_Iterable[_Union[KeyEntry, _Mapping]]] = ..., directories: _Optional[_Iterable[str]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class KeyHistoryRequest(_message.Message):
    __slots__ = ("agent_id", "key", "page_size", "page_token")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    key: str
    page_size: int
    page_token: str
    def __init__(self, agent_id: _Optional[str] = ..., key: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class KeyHistoryResponse(_message.Message):
    __slots__ = ("entries", "next_page_token")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[KeyEntry]
    next_page_token: str
    def __init__(self, entries: _Optional[_Iterable[_Union[KeyEntry, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class WorkingMemory(_message.Message):
    __slots__ = ("scope", "content", "version", "updated_at", "expires_at", "json_schema", "content_json")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    JSON_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    CONTENT_JSON_FIELD_NUMBER: _ClassVar[int]
    scope: _common_pb2.WorkingMemoryScope
    content: _struct_pb2.Struct
    version: int
    updated_at: _timestamp_pb2.Timestamp
    expires_at: _timestamp_pb2.Timestamp
    json_schema: _struct_pb2.Struct
    content_json: str
    def __init__(self, scope: _Optional[_Union[_common_pb2.WorkingMemoryScope, _Mapping]] = ..., content: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., version: _Optional[int] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., json_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., content_json: _Optional[str] = ...) -> None: ...

class SetWorkingMemoryRequest(_message.Message):
    __slots__ = ("agent_id", "scope", "content", "mode", "ttl", "json_schema", "content_json")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    JSON_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    CONTENT_JSON_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    scope: _common_pb2.WorkingMemoryScope
    content: _struct_pb2.Struct
    mode: WorkingMemoryMode
    ttl: _duration_pb2.Duration
    json_schema: _struct_pb2.Struct
    content_json: str
    def __init__(self, agent_id: _Optional[str] = ..., scope: _Optional[_Union[_common_pb2.WorkingMemoryScope, _Mapping]] = ..., content: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., mode: _Optional[_Union[WorkingMemoryMode, str]] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., json_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., content_json: _Optional[str] = ...) -> None: ...

class SetWorkingMemoryResponse(_message.Message):
    __slots__ = ("working_memory",)
    WORKING_MEMORY_FIELD_NUMBER: _ClassVar[int]
    working_memory: WorkingMemory
    def __init__(self, working_memory: _Optional[_Union[WorkingMemory, _Mapping]] = ...) -> None: ...

class GetWorkingMemoryRequest(_message.Message):
    __slots__ = ("agent_id", "scope")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    scope: _common_pb2.WorkingMemoryScope
    def __init__(self, agent_id: _Optional[str] = ..., scope: _Optional[_Union[_common_pb2.WorkingMemoryScope, _Mapping]] = ...) -> None: ...

class GetWorkingMemoryResponse(_message.Message):
    __slots__ = ("working_memory",)
    WORKING_MEMORY_FIELD_NUMBER: _ClassVar[int]
    working_memory: WorkingMemory
    def __init__(self, working_memory: _Optional[_Union[WorkingMemory, _Mapping]] = ...) -> None: ...

class DeleteWorkingMemoryRequest(_message.Message):
    __slots__ = ("agent_id", "scope")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    scope: _common_pb2.WorkingMemoryScope
    def __init__(self, agent_id: _Optional[str] = ..., scope: _Optional[_Union[_common_pb2.WorkingMemoryScope, _Mapping]] = ...) -> None: ...

class DeleteWorkingMemoryResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class ListWorkingMemoryScopesRequest(_message.Message):
    __slots__ = ("agent_id", "thread_id", "resource_id", "page_size", "page_token")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    thread_id: str
    resource_id: str
    page_size: int
    page_token: str
    def __init__(self, agent_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListWorkingMemoryScopesResponse(_message.Message):
    __slots__ = ("scopes", "next_page_token")
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    scopes: _containers.RepeatedCompositeFieldContainer[WorkingMemory]
    next_page_token: str
    def __init__(self, scopes: _Optional[_Iterable[_Union[WorkingMemory, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class AgentProfile(_message.Message):
    __slots__ = ("content", "etag", "updated_at")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    content: str
    etag: str
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, content: _Optional[str] = ..., etag: _Optional[str] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetProfileRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class GetProfileResponse(_message.Message):
    __slots__ = ("profile",)
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    profile: AgentProfile
    def __init__(self, profile: _Optional[_Union[AgentProfile, _Mapping]] = ...) -> None: ...

class SetProfileRequest(_message.Message):
    __slots__ = ("agent_id", "content", "if_match")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    IF_MATCH_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    content: str
    if_match: str
    def __init__(self, agent_id: _Optional[str] = ..., content: _Optional[str] = ..., if_match: _Optional[str] = ...) -> None: ...

class SetProfileResponse(_message.Message):
    __slots__ = ("profile",)
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    profile: AgentProfile
    def __init__(self, profile: _Optional[_Union[AgentProfile, _Mapping]] = ...) -> None: ...

class SessionMessage(_message.Message):
    __slots__ = ("role", "content", "name", "tool_call_id", "created_at", "seq", "tool_calls", "attachment", "merged_from_seq")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENT_FIELD_NUMBER: _ClassVar[int]
    MERGED_FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    role: MessageRole
    content: str
    name: str
    tool_call_id: str
    created_at: _timestamp_pb2.Timestamp
    seq: int
    tool_calls: _containers.RepeatedCompositeFieldContainer[ToolCall]
    attachment: MessageAttachment
    merged_from_seq: int
    def __init__(self, role: _Optional[_Union[MessageRole, str]] = ..., content: _Optional[str] = ..., name: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., seq: _Optional[int] = ..., tool_calls: _Optional[_Iterable[_Union[ToolCall, _Mapping]]] = ..., attachment: _Optional[_Union[MessageAttachment, _Mapping]] = ..., merged_from_seq: _Optional[int] = ...) -> None: ...

class MessageAttachment(_message.Message):
    __slots__ = ("size_bytes", "chars", "sha256")
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    CHARS_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    size_bytes: int
    chars: int
    sha256: str
    def __init__(self, size_bytes: _Optional[int] = ..., chars: _Optional[int] = ..., sha256: _Optional[str] = ...) -> None: ...

class ToolCall(_message.Message):
    __slots__ = ("id", "name", "arguments")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    arguments: _struct_pb2.Value
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., arguments: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class SessionCompression(_message.Message):
    __slots__ = ("compress_threshold_messages", "compress_token_ratio", "context_budget_tokens", "keep_recent_messages", "offload_bytes", "merge_adjacent_messages")
    COMPRESS_THRESHOLD_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    COMPRESS_TOKEN_RATIO_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_BUDGET_TOKENS_FIELD_NUMBER: _ClassVar[int]
    KEEP_RECENT_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    OFFLOAD_BYTES_FIELD_NUMBER: _ClassVar[int]
    MERGE_ADJACENT_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    compress_threshold_messages: int
    compress_token_ratio: float
    context_budget_tokens: int
    keep_recent_messages: int
    offload_bytes: int
    merge_adjacent_messages: bool
    def __init__(self, compress_threshold_messages: _Optional[int] = ..., compress_token_ratio: _Optional[float] = ..., context_budget_tokens: _Optional[int] = ..., keep_recent_messages: _Optional[int] = ..., offload_bytes: _Optional[int] = ..., merge_adjacent_messages: _Optional[bool] = ...) -> None: ...

class FixedZoneEntry(_message.Message):
    __slots__ = ("kind", "content", "created_at")
    KIND_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    kind: FixedZoneKind
    content: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, kind: _Optional[_Union[FixedZoneKind, str]] = ..., content: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class AppendMessagesRequest(_message.Message):
    __slots__ = ("agent_id", "session_id", "messages", "ttl", "compression", "long_term_memory_mode")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    COMPRESSION_FIELD_NUMBER: _ClassVar[int]
    LONG_TERM_MEMORY_MODE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    session_id: str
    messages: _containers.RepeatedCompositeFieldContainer[SessionMessage]
    ttl: _duration_pb2.Duration
    compression: SessionCompression
    long_term_memory_mode: LongTermMemoryMode
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[SessionMessage, _Mapping]]] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., compression: _Optional[_Union[SessionCompression, _Mapping]] = ..., long_term_memory_mode: _Optional[_Union[LongTermMemoryMode, str]] = ...) -> None: ...

class AppendMessagesResponse(_message.Message):
    __slots__ = ("message_count", "compressed", "degraded", "recorded_memory_ids", "offloaded_seqs")
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    COMPRESSED_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    RECORDED_MEMORY_IDS_FIELD_NUMBER: _ClassVar[int]
    OFFLOADED_SEQS_FIELD_NUMBER: _ClassVar[int]
    message_count: int
    compressed: bool
    degraded: _containers.RepeatedCompositeFieldContainer[_common_pb2.Degradation]
    recorded_memory_ids: _containers.RepeatedScalarFieldContainer[str]
    offloaded_seqs: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, message_count: _Optional[int] = ..., compressed: _Optional[bool] = ..., degraded: _Optional[_Iterable[_Union[_common_pb2.Degradation, _Mapping]]] = ..., recorded_memory_ids: _Optional[_Iterable[str]] = ..., offloaded_seqs: _Optional[_Iterable[int]] = ...) -> None: ...

class GetSessionWindowRequest(_message.Message):
    __slots__ = ("agent_id", "session_id", "token_budget")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    session_id: str
    token_budget: int
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., token_budget: _Optional[int] = ...) -> None: ...

class GetSessionWindowResponse(_message.Message):
    __slots__ = ("fixed_zone", "summary", "recent", "tokens_used", "summarizer", "token_counter", "degraded", "summarized_through_seq", "stored_messages", "long_term_memory_mode", "long_term_memories", "long_term_memory")
    FIXED_ZONE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RECENT_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZER_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNTER_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZED_THROUGH_SEQ_FIELD_NUMBER: _ClassVar[int]
    STORED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    LONG_TERM_MEMORY_MODE_FIELD_NUMBER: _ClassVar[int]
    LONG_TERM_MEMORIES_FIELD_NUMBER: _ClassVar[int]
    LONG_TERM_MEMORY_FIELD_NUMBER: _ClassVar[int]
    fixed_zone: _containers.RepeatedCompositeFieldContainer[FixedZoneEntry]
    summary: str
    recent: _containers.RepeatedCompositeFieldContainer[SessionMessage]
    tokens_used: int
    summarizer: str
    token_counter: str
    degraded: _containers.RepeatedCompositeFieldContainer[_common_pb2.Degradation]
    summarized_through_seq: int
    stored_messages: int
    long_term_memory_mode: LongTermMemoryMode
    long_term_memories: _containers.RepeatedCompositeFieldContainer[_common_pb2.Memory]
    long_term_memory: str
    def __init__(self, fixed_zone: _Optional[_Iterable[_Union[FixedZoneEntry, _Mapping]]] = ..., summary: _Optional[str] = ..., recent: _Optional[_Iterable[_Union[SessionMessage, _Mapping]]] = ..., tokens_used: _Optional[int] = ..., summarizer: _Optional[str] = ..., token_counter: _Optional[str] = ..., degraded: _Optional[_Iterable[_Union[_common_pb2.Degradation, _Mapping]]] = ..., summarized_through_seq: _Optional[int] = ..., stored_messages: _Optional[int] = ..., long_term_memory_mode: _Optional[_Union[LongTermMemoryMode, str]] = ..., long_term_memories: _Optional[_Iterable[_Union[_common_pb2.Memory, _Mapping]]] = ..., long_term_memory: _Optional[str] = ...) -> None: ...

class InjectInstructionRequest(_message.Message):
    __slots__ = ("agent_id", "session_id", "kind", "content")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    session_id: str
    kind: FixedZoneKind
    content: str
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., kind: _Optional[_Union[FixedZoneKind, str]] = ..., content: _Optional[str] = ...) -> None: ...

class InjectInstructionResponse(_message.Message):
    __slots__ = ("fixed_zone",)
    FIXED_ZONE_FIELD_NUMBER: _ClassVar[int]
    fixed_zone: _containers.RepeatedCompositeFieldContainer[FixedZoneEntry]
    def __init__(self, fixed_zone: _Optional[_Iterable[_Union[FixedZoneEntry, _Mapping]]] = ...) -> None: ...

class EndSessionRequest(_message.Message):
    __slots__ = ("agent_id", "session_id", "extract_memories")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EXTRACT_MEMORIES_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    session_id: str
    extract_memories: bool
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., extract_memories: _Optional[bool] = ...) -> None: ...

class EndSessionResponse(_message.Message):
    __slots__ = ("summary", "extracted", "degraded")
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    EXTRACTED_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    summary: str
    extracted: _containers.RepeatedCompositeFieldContainer[_common_pb2.Memory]
    degraded: _containers.RepeatedCompositeFieldContainer[_common_pb2.Degradation]
    def __init__(self, summary: _Optional[str] = ..., extracted: _Optional[_Iterable[_Union[_common_pb2.Memory, _Mapping]]] = ..., degraded: _Optional[_Iterable[_Union[_common_pb2.Degradation, _Mapping]]] = ...) -> None: ...

class GetSessionMessagesRequest(_message.Message):
    __slots__ = ("agent_id", "session_id", "from_seq", "to_seq", "page_size", "page_token")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    TO_SEQ_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    session_id: str
    from_seq: int
    to_seq: int
    page_size: int
    page_token: str
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., from_seq: _Optional[int] = ..., to_seq: _Optional[int] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class GetSessionMessagesResponse(_message.Message):
    __slots__ = ("messages", "next_page_token", "message_count", "summarized_through_seq")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZED_THROUGH_SEQ_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[SessionMessage]
    next_page_token: str
    message_count: int
    summarized_through_seq: int
    def __init__(self, messages: _Optional[_Iterable[_Union[SessionMessage, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., message_count: _Optional[int] = ..., summarized_through_seq: _Optional[int] = ...) -> None: ...

class DeleteMessagesRequest(_message.Message):
    __slots__ = ("agent_id", "session_id", "seqs")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SEQS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    session_id: str
    seqs: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., seqs: _Optional[_Iterable[int]] = ...) -> None: ...

class DeleteMessagesResponse(_message.Message):
    __slots__ = ("deleted_seqs", "summary_rebuilt", "degraded")
    DELETED_SEQS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_REBUILT_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    deleted_seqs: _containers.RepeatedScalarFieldContainer[int]
    summary_rebuilt: bool
    degraded: _containers.RepeatedCompositeFieldContainer[_common_pb2.Degradation]
    def __init__(self, deleted_seqs: _Optional[_Iterable[int]] = ..., summary_rebuilt: _Optional[bool] = ..., degraded: _Optional[_Iterable[_Union[_common_pb2.Degradation, _Mapping]]] = ...) -> None: ...

class ClearSessionRequest(_message.Message):
    __slots__ = ("agent_id", "session_id", "fixed_zone")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    FIXED_ZONE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    session_id: str
    fixed_zone: bool
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., fixed_zone: _Optional[bool] = ...) -> None: ...

class ClearSessionResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: int
    def __init__(self, deleted: _Optional[int] = ...) -> None: ...

class GetSessionAttachmentRequest(_message.Message):
    __slots__ = ("agent_id", "session_id", "seq", "offset", "max_chars")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    MAX_CHARS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    session_id: str
    seq: int
    offset: int
    max_chars: int
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., seq: _Optional[int] = ..., offset: _Optional[int] = ..., max_chars: _Optional[int] = ...) -> None: ...

class GetSessionAttachmentResponse(_message.Message):
    __slots__ = ("seq", "content", "attachment", "next_offset", "role", "name", "tool_call_id")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENT_FIELD_NUMBER: _ClassVar[int]
    NEXT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    seq: int
    content: str
    attachment: MessageAttachment
    next_offset: int
    role: MessageRole
    name: str
    tool_call_id: str
    def __init__(self, seq: _Optional[int] = ..., content: _Optional[str] = ..., attachment: _Optional[_Union[MessageAttachment, _Mapping]] = ..., next_offset: _Optional[int] = ..., role: _Optional[_Union[MessageRole, str]] = ..., name: _Optional[str] = ..., tool_call_id: _Optional[str] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("agent_id", "cursor", "start", "tenant_wide", "follow")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    TENANT_WIDE_FIELD_NUMBER: _ClassVar[int]
    FOLLOW_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    cursor: str
    start: WatchStart
    tenant_wide: bool
    follow: bool
    def __init__(self, agent_id: _Optional[str] = ..., cursor: _Optional[str] = ..., start: _Optional[_Union[WatchStart, str]] = ..., tenant_wide: _Optional[bool] = ..., follow: _Optional[bool] = ...) -> None: ...

class Change(_message.Message):
    __slots__ = ("kind", "agent_id", "memory_id", "key", "memory", "key_entry", "working_memory", "working_memory_scope", "profile", "session_id", "state", "component")
    KIND_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    KEY_ENTRY_FIELD_NUMBER: _ClassVar[int]
    WORKING_MEMORY_FIELD_NUMBER: _ClassVar[int]
    WORKING_MEMORY_SCOPE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    kind: ChangeKind
    agent_id: str
    memory_id: str
    key: str
    memory: _common_pb2.Memory
    key_entry: KeyEntry
    working_memory: WorkingMemory
    working_memory_scope: _common_pb2.WorkingMemoryScope
    profile: AgentProfile
    session_id: str
    state: _snapshot_service_pb2.StateComponent
    component: str
    def __init__(self, kind: _Optional[_Union[ChangeKind, str]] = ..., agent_id: _Optional[str] = ..., memory_id: _Optional[str] = ..., key: _Optional[str] = ..., memory: _Optional[_Union[_common_pb2.Memory, _Mapping]] = ..., key_entry: _Optional[_Union[KeyEntry, _Mapping]] = ..., working_memory: _Optional[_Union[WorkingMemory, _Mapping]] = ..., working_memory_scope: _Optional[_Union[_common_pb2.WorkingMemoryScope, _Mapping]] = ..., profile: _Optional[_Union[AgentProfile, _Mapping]] = ..., session_id: _Optional[str] = ..., state: _Optional[_Union[_snapshot_service_pb2.StateComponent, _Mapping]] = ..., component: _Optional[str] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("cursor", "changes", "caught_up")
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    CAUGHT_UP_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    changes: _containers.RepeatedCompositeFieldContainer[Change]
    caught_up: bool
    def __init__(self, cursor: _Optional[str] = ..., changes: _Optional[_Iterable[_Union[Change, _Mapping]]] = ..., caught_up: _Optional[bool] = ...) -> None: ...
