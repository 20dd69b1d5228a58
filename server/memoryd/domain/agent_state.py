"""Domain objects of an agent's working state: working memory, the agent profile
(agent.md) and sessions (short-term memory). Stored as records (memoryd.domain.records)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from memoryd.domain.json_text import EMPTY_OBJECT, Json, dumps
from memoryd.domain.models import Memory
from memoryd.domain.requests import Degradation

#: Separates thread_id and resource_id in a WORKING record key. Scope ids may not
#: contain control characters, so the key is unambiguous.
SCOPE_KEY_SEPARATOR = "\x00"


# ---------------------------------------------------------------- working memory


@dataclass(frozen=True, slots=True)
class WorkingScope:
    """A working-memory scope within a partition; at least one id is non-empty."""

    thread_id: str = ""
    resource_id: str = ""

    @property
    def key(self) -> str:
        """The scope as one record key."""
        return f"{self.thread_id}{SCOPE_KEY_SEPARATOR}{self.resource_id}"

    @classmethod
    def from_key(cls, key: str) -> WorkingScope:
        """The scope a record key names."""
        thread_id, _, resource_id = key.partition(SCOPE_KEY_SEPARATOR)
        return cls(thread_id, resource_id)


class WorkingMemoryMode(enum.StrEnum):
    """How a working-memory write combines with what is stored."""

    #: Top-level fields of the new content replace the stored ones; others are kept.
    MERGE = "merge"
    #: The new content replaces the stored object.
    REPLACE = "replace"


@dataclass(frozen=True, slots=True)
class WorkingMemoryWrite:
    """A SetWorkingMemory request. ``ttl`` and ``json_schema`` are None when not given
    (the stored ones are kept); a zero ttl removes the expiry, ``{}`` the schema.
    ``content`` (a JSON object) is stored as its text."""

    scope: WorkingScope
    content: Json = EMPTY_OBJECT
    mode: WorkingMemoryMode = WorkingMemoryMode.MERGE
    ttl: timedelta | None = None
    json_schema: Json | None = None


@dataclass(frozen=True, slots=True)
class WorkingMemory:
    """One scope's working memory: its JSON object (and the text as written), version, expiry
    and schema."""

    scope: WorkingScope
    content: dict[str, Any]
    version: int
    updated_at: datetime
    expires_at: datetime | None = None
    ttl: timedelta | None = None
    json_schema: dict[str, Any] | None = None
    #: The content as stored: the writers' JSON text (a MERGE keeps each member's
    #: text as written). Left empty, it is made from ``content``.
    content_json: str = ""

    def __post_init__(self) -> None:
        if not self.content_json:
            object.__setattr__(self, "content_json", dumps(self.content))


@dataclass(frozen=True, slots=True)
class WorkingScopeQuery:
    """Filters are exact matches; None means "any"."""

    thread_id: str | None = None
    resource_id: str | None = None
    page_size: int | None = None
    page_token: str = ""


@dataclass(frozen=True, slots=True)
class WorkingScopePage:
    """A page of working-memory scopes."""

    items: list[WorkingMemory]
    next_page_token: str = ""


# ---------------------------------------------------------------- profile

#: The record key of the one profile document of a partition.
PROFILE_KEY = "agent.md"
#: ``if_match`` value meaning "only if no profile exists yet".
IF_MATCH_NONE = "none"
#: ``if_match`` value meaning "only if a profile exists" (any version).
IF_MATCH_ANY = "*"


@dataclass(frozen=True, slots=True)
class AgentProfile:
    """The agent's profile document (agent.md) and its etag."""

    content: str
    #: Unquoted lowercase hex; SetProfile also accepts it in double quotes.
    etag: str
    version: int
    updated_at: datetime


# ---------------------------------------------------------------- sessions


class MessageRole(enum.StrEnum):
    """Who said a session message."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class FixedZoneKind(enum.StrEnum):
    """The kinds of a session's fixed zone, which is never summarised away."""

    #: The event that started the run; one per session (a new one replaces it).
    TRIGGER = "trigger"
    #: What the run is currently focused on; one per session (a new one replaces it).
    FOCUS = "focus"
    #: Injected instructions; they accumulate in order.
    INSTRUCTION = "instruction"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call an assistant message asked for: its id, the tool's name and the
    arguments as a JSON value (an object, as chat APIs send it)."""

    id: str
    name: str
    arguments: Any = None


@dataclass(frozen=True, slots=True)
class MessageDraft:
    """A message to append. ``role`` None means unset on the wire (rejected)."""

    role: MessageRole | None
    content: str = ""
    name: str = ""
    tool_call_id: str = ""
    created_at: datetime | None = None
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class MessageAttachment:
    """The stored full content of an offloaded message: its size in UTF-8 bytes and in
    characters (code points), and its SHA-256 (lowercase hex), which also names it."""

    size_bytes: int
    chars: int
    sha256: str


@dataclass(frozen=True, slots=True)
class SessionMessage:
    """One stored message of a session, with its seq."""

    role: MessageRole
    content: str
    seq: int
    created_at: datetime
    name: str = ""
    tool_call_id: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    #: Set when the content was offloaded: ``content`` is then a stub naming it.
    attachment: MessageAttachment | None = None
    #: In a window that merges adjacent messages: the entry joins the stored messages
    #: ``merged_from_seq``..``seq`` (0: one message).
    merged_from_seq: int = 0


@dataclass(frozen=True, slots=True)
class SessionCompression:
    """Per-session overrides of the daemon's compression settings (None: the
    daemon's ``sessions.*`` value)."""

    compress_threshold_messages: int | None = None
    compress_token_ratio: float | None = None
    context_budget_tokens: int | None = None
    keep_recent_messages: int | None = None
    #: Tool results larger than this (UTF-8 bytes) are offloaded; 0 turns it off.
    offload_bytes: int | None = None
    #: The window joins consecutive messages of the same role and name.
    merge_adjacent_messages: bool | None = None

    def merged(self, newer: SessionCompression) -> SessionCompression:
        """These overrides with ``newer``'s set fields replacing them."""
        return SessionCompression(
            *(
                getattr(self, name) if getattr(newer, name) is None else getattr(newer, name)
                for name in SESSION_COMPRESSION_FIELDS
            )
        )


