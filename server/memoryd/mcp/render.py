"""Domain results as the structured content of the tool table's output schemas.

The gRPC-backed tools of the Python client render the same shapes from its result
types; the end-to-end tests check both transports against the same schemas.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memoryd.domain.agent_state import (
    AgentProfile,
    AppendOutcome,
    AttachmentSlice,
    SessionMessage,
    SessionWindow,
    WorkingMemory,
)
from memoryd.domain.keyed import KeyEntry
from memoryd.domain.locator import locator_value
from memoryd.domain.models import Provenance
from memoryd.domain.requests import Degradation, RecallOutcome
from memoryd.domain.snapshot import DefaultReadResult, Snapshot
from memoryd_client.tool_results import snapshot_item

JSON = dict[str, Any]


def time(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def degraded(items: Sequence[Degradation]) -> list[JSON]:
    return [{"component": d.component, "reason": d.reason} for d in items]


def with_degraded(result: JSON, items: Sequence[Degradation]) -> JSON:
    if items:
        result["degraded"] = degraded(items)
    return result


def source(value: Provenance | None) -> JSON | None:
    if value is None:
        return None
    out: JSON = {
        "kind": value.kind.value,
        "name": value.name,
        "locator": locator_value(value.locator),
    }
    if value.retrieved_at is not None:
        out["retrieved_at"] = time(value.retrieved_at)
    return out


def hits(outcome: RecallOutcome, extra: Sequence[Degradation]) -> JSON:
    memories = []
    for scored in outcome.results:
        m = scored.memory
        hit: JSON = {
            "id": m.id,
            "content": m.content,
            "memory_type": m.memory_type.value,
            "tags": list(m.tags),
            "score": round(scored.score, 4),
            "relevance": round(scored.relevance, 4),
        }
        if m.key:
            hit["key"] = m.key
        if m.source is not None:
            hit["source"] = m.source.kind.value
        memories.append(hit)
    return with_degraded({"memories": memories}, extra)


def key_version(entry: KeyEntry) -> JSON:
    return {
        "key": entry.key,
        "value": entry.content if entry.valid else None,
        "version": entry.version,
        "deleted": not entry.valid,
        "updated_at": time(entry.updated_at),
        "source": source(entry.source),
    }


def working(wm: WorkingMemory) -> JSON:
    return {"content": wm.content, "version": wm.version, "expires_at": time(wm.expires_at)}


def profile(p: AgentProfile) -> JSON:
    return {"found": p.version > 0, "content": p.content, "etag": p.etag}


def window(w: SessionWindow) -> JSON:
    out: JSON = {
        "pinned": [{"kind": e.kind.value, "content": e.content} for e in w.fixed_zone],
        "summary": w.summary,
        "messages": [message(m) for m in w.recent],
        "tokens_used": w.tokens_used,
    }
    if w.long_term_memory_mode.automatic:
        out["long_term_memory"] = w.long_term_memory
    return with_degraded(out, w.degraded)


def message(m: SessionMessage) -> JSON:
    """A window's message in the chat shape record_messages takes (name, tool_call_id
    and tool_calls only when set)."""
    out: JSON = {"role": m.role.value, "content": m.content}
    if m.name:
        out["name"] = m.name
    if m.tool_call_id:
        out["tool_call_id"] = m.tool_call_id
    if m.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls
        ]
    return out


def appended(a: AppendOutcome, degradations: Sequence[Degradation]) -> JSON:
    out: JSON = {"message_count": a.message_count, "compressed": a.compressed}
    if a.recorded_memory_ids:
        out["recorded_memory_ids"] = list(a.recorded_memory_ids)
    if a.offloaded_seqs:
        out["offloaded_seqs"] = list(a.offloaded_seqs)
    return with_degraded(out, degradations)


def attachment(a: AttachmentSlice) -> JSON:
    return {
        "seq": a.message.seq,
        "content": a.content,
        "size_bytes": a.attachment.size_bytes,
        "chars": a.attachment.chars,
        "next_offset": a.next_offset,
        "name": a.message.name,
        "tool_call_id": a.message.tool_call_id,
    }


def snapshot(s: Snapshot) -> JSON:
    return with_degraded(
        {
            "text": s.text,
            "tokens_used": s.tokens_used,
            "token_budget": s.token_budget,
            "items": [snapshot_item(i.section.value, i.id, i.source) for i in s.items],
        },
        s.degraded,
    )


def default_read(r: DefaultReadResult) -> JSON:
    return {"text": r.text, "keys": [line.key for line in r.lines], "tokens_used": r.tokens_used}
