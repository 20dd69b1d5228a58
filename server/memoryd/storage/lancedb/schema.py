"""The ``memories`` table: its Arrow schema and conversions to and from Memory."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa

from memoryd.domain.models import (
    Memory,
    MemoryType,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
)
from memoryd.storage.instants import from_micros, optional_instant, to_micros
from memoryd.storage.lancedb.fulltext import TOKENS_COLUMN, document_tokens
from memoryd.text import content_hash

TABLE_NAME = "memories"
VECTOR_COLUMN = "vector"
#: memoryd.text.content_hash(content), for exact-duplicate lookups.
HASH_COLUMN = "content_hash"
#: Columns derived from a record (never read back into a Memory); last in the schema
#: so that tables created before they existed get them in the same place.
DERIVED_COLUMNS = (HASH_COLUMN, TOKENS_COLUMN)
#: Nullable columns added after tables were first written (after the derived ones,
#: so that a table that gets them added has the same column order as a new one): an
#: older table gets them, all null, when it is opened (LanceDBStore.open).
ADDED_COLUMNS = ("occurred_at",)
#: The merge key: ids are unique within a partition, never matched across partitions.
MERGE_KEY = ["tenant_id", "agent_id", "id"]
#: Scalar (BTree) indexes: every query filters on the partition, many on ids.
INDEXED_COLUMNS = ("tenant_id", "agent_id", "id", HASH_COLUMN)

_TS = pa.timestamp("us", tz="UTC")


@functools.cache
def memory_schema(dimension: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("tenant_id", pa.string(), nullable=False),
            pa.field("agent_id", pa.string(), nullable=False),
            pa.field("namespace", pa.string(), nullable=False),
            pa.field("content", pa.string(), nullable=False),
            pa.field("memory_type", pa.string(), nullable=False),
            pa.field("tags", pa.list_(pa.string()), nullable=False),
            pa.field("security_level", pa.int8(), nullable=False),
            pa.field("importance", pa.float64(), nullable=False),
            pa.field("confidence", pa.float64(), nullable=False),
            pa.field("source_kind", pa.string(), nullable=False),
            pa.field("source_name", pa.string(), nullable=False),
            pa.field("source_retrieved_at", _TS, nullable=True),
            pa.field("source_locator", pa.string(), nullable=False),
            pa.field("metadata", pa.string(), nullable=False),
            pa.field("created_at", _TS, nullable=False),
            pa.field("updated_at", _TS, nullable=False),
            pa.field("accessed_at", _TS, nullable=True),
            pa.field("expires_at", _TS, nullable=True),
            pa.field("access_count", pa.int64(), nullable=False),
            pa.field("version", pa.int64(), nullable=False),
            pa.field("archived", pa.bool_(), nullable=False),
            pa.field("key", pa.string(), nullable=False),
            pa.field("embedding_model", pa.string(), nullable=False),
            pa.field("supersedes", pa.string(), nullable=False),
            pa.field("embedding_dimension", pa.int32(), nullable=False),
            pa.field(VECTOR_COLUMN, pa.list_(pa.float32(), dimension), nullable=False),
            pa.field(HASH_COLUMN, pa.string(), nullable=False),
            pa.field(TOKENS_COLUMN, pa.string(), nullable=False),
            pa.field("occurred_at", _TS, nullable=True),
        ]
    )


#: Columns of a Memory without its vector.
SCALAR_COLUMNS: list[str] = [
    f.name for f in memory_schema(1) if f.name != VECTOR_COLUMN and f.name not in DERIVED_COLUMNS
]


def vector_dimension(schema: pa.Schema) -> int | None:
    """The list size of the vector column, or None when it is missing or not fixed-size."""
    if VECTOR_COLUMN not in schema.names:
        return None
    typ = schema.field(VECTOR_COLUMN).type
    if not pa.types.is_fixed_size_list(typ):
        return None
    return int(typ.list_size)


def _ts_array(values: Sequence[datetime | None]) -> pa.Array:
    # Integers straight into the timestamp type: a cast from int64 goes through
    # pyarrow.compute, ~10x the time for one row.
    return pa.array([None if v is None else to_micros(v) for v in values], type=_TS)


def _ts_column(table: pa.Table, name: str) -> list[int | None]:
    column: list[int | None] = table.column(name).cast(pa.int64()).to_pylist()
    return column


def to_arrow(memories: Sequence[Memory], dimension: int) -> pa.Table:
    """Rows for ``memories`` (each must carry a vector of ``dimension``)."""
    schema = memory_schema(dimension)
    vectors = np.stack([np.asarray(m.vector, dtype=np.float32) for m in memories])
    flat = pa.array(vectors.reshape(-1), type=pa.float32())
    sources = [m.source for m in memories]
    columns: dict[str, pa.Array | list[Any]] = {
        "id": [m.id for m in memories],
        "tenant_id": [m.tenant_id for m in memories],
        "agent_id": [m.agent_id for m in memories],
        "namespace": [m.namespace for m in memories],
        "content": [m.content for m in memories],
        "memory_type": [str(MemoryType(m.memory_type).value) for m in memories],
        "tags": [list(m.tags) for m in memories],
        "security_level": [int(m.security_level) for m in memories],
        "importance": [float(m.importance) for m in memories],
        "confidence": [float(m.confidence) for m in memories],
        "source_kind": ["" if s is None else str(ProvenanceKind(s.kind).value) for s in sources],
        "source_name": ["" if s is None else s.name for s in sources],
        "source_retrieved_at": _ts_array([None if s is None else s.retrieved_at for s in sources]),
        "source_locator": ["" if s is None else s.locator for s in sources],
        # The writer's spelling of its metadata (1.50 stays 1.50): Memory.metadata_text.
        "metadata": [m.metadata_text() for m in memories],
        "created_at": _ts_array([m.created_at for m in memories]),
        "updated_at": _ts_array([m.updated_at for m in memories]),
        "accessed_at": _ts_array([m.accessed_at for m in memories]),
        "expires_at": _ts_array([m.expires_at for m in memories]),
        "access_count": [int(m.access_count) for m in memories],
        "version": [int(m.version) for m in memories],
        "archived": [bool(m.archived) for m in memories],
        "key": [m.key for m in memories],
        "embedding_model": [m.embedding_model for m in memories],
        "supersedes": [m.supersedes for m in memories],
        "embedding_dimension": [int(m.embedding_dimension) for m in memories],
        VECTOR_COLUMN: pa.FixedSizeListArray.from_arrays(flat, dimension),
        HASH_COLUMN: [content_hash(m.content) for m in memories],
        TOKENS_COLUMN: [document_tokens(m) for m in memories],
        "occurred_at": _ts_array([m.occurred_at for m in memories]),
    }
    arrays = [pa.array(columns[f.name], type=f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


def from_arrow(table: pa.Table) -> list[Memory]:
    """Memories for the rows of ``table`` (vectors only when the column was selected)."""
    n = table.num_rows
    if n == 0:
        return []
    col = {name: table.column(name).to_pylist() for name in SCALAR_COLUMNS if not _is_ts(name)}
    ts = {name: _ts_column(table, name) for name in SCALAR_COLUMNS if _is_ts(name)}
    vectors: np.ndarray[Any, np.dtype[np.float32]] | None = None
    if VECTOR_COLUMN in table.column_names:
        vec = table.column(VECTOR_COLUMN).combine_chunks()
        dim = vec.type.list_size
        vectors = vec.flatten().to_numpy(zero_copy_only=False).astype(np.float32).reshape(n, dim)
    out: list[Memory] = []
    for i in range(n):
        kind = col["source_kind"][i]
        source = None
        if kind:
            source = Provenance(
                kind=ProvenanceKind(kind),
                name=col["source_name"][i],
                retrieved_at=optional_instant(ts["source_retrieved_at"][i]),
                locator=col["source_locator"][i],
            )
        out.append(
            Memory(
                id=col["id"][i],
                tenant_id=col["tenant_id"][i],
                agent_id=col["agent_id"][i],
                content=col["content"][i],
                created_at=from_micros(ts["created_at"][i] or 0),
                updated_at=from_micros(ts["updated_at"][i] or 0),
                namespace=col["namespace"][i],
                memory_type=MemoryType(col["memory_type"][i]),
                tags=tuple(col["tags"][i] or ()),
                security_level=SecurityLevel(col["security_level"][i]),
                importance=col["importance"][i],
                confidence=col["confidence"][i],
                source=source,
                metadata=json.loads(col["metadata"][i]),
                metadata_json=col["metadata"][i],
                accessed_at=optional_instant(ts["accessed_at"][i]),
                access_count=col["access_count"][i],
                version=col["version"][i],
                archived=col["archived"][i],
                expires_at=optional_instant(ts["expires_at"][i]),
                key=col["key"][i],
                embedding_model=col["embedding_model"][i],
                embedding_dimension=col["embedding_dimension"][i],
                supersedes=col["supersedes"][i],
                occurred_at=optional_instant(ts["occurred_at"][i]),
                vector=None if vectors is None else vectors[i].copy(),
            )
        )
    return out


_TS_NAMES = frozenset(f.name for f in memory_schema(1) if pa.types.is_timestamp(f.type))


def _is_ts(name: str) -> bool:
    return name in _TS_NAMES
