"""QdrantStore: long-term memories in one Qdrant collection, partitioned by payload.

Every request carries the partition (tenant AND agent) in its filter - queries,
scrolls, counts, deletes and payload updates alike; retrieve by id, which takes no
filter, checks each point's payload partition. Writes are acknowledged once applied
(``wait=True``). Dense vectors are stored as given (Dot distance on unit vectors is
cosine similarity, and nothing renormalises them); the content also gets a BM25-like
sparse vector for text ranking (sparse.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

import numpy as np
from qdrant_client import models

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
from memoryd.storage.base import NEWEST, NO_HINTS, ListPage, Nearest, UpsertHints
from memoryd.storage.checks import check_upsert, count_access, dedupe_last
from memoryd.storage.conditional import ConditionalWrite
from memoryd.storage.instants import to_micros
from memoryd.storage.qdrant import conditional, sparse
from memoryd.storage.qdrant.connected import EngineOwner
from memoryd.storage.qdrant.engine import (
    ClientEngine,
    Engine,
    IncompatibleCollection,
    QdrantOptions,
)
from memoryd.storage.qdrant.filters import (
    Condition,
    has_ids,
    match,
    memory_conditions,
    scoped,
    value_range,
)
from memoryd.storage.qdrant.paging import Row, keyset_page
from memoryd.storage.qdrant.schema import (
    AGENT,
    CONTENT_HASH,
    DENSE,
    MEMORY_ID,
    SPARSE,
    TENANT,
    CollectionSpec,
    in_partition,
    memory_collection,
    memory_from_point,
    memory_payload,
    memory_point_id,
)

#: Points per request: keeps gRPC messages small (a 384-d point is ~2 KB).
_BATCH = 1000
#: Candidates each side of a hybrid query brings to the fusion.
_PREFETCH_FACTOR = 4
#: Queries per batched Query API request.
_QUERIES_PER_BATCH = 64
#: Distinct values one facet request may return (tenants, or agents of a tenant).
_FACET_LIMIT = 1_000_000


def chunks(items: Sequence[str]) -> list[list[str]]:
    unique = list(dict.fromkeys(items))
    return [unique[i : i + _BATCH] for i in range(0, len(unique), _BATCH)]


def _idf_within(flt: models.Filter) -> models.SearchParams:
    """IDF statistics from the points ``flt`` selects only: the partition and the
    caller's filter, so nothing hidden from the caller shapes its ranking."""
    return models.SearchParams(idf=models.IdfCorpusParams(corpus=flt))


@dataclass(frozen=True, slots=True)
class FusedHit:
    memory: Memory
    #: Reciprocal-rank-fusion score: comparable only within one search.
    score: float


def _values(vector: UnitVector) -> list[float]:
    """A query vector as the client sends it (it arrives checked and at unit length)."""
    values: list[float] = vector.tolist()
    return values


