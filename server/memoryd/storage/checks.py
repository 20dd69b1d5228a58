"""The checks and copies every store applies to what it is given and hands out
(in-process, LanceDB, Qdrant, the hot cache and the write-ahead log's faces): a
record a store must never persist is refused (ValueError: a caller's bug), a stored
memory is a copy the caller cannot reach, and a filter means the same everywhere
(:func:`matches`, the reference the backends' own filters are tested against)."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from memoryd.domain.models import (
    AccessUpdate,
    Memory,
    MemoryFilter,
    Partition,
    TagMatch,
    finite_nonzero,
)


def as_utc(value: datetime) -> datetime:
    """``value`` normalised to UTC at microsecond precision (naive values are taken as UTC)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def as_utc_or_none(value: datetime | None) -> datetime | None:
    """:func:`as_utc` of an instant a memory or record may leave unset."""
    return None if value is None else as_utc(value)


def utc_copy(m: Memory) -> Memory:
    """A shallow copy of ``m`` with every instant in UTC, as every store hands them out
    (the in-process store, the hot cache's rows)."""
    out = m.copy()
    out.created_at = as_utc(m.created_at)
    out.updated_at = as_utc(m.updated_at)
    out.accessed_at = as_utc_or_none(m.accessed_at)
    out.expires_at = as_utc_or_none(m.expires_at)
    out.occurred_at = as_utc_or_none(m.occurred_at)
    if m.source is not None and m.source.retrieved_at is not None:
        out.source = dataclasses.replace(m.source, retrieved_at=as_utc(m.source.retrieved_at))
    return out


def count_access(m: Memory, update: AccessUpdate) -> datetime:
    """Add ``update``'s reads to ``m`` in place, as every store records access: its
    ``access_count`` grows by them and its ``accessed_at`` moves to the last one when
    that is later. Returns the new ``accessed_at``."""
    m.access_count += update.count
    seen = as_utc(update.last_accessed_at)
    if m.accessed_at is None or seen > m.accessed_at:
        m.accessed_at = seen
    return m.accessed_at


def check_upsert(partition: Partition, memories: Sequence[Memory], dimension: int) -> None:
    """Reject records a store must never persist: wrong partition or bad vector.

    These are caller bugs (the service builds records), so they raise ValueError.
    """
    for i, m in enumerate(memories):
        if m.tenant_id != partition.tenant_id or m.agent_id != partition.agent_id:
            raise ValueError(f"memories[{i}] ({m.id!r}) does not belong to {partition}")
        if m.vector is None:
            raise ValueError(f"memories[{i}] ({m.id!r}) has no vector")
        vec = np.asarray(m.vector)
        if vec.shape != (dimension,):
            raise ValueError(
                f"memories[{i}] ({m.id!r}) has a vector of shape {vec.shape}, "
                f"expected ({dimension},)"
            )
        if not finite_nonzero(vec):
            raise ValueError(f"memories[{i}] ({m.id!r}) has a zero or non-finite vector")


def stored_copy(m: Memory) -> Memory:
    """``m`` as a store keeps it: a copy the caller can no longer reach (metadata
    deep-copied, the vector a float32 array of its own) with every instant in UTC."""
    out = utc_copy(m)
    out.metadata = _metadata_copy(m)
    out.tags = tuple(m.tags)
    if m.vector is not None:
        out.vector = np.array(m.vector, dtype=np.float32)
    return out


def _metadata_copy(m: Memory) -> dict[str, Any]:
    # Most memories have none, and deepcopy of an empty dict still walks its machinery.
    return copy.deepcopy(m.metadata) if m.metadata else {}


def copied_out(m: Memory, with_vector: bool) -> Memory:
    """A copy of a stored memory for a caller (who may change it), with or without
    its vector."""
    out = m.copy()
    out.metadata = _metadata_copy(m)
    out.vector = None if not with_vector or m.vector is None else np.array(m.vector)
    return out


def admitted(partition: Partition, memories: Sequence[Memory], dimension: int) -> list[Memory]:
    """What an ``upsert`` of ``memories`` stores: checked (``check_upsert``), the last
    of each id, each a ``stored_copy``. Raises ValueError before anything is kept."""
    check_upsert(partition, memories, dimension)
    return [stored_copy(m) for m in dedupe_last(memories)]


def dedupe_last(memories: Sequence[Memory]) -> list[Memory]:
    """Keep the last record of each id (one call writes each id once)."""
    by_id: dict[str, Memory] = {}
    for m in memories:
        by_id.pop(m.id, None)
        by_id[m.id] = m
    return list(by_id.values())


def matches(m: Memory, flt: MemoryFilter) -> bool:
    """Whether ``m`` satisfies every predicate of ``flt``."""
    if flt.namespace is not None and m.namespace != flt.namespace:
        return False
    if flt.tags:
        have = set(m.tags)
        hit = (
            all(t in have for t in flt.tags)
            if flt.tag_match is TagMatch.ALL
            else any(t in have for t in flt.tags)
        )
        if not hit:
            return False
    if flt.memory_types and m.memory_type not in flt.memory_types:
        return False
    if flt.trust is not None and not flt.trust.admits(m.source):
        return False
    if m.security_level > flt.max_security_level:
        return False
    if flt.created_after is not None and not m.created_at > as_utc(flt.created_after):
        return False
    if flt.created_before is not None and not m.created_at < as_utc(flt.created_before):
        return False
    if not flt.include_archived and m.archived:
        return False
    if flt.embedding_model is not None and m.embedding_model != flt.embedding_model:
        return False
    if flt.exclude_embedding_model is not None and m.embedding_model == flt.exclude_embedding_model:
        return False
    return not (
        flt.not_expired_at is not None
        and m.expires_at is not None
        and m.expires_at <= as_utc(flt.not_expired_at)
    )
