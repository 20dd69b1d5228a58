import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MemoryType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MEMORY_TYPE_UNSPECIFIED: _ClassVar[MemoryType]
    MEMORY_TYPE_PREFERENCE: _ClassVar[MemoryType]
    MEMORY_TYPE_FACT: _ClassVar[MemoryType]
    MEMORY_TYPE_PATTERN: _ClassVar[MemoryType]
    MEMORY_TYPE_SKILL: _ClassVar[MemoryType]
    MEMORY_TYPE_EPISODE: _ClassVar[MemoryType]

class SecurityLevel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SECURITY_LEVEL_UNSPECIFIED: _ClassVar[SecurityLevel]
    SECURITY_LEVEL_PUBLIC: _ClassVar[SecurityLevel]
    SECURITY_LEVEL_INTERNAL: _ClassVar[SecurityLevel]
    SECURITY_LEVEL_CONFIDENTIAL: _ClassVar[SecurityLevel]
    SECURITY_LEVEL_RESTRICTED: _ClassVar[SecurityLevel]

class ProvenanceKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROVENANCE_KIND_UNSPECIFIED: _ClassVar[ProvenanceKind]
    PROVENANCE_KIND_USER: _ClassVar[ProvenanceKind]
    PROVENANCE_KIND_TOOL: _ClassVar[ProvenanceKind]
    PROVENANCE_KIND_WEB: _ClassVar[ProvenanceKind]
    PROVENANCE_KIND_FILE: _ClassVar[ProvenanceKind]
    PROVENANCE_KIND_SYSTEM: _ClassVar[ProvenanceKind]
    PROVENANCE_KIND_AGENT: _ClassVar[ProvenanceKind]

class RelationKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RELATION_KIND_UNSPECIFIED: _ClassVar[RelationKind]
    RELATION_KIND_SUPERSEDES: _ClassVar[RelationKind]
    RELATION_KIND_SUPERSEDED_BY: _ClassVar[RelationKind]
    RELATION_KIND_CONTRADICTS: _ClassVar[RelationKind]
    RELATION_KIND_CONTRADICTED_BY: _ClassVar[RelationKind]
    RELATION_KIND_SUPPORTS: _ClassVar[RelationKind]
    RELATION_KIND_SUPPORTED_BY: _ClassVar[RelationKind]
    RELATION_KIND_REFINES: _ClassVar[RelationKind]
    RELATION_KIND_REFINED_BY: _ClassVar[RelationKind]
    RELATION_KIND_DERIVED_FROM: _ClassVar[RelationKind]
    RELATION_KIND_CONSOLIDATED_INTO: _ClassVar[RelationKind]

