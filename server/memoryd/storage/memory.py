"""InMemoryStore: the in-process reference implementation of the Store protocol.

Plain dicts per partition and numpy for search; simple enough to be obviously
correct, and held to exactly the same conformance suite as the real backends.
Records are deep-copied in and out, so callers can never mutate stored state.
"""

from __future__ import annotations

import builtins
import copy
import dataclasses
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from memoryd.domain.errors import StoreError
from memoryd.domain.models import (
    AccessUpdate,
    Memory,
    MemoryFilter,
    MemoryOrder,
    PageCursor,
    Partition,
    TagMatch,
    TextHit,
    Vector,
    VectorHit,
    finite_nonzero,
)
from memoryd.storage.base import IN_PROCESS, at_least
from memoryd.storage.conditional import Counters, check_call, moved, with_counters
from memoryd.text import content_hash, tokenize
from memoryd.text.informative import is_common

#: BM25 parameters of the in-process store and the hot text index. b, the weight of
#: length normalisation, is 0.1 rather than the usual 0.75: memories are short, and
#: a long one holds more of what a question asks; 0.75 ranked one-word turns ("Haha
#: yes!") sharing a word with the question above the turn that answers it. REALTALK
#: dev chats, hybrid recall_all@10 / recall_any@10: 0.436 / 0.660 at 0.75, 0.452 /
#: 0.681 at 0.1 (issue 24). LanceDB's own full-text index (used for a partition whose
#: hot index is still being built) keeps 0.75.
BM25_K1 = 1.2
BM25_B = 0.1


def _utc(value: datetime) -> datetime:
    """Normalise to UTC at microsecond precision (naive values are taken as UTC)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _utc_opt(value: datetime | None) -> datetime | None:
    return None if value is None else _utc(value)


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


def check_query_vector(
    vector: Vector, dimension: int
) -> np.ndarray[tuple[int], np.dtype[np.float32]]:
    vec = np.asarray(vector, dtype=np.float32).reshape(-1)
    if vec.shape != (dimension,):
        raise ValueError(f"query vector has shape {vec.shape}, expected ({dimension},)")
    if not finite_nonzero(vec):
        raise ValueError("query vector is zero or not finite")
    return vec


def unit_queries(vectors: Sequence[Vector], dimension: int) -> npt.NDArray[np.float32]:
    """``vectors`` checked as by ``check_query_vector`` and scaled to unit length, as
    the rows of one matrix (a batch's checks and norms in a few vectorised calls)."""
    if not vectors:
        return np.zeros((0, dimension), dtype=np.float32)
    try:
        rows = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    except ValueError:  # ragged: one of them has the wrong shape
        rows = np.zeros((len(vectors), 0), dtype=np.float32)
    # In float64 the squares of float32 values neither overflow nor underflow.
    squares = np.einsum("ij,ij->i", rows, rows, dtype=np.float64)
    if rows.shape[1] != dimension or not (np.isfinite(squares).all() and (squares > 0).all()):
        for vector in vectors:
            check_query_vector(vector, dimension)  # raises, naming the bad one
    unit: npt.NDArray[np.float32] = (rows / np.sqrt(squares)[:, None]).astype(np.float32)
    return unit


def stored_copy(m: Memory) -> Memory:
    """``m`` as a store keeps it: a copy the caller can no longer reach (metadata
    deep-copied, the vector a float32 array of its own) with every instant in UTC."""
    out = m.copy()
    out.metadata = copy.deepcopy(m.metadata)
    out.tags = tuple(m.tags)
    if m.vector is not None:
        out.vector = np.array(m.vector, dtype=np.float32)
    out.created_at = _utc(m.created_at)
    out.updated_at = _utc(m.updated_at)
    out.accessed_at = _utc_opt(m.accessed_at)
    out.expires_at = _utc_opt(m.expires_at)
    out.occurred_at = _utc_opt(m.occurred_at)
    if m.source is not None and m.source.retrieved_at is not None:
        out.source = dataclasses.replace(m.source, retrieved_at=_utc(m.source.retrieved_at))
    return out


def copied_out(m: Memory, with_vector: bool) -> Memory:
    """A copy of a stored memory for a caller (who may change it), with or without
    its vector."""
    out = m.copy()
    out.metadata = copy.deepcopy(m.metadata)
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


def bm25(documents: Sequence[Sequence[str]], query: Sequence[str]) -> list[float]:
    """Okapi BM25 of each document (a list of terms) for the distinct query terms, with
    the statistics of ``documents`` alone; 0 for a document sharing no term."""
    if not documents:
        return []
    terms = set(query)
    counts = [Counter(t for t in doc if t in terms) for doc in documents]
    df = Counter(t for c in counts for t in c)
    n = len(documents)
    avg_len = sum(len(doc) for doc in documents) / n or 1.0
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in df}
    scores = []
    for doc, c in zip(documents, counts, strict=True):
        norm = BM25_K1 * (1 - BM25_B + BM25_B * len(doc) / avg_len)
        scores.append(sum(idf[t] * f * (BM25_K1 + 1) / (f + norm) for t, f in c.items()))
    return scores


