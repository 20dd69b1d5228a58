"""The records of a session: its SESSION header and its SESSION_MESSAGE records.

The header holds the fixed zone, the summary, the per-session compression settings
and the turns not yet summarised (the "tail", bounded by the compression threshold).
When turns are folded into the summary they move out of the header into one
SESSION_MESSAGE record each, written in the same store write as the header: nothing
is deleted by compression, and an append rewrites only the small header.

A message record's key is ``<session id>\\x00<generation>\\x00<seq:012d>``; the
generation is derived from the session's creation time, so a session created again
under the same id after expiring never sees the old one's messages (those are
deleted with their header by maintenance). Message records carry no expiry of their
own: the header's decides. Timestamps are ISO 8601 strings; enums their values.

An offloaded message's full content is a SESSION_ATTACHMENT record keyed
``<message key>\\x00<sha256>`` (see memoryd.service.sessions.attachments): named by
its content as well as its seq, so a write that lost the header to another writer
never leaves content another message's stub would name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from memoryd.domain.agent_state import (
    SESSION_COMPRESSION_FIELDS,
    FixedZoneEntry,
    FixedZoneKind,
    LongTermMemoryMode,
    MessageAttachment,
    MessageRole,
    SessionCompression,
    SessionMessage,
    ToolCall,
)
from memoryd.domain.limits import next_version
from memoryd.domain.records import Record, RecordKind
from memoryd.domain.requests import Degradation

OPEN, CLOSED = "open", "closed"
#: Separates session id, generation and seq in a message record key (session ids
#: have no control characters, so the key is unambiguous).
KEY_SEPARATOR = "\x00"
_SEQ_DIGITS = 12


def generation_of(created_at: datetime) -> str:
    """The generation of a session created at ``created_at`` (microseconds, hex)."""
    return format(int(created_at.timestamp() * 1_000_000), "x")


def message_prefix(session_id: str, generation: str) -> str:
    """The key prefix of every message record of one session generation."""
    return f"{session_id}{KEY_SEPARATOR}{generation}{KEY_SEPARATOR}"


def message_key(session_id: str, generation: str, seq: int) -> str:
    return f"{message_prefix(session_id, generation)}{seq:0{_SEQ_DIGITS}d}"


def seq_of_key(key: str) -> int:
    """The seq of a message or attachment record key."""
    return int(key.rsplit(KEY_SEPARATOR, 1)[1])


def session_of_key(key: str) -> tuple[str, str]:
    """(session id, generation) of a message or attachment record key."""
    session_id, generation, _ = key.split(KEY_SEPARATOR, 2)
    return session_id, generation


def attachment_key(session_id: str, generation: str, seq: int, sha256: str) -> str:
    """The key of the attachment holding message ``seq``'s content of hash ``sha256``."""
    return f"{message_key(session_id, generation, seq)}{KEY_SEPARATOR}{sha256}"


