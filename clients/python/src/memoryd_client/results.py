"""Typed results: frozen dataclasses mapped from the ``memoryd.v1`` responses.

Enums become short lowercase names (``"fact"``, ``"internal"``, ``"user"``),
timestamps timezone-aware datetimes (None when unset), Structs and Values plain
Python (dicts, lists, str, float, bool, None). Each result keeps the message it came
from as ``.raw`` for anything not mapped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar, overload

from memoryd_client.wire_values import (
    JSON,
    enum_name,
    json_or,
    locator_json,
    struct_dict,
    value_json,
    when,
)
from memoryd_proto.v1 import common_pb2, memory_service_pb2, snapshot_service_pb2

T = TypeVar("T")


def provenance_of(p: common_pb2.Provenance) -> Provenance:
    return Provenance(
        kind=enum_name(common_pb2.ProvenanceKind, p.kind, "PROVENANCE_KIND_"),
        name=p.name,
        retrieved_at=when(p.retrieved_at),
        locator=locator_json(p.locator),
    )


@dataclass(frozen=True, slots=True)
class Degradation:
    """A fallback the daemon took to answer (the dependency and why)."""

    component: str
    reason: str


def degradations(items: Sequence[common_pb2.Degradation]) -> tuple[Degradation, ...]:
    return tuple(Degradation(d.component, d.reason) for d in items)


@dataclass(frozen=True, slots=True)
class Provenance:
    kind: str
    name: str = ""
    retrieved_at: datetime | None = None
    #: A string, or the object of an object locator.
    locator: str | dict[str, Any] = ""


@dataclass(frozen=True, slots=True)
class Relation:
    """How a memory relates to another: ``kind`` is "supersedes", "superseded_by",
    "contradicts", "supports", "refines", "derived_from", ... (the other memory holds
    the inverse)."""

    kind: str
    memory_id: str
    created_at: datetime | None = None
    reason: str = ""
    #: How closely the two are related, 0..1 (0.5 where nothing measured it).
    strength: float = 0.5


@dataclass(frozen=True, slots=True)
class Memory:
    """A long-term memory."""

    id: str
    agent_id: str
    content: str
    memory_type: str
    tags: tuple[str, ...]
    security_level: str
    importance: float
    confidence: float
    namespace: str
    metadata: dict[str, JSON]
    created_at: datetime | None
    updated_at: datetime | None
    accessed_at: datetime | None
    expires_at: datetime | None
    access_count: int
    version: int
    archived: bool
    key: str
    source: Provenance | None
    tenant_id: str
    embedding_model: str
    supersedes: str
    raw: common_pb2.Memory = field(repr=False, compare=False)
    #: The memory that replaced this one (it is then archived); "" when current.
    superseded_by: str = ""
    #: The memories a consolidated memory was made from.
    derived_from: tuple[str, ...] = ()
    relations: tuple[Relation, ...] = ()
    #: The metadata as stored: its JSON text as written (whitespace aside).
    metadata_json: str = ""

    @classmethod
    def from_pb(cls, m: common_pb2.Memory) -> Memory:
        source = provenance_of(m.source) if m.HasField("source") else None
        return cls(
            id=m.id,
            agent_id=m.agent_id,
            content=m.content,
            memory_type=enum_name(common_pb2.MemoryType, m.memory_type, "MEMORY_TYPE_"),
            tags=tuple(m.tags),
            security_level=enum_name(common_pb2.SecurityLevel, m.security_level, "SECURITY_LEVEL_"),
            importance=m.importance,
            confidence=m.confidence,
            namespace=m.namespace,
            metadata=json_or(m.metadata_json, None) or struct_dict(m.metadata),
            created_at=when(m.created_at),
            updated_at=when(m.updated_at),
            accessed_at=when(m.accessed_at),
            expires_at=when(m.expires_at),
            access_count=m.access_count,
            version=m.version,
            archived=m.archived,
            key=m.key,
            source=source,
            tenant_id=m.tenant_id,
            embedding_model=m.embedding_model,
            supersedes=m.supersedes,
            raw=m,
            superseded_by=m.superseded_by,
            derived_from=tuple(m.derived_from),
            relations=tuple(
                Relation(
                    enum_name(common_pb2.RelationKind, r.kind, "RELATION_KIND_"),
                    r.memory_id,
                    when(r.created_at),
                    r.reason,
                    r.strength,
                )
                for r in m.relations
            ),
            metadata_json=m.metadata_json,
        )


@dataclass(frozen=True, slots=True)
class Remembered:
    """The stored memory; ``deduplicated`` when an existing near-duplicate was updated."""

    memory: Memory
    deduplicated: bool
    degraded: tuple[Degradation, ...] = ()


@dataclass(frozen=True, slots=True)
class ScoreComponents:
    similarity: float
    recency: float
    importance: float
    decayed: float
    weighted: float
    keyword: float
    fused: float
    #: How well the memory matches the query, 0..1 (what DECAYED and WEIGHTED build on).
    relevance: float = 0.0


@dataclass(frozen=True, slots=True)
class RecallHit:
    memory: Memory
    score: float
    components: ScoreComponents
    #: How well the memory matches the query, 0..1, comparable across queries.
    relevance: float = 0.0


class _Items(Generic[T]):
    """A result that is also the sequence of its items (``result[0]``, ``for x in result``)."""

    items: tuple[T, ...]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...
    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        return self.items[index]


@dataclass(frozen=True, slots=True)
class Recalled(_Items[RecallHit]):
    """Recall hits, best first (iterable and indexable), plus how they were made."""

    items: tuple[RecallHit, ...]
    embedding_model: str = ""
    degraded: tuple[Degradation, ...] = ()


def recall_hit(r: memory_service_pb2.RecallResult) -> RecallHit:
    c = r.components
    return RecallHit(
        memory=Memory.from_pb(r.memory),
        score=r.score,
        components=ScoreComponents(
            c.similarity,
            c.recency,
            c.importance,
            c.decayed,
            c.weighted,
            c.keyword,
            c.fused,
            c.relevance,
        ),
        relevance=r.relevance,
    )


@dataclass(frozen=True, slots=True)
class Page(_Items[T]):
    """One page of a listing; ``next_page_token`` is "" on the last page."""

    items: tuple[T, ...]
    next_page_token: str = ""


# ---------------------------------------------------------------------- keyed memory


@dataclass(frozen=True, slots=True)
class KeyEntry:
    """A keyed-memory slot (or one write of it, in a history). ``valid`` is False for a
    tombstone, whose ``content`` is None."""

    key: str
    content: JSON
    valid: bool
    version: int
    updated_at: datetime | None
    security_level: str
    memory_id: str
    namespace: str
    raw: memory_service_pb2.KeyEntry = field(repr=False, compare=False)
    #: Where the value came from.
    source: Provenance | None = None
    #: The content as stored: the JSON text as written (whitespace aside).
    content_json: str = ""

    @classmethod
    def from_pb(cls, e: memory_service_pb2.KeyEntry) -> KeyEntry:
        return cls(
            key=e.key,
            content=json_or(e.content_json, None) if e.content_json else value_json(e.content),
            valid=e.valid,
            version=e.version,
            updated_at=when(e.updated_at),
            security_level=enum_name(common_pb2.SecurityLevel, e.security_level, "SECURITY_LEVEL_"),
            memory_id=e.memory_id,
            namespace=e.namespace,
            raw=e,
            source=provenance_of(e.source) if e.HasField("source") else None,
            content_json=e.content_json,
        )


@dataclass(frozen=True, slots=True)
class KeyListing(_Items[KeyEntry]):
    """Keys directly under a prefix (or all below it, recursively), like ``ls``."""

    items: tuple[KeyEntry, ...]
    directories: tuple[str, ...] = ()
    next_page_token: str = ""


# ---------------------------------------------------------------------- agent state


@dataclass(frozen=True, slots=True)
class WorkingMemory:
    thread_id: str
    resource_id: str
    content: dict[str, JSON]
    version: int
    updated_at: datetime | None
    expires_at: datetime | None
    json_schema: dict[str, JSON] | None
    #: The content as stored: its JSON text as written (whitespace aside).
    content_json: str = ""

    @classmethod
    def from_pb(cls, w: memory_service_pb2.WorkingMemory) -> WorkingMemory:
        return cls(
            thread_id=w.scope.thread_id,
            resource_id=w.scope.resource_id,
            content=json_or(w.content_json, None) or struct_dict(w.content),
            version=w.version,
            updated_at=when(w.updated_at),
            expires_at=when(w.expires_at),
            json_schema=struct_dict(w.json_schema) if w.HasField("json_schema") else None,
            content_json=w.content_json,
        )


@dataclass(frozen=True, slots=True)
class Profile:
    """The agent's agent.md; pass ``etag`` as ``if_match`` to update it safely."""

    content: str
    etag: str
    updated_at: datetime | None

    @classmethod
    def from_pb(cls, p: memory_service_pb2.AgentProfile) -> Profile:
        return cls(p.content, p.etag, when(p.updated_at))


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call of an assistant message; ``arguments`` is plain JSON data."""

    id: str
    name: str
    arguments: JSON = None

    @classmethod
    def from_pb(cls, c: memory_service_pb2.ToolCall) -> ToolCall:
        return cls(c.id, c.name, value_json(c.arguments) if c.HasField("arguments") else None)

    def as_chat(self) -> dict[str, Any]:
        """The OpenAI shape (arguments as a JSON string, as chat APIs send them)."""
        arguments = json.dumps({} if self.arguments is None else self.arguments)
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": arguments},
        }


@dataclass(frozen=True, slots=True)
class Attachment:
    """The stored full content of an offloaded message (get_session_attachment)."""

    size_bytes: int
    chars: int
    sha256: str


@dataclass(frozen=True, slots=True)
class Message:
    """A session message. :meth:`as_chat` gives the OpenAI chat-message shape."""

    role: str
    content: str
    name: str = ""
    tool_call_id: str = ""
    seq: int = 0
    created_at: datetime | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    #: Set when the content was offloaded (``content`` is then a stub naming it).
    attachment: Attachment | None = None
    #: A window entry merging the messages merged_from_seq..seq (0: one message).
    merged_from_seq: int = 0

    @classmethod
    def from_pb(cls, m: memory_service_pb2.SessionMessage) -> Message:
        role = enum_name(memory_service_pb2.MessageRole, m.role, "MESSAGE_ROLE_")
        calls = tuple(ToolCall.from_pb(c) for c in m.tool_calls)
        a = m.attachment
        attachment = (
            Attachment(a.size_bytes, a.chars, a.sha256) if m.HasField("attachment") else None
        )
        return cls(
            role, m.content, m.name, m.tool_call_id, m.seq, when(m.created_at), calls,
            attachment, m.merged_from_seq,
        )  # fmt: skip

    def as_chat(self) -> dict[str, Any]:
        chat: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.name:
            chat["name"] = self.name
        if self.tool_call_id:
            chat["tool_call_id"] = self.tool_call_id
        if self.tool_calls:
            chat["tool_calls"] = [c.as_chat() for c in self.tool_calls]
        return chat


@dataclass(frozen=True, slots=True)
class FixedZoneEntry:
    """Never compressed: the trigger, the focus, injected instructions."""

    kind: str
    content: str
    created_at: datetime | None

    @classmethod
    def from_pb(cls, e: memory_service_pb2.FixedZoneEntry) -> FixedZoneEntry:
        kind = enum_name(memory_service_pb2.FixedZoneKind, e.kind, "FIXED_ZONE_KIND_")
        return cls(kind, e.content, when(e.created_at))


@dataclass(frozen=True, slots=True)
class Appended:
    message_count: int
    compressed: bool
    degraded: tuple[Degradation, ...] = ()
    #: static_control / both: the long-term memories recorded from the replies.
    recorded_memory_ids: tuple[str, ...] = ()
    #: Messages whose content was offloaded to an attachment.
    offloaded_seqs: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class SessionAttachment:
    """A slice of an offloaded message's full content."""

    seq: int
    content: str
    attachment: Attachment
    #: Where the next slice starts (0: ``content`` reaches the end).
    next_offset: int
    role: str
    name: str = ""
    tool_call_id: str = ""


