import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from memoryd_proto.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SnapshotSection(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SNAPSHOT_SECTION_UNSPECIFIED: _ClassVar[SnapshotSection]
    SNAPSHOT_SECTION_PINNED: _ClassVar[SnapshotSection]
    SNAPSHOT_SECTION_PROFILE: _ClassVar[SnapshotSection]
    SNAPSHOT_SECTION_WORKING: _ClassVar[SnapshotSection]
    SNAPSHOT_SECTION_SEMANTIC: _ClassVar[SnapshotSection]
    SNAPSHOT_SECTION_RECENT: _ClassVar[SnapshotSection]
    SNAPSHOT_SECTION_SESSION: _ClassVar[SnapshotSection]

class SnapshotFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SNAPSHOT_FORMAT_UNSPECIFIED: _ClassVar[SnapshotFormat]
    SNAPSHOT_FORMAT_MARKDOWN: _ClassVar[SnapshotFormat]
    SNAPSHOT_FORMAT_XML: _ClassVar[SnapshotFormat]
    SNAPSHOT_FORMAT_USER_MEMORY: _ClassVar[SnapshotFormat]
SNAPSHOT_SECTION_UNSPECIFIED: SnapshotSection
SNAPSHOT_SECTION_PINNED: SnapshotSection
SNAPSHOT_SECTION_PROFILE: SnapshotSection
SNAPSHOT_SECTION_WORKING: SnapshotSection
SNAPSHOT_SECTION_SEMANTIC: SnapshotSection
SNAPSHOT_SECTION_RECENT: SnapshotSection
SNAPSHOT_SECTION_SESSION: SnapshotSection
SNAPSHOT_FORMAT_UNSPECIFIED: SnapshotFormat
SNAPSHOT_FORMAT_MARKDOWN: SnapshotFormat
SNAPSHOT_FORMAT_XML: SnapshotFormat
SNAPSHOT_FORMAT_USER_MEMORY: SnapshotFormat

class BuildSnapshotRequest(_message.Message):
    __slots__ = ("agent_id", "namespace", "trigger", "trigger_embedding", "focus", "token_budget", "sections", "priority", "format", "scope", "session_id", "semantic_limit", "recent_limit", "recent_window", "max_security_level", "min_relevance", "trust", "context_window", "as_of")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    FOCUS_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    SECTIONS_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_LIMIT_FIELD_NUMBER: _ClassVar[int]
    RECENT_LIMIT_FIELD_NUMBER: _ClassVar[int]
    RECENT_WINDOW_FIELD_NUMBER: _ClassVar[int]
    MAX_SECURITY_LEVEL_FIELD_NUMBER: _ClassVar[int]
    MIN_RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    TRUST_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_WINDOW_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    namespace: str
    trigger: str
    trigger_embedding: _containers.RepeatedScalarFieldContainer[float]
    focus: str
    token_budget: int
    sections: _containers.RepeatedScalarFieldContainer[SnapshotSection]
    priority: _containers.RepeatedScalarFieldContainer[SnapshotSection]
    format: SnapshotFormat
    scope: _common_pb2.WorkingMemoryScope
    session_id: str
    semantic_limit: int
    recent_limit: int
    recent_window: _duration_pb2.Duration
    max_security_level: _common_pb2.SecurityLevel
    min_relevance: float
    trust: _common_pb2.TrustFilter
    context_window: int
    as_of: _common_pb2.AsOf
    def __init__(self, agent_id: _Optional[str] = ..., namespace: _Optional[str] = ..., trigger: _Optional[str] = ..., trigger_embedding: _Optional[_Iterable[float]] = ..., focus: _Optional[str] = ..., token_budget: _Optional[int] = ..., sections: _Optional[_Iterable[_Union[SnapshotSection, str]]] = ..., priority: _Optional[_Iterable[_Union[SnapshotSection, str]]] = ..., format: _Optional[_Union[SnapshotFormat, str]] = ..., scope: _Optional[_Union[_common_pb2.WorkingMemoryScope, _Mapping]] = ..., session_id: _Optional[str] = ..., semantic_limit: _Optional[int] = ..., recent_limit: _Optional[int] = ..., recent_window: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., max_security_level: _Optional[_Union[_common_pb2.SecurityLevel, str]] = ..., min_relevance: _Optional[float] = ..., trust: _Optional[_Union[_common_pb2.TrustFilter, _Mapping]] = ..., context_window: _Optional[int] = ..., as_of: _Optional[_Union[_common_pb2.AsOf, _Mapping]] = ...) -> None: ...

class SnapshotItem(_message.Message):
    __slots__ = ("section", "id", "text", "tokens", "truncated", "source")
    SECTION_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    section: SnapshotSection
    id: str
    text: str
    tokens: int
    truncated: bool
    source: _common_pb2.Provenance
    def __init__(self, section: _Optional[_Union[SnapshotSection, str]] = ..., id: _Optional[str] = ..., text: _Optional[str] = ..., tokens: _Optional[int] = ..., truncated: _Optional[bool] = ..., source: _Optional[_Union[_common_pb2.Provenance, _Mapping]] = ...) -> None: ...

class SectionUsage(_message.Message):
    __slots__ = ("section", "tokens", "items")
    SECTION_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    section: SnapshotSection
    tokens: int
    items: int
    def __init__(self, section: _Optional[_Union[SnapshotSection, str]] = ..., tokens: _Optional[int] = ..., items: _Optional[int] = ...) -> None: ...

class OmittedItem(_message.Message):
    __slots__ = ("section", "id", "reason")
    SECTION_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    section: SnapshotSection
    id: str
    reason: str
    def __init__(self, section: _Optional[_Union[SnapshotSection, str]] = ..., id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class BuildSnapshotResponse(_message.Message):
    __slots__ = ("text", "items", "usage", "tokens_used", "token_budget", "omitted", "token_counter", "degraded")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    OMITTED_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNTER_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    text: str
    items: _containers.RepeatedCompositeFieldContainer[SnapshotItem]
    usage: _containers.RepeatedCompositeFieldContainer[SectionUsage]
    tokens_used: int
    token_budget: int
    omitted: _containers.RepeatedCompositeFieldContainer[OmittedItem]
    token_counter: str
    degraded: _containers.RepeatedCompositeFieldContainer[_common_pb2.Degradation]
    def __init__(self, text: _Optional[str] = ..., items: _Optional[_Iterable[_Union[SnapshotItem, _Mapping]]] = ..., usage: _Optional[_Iterable[_Union[SectionUsage, _Mapping]]] = ..., tokens_used: _Optional[int] = ..., token_budget: _Optional[int] = ..., omitted: _Optional[_Iterable[_Union[OmittedItem, _Mapping]]] = ..., token_counter: _Optional[str] = ..., degraded: _Optional[_Iterable[_Union[_common_pb2.Degradation, _Mapping]]] = ...) -> None: ...

class DefaultReadRequest(_message.Message):
    __slots__ = ("agent_id", "token_limit", "tags", "current_time", "prefix", "as_of")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TOKEN_LIMIT_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    CURRENT_TIME_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    token_limit: int
    tags: _containers.RepeatedScalarFieldContainer[str]
    current_time: _timestamp_pb2.Timestamp
    prefix: str
    as_of: _common_pb2.AsOf
    def __init__(self, agent_id: _Optional[str] = ..., token_limit: _Optional[int] = ..., tags: _Optional[_Iterable[str]] = ..., current_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., prefix: _Optional[str] = ..., as_of: _Optional[_Union[_common_pb2.AsOf, _Mapping]] = ...) -> None: ...

class DefaultReadLine(_message.Message):
    __slots__ = ("key", "type", "summary", "updated_at", "content_json", "score", "source")
    KEY_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_JSON_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    key: str
    type: str
    summary: str
    updated_at: _timestamp_pb2.Timestamp
    content_json: str
    score: float
    source: _common_pb2.Provenance
    def __init__(self, key: _Optional[str] = ..., type: _Optional[str] = ..., summary: _Optional[str] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., content_json: _Optional[str] = ..., score: _Optional[float] = ..., source: _Optional[_Union[_common_pb2.Provenance, _Mapping]] = ...) -> None: ...

class DefaultReadResponse(_message.Message):
    __slots__ = ("text", "lines", "tokens_used", "token_counter")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNTER_FIELD_NUMBER: _ClassVar[int]
    text: str
    lines: _containers.RepeatedCompositeFieldContainer[DefaultReadLine]
    tokens_used: int
    token_counter: str
    def __init__(self, text: _Optional[str] = ..., lines: _Optional[_Iterable[_Union[DefaultReadLine, _Mapping]]] = ..., tokens_used: _Optional[int] = ..., token_counter: _Optional[str] = ...) -> None: ...

class StateComponent(_message.Message):
    __slots__ = ("name", "state", "version", "updated_at", "state_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    STATE_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    state: _struct_pb2.Struct
    version: int
    updated_at: _timestamp_pb2.Timestamp
    state_json: str
    def __init__(self, name: _Optional[str] = ..., state: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., version: _Optional[int] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., state_json: _Optional[str] = ...) -> None: ...

class SaveStateRequest(_message.Message):
    __slots__ = ("agent_id", "session_id", "components")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    session_id: str
    components: _containers.RepeatedCompositeFieldContainer[StateComponent]
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., components: _Optional[_Iterable[_Union[StateComponent, _Mapping]]] = ...) -> None: ...

class SaveStateResponse(_message.Message):
    __slots__ = ("components",)
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    components: _containers.RepeatedCompositeFieldContainer[StateComponent]
    def __init__(self, components: _Optional[_Iterable[_Union[StateComponent, _Mapping]]] = ...) -> None: ...

class LoadStateRequest(_message.Message):
    __slots__ = ("agent_id", "session_id", "names")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    session_id: str
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., names: _Optional[_Iterable[str]] = ...) -> None: ...

class LoadStateResponse(_message.Message):
    __slots__ = ("components",)
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    components: _containers.RepeatedCompositeFieldContainer[StateComponent]
    def __init__(self, components: _Optional[_Iterable[_Union[StateComponent, _Mapping]]] = ...) -> None: ...