SESSION_COMPRESSION_FIELDS = (
    "compress_threshold_messages",
    "compress_token_ratio",
    "context_budget_tokens",
    "keep_recent_messages",
    "offload_bytes",
    "merge_adjacent_messages",
)


class LongTermMemoryMode(enum.StrEnum):
    """Who manages a session's long-term memory (AgentScope's LongTermMemoryMode)."""

    #: The agent, with tools (record_to_memory, retrieve_from_memory): nothing automatic.
    AGENT_CONTROL = "agent_control"
    #: The daemon: an appended assistant reply is recorded with the user turn it
    #: answers, and the window retrieves memories relevant to the newest user message.
    STATIC_CONTROL = "static_control"
    BOTH = "both"

    @property
    def automatic(self) -> bool:
        """The daemon records replies and retrieves for the window."""
        return self is not LongTermMemoryMode.AGENT_CONTROL


@dataclass(frozen=True, slots=True)
class FixedZoneEntry:
    """One entry of a session's fixed zone."""

    kind: FixedZoneKind
    content: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class AppendOutcome:
    """What an AppendMessages did to the session."""

    #: Messages appended to the session so far (the seq of the last one).
    message_count: int
    #: True when older turns were folded into the summary by this call.
    compressed: bool = False
    degraded: tuple[Degradation, ...] = ()
    #: Long-term memories this append recorded: from its replies (static control),
    #: and from the turns it folded into the summary (sessions.extract_on_summary).
    recorded_memory_ids: tuple[str, ...] = ()
    #: Seqs of the messages whose content was offloaded to an attachment.
    offloaded_seqs: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class SessionWindow:
    """A session read back within a token budget: fixed zone, summary, then the newest turns."""

    fixed_zone: list[FixedZoneEntry]
    summary: str
    recent: list[SessionMessage]
    tokens_used: int
    #: How the summary was made: "llm" or "extractive".
    summarizer: str
    token_counter: str
    degraded: tuple[Degradation, ...] = ()
    #: The summary covers the messages up to this seq (0: no summary yet).
    summarized_through_seq: int = 0
    #: Messages stored (every one appended and not deleted, summarised or not).
    stored_messages: int = 0
    long_term_memory_mode: LongTermMemoryMode = LongTermMemoryMode.AGENT_CONTROL
    #: Static control: memories relevant to the newest user message, best first, and
    #: their lines as counted in ``tokens_used``.
    long_term_memories: tuple[Memory, ...] = ()
    long_term_memory: str = ""


@dataclass(frozen=True, slots=True)
class AttachmentQuery:
    """A slice of an offloaded message's content: ``offset`` characters skipped, at
    most ``max_chars`` (0: to the end)."""

    session_id: str
    seq: int
    offset: int = 0
    max_chars: int = 0


@dataclass(frozen=True, slots=True)
class AttachmentSlice:
    """A slice of an offloaded message's content (GetSessionAttachment)."""

    message: SessionMessage
    attachment: MessageAttachment
    content: str
    #: Where the next slice starts; 0 when ``content`` reaches the end.
    next_offset: int = 0


@dataclass(frozen=True, slots=True)
class SessionMessagesQuery:
    """A range of a session's stored messages: seq from..to (inclusive; 0 = open)."""

    session_id: str
    from_seq: int = 0
    to_seq: int = 0
    page_size: int | None = None
    page_token: str = ""


@dataclass(frozen=True, slots=True)
class SessionMessagesPage:
    """A page of a session's stored messages in seq order."""

    messages: list[SessionMessage]
    next_page_token: str = ""
    #: The seq of the last message appended (message seqs never repeat).
    message_count: int = 0
    summarized_through_seq: int = 0


@dataclass(frozen=True, slots=True)
class DeleteMessagesOutcome:
    """What a DeleteMessages deleted."""

    #: The seqs that existed and were deleted.
    deleted: list[int]
    #: True when a deleted message was covered by the summary, so it was rebuilt from
    #: the messages that remain.
    summary_rebuilt: bool = False
    degraded: tuple[Degradation, ...] = ()


@dataclass(frozen=True, slots=True)
class EndSessionOutcome:
    """What EndSession left: the summary and the memories it extracted."""

    summary: str
    extracted: list[Memory]
    degraded: tuple[Degradation, ...] = ()
