"""InMemoryStore: the in-process reference implementation of the Store protocol.

Plain dicts per partition and numpy for search; simple enough to be obviously
correct, and held to exactly the same conformance suite as the real backends.
Records are deep-copied in and out, so callers can never mutate stored state.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet

import numpy as np

from memoryd.domain.errors import StoreError
from memoryd.domain.models import (
    AccessUpdate,
    Memory,
    MemoryFilter,
    Partition,
    TextHit,
    UnitVector,
    VectorHit,
)
from memoryd.storage.base import IN_PROCESS, NEWEST, NO_HINTS, ListPage, Nearest, UpsertHints
from memoryd.storage.bm25 import (
    TermStatistics,
    informative,
    query_terms,
    rare_terms,
    score,
    statistics_of,
)
from memoryd.storage.checks import admitted, as_utc, copied_out, count_access, matches
from memoryd.storage.conditional import ConditionalWrite, Counters, moved, with_counters
from memoryd.storage.cosine import cosines, stored_rows
from memoryd.text import content_hash, tokenize


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
        self, partition: Partition, memories: Sequence[Memory], hints: UpsertHints = NO_HINTS
    ) -> None:
        if self._data is None:
            raise StoreError("memory store is not open")
        rows = self._data.setdefault(partition, {})
        for m in admitted(partition, memories, self.dimension):
            rows[m.id] = m

    async def upsert_if(self, write: ConditionalWrite) -> builtins.list[str]:
        # No await from the check to the write: nothing else runs in between.
        if self._data is None:
            raise StoreError("memory store is not open")
        partition, expected = write.partition, write.expected
        rows = self._data.setdefault(partition, {})
        stored = {i: rows[i] for i in expected if i in rows}
        conflicts = moved(expected, {i: m.version for i, m in stored.items()})
        if conflicts:
            return conflicts
        counters = {i: Counters.of(m) for i, m in stored.items()}
        kept = admitted(
            partition, with_counters(write.memories, expected, counters), self.dimension
        )
        for memory_id in write.delete:
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
        self, partition: Partition, vector: UnitVector, flt: MemoryFilter, limit: int
    ) -> list[VectorHit]:
        candidates = [m for m in self._rows(partition).values() if matches(m, flt)]
        if limit <= 0 or not candidates:
            return []
        matrix = np.stack([np.asarray(m.vector, dtype=np.float32) for m in candidates])
        # Scored as the hot cache scores them (storage/cosine.py): a memory's score
        # must not depend on what else is stored, or in which order (as-of reads
        # rebuild the store), nor on which of the two answers.
        query = np.asarray(vector, dtype=np.float32)
        sims = cosines(stored_rows(matrix), query)
        ranked = sorted(range(len(candidates)), key=lambda k: (-float(sims[k]), candidates[k].id))
        return [VectorHit(copied_out(candidates[k], False), float(sims[k])) for k in ranked[:limit]]

    async def search_many(
        self, partition: Partition, vectors: Sequence[UnitVector], flt: MemoryFilter, best: Nearest
    ) -> list[list[VectorHit]]:
        return [best.kept(await self.search(partition, v, flt, best.limit)) for v in vectors]

    async def text_search(
        self, partition: Partition, query: str, flt: MemoryFilter, limit: int
    ) -> list[TextHit]:
        terms = query_terms(query)
        # The statistics come from exactly the records the filter lets through.
        candidates = [m for m in self._rows(partition).values() if matches(m, flt)]
        if limit <= 0 or not terms or not candidates:
            return []
        documents = [tokenize(m.content) for m in candidates]
        stats = statistics_of(documents, terms)
        scores = [score(doc, terms, stats) for doc in documents]
        rare = rare_terms(terms, stats)
        telling = [informative(doc, rare) for doc in documents]
        ranked = sorted(
            (k for k, score in enumerate(scores) if score > 0),
            key=lambda k: (-scores[k], candidates[k].id),
        )
        return [
            TextHit(copied_out(candidates[k], True), scores[k], telling[k]) for k in ranked[:limit]
        ]

    async def text_statistics(
        self,
        partition: Partition,
        terms: Sequence[str],
        flt: MemoryFilter,
        excluding: AbstractSet[str] = frozenset(),
    ) -> TermStatistics:
        """The exact BM25 statistics ``text_search`` scores ``terms`` with under
        ``flt``, without the memories ``excluding`` names (base.ExactTextStatistics)."""
        documents = [
            tokenize(m.content)
            for m in self._rows(partition).values()
            if matches(m, flt) and m.id not in excluding
        ]
        return statistics_of(documents, terms)

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
        self, partition: Partition, flt: MemoryFilter, page: ListPage = NEWEST
    ) -> list[Memory]:
        desc = page.descending
        rows = [m for m in self._rows(partition).values() if matches(m, flt)]
        if page.after is not None:
            pos = (as_utc(page.after.created_at), page.after.id)
            if desc:
                rows = [m for m in rows if (m.created_at, m.id) < pos]
            else:
                rows = [m for m in rows if (m.created_at, m.id) > pos]
        rows.sort(key=lambda m: (m.created_at, m.id), reverse=desc)
        return [copied_out(m, False) for m in rows[: page.limit]]

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
            count_access(m, update)
