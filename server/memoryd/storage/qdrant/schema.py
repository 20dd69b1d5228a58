"""Collections, payload layout and point ids of the Qdrant backend.

One collection per record kind: ``<prefix>memories`` (dense + sparse vectors) and
``<prefix>records_<kind>`` for each RecordKind (payload only). Every collection is
partitioned by payload the way Qdrant's multitenancy guide prescribes: a keyword
index on ``tenant_id`` with ``is_tenant=True`` (co-locates a tenant's points), HNSW
``m=0`` (no global graph) with ``payload_m=16`` (one graph per tenant), and
``enable_hnsw=False`` on every other payload index so no extra per-value graphs are
built. Indexes are created right after the collection, before any point.

Point ids are global in a collection, so each one is a uuid5 of (kind, tenant, agent,
id) - two partitions never share a point - and the caller's id stays in the payload.
Instants are stored as integer microseconds since the epoch (range-filterable).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from qdrant_client import models

from memoryd.domain.models import (
    Memory,
    MemoryType,
    Partition,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
)
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.instants import from_micros, optional_instant, optional_micros, to_micros
from memoryd.storage.memory_records import decode_doc, encode_doc
from memoryd.text import content_hash

MEMORIES = "memories"
DENSE = "dense"
SPARSE = "text"

#: Payload fields (memories and records share the partition fields).
TENANT, AGENT = "tenant_id", "agent_id"
MEMORY_ID = "memory_id"
#: The provenance kind of a memory (its payload's "source" object; null without one).
SOURCE_KIND = "source.kind"
#: memoryd.text.content_hash(content), for exact-duplicate lookups.
CONTENT_HASH = "content_hash"
RECORD_KEY, KEY_ORDER = "key", "key_order"
#: A record's write id and the ids of its latest writes (Record.write_id, .lineage).
WRITE_ID, LINEAGE = "write_id", "writes"
#: Write ids kept per record: a conditional write is confirmed by finding its id in
#: the record it reads back, so this many writes may follow it before it looks lost.
LINEAGE_LENGTH = 16

#: Namespace of every point id this backend derives (fixed forever: ids are on disk).
_POINT_NS = uuid.UUID("5d3c0a5e-8f7b-5b0e-9d2a-6f1c4e7b9a31")
#: HNSW as the multitenancy guide prescribes: per-tenant graphs only.
_HNSW = models.HnswConfigDiff(m=0, payload_m=16)
#: Bytes of a record key folded into its integer order key (48 bits: exact as a double,
#: which is how Qdrant carries range bounds).
KEY_ORDER_BYTES = 6


@dataclass(frozen=True, slots=True)
class CollectionSpec:
    """What a collection holds; the engines turn it into their own create calls."""

    name: str
    dense_size: int | None = None
    sparse: tuple[str, ...] = ()
    hnsw: models.HnswConfigDiff = field(default_factory=lambda: _HNSW.model_copy())
    indexes: Mapping[str, models.PayloadSchemaParams] = field(default_factory=dict)


def _keyword(*, tenant: bool = False, prefix: bool = False) -> models.KeywordIndexParams:
    return models.KeywordIndexParams(
        type=models.KeywordIndexType.KEYWORD,
        is_tenant=True if tenant else None,
        # The tenant index is the one whose values get their own HNSW graph.
        enable_hnsw=None if tenant else False,
        prefix=True if prefix else None,
    )


def _integer(*, lookup: bool, range_: bool) -> models.IntegerIndexParams:
    return models.IntegerIndexParams(
        type=models.IntegerIndexType.INTEGER, lookup=lookup, range=range_, enable_hnsw=False
    )


_PARTITION_INDEXES: dict[str, models.PayloadSchemaParams] = {
    TENANT: _keyword(tenant=True),
    AGENT: _keyword(),
}


def memory_collection(prefix: str, dimension: int) -> CollectionSpec:
    return CollectionSpec(
        name=f"{prefix}{MEMORIES}",
        dense_size=dimension,
        sparse=(SPARSE,),
        indexes={
            **_PARTITION_INDEXES,
            MEMORY_ID: _keyword(),
            CONTENT_HASH: _keyword(),
            "namespace": _keyword(),
            "memory_type": _keyword(),
            SOURCE_KIND: _keyword(),
            "tags": _keyword(),
            "security_level": _integer(lookup=False, range_=True),
            # order_by needs a range index on the ordering field.
            "created_at": _integer(lookup=False, range_=True),
            "expires_at": _integer(lookup=False, range_=True),
            # 0/1, not a bool: Qdrant Edge 0.9's MatchValue turns Python bools into ints.
            "archived": _integer(lookup=True, range_=False),
        },
    )


def record_collection(prefix: str, kind: RecordKind) -> CollectionSpec:
    return CollectionSpec(
        name=f"{prefix}records_{kind.value}",
        indexes={
            **_PARTITION_INDEXES,
            RECORD_KEY: _keyword(prefix=True),
            KEY_ORDER: _integer(lookup=True, range_=True),
        },
    )


# -- point ids -------------------------------------------------------------------------


def _point_id(kind: str, partition: Partition, local_id: str) -> str:
    # JSON of a list is an unambiguous encoding: no choice of strings makes two
    # different (tenant, agent, id) triples collide before hashing.
    name = json.dumps([kind, partition.tenant_id, partition.agent_id, local_id])
    return str(uuid.uuid5(_POINT_NS, name))


def memory_point_id(partition: Partition, memory_id: str) -> str:
    return _point_id(MEMORIES, partition, memory_id)


def record_point_id(partition: Partition, kind: RecordKind, key: str) -> str:
    return _point_id(f"record:{kind.value}", partition, key)


def in_partition(payload: Mapping[str, Any] | None, partition: Partition) -> bool:
    """Whether a retrieved point's payload belongs to ``partition`` (retrieve by id
    takes no filter, so every retrieve is checked with this)."""
    return (
        payload is not None
        and payload.get(TENANT) == partition.tenant_id
        and payload.get(AGENT) == partition.agent_id
    )


# -- memories --------------------------------------------------------------------------


def memory_payload(m: Memory) -> dict[str, Any]:
    source = None
    if m.source is not None:
        source = {
            "kind": m.source.kind.value,
            "name": m.source.name,
            "retrieved_at": optional_micros(m.source.retrieved_at),
            "locator": m.source.locator,
        }
    return {
        TENANT: m.tenant_id,
        AGENT: m.agent_id,
        MEMORY_ID: m.id,
        "content": m.content,
        CONTENT_HASH: content_hash(m.content),
        "namespace": m.namespace,
        "memory_type": m.memory_type.value,
        "tags": list(m.tags),
        "security_level": int(m.security_level),
        "importance": float(m.importance),
        "confidence": float(m.confidence),
        "source": source,
        # A JSON string: arbitrary metadata round-trips exactly (payload numbers are
        # i64/f64 on the server; the text keeps the writer's spelling, 1.50 stays 1.50:
        # Memory.metadata_text) and can never collide with an indexed field.
        "metadata": m.metadata_text(),
        "created_at": to_micros(m.created_at),
        "updated_at": to_micros(m.updated_at),
        "accessed_at": optional_micros(m.accessed_at),
        "access_count": int(m.access_count),
        "version": int(m.version),
        "archived": int(bool(m.archived)),
        # Absent-or-null means "never expires": the expiry filter is is_empty OR > now.
        "expires_at": optional_micros(m.expires_at),
        "key": m.key,
        "embedding_model": m.embedding_model,
        "embedding_dimension": int(m.embedding_dimension),
        "supersedes": m.supersedes,
        "occurred_at": optional_micros(m.occurred_at),
    }


def memory_from_point(payload: Mapping[str, Any], vector: object = None) -> Memory:
    src = payload.get("source")
    source = None
    if src is not None:
        source = Provenance(
            kind=ProvenanceKind(src["kind"]),
            name=src["name"],
            retrieved_at=optional_instant(src["retrieved_at"]),
            locator=src["locator"],
        )
    dense = vector.get(DENSE) if isinstance(vector, dict) else None
    return Memory(
        id=payload[MEMORY_ID],
        tenant_id=payload[TENANT],
        agent_id=payload[AGENT],
        content=payload["content"],
        created_at=from_micros(payload["created_at"]),
        updated_at=from_micros(payload["updated_at"]),
        namespace=payload["namespace"],
        memory_type=MemoryType(payload["memory_type"]),
        tags=tuple(payload["tags"]),
        security_level=SecurityLevel(payload["security_level"]),
        importance=float(payload["importance"]),
        confidence=float(payload["confidence"]),
        source=source,
        metadata=json.loads(payload["metadata"]),
        metadata_json=payload["metadata"],
        accessed_at=optional_instant(payload.get("accessed_at")),
        access_count=int(payload["access_count"]),
        version=int(payload["version"]),
        archived=bool(payload["archived"]),
        expires_at=optional_instant(payload.get("expires_at")),
        key=payload["key"],
        embedding_model=payload["embedding_model"],
        embedding_dimension=int(payload["embedding_dimension"]),
        supersedes=payload["supersedes"],
        # Absent from points written before event times existed.
        occurred_at=optional_instant(payload.get("occurred_at")),
        vector=None if dense is None else np.asarray(dense, dtype=np.float32),
    )


# -- records ---------------------------------------------------------------------------


def key_order(key: str) -> int:
    """The first KEY_ORDER_BYTES bytes of the UTF-8 key as a big-endian integer: a
    monotone (not injective) image of byte order, used by order_by; ties are broken
    by the full key."""
    head = key.encode("utf-8")[:KEY_ORDER_BYTES].ljust(KEY_ORDER_BYTES, b"\0")
    return int.from_bytes(head, "big")


def record_payload(
    partition: Partition, r: Record, lineage: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """The payload of a record; a document that is not a JSON object raises ValueError.
    ``lineage``: the ids of the record's latest writes (default: its own write id)."""
    if lineage is None:
        lineage = (r.write_id,) if r.write_id else ()
    return {
        TENANT: partition.tenant_id,
        AGENT: partition.agent_id,
        RECORD_KEY: r.key,
        KEY_ORDER: key_order(r.key),
        # JSON text, like every record backend: exact round trip, nothing indexed by accident.
        "doc": encode_doc(r.doc),
        "version": int(r.version),
        "updated_at": to_micros(r.updated_at),
        "expires_at": optional_micros(r.expires_at),
        WRITE_ID: r.write_id,
        LINEAGE: list(lineage[-LINEAGE_LENGTH:]),
    }


def record_from_payload(kind: RecordKind, payload: Mapping[str, Any]) -> Record:
    return Record(
        kind=kind,
        key=payload[RECORD_KEY],
        doc=decode_doc(payload["doc"]),
        version=int(payload["version"]),
        updated_at=from_micros(payload["updated_at"]),
        expires_at=optional_instant(payload.get("expires_at")),
        write_id=str(payload.get(WRITE_ID) or ""),
        lineage=tuple(str(i) for i in payload.get(LINEAGE) or ()),
    )
