"""The SESSION record of a session: its JSON document and back.

One record per session (see memoryd.service.sessions for the size bound). Timestamps
are ISO 8601 strings; enums their values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from memoryd.domain.agent_state import FixedZoneEntry, FixedZoneKind, MessageRole, SessionMessage
from memoryd.domain.limits import next_version
from memoryd.domain.records import Record, RecordKind
from memoryd.domain.requests import Degradation

OPEN, CLOSED = "open", "closed"


@dataclass(slots=True)
class SessionState:
    """A session as held in memory between loading and storing its record."""

    id: str
    created_at: datetime
    ttl_s: float
    status: str = OPEN
    fixed_zone: list[FixedZoneEntry] = field(default_factory=list)
    summary: str = ""
    summarizer: str = ""
    summary_degraded: list[Degradation] = field(default_factory=list)
    messages: list[SessionMessage] = field(default_factory=list)
    message_count: int = 0
    version: int = 0
    expires_at: datetime | None = None

    def record(self, now: datetime, *, touch: bool = True) -> Record:
        """The record to store; ``touch`` restarts the TTL from ``now``."""
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
            "messages": [_message_doc(m) for m in self.messages],
            "message_count": self.message_count,
        }
        expires_at = now + timedelta(seconds=self.ttl_s) if touch else self.expires_at
        return Record(
            kind=RecordKind.SESSION,
            key=self.id,
            doc=doc,
            version=next_version(self.version),
            updated_at=now,
            expires_at=expires_at,
        )

    @classmethod
    def from_record(cls, record: Record) -> SessionState:
        doc = record.doc
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
            messages=[_message_from_doc(m) for m in doc.get("messages", [])],
            message_count=int(doc.get("message_count", 0)),
            version=record.version,
            expires_at=record.expires_at,
        )


def _message_doc(m: SessionMessage) -> dict[str, Any]:
    return {
        "role": m.role.value,
        "content": m.content,
        "name": m.name,
        "tool_call_id": m.tool_call_id,
        "created_at": m.created_at.isoformat(),
        "seq": m.seq,
    }


def _message_from_doc(d: dict[str, Any]) -> SessionMessage:
    return SessionMessage(
        role=MessageRole(d["role"]),
        content=d["content"],
        seq=int(d["seq"]),
        created_at=datetime.fromisoformat(d["created_at"]),
        name=d.get("name", ""),
        tool_call_id=d.get("tool_call_id", ""),
    )