class TagMatch(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TAG_MATCH_UNSPECIFIED: _ClassVar[TagMatch]
    TAG_MATCH_ANY: _ClassVar[TagMatch]
    TAG_MATCH_ALL: _ClassVar[TagMatch]
MEMORY_TYPE_UNSPECIFIED: MemoryType
MEMORY_TYPE_PREFERENCE: MemoryType
MEMORY_TYPE_FACT: MemoryType
MEMORY_TYPE_PATTERN: MemoryType
MEMORY_TYPE_SKILL: MemoryType
MEMORY_TYPE_EPISODE: MemoryType
SECURITY_LEVEL_UNSPECIFIED: SecurityLevel
SECURITY_LEVEL_PUBLIC: SecurityLevel
SECURITY_LEVEL_INTERNAL: SecurityLevel
SECURITY_LEVEL_CONFIDENTIAL: SecurityLevel
SECURITY_LEVEL_RESTRICTED: SecurityLevel
PROVENANCE_KIND_UNSPECIFIED: ProvenanceKind
PROVENANCE_KIND_USER: ProvenanceKind
PROVENANCE_KIND_TOOL: ProvenanceKind
PROVENANCE_KIND_WEB: ProvenanceKind
PROVENANCE_KIND_FILE: ProvenanceKind
PROVENANCE_KIND_SYSTEM: ProvenanceKind
PROVENANCE_KIND_AGENT: ProvenanceKind
RELATION_KIND_UNSPECIFIED: RelationKind
RELATION_KIND_SUPERSEDES: RelationKind
RELATION_KIND_SUPERSEDED_BY: RelationKind
RELATION_KIND_CONTRADICTS: RelationKind
RELATION_KIND_CONTRADICTED_BY: RelationKind
RELATION_KIND_SUPPORTS: RelationKind
RELATION_KIND_SUPPORTED_BY: RelationKind
RELATION_KIND_REFINES: RelationKind
RELATION_KIND_REFINED_BY: RelationKind
RELATION_KIND_DERIVED_FROM: RelationKind
RELATION_KIND_CONSOLIDATED_INTO: RelationKind
TAG_MATCH_UNSPECIFIED: TagMatch
TAG_MATCH_ANY: TagMatch
TAG_MATCH_ALL: TagMatch

class Provenance(_message.Message):
    __slots__ = ("kind", "name", "retrieved_at", "locator")
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RETRIEVED_AT_FIELD_NUMBER: _ClassVar[int]
    LOCATOR_FIELD_NUMBER: _ClassVar[int]
    kind: ProvenanceKind
    name: str
    retrieved_at: _timestamp_pb2.Timestamp
    locator: str
    def __init__(self, kind: _Optional[_Union[ProvenanceKind, str]] = ..., name: _Optional[str] = ..., retrieved_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., locator: _Optional[str] = ...) -> None: ...

class AsOf(_message.Message):
    __slots__ = ("time", "cursor")
    TIME_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    time: _timestamp_pb2.Timestamp
    cursor: str
    def __init__(self, time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., cursor: _Optional[str] = ...) -> None: ...

class TrustFilter(_message.Message):
    __slots__ = ("kinds", "unattributed")
    KINDS_FIELD_NUMBER: _ClassVar[int]
    UNATTRIBUTED_FIELD_NUMBER: _ClassVar[int]
    kinds: _containers.RepeatedScalarFieldContainer[ProvenanceKind]
    unattributed: bool
    def __init__(self, kinds: _Optional[_Iterable[_Union[ProvenanceKind, str]]] = ..., unattributed: _Optional[bool] = ...) -> None: ...

class Memory(_message.Message):
    __slots__ = ("id", "tenant_id", "agent_id", "namespace", "content", "memory_type", "tags", "security_level", "importance", "confidence", "source", "metadata", "created_at", "updated_at", "accessed_at", "access_count", "version", "archived", "expires_at", "key", "embedding_model", "embedding_dimension", "supersedes", "superseded_by", "derived_from", "relations", "metadata_json", "occurred_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    MEMORY_TYPE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    SECURITY_LEVEL_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    ACCESSED_AT_FIELD_NUMBER: _ClassVar[int]
    ACCESS_COUNT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_DIMENSION_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDES_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    DERIVED_FROM_FIELD_NUMBER: _ClassVar[int]
    RELATIONS_FIELD_NUMBER: _ClassVar[int]
    METADATA_JSON_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    agent_id: str
    namespace: str
    content: str
    memory_type: MemoryType
    tags: _containers.RepeatedScalarFieldContainer[str]
    security_level: SecurityLevel
    importance: float
    confidence: float
    source: Provenance
    metadata: _struct_pb2.Struct
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    accessed_at: _timestamp_pb2.Timestamp
    access_count: int
    version: int
    archived: bool
    expires_at: _timestamp_pb2.Timestamp
    key: str
    embedding_model: str
    embedding_dimension: int
    supersedes: str
    superseded_by: str
    derived_from: _containers.RepeatedScalarFieldContainer[str]
    relations: _containers.RepeatedCompositeFieldContainer[MemoryRelation]
    metadata_json: str
    occurred_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., namespace: _Optional[str] = ..., content: _Optional[str] = ..., memory_type: _Optional[_Union[MemoryType, str]] = ..., tags: _Optional[_Iterable[str]] = ..., security_level: _Optional[_Union[SecurityLevel, str]] = ..., importance: _Optional[float] = ..., confidence: _Optional[float] = ..., source: _Optional[_Union[Provenance, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., accessed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., access_count: _Optional[int] = ..., version: _Optional[int] = ..., archived: _Optional[bool] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., key: _Optional[str] = ..., embedding_model: _Optional[str] = ..., embedding_dimension: _Optional[int] = ..., supersedes: _Optional[str] = ..., superseded_by: _Optional[str] = ..., derived_from: _Optional[_Iterable[str]] = ..., relations: _Optional[_Iterable[_Union[MemoryRelation, _Mapping]]] = ..., metadata_json: _Optional[str] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class MemoryRelation(_message.Message):
    __slots__ = ("kind", "memory_id", "created_at", "reason", "strength")
    KIND_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STRENGTH_FIELD_NUMBER: _ClassVar[int]
    kind: RelationKind
    memory_id: str
    created_at: _timestamp_pb2.Timestamp
    reason: str
    strength: float
    def __init__(self, kind: _Optional[_Union[RelationKind, str]] = ..., memory_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., reason: _Optional[str] = ..., strength: _Optional[float] = ...) -> None: ...

class Degradation(_message.Message):
    __slots__ = ("component", "reason")
    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    component: str
    reason: str
    def __init__(self, component: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class Progress(_message.Message):
    __slots__ = ("phase", "done", "total", "message")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    phase: str
    done: int
    total: int
    message: str
    def __init__(self, phase: _Optional[str] = ..., done: _Optional[int] = ..., total: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class WorkingMemoryScope(_message.Message):
    __slots__ = ("thread_id", "resource_id")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    resource_id: str
    def __init__(self, thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ...) -> None: ...