@dataclass(frozen=True, slots=True)
class SessionWindow:
    """What a session holds within a token budget: fixed zone, summary, recent turns."""

    fixed_zone: tuple[FixedZoneEntry, ...]
    summary: str
    recent: tuple[Message, ...]
    tokens_used: int
    summarizer: str
    token_counter: str
    degraded: tuple[Degradation, ...] = ()
    #: The summary covers the stored messages up to this seq (0: no summary yet).
    summarized_through_seq: int = 0
    #: Messages stored, summarised or not (read them with get_session_messages).
    stored_messages: int = 0
    long_term_memory_mode: str = "agent_control"
    #: static_control / both: memories relevant to the newest user message, and
    #: their lines.
    long_term_memories: tuple[Memory, ...] = ()
    long_term_memory: str = ""

    def as_chat(self) -> list[dict[str, Any]]:
        """The window as chat messages: fixed zone, long-term memory (in
        ``<long_term_memory>`` tags) and summary as one system message (when there are
        any), then the recent turns."""
        head = [f"{e.kind}: {e.content}" for e in self.fixed_zone]
        if self.long_term_memory:
            head.append(f"<long_term_memory>\n{self.long_term_memory}\n</long_term_memory>")
        if self.summary:
            head.append(f"Summary of earlier turns: {self.summary}")
        chat = [{"role": "system", "content": "\n".join(head)}] if head else []
        return chat + [m.as_chat() for m in self.recent]