def informative_matches(documents: Sequence[Sequence[str]], query: Sequence[str]) -> list[bool]:
    """Whether each document matches an informative term of ``query``
    (memoryd.text.informative; all True when every query term is common)."""
    held = [set(doc) for doc in documents]
    rare = [t for t in set(query) if not is_common(sum(t in h for h in held), len(held))]
    if not rare:
        return [True] * len(held)
    return [any(t in h for t in rare) for h in held]


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
    if m.security_level > flt.max_security_level:
        return False
    if flt.created_after is not None and not m.created_at > _utc(flt.created_after):
        return False
    if flt.created_before is not None and not m.created_at < _utc(flt.created_before):
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
        and m.expires_at <= _utc(flt.not_expired_at)
    )


class InMemoryStore:
    """A Store kept in process memory; state is lost on close."""

    name = "memory"
    capabilities = IN_PROCESS

    def __init__(self, dimension: int) -> None:
        if dimension <= 0:
            raise ValueError("dimension must be positive")
        self.dimension = dimension
        self._data: dict[Partition, dict[str, Memory]] | None = None

    async def open(self) -> None:
        if self._data is None:
            self._data = {}

    async def close(self) -> None:
        self._data = None

    def _rows(self, partition: Partition) -> dict[str, Memory]:
        if self._data is None:
            raise StoreError("memory store is not open")
        return self._data.get(partition, {})

    async def upsert(
        self,
        partition: Partition,
        memories: Sequence[Memory],
        *,
        new_ids: frozenset[str] = frozenset(),
        stored_ids: frozenset[str] = frozenset(),
    ) -> None:
        if self._data is None:
            raise StoreError("memory store is not open")
        rows = self._data.setdefault(partition, {})
        for m in admitted(partition, memories, self.dimension):
            rows[m.id] = m

    async def upsert_if(
        self,
        partition: Partition,
        memories: Sequence[Memory],
        expected: Mapping[str, int | None],
        *,
        delete: Sequence[str] = (),
    ) -> builtins.list[str]:
        # No await from the check to the write: nothing else runs in between.
        if self._data is None:
            raise StoreError("memory store is not open")
        check_call(memories, expected, delete)
        rows = self._data.setdefault(partition, {})
        stored = {i: rows[i] for i in expected if i in rows}
        conflicts = moved(expected, {i: m.version for i, m in stored.items()})
        if conflicts:
            return conflicts
        counters = {i: Counters.of(m) for i, m in stored.items()}
        kept = admitted(partition, with_counters(memories, expected, counters), self.dimension)
        for memory_id in delete:
            rows.pop(memory_id, None)
        for m in kept:
            rows[m.id] = m
        return []

    async def get(
        self, partition: Partition, ids: Sequence[str], *, with_vectors: bool = False
    ) -> list[Memory]:
        rows = self._rows(partition)
        out: list[Memory] = []
        for i in dict.fromkeys(ids):
            if i in rows:
                out.append(copied_out(rows[i], with_vectors))
        return out

    async def delete(self, partition: Partition, ids: Sequence[str]) -> list[str]:
        rows = self._rows(partition)
        return [i for i in dict.fromkeys(ids) if rows.pop(i, None) is not None]

    async def search(
        self, partition: Partition, vector: Vector, flt: MemoryFilter, limit: int
    ) -> list[VectorHit]:
        query = check_query_vector(vector, self.dimension)
        candidates = [m for m in self._rows(partition).values() if matches(m, flt)]
        if limit <= 0 or not candidates:
            return []
        matrix = np.stack([np.asarray(m.vector, dtype=np.float32) for m in candidates])
        norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(query)
        sims = (matrix @ query) / np.where(norms == 0, np.float32(1), norms)
        ranked = sorted(range(len(candidates)), key=lambda k: (-float(sims[k]), candidates[k].id))
        return [VectorHit(copied_out(candidates[k], False), float(sims[k])) for k in ranked[:limit]]

    async def search_many(
        self,
        partition: Partition,
        vectors: Sequence[Vector],
        flt: MemoryFilter,
        limit: int,
        *,
        min_similarity: float | None = None,
    ) -> list[list[VectorHit]]:
        found = [await self.search(partition, v, flt, limit) for v in vectors]
        return [at_least(hits, min_similarity) for hits in found]

    async def text_search(
        self, partition: Partition, query: str, flt: MemoryFilter, limit: int
    ) -> list[TextHit]:
        terms = tokenize(query)
        # The statistics come from exactly the records the filter lets through.
        candidates = [m for m in self._rows(partition).values() if matches(m, flt)]
        if limit <= 0 or not terms or not candidates:
            return []
        documents = [tokenize(m.content) for m in candidates]
        scores = bm25(documents, terms)
        telling = informative_matches(documents, terms)
        ranked = sorted(
            (k for k, score in enumerate(scores) if score > 0),
            key=lambda k: (-scores[k], candidates[k].id),
        )
        return [
            TextHit(copied_out(candidates[k], True), scores[k], telling[k]) for k in ranked[:limit]
        ]

    async def find_by_content(
        self, partition: Partition, content_hashes: Sequence[str], flt: MemoryFilter
    ) -> list[Memory]:
        wanted = set(content_hashes)
        return [
            copied_out(m, False)
            for m in self._rows(partition).values()
            if matches(m, flt) and content_hash(m.content) in wanted
        ]

    async def list(
        self,
        partition: Partition,
        flt: MemoryFilter,
        *,
        order: MemoryOrder = MemoryOrder.CREATED_DESC,
        after: PageCursor | None = None,
        limit: int = 50,
    ) -> list[Memory]:
        desc = order is MemoryOrder.CREATED_DESC
        rows = [m for m in self._rows(partition).values() if matches(m, flt)]
        if after is not None:
            pos = (_utc(after.created_at), after.id)
            if desc:
                rows = [m for m in rows if (m.created_at, m.id) < pos]
            else:
                rows = [m for m in rows if (m.created_at, m.id) > pos]
        rows.sort(key=lambda m: (m.created_at, m.id), reverse=desc)
        return [copied_out(m, False) for m in rows[: max(limit, 0)]]

    async def count(self, partition: Partition, flt: MemoryFilter) -> int:
        return sum(1 for m in self._rows(partition).values() if matches(m, flt))

    async def list_partitions(self, tenant_id: str | None = None) -> builtins.list[Partition]:
        if self._data is None:
            raise StoreError("memory store is not open")
        return sorted(
            (p for p, rows in self._data.items() if rows and tenant_id in (None, p.tenant_id)),
            key=lambda p: (p.tenant_id, p.agent_id),
        )

    async def record_access(
        self, partition: Partition, updates: Mapping[str, AccessUpdate]
    ) -> None:
        rows = self._rows(partition)
        for memory_id, update in updates.items():
            m = rows.get(memory_id)
            if m is None:
                continue
            m.access_count += update.count
            seen = _utc(update.last_accessed_at)
            if m.accessed_at is None or seen > m.accessed_at:
                m.accessed_at = seen