class QdrantStore(EngineOwner):
    """The Store protocol over Qdrant (a server, local mode, or Qdrant Edge)."""

    def __init__(
        self,
        connect: Callable[[], Awaitable[Engine]],
        dimension: int,
        *,
        prefix: str = "memoryd_",
        where: str = "qdrant",
        name: str = "qdrant",
        shared: bool = False,
    ) -> None:
        if dimension <= 0:
            raise ValueError("dimension must be positive")
        super().__init__(connect, name=name, where=where, shared=shared)
        self.dimension = dimension
        self.spec = memory_collection(prefix, dimension)

    @classmethod
    def from_options(cls, options: QdrantOptions, dimension: int) -> QdrantStore:
        return cls(
            lambda: ClientEngine.connect(options),
            dimension,
            prefix=options.collection_prefix,
            where=options.where,
            shared=options.shared,
        )

    # -- lifecycle ---------------------------------------------------------------

    def _collections(self) -> list[CollectionSpec]:
        return [self.spec]

    def _incompatible(self, exc: IncompatibleCollection) -> str:
        return (
            f"the Qdrant store ({self.where}) cannot be used: {exc}; the embedder was "
            "changed without re-embedding (re-embed, or use another collection prefix or "
            "data_dir)"
        )

    # -- writes ------------------------------------------------------------------

    def _point(self, m: Memory) -> models.PointStruct:
        vector: dict[str, Any] = {DENSE: np.asarray(m.vector, dtype=np.float32).tolist()}
        text = sparse.document_vector(m.content)
        if text is not None:
            vector[SPARSE] = text
        # Built as is: the validation pass cost as much as the rest of the point.
        return models.PointStruct.model_construct(
            id=memory_point_id(m.partition, m.id), vector=vector, payload=memory_payload(m)
        )

    async def upsert(
        self, partition: Partition, memories: Sequence[Memory], hints: UpsertHints = NO_HINTS
    ) -> None:
        engine = self._eng()
        check_upsert(partition, memories, self.dimension)
        points = [self._point(m) for m in dedupe_last(memories)]
        async with self._write_lock, self._errors("upsert"):
            for i in range(0, len(points), _BATCH):
                await engine.upsert(self.spec.name, points[i : i + _BATCH])

    async def upsert_if(self, write: ConditionalWrite) -> list[str]:
        """Decided by the server (storage/qdrant/conditional.py). No lock: other
        processes race here too."""
        engine = self._eng()
        check_upsert(write.partition, write.memories, self.dimension)
        unique = write.with_memories(dedupe_last(write.memories))
        async with self._errors("upsert_if"):
            return await conditional.upsert_if(engine, self.spec.name, self._point, unique)

    async def delete(self, partition: Partition, ids: Sequence[str]) -> list[str]:
        engine = self._eng()
        if not ids:
            return []
        async with self._write_lock, self._errors("delete"):
            found = {m.id for m in await self._get(engine, partition, ids, False)}
            return await delete_found(
                engine,
                self.spec.name,
                partition,
                ids,
                found,
                lambda i: memory_point_id(partition, i),
            )

    async def record_access(
        self, partition: Partition, updates: Mapping[str, AccessUpdate]
    ) -> None:
        engine = self._eng()
        if not updates:
            return
        async with self._write_lock, self._errors("record_access"):
            current = await self._get(engine, partition, list(updates), False)
            changes: list[tuple[dict[str, object], models.Filter]] = []
            for m in current:
                accessed = count_access(m, updates[m.id])
                payload: dict[str, object] = {
                    "access_count": m.access_count,
                    "accessed_at": to_micros(accessed),
                }
                # A filter, not a point list: an id deleted meanwhile matches nothing
                # and is never resurrected as a payload-only point.
                point = has_ids([memory_point_id(partition, m.id)])
                changes.append((payload, scoped(partition, point)))
            for i in range(0, len(changes), _BATCH):
                await engine.set_payloads(self.spec.name, changes[i : i + _BATCH])

    # -- reads -------------------------------------------------------------------

    async def _get(
        self, engine: Engine, partition: Partition, ids: Sequence[str], with_vectors: bool
    ) -> list[Memory]:
        by_id: dict[str, Memory] = {}
        for chunk in chunks(ids):
            point_ids = [memory_point_id(partition, i) for i in chunk]
            for rec in await engine.retrieve(self.spec.name, point_ids, with_vectors=with_vectors):
                if in_partition(rec.payload, partition):
                    assert rec.payload is not None
                    m = memory_from_point(rec.payload, rec.vector if with_vectors else None)
                    by_id[m.id] = m
        return [by_id[i] for i in dict.fromkeys(ids) if i in by_id]

    async def get(
        self, partition: Partition, ids: Sequence[str], *, with_vectors: bool = False
    ) -> list[Memory]:
        engine = self._eng()
        async with self._errors("get"):
            return await self._get(engine, partition, ids, with_vectors)

    async def search(
        self, partition: Partition, vector: UnitVector, flt: MemoryFilter, limit: int
    ) -> list[VectorHit]:
        engine = self._eng()
        query = _values(vector)
        if limit <= 0:
            return []
        async with self._errors("search"):
            request = models.QueryRequest(
                query=query,
                using=DENSE,
                filter=scoped(partition, *memory_conditions(flt)),
                limit=limit,
                with_payload=True,
                with_vector=False,
            )
            points = await engine.query(self.spec.name, request)
            hits = [VectorHit(self._memory(p, partition), float(p.score)) for p in points]
        hits.sort(key=lambda h: (-h.similarity, h.memory.id))
        return hits

    async def search_many(
        self, partition: Partition, vectors: Sequence[UnitVector], flt: MemoryFilter, best: Nearest
    ) -> list[list[VectorHit]]:
        """One batched Query API request per _QUERIES_PER_BATCH vectors, one after
        another: sent at once, RememberBatch ingested ~17% slower on a 2-core server
        (641 against 763-772 memories/s, medians of interleaved runs)."""
        engine = self._eng()
        queries = [_values(v) for v in vectors]
        if best.limit <= 0:
            return [[] for _ in queries]
        flt_q = scoped(partition, *memory_conditions(flt))
        # Built as is (as _point): validating 384 floats per query cost more than
        # sending it.
        requests = [
            models.QueryRequest.model_construct(
                query=q,
                using=DENSE,
                filter=flt_q,
                limit=best.limit,
                with_payload=True,
                score_threshold=best.min_similarity,
            )
            for q in queries
        ]
        answers: list[list[models.ScoredPoint]] = []
        async with self._errors("search_many"):
            for i in range(0, len(requests), _QUERIES_PER_BATCH):
                chunk = requests[i : i + _QUERIES_PER_BATCH]
                answers.extend(await engine.query_batch(self.spec.name, chunk))
        out: list[list[VectorHit]] = []
        for points in answers:
            hits = [VectorHit(self._memory(p, partition), float(p.score)) for p in points]
            hits.sort(key=lambda h: (-h.similarity, h.memory.id))
            out.append(hits)
        return out

    async def text_search(
        self, partition: Partition, query: str, flt: MemoryFilter, limit: int
    ) -> list[TextHit]:
        """BM25 over the content: the sparse vector ranked by the engine, with IDF
        measured over exactly the points the filter lets through."""
        engine = self._eng()
        terms = sparse.query_vector(query)
        if terms is None or limit <= 0:
            return []
        flt_q = scoped(partition, *memory_conditions(flt))
        async with self._errors("text_search"):
            request = models.QueryRequest(
                query=terms,
                using=SPARSE,
                filter=flt_q,
                params=_idf_within(flt_q),
                limit=limit,
                with_payload=True,
                # Hybrid recall reports every match's cosine: vectors come along.
                with_vector=[DENSE],
            )
            points = await engine.query(self.spec.name, request)
            hits = [
                TextHit(self._memory(p, partition, with_vector=True), float(p.score))
                for p in points
            ]
        hits.sort(key=lambda h: (-h.score, h.memory.id))
        return [h for h in hits if h.score > 0]

    async def hybrid_search(
        self, partition: Partition, vector: UnitVector, query: str, flt: MemoryFilter, limit: int
    ) -> list[FusedHit]:
        """Dense and BM25 candidates fused by reciprocal rank in one request (Query API:
        two filtered prefetches, then RRF). Not part of the Store protocol."""
        engine = self._eng()
        dense = _values(vector)
        if limit <= 0:
            return []
        terms = sparse.query_vector(query)
        flt_q = scoped(partition, *memory_conditions(flt))
        depth = limit * _PREFETCH_FACTOR
        prefetch = [models.Prefetch(query=dense, using=DENSE, filter=flt_q, limit=depth)]
        if terms is not None:
            prefetch.append(
                models.Prefetch(
                    query=terms, using=SPARSE, filter=flt_q, limit=depth, params=_idf_within(flt_q)
                )
            )
        async with self._errors("hybrid_search"):
            request = models.QueryRequest(
                query=models.FusionQuery(fusion=models.Fusion.RRF),
                prefetch=prefetch,
                filter=flt_q,
                limit=limit,
                with_payload=True,
                with_vector=False,
            )
            points = await engine.query(self.spec.name, request)
            return [FusedHit(self._memory(p, partition), float(p.score)) for p in points]

    async def find_by_content(
        self, partition: Partition, content_hashes: Sequence[str], flt: MemoryFilter
    ) -> list[Memory]:
        engine = self._eng()
        out: list[Memory] = []
        async with self._errors("find_by_content"):
            for chunk in chunks(content_hashes):
                wanted = models.FieldCondition(key=CONTENT_HASH, match=models.MatchAny(any=chunk))
                flt_q = scoped(partition, *memory_conditions(flt), wanted)
                out.extend(
                    self._memory(r, partition)
                    for r in await scroll_all(engine, self.spec.name, flt_q)
                )
        return out

    async def list_partitions(self, tenant_id: str | None = None) -> list[Partition]:
        engine = self._eng()
        async with self._errors("list_partitions"):
            return await partitions_in(engine, [self.spec.name], tenant_id)

    @staticmethod
    def _memory(
        point: models.ScoredPoint | models.Record,
        partition: Partition,
        *,
        with_vector: bool = False,
    ) -> Memory:
        if not in_partition(point.payload, partition):  # the filter guarantees it
            raise StoreError("qdrant returned a point outside the requested partition")
        assert point.payload is not None
        return memory_from_point(point.payload, point.vector if with_vector else None)

    async def list(
        self, partition: Partition, flt: MemoryFilter, page: ListPage = NEWEST
    ) -> list[Memory]:
        engine = self._eng()
        descending = page.descending
        base = memory_conditions(flt)
        name = self.spec.name

        def row(rec: models.Record) -> Row:
            assert rec.payload is not None
            return Row(int(rec.payload["created_at"]), str(rec.payload[MEMORY_ID]), rec)

        async def scan(beyond: int | None, n: int) -> list[Row]:
            extra: list[Condition] = []
            if beyond is not None:
                bound = value_range(
                    "created_at",
                    lt=beyond if descending else None,
                    gt=None if descending else beyond,
                )
                extra.append(bound)
            direction = models.Direction.DESC if descending else models.Direction.ASC
            order = models.OrderBy(key="created_at", direction=direction)
            request = models.ScrollRequest(
                filter=scoped(partition, *base, *extra), limit=n, order_by=order
            )
            records, _ = await engine.scroll(name, request)
            return [row(r) for r in records]

        async def group(value: int) -> list[Row]:
            flt_q = scoped(partition, *base, value_range("created_at", gte=value, lte=value))
            return [row(r) for r in await scroll_all(engine, name, flt_q)]

        after = page.after
        cursor = None if after is None else (to_micros(after.created_at), after.id)
        async with self._errors("list"):
            rows = await keyset_page(
                descending=descending, after=cursor, limit=page.limit, scan=scan, group=group
            )
            return [self._memory(r.record, partition) for r in rows]

    async def count(self, partition: Partition, flt: MemoryFilter) -> int:
        engine = self._eng()
        async with self._errors("count"):
            return await engine.count(self.spec.name, scoped(partition, *memory_conditions(flt)))


