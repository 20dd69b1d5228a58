"""What each field of an operation's outcome is, for masking (security/masking.py).

Every string and JSON value an outcome carries is masked for a low-clearance caller,
wherever it sits, unless its field is declared here: a field added to an outcome later
is masked until someone says it is an identifier. Numbers, booleans, enums, times and
vectors are never masked (they are not text).

- ``KEEP``: identifiers the API addresses records by (memory, session, scope and
  tool-call ids, state component names), page tokens, etags, names of models, counters
  and summarisers, status words. Masking them would break the next call that names
  them (and a uuid can look like a phone number). Personal data does not belong in an
  identifier: they are also written to the audit log.
- ``PATH``: a key path; each segment is masked and the path stays a path.
- ``JSON_TEXT``: JSON text; its string values and member names are masked and it stays
  valid JSON (the writer's spelling of the rest is kept).
- ``METADATA`` / ``METADATA_TEXT``: a memory's metadata (a value, its JSON text): as
  JSON, except the ids and times of the daemon's own ``memoryd:`` members.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from memoryd.domain.agent_state import (
    AgentProfile,
    SessionMessage,
    SessionMessagesPage,
    SessionWindow,
    ToolCall,
    WorkingMemory,
    WorkingScope,
    WorkingScopePage,
)
from memoryd.domain.changes import Change, WatchItem
from memoryd.domain.keyed import KeyEntry, KeyHistoryPage, KeyListing
from memoryd.domain.lifecycle import (
    ConsolidatedGroup,
    ExportedKeyEvent,
    ExportedProfile,
    ExportedSession,
    ExportedSessionMessage,
    ExportedState,
    ExportedWorkingMemory,
    ExportHeader,
    Progress,
    PruneOutcome,
    ReembedResult,
    Stats,
)
from memoryd.domain.models import Memory
from memoryd.domain.requests import Degradation, MemoryPage, RecallOutcome
from memoryd.domain.snapshot import (
    DefaultReadLine,
    DefaultReadResult,
    OmittedItem,
    Snapshot,
    SnapshotItem,
    StateComponent,
)


class Kind(enum.Enum):
    """How a field's strings are masked."""

    #: Free text (the default): every rule applies; a dict or list is a JSON value.
    TEXT = "text"
    KEEP = "keep"
    PATH = "path"
    JSON_TEXT = "json_text"
    METADATA = "metadata"
    METADATA_TEXT = "metadata_text"


K = Kind
_PAGE = {"next_page_token": K.KEEP}

#: Per outcome class, its fields that are not free text. Classes and fields left out
#: are masked as text.
FIELD_KINDS: Mapping[type, Mapping[str, Kind]] = {
    Memory: {
        "id": K.KEEP,
        "tenant_id": K.KEEP,
        "agent_id": K.KEEP,
        "embedding_model": K.KEEP,
        "supersedes": K.KEEP,
        "key": K.PATH,
        "metadata": K.METADATA,
        "metadata_json": K.METADATA_TEXT,
    },
    RecallOutcome: {"embedding_model": K.KEEP},
    Degradation: {"component": K.KEEP},
    MemoryPage: _PAGE,
    KeyEntry: {"key": K.PATH, "content_json": K.JSON_TEXT, "memory_id": K.KEEP},
    KeyListing: {"directories": K.PATH, **_PAGE},
    KeyHistoryPage: _PAGE,
    WorkingScope: {"thread_id": K.KEEP, "resource_id": K.KEEP},
    WorkingMemory: {"content_json": K.JSON_TEXT},
    WorkingScopePage: _PAGE,
    AgentProfile: {"etag": K.KEEP},
    ToolCall: {"id": K.KEEP},
    SessionMessage: {"tool_call_id": K.KEEP},
    SessionWindow: {"summarizer": K.KEEP, "token_counter": K.KEEP},
    SessionMessagesPage: _PAGE,
    Snapshot: {"token_counter": K.KEEP},
    SnapshotItem: {"id": K.KEEP},
    OmittedItem: {"id": K.KEEP, "reason": K.KEEP},
    DefaultReadResult: {"token_counter": K.KEEP},
    DefaultReadLine: {"key": K.PATH, "content_json": K.JSON_TEXT},
    StateComponent: {"name": K.KEEP, "state_json": K.JSON_TEXT},
    Progress: {"phase": K.KEEP},
    Stats: {
        "by_memory_type": K.KEEP,
        "by_security_level": K.KEEP,
        "by_embedding_model": K.KEEP,
    },
    PruneOutcome: {"ids": K.KEEP},
    ConsolidatedGroup: {"source_ids": K.KEEP, "method": K.KEEP, "derived_id": K.KEEP},
    ReembedResult: {"embedding_model": K.KEEP},
    ExportHeader: {
        "tenant_id": K.KEEP,
        "agent_id": K.KEEP,
        "embedding_model": K.KEEP,
        "format": K.KEEP,
    },
    ExportedKeyEvent: {"agent_id": K.KEEP},
    ExportedWorkingMemory: {"agent_id": K.KEEP},
    ExportedProfile: {"agent_id": K.KEEP},
    ExportedSession: {"agent_id": K.KEEP, "session_id": K.KEEP, "summarizer": K.KEEP},
    ExportedSessionMessage: {"agent_id": K.KEEP, "session_id": K.KEEP},
    ExportedState: {"agent_id": K.KEEP, "session_id": K.KEEP},
    Change: {
        "agent_id": K.KEEP,
        "memory_id": K.KEEP,
        "key": K.PATH,
        "session_id": K.KEEP,
        "component": K.KEEP,
    },
    WatchItem: {"cursor": K.KEEP},
}