@dataclass(frozen=True, slots=True)
class SessionMessages(_Items[Message]):
    """One page of a session's stored messages, oldest first."""

    items: tuple[Message, ...]
    next_page_token: str = ""
    #: The seq of the last message appended.
    message_count: int = 0
    summarized_through_seq: int = 0


@dataclass(frozen=True, slots=True)
class MessagesDeleted:
    #: The seqs that existed and were deleted.
    deleted_seqs: tuple[int, ...]
    #: The summary covered a deleted message and was rebuilt from the rest.
    summary_rebuilt: bool = False
    degraded: tuple[Degradation, ...] = ()


@dataclass(frozen=True, slots=True)
class SessionEnd:
    summary: str
    extracted: tuple[Memory, ...]
    degraded: tuple[Degradation, ...] = ()


@dataclass(frozen=True, slots=True)
class StateComponent:
    name: str
    state: dict[str, JSON]
    version: int
    updated_at: datetime | None
    #: The state as stored: its JSON text as written (whitespace aside).
    state_json: str = ""

    @classmethod
    def from_pb(cls, c: snapshot_service_pb2.StateComponent) -> StateComponent:
        state = json_or(c.state_json, None) or struct_dict(c.state)
        return cls(c.name, state, c.version, when(c.updated_at), c.state_json)