async def delete_found(
    engine: Engine,
    name: str,
    partition: Partition,
    asked: Sequence[str],
    found: Set[str],
    point_id: Callable[[str], str],
) -> list[str]:
    """Delete from ``name``, in batches, the points of the ids or keys ``asked`` for
    that were ``found`` stored; returns those, once each in the order asked (what a
    delete reports gone)."""
    gone = [n for n in dict.fromkeys(asked) if n in found]
    for chunk in chunks(gone):
        point_ids = [point_id(n) for n in chunk]
        await engine.delete(name, scoped(partition, has_ids(point_ids)))
    return gone


async def scroll_all(
    engine: Engine, name: str, flt: models.Filter, page: int = _BATCH
) -> list[models.Record]:
    """Every point ``flt`` selects (in point-id order), page by page."""
    out: list[models.Record] = []
    offset: str | None = None
    while True:
        request = models.ScrollRequest(filter=flt, limit=page, offset=offset)
        records, offset = await engine.scroll(name, request)
        out.extend(records)
        if offset is None:
            return out


async def partitions_in(
    engine: Engine, names: Sequence[str], tenant_id: str | None
) -> list[Partition]:
    """Every (tenant, agent) holding a point in any of the collections ``names``, from
    facet counts of the two keyword indexes (no scan of the points)."""
    found: set[Partition] = set()
    for name in names:
        if tenant_id is None:
            tenants = await engine.facet(name, TENANT, None, _FACET_LIMIT)
        else:
            tenants = [tenant_id]
        for tenant in tenants:
            only = models.Filter(must=[match(TENANT, tenant)])
            agents = await engine.facet(name, AGENT, only, _FACET_LIMIT)
            if len(agents) >= _FACET_LIMIT:
                raise StoreError(f"more than {_FACET_LIMIT} agents in one tenant")
            found.update(Partition(tenant, agent) for agent in agents)
    return sorted(found, key=lambda p: (p.tenant_id, p.agent_id))
