"""A memory (and a record) as a msgpack-ready document: the write-ahead log's entries
(durability/ops.py) and the memory history's journal (storage/history_journal.py)
encode memories alike. Vectors are raw little-endian float32 bytes, instants
microseconds since the epoch (UTC)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np

from memoryd.domain.models import (
    Memory,
    MemoryType,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
)
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.memory_records import decode_doc, encode_doc


def micros(t: datetime | None) -> int | None:
    if t is None:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return int(t.timestamp() * 1_000_000)


def instant_of(v: int | None) -> datetime | None:
    return None if v is None else datetime.fromtimestamp(v / 1_000_000, tz=UTC)


def req_instant(v: int) -> datetime:
    return datetime.fromtimestamp(v / 1_000_000, tz=UTC)


def memory_doc(m: Memory) -> dict[str, Any]:
    src = m.source
    return {
        "id": m.id,
        "t": m.tenant_id,
        "a": m.agent_id,
        "c": m.content,
        "ca": micros(m.created_at),
        "ua": micros(m.updated_at),
        "ns": m.namespace,
        "mt": m.memory_type.value,
        "tg": list(m.tags),
        "sl": int(m.security_level),
        "im": m.importance,
        "cf": m.confidence,
        "src": None
        if src is None
        else [src.kind.value, src.name, micros(src.retrieved_at), src.locator],
        "md": m.metadata,
        "mj": m.metadata_json,
        "aa": micros(m.accessed_at),
        "ac": m.access_count,
        "v": m.version,
        "ar": m.archived,
        "ea": micros(m.expires_at),
        "k": m.key,
        "em": m.embedding_model,
        "ed": m.embedding_dimension,
        "sup": m.supersedes,
        "oa": micros(m.occurred_at),
        "vec": None if m.vector is None else np.asarray(m.vector, dtype="<f4").tobytes(),
    }


def memory_from_doc(d: dict[str, Any]) -> Memory:
    src = d["src"]
    return Memory(
        id=d["id"],
        tenant_id=d["t"],
        agent_id=d["a"],
        content=d["c"],
        created_at=req_instant(d["ca"]),
        updated_at=req_instant(d["ua"]),
        namespace=d["ns"],
        memory_type=MemoryType(d["mt"]),
        tags=tuple(d["tg"]),
        security_level=SecurityLevel(d["sl"]),
        importance=d["im"],
        confidence=d["cf"],
        source=None
        if src is None
        else Provenance(ProvenanceKind(src[0]), src[1], instant_of(src[2]), src[3]),
        metadata=d["md"],
        metadata_json=d.get("mj", ""),  # absent in entries of older daemons
        accessed_at=instant_of(d["aa"]),
        access_count=d["ac"],
        version=d["v"],
        archived=d["ar"],
        expires_at=instant_of(d["ea"]),
        key=d["k"],
        embedding_model=d["em"],
        embedding_dimension=d["ed"],
        supersedes=d["sup"],
        # Absent in entries logged before event times existed.
        occurred_at=instant_of(d.get("oa")),
        vector=None if d["vec"] is None else np.frombuffer(d["vec"], dtype="<f4").copy(),
    )


def record_doc(r: Record) -> list[Any]:
    # The document as its JSON text, as the stores keep it: msgpack has no integers
    # past 64 bits, JSON (and every store) has.
    doc = encode_doc(r.doc)
    return [r.kind.value, r.key, doc, r.version, micros(r.updated_at), micros(r.expires_at)]


def record_from_doc(v: list[Any]) -> Record:
    doc = v[2]
    return Record(
        kind=RecordKind(v[0]),
        key=v[1],
        # A map in entries of older daemons (which could not hold what msgpack can't).
        doc=decode_doc(doc) if isinstance(doc, str) else doc,
        version=v[3],
        updated_at=req_instant(v[4]),
        expires_at=instant_of(v[5]),
    )