@dataclass(slots=True)
class SessionState:
    """A session's header as held in memory between loading and storing it."""

    id: str
    created_at: datetime
    ttl_s: float
    status: str = OPEN
    fixed_zone: list[FixedZoneEntry] = field(default_factory=list)
    summary: str = ""
    summarizer: str = ""
    summary_degraded: list[Degradation] = field(default_factory=list)
    #: The turns after summarized_through_seq, kept verbatim in the header.
    messages: list[SessionMessage] = field(default_factory=list)
    #: The seq of the last message appended (seqs are never reused).
    message_count: int = 0
    #: The summary covers every stored message up to this seq.
    summarized_through_seq: int = 0
    #: Messages stored: the folded ones (message records) plus the tail.
    stored_messages: int = 0
    compression: SessionCompression = field(default_factory=SessionCompression)
    long_term_memory_mode: LongTermMemoryMode = LongTermMemoryMode.AGENT_CONTROL
    version: int = 0
    expires_at: datetime | None = None
    #: The header record this state was read from (a conditional write replaces
    #: exactly it), and its message_count then: messages up to it were stored with
    #: their content, so folding them may be written before the header.
    read_from: Record | None = field(default=None, repr=False)
    read_count: int = 0

    @property
    def generation(self) -> str:
        return generation_of(self.created_at)

    @property
    def folded_messages(self) -> int:
        """Stored messages that live in message records (summarised ones)."""
        return self.stored_messages - len(self.messages)

    def fold(
        self, cut: int, summary: str, method: str, degraded: Sequence[Degradation]
    ) -> list[SessionMessage]:
        """Fold the first ``cut`` tail messages into ``summary`` (made by ``method``);
        returns them (to be stored as message records with the header)."""
        folded = self.messages[:cut]
        self.summary = summary
        self.summarizer = method
        self.summary_degraded = list(degraded)
        self.messages = self.messages[cut:]
        if folded:
            self.summarized_through_seq = folded[-1].seq
        return folded

    def record(self, now: datetime, *, touch: bool = True) -> Record:
        """The header record to store; ``touch`` restarts the TTL from ``now``."""
        doc: dict[str, Any] = {
            "status": self.status,
            "created_at": self.created_at.isoformat(),
            "ttl_s": self.ttl_s,
            "fixed_zone": [
                {"kind": e.kind.value, "content": e.content, "created_at": e.created_at.isoformat()}
                for e in self.fixed_zone
            ],
            "summary": self.summary,
            "summarizer": self.summarizer,
            "summary_degraded": [
                {"component": d.component, "reason": d.reason} for d in self.summary_degraded
            ],
            "messages": [message_doc(m) for m in self.messages],
            "message_count": self.message_count,
            "summarized_through_seq": self.summarized_through_seq,
            "stored_messages": self.stored_messages,
            "compression": {
                name: getattr(self.compression, name)
                for name in SESSION_COMPRESSION_FIELDS
                if getattr(self.compression, name) is not None
            },
        }
        if self.long_term_memory_mode is not LongTermMemoryMode.AGENT_CONTROL:
            doc["long_term_memory_mode"] = self.long_term_memory_mode.value
        expires_at = now + timedelta(seconds=self.ttl_s) if touch else self.expires_at
        return Record(
            kind=RecordKind.SESSION,
            key=self.id,
            doc=doc,
            version=next_version(self.version),
            updated_at=now,
            expires_at=expires_at,
        )

    def message_record(self, message: SessionMessage) -> Record:
        """The SESSION_MESSAGE record of a folded message."""
        return Record(
            kind=RecordKind.SESSION_MESSAGE,
            key=message_key(self.id, self.generation, message.seq),
            doc=message_doc(message),
            version=1,
            updated_at=message.created_at,
        )

    @classmethod
    def from_record(cls, record: Record) -> SessionState:
        doc = record.doc
        messages = [message_from_doc(m) for m in doc.get("messages", [])]
        message_count = int(doc.get("message_count", 0))
        if "summarized_through_seq" in doc:
            through = int(doc["summarized_through_seq"])
            stored = int(doc.get("stored_messages", len(messages)))
        else:
            # A header written before messages were kept: its folded turns are gone.
            through = messages[0].seq - 1 if messages else message_count
            stored = len(messages)
        overrides = doc.get("compression") or {}
        return cls(
            id=record.key,
            created_at=datetime.fromisoformat(doc["created_at"]),
            ttl_s=float(doc["ttl_s"]),
            status=doc.get("status", OPEN),
            fixed_zone=[
                FixedZoneEntry(
                    FixedZoneKind(e["kind"]), e["content"], datetime.fromisoformat(e["created_at"])
                )
                for e in doc.get("fixed_zone", [])
            ],
            summary=doc.get("summary", ""),
            summarizer=doc.get("summarizer", ""),
            summary_degraded=[
                Degradation(d["component"], d["reason"]) for d in doc.get("summary_degraded", [])
            ],
            messages=messages,
            message_count=message_count,
            summarized_through_seq=through,
            stored_messages=stored,
            compression=SessionCompression(
                **{k: overrides[k] for k in SESSION_COMPRESSION_FIELDS if k in overrides}
            ),
            long_term_memory_mode=LongTermMemoryMode(
                doc.get("long_term_memory_mode", LongTermMemoryMode.AGENT_CONTROL.value)
            ),
            version=record.version,
            expires_at=record.expires_at,
            read_from=record,
            read_count=message_count,
        )


def message_doc(m: SessionMessage) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "role": m.role.value,
        "content": m.content,
        "name": m.name,
        "tool_call_id": m.tool_call_id,
        "created_at": m.created_at.isoformat(),
        "seq": m.seq,
    }
    if m.tool_calls:
        doc["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls
        ]
    if m.attachment is not None:
        a = m.attachment
        doc["attachment"] = {"size_bytes": a.size_bytes, "chars": a.chars, "sha256": a.sha256}
    return doc


def message_from_doc(d: dict[str, Any]) -> SessionMessage:
    return SessionMessage(
        role=MessageRole(d["role"]),
        content=d["content"],
        seq=int(d["seq"]),
        created_at=datetime.fromisoformat(d["created_at"]),
        name=d.get("name", ""),
        tool_call_id=d.get("tool_call_id", ""),
        tool_calls=tuple(
            ToolCall(str(c.get("id", "")), str(c.get("name", "")), c.get("arguments"))
            for c in d.get("tool_calls", [])
        ),
        attachment=_attachment_from(d.get("attachment")),
    )


def _attachment_from(d: dict[str, Any] | None) -> MessageAttachment | None:
    if not d:
        return None
    return MessageAttachment(int(d["size_bytes"]), int(d["chars"]), str(d["sha256"]))