# ---------------------------------------------------------------------- snapshots


@dataclass(frozen=True, slots=True)
class SnapshotItem:
    section: str
    id: str
    text: str
    tokens: int
    truncated: bool
    #: A memory item's provenance (None for other items and unattributed memories);
    #: tool, web and file content is rendered in ``text`` as quoted data with it.
    source: Provenance | None = None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A token-budgeted view of the agent's memory, rendered as ``text``."""

    text: str
    items: tuple[SnapshotItem, ...]
    tokens_used: int
    token_budget: int
    token_counter: str
    degraded: tuple[Degradation, ...] = ()
    raw: snapshot_service_pb2.BuildSnapshotResponse | None = field(
        default=None, repr=False, compare=False
    )

    @classmethod
    def from_pb(cls, r: snapshot_service_pb2.BuildSnapshotResponse) -> Snapshot:
        items = tuple(
            SnapshotItem(
                enum_name(snapshot_service_pb2.SnapshotSection, i.section, "SNAPSHOT_SECTION_"),
                i.id,
                i.text,
                i.tokens,
                i.truncated,
                provenance_of(i.source) if i.HasField("source") else None,
            )
            for i in r.items
        )
        return cls(
            r.text,
            items,
            r.tokens_used,
            r.token_budget,
            r.token_counter,
            degradations(r.degraded),
            r,
        )


@dataclass(frozen=True, slots=True)
class DefaultReadLine:
    key: str
    #: The content's own "type"; "" when it has none.
    type: str
    summary: str
    updated_at: datetime | None
    #: The key's content (from its JSON text) and the text itself.
    content: JSON = None
    content_json: str = ""
    #: The ranking score (recency, importance, tag overlap).
    score: float = 0.0
    #: The source of the key's last write (None when it had none).
    source: Provenance | None = None


@dataclass(frozen=True, slots=True)
class DefaultRead:
    """Passive retrieval over keyed memory: one compact line per key within a limit."""

    text: str
    lines: tuple[DefaultReadLine, ...]
    tokens_used: int
    token_counter: str
