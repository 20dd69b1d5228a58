"""EdgeEngine: the stores' Engine over Qdrant Edge (qdrant-edge-py), the Qdrant
engine itself running in-process - real segments, payload indexes, filtering,
order_by, sparse/IDF scoring and fusion, unlike the client's pure-Python local mode.

One EdgeShard per collection, in ``<root>/<collection name>``. Requests arrive as
qdrant-client models and are translated here; the shard's calls are synchronous
and run in worker threads. A test/dev dependency for now: it lets the conformance
suite check the adapter against the engine's own query semantics.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import qdrant_edge as edge
from qdrant_client import models

from memoryd.storage.qdrant.engine import IncompatibleCollection
from memoryd.storage.qdrant.records import QdrantRecordStore
from memoryd.storage.qdrant.schema import DENSE, CollectionSpec
from memoryd.storage.qdrant.store import QdrantStore

#: Qdrant's defaults for the HNSW fields the edge config requires.
_EF_CONSTRUCT = 100
_FULL_SCAN_THRESHOLD = 10_000
#: RRF's k as a Qdrant server applies it for FusionQuery(RRF).
_RRF_K = 2
#: Edge shards need at least one vector; payload-only collections get this one, unused.
_PLACEHOLDER = "_none"


# -- models -> edge ----------------------------------------------------------------------


def _match(m: Any) -> edge.MatchValue | edge.MatchAny | edge.MatchPrefix:
    if isinstance(m, models.MatchValue):
        return edge.MatchValue(m.value)
    if isinstance(m, models.MatchAny):
        values: list[str] = [str(v) for v in m.any]  # only keyword MatchAny is built
        return edge.MatchAny(values)
    if isinstance(m, models.MatchPrefix):
        return edge.MatchPrefix(m.prefix)
    raise TypeError(f"no edge translation for match {type(m).__name__}")


def _bound(value: float | None) -> float | None:
    return None if value is None else float(value)


def _condition(c: Any) -> Any:
    if isinstance(c, models.Filter):
        return _filter(c)
    if isinstance(c, models.FieldCondition):
        if c.match is not None:
            return edge.FieldCondition(key=c.key, match=_match(c.match))
        if isinstance(c.range, models.Range):
            r = c.range
            rng = edge.RangeFloat(
                gte=_bound(r.gte), gt=_bound(r.gt), lte=_bound(r.lte), lt=_bound(r.lt)
            )
            return edge.FieldCondition(key=c.key, range=rng)
    if isinstance(c, models.IsEmptyCondition):
        return edge.IsEmptyCondition(c.is_empty.key)
    if isinstance(c, models.HasIdCondition):
        return edge.HasIdCondition({str(i) for i in c.has_id})
    raise TypeError(f"no edge translation for condition {c!r}")


def _filter(f: models.Filter | None) -> edge.Filter | None:
    if f is None:
        return None

    def conds(value: Any) -> list[Any] | None:
        if value is None:
            return None
        items = value if isinstance(value, list) else [value]
        return [_condition(c) for c in items]

    return edge.Filter(must=conds(f.must), should=conds(f.should), must_not=conds(f.must_not))


def _params(p: models.SearchParams | None) -> edge.SearchParams | None:
    if p is None:
        return None
    idf = None
    if isinstance(p.idf, models.IdfCorpusParams):
        idf = edge.IdfParams(corpus=_filter(p.idf.corpus))
    return edge.SearchParams(exact=bool(p.exact), idf=idf)


def _query(q: Any, using: str | None) -> Any:
    if isinstance(q, models.FusionQuery):
        if q.fusion != models.Fusion.RRF:
            raise TypeError(f"no edge translation for fusion {q.fusion}")
        return edge.Fusion.Rrf(k=_RRF_K)
    if isinstance(q, models.SparseVector):
        return edge.Query.Nearest(edge.SparseVector(list(q.indices), list(q.values)), using=using)
    return edge.Query.Nearest(list(q), using=using)


def _prefetches(p: list[models.Prefetch] | models.Prefetch | None) -> list[edge.Prefetch] | None:
    items = [] if p is None else p if isinstance(p, list) else [p]
    converted = [
        edge.Prefetch(
            limit=x.limit or 10,
            query=_query(x.query, x.using),
            filter=_filter(x.filter),
            params=_params(x.params),
        )
        for x in items
    ]
    return converted or None


def _query_request(r: models.QueryRequest) -> edge.QueryRequest:
    return edge.QueryRequest(
        limit=r.limit or 10,
        query=_query(r.query, r.using),
        prefetches=_prefetches(r.prefetch),
        filter=_filter(r.filter),
        params=_params(r.params),
        score_threshold=r.score_threshold,
        with_payload=True,
        with_vector=r.with_vector or False,
    )


def _scroll_request(r: models.ScrollRequest) -> edge.ScrollRequest:
    order = None
    if isinstance(r.order_by, models.OrderBy):
        desc = r.order_by.direction == models.Direction.DESC
        order = edge.OrderBy(
            key=r.order_by.key, direction=edge.Direction.Desc if desc else edge.Direction.Asc
        )
    return edge.ScrollRequest(
        offset=None if r.offset is None else str(r.offset),
        limit=r.limit or 10,
        filter=_filter(r.filter),
        with_payload=True,
        with_vector=False,
        order_by=order,
    )


def _vector(v: Any) -> Any:
    if isinstance(v, models.SparseVector):
        return edge.SparseVector(list(v.indices), list(v.values))
    return list(v)


def _point(p: models.PointStruct) -> edge.Point:
    vectors = p.vector if isinstance(p.vector, dict) else {}
    return edge.Point(
        id=str(p.id),
        vector={name: _vector(v) for name, v in vectors.items()},
        payload=dict(p.payload or {}),
    )


def _index(params: Any) -> Any:
    if isinstance(params, models.KeywordIndexParams):
        return edge.KeywordIndexParams(
            is_tenant=params.is_tenant, enable_hnsw=params.enable_hnsw, prefix=params.prefix
        )
    if isinstance(params, models.IntegerIndexParams):
        return edge.IntegerIndexParams(
            lookup=params.lookup, range=params.range, enable_hnsw=params.enable_hnsw
        )
    if isinstance(params, models.BoolIndexParams):
        return edge.BoolIndexParams(enable_hnsw=params.enable_hnsw)
    raise TypeError(f"no edge translation for index {type(params).__name__}")


def _config(spec: CollectionSpec) -> edge.EdgeConfig:
    dense = (
        {}
        if spec.dense_size is None
        else {DENSE: edge.EdgeVectorParams(size=spec.dense_size, distance=edge.Distance.Dot)}
    )
    sparse = {name: edge.EdgeSparseVectorParams(modifier=edge.Modifier.Idf) for name in spec.sparse}
    if not dense and not sparse:
        sparse = {_PLACEHOLDER: edge.EdgeSparseVectorParams()}
    hnsw = edge.HnswIndexConfig(
        m=spec.hnsw.m if spec.hnsw.m is not None else 16,
        ef_construct=_EF_CONSTRUCT,
        full_scan_threshold=_FULL_SCAN_THRESHOLD,
        payload_m=spec.hnsw.payload_m,
    )
    return edge.EdgeConfig(vectors=dense, sparse_vectors=sparse, hnsw_config=hnsw)


# -- edge -> models ----------------------------------------------------------------------


def _record(r: edge.Record) -> models.Record:
    return models.Record(id=str(r.id), payload=r.payload, vector=r.vector)


def _scored(p: edge.ScoredPoint) -> models.ScoredPoint:
    return models.ScoredPoint(
        id=str(p.id), version=p.version, score=p.score, payload=p.payload, vector=p.vector
    )


def _open_shard(path: Path, spec: CollectionSpec) -> edge.EdgeShard:
    if path.is_dir() and any(path.iterdir()):
        try:
            shard = edge.EdgeShard.load(str(path), _config(spec))
        except Exception as exc:
            if "incompatible" in str(exc).lower():
                raise IncompatibleCollection(
                    f"collection {spec.name!r} does not hold {spec.dense_size}-dimensional "
                    f"vectors ({exc})"
                ) from exc
            raise
    else:
        path.mkdir(parents=True, exist_ok=True)
        shard = edge.EdgeShard.create(str(path), _config(spec))
    # Indexes before any point (a new shard), or the ones added since (an old one).
    have = set(shard.info().payload_schema)
    for field, params in spec.indexes.items():
        if field not in have:
            shard.update(edge.UpdateOperation.create_field_index(field, _index(params)))
    return shard


class EdgeEngine:
    """Collections as Qdrant Edge shards under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._shards: dict[str, edge.EdgeShard] = {}

    @classmethod
    async def connect(cls, root: Path) -> EdgeEngine:
        return cls(root)

    def _shard(self, name: str) -> edge.EdgeShard:
        return self._shards[name]

    async def open_collection(self, spec: CollectionSpec) -> None:
        if spec.name not in self._shards:
            shard = await asyncio.to_thread(_open_shard, self.root / spec.name, spec)
            self._shards[spec.name] = shard

    async def upsert(self, name: str, points: Sequence[models.PointStruct]) -> None:
        op = edge.UpdateOperation.upsert_points([_point(p) for p in points])
        await asyncio.to_thread(self._shard(name).update, op)

    async def upsert_if(
        self, name: str, points: Sequence[models.PointStruct], condition: models.Filter | None
    ) -> None:
        edge_points = [_point(p) for p in points]
        if condition is None:
            op = edge.UpdateOperation.upsert_points(
                edge_points, update_mode=edge.UpdateMode.InsertOnly
            )
        else:
            op = edge.UpdateOperation.upsert_points(
                edge_points,
                condition=_filter(condition),
                update_mode=edge.UpdateMode.UpdateOnly,
            )
        await asyncio.to_thread(self._shard(name).update, op)

    async def retrieve(
        self, name: str, ids: Sequence[str], *, with_vectors: bool
    ) -> list[models.Record]:
        got = await asyncio.to_thread(
            self._shard(name).retrieve,
            list(ids),
            with_payload=True,
            with_vector=[DENSE] if with_vectors else False,
        )
        return [_record(r) for r in got]

    async def query(self, name: str, request: models.QueryRequest) -> list[models.ScoredPoint]:
        points = await asyncio.to_thread(self._shard(name).query, _query_request(request))
        return [_scored(p) for p in points]

    async def query_batch(
        self, name: str, requests: Sequence[models.QueryRequest]
    ) -> list[list[models.ScoredPoint]]:
        if not requests:
            return []
        batch = edge.QueryBatchRequest([_query_request(r) for r in requests])
        results = await asyncio.to_thread(self._shard(name).query_batch, batch)
        return [[_scored(p) for p in points] for points in results]

    async def facet(self, name: str, key: str, flt: models.Filter | None, limit: int) -> list[str]:
        request = edge.FacetRequest(key=key, limit=limit, exact=True, filter=_filter(flt))
        response = await asyncio.to_thread(self._shard(name).facet, request)
        return [str(hit.value) for hit in response.hits]

    async def scroll(
        self, name: str, request: models.ScrollRequest
    ) -> tuple[list[models.Record], str | None]:
        converted = _scroll_request(request)
        records, next_offset = await asyncio.to_thread(self._shard(name).scroll, converted)
        return [_record(r) for r in records], None if next_offset is None else str(next_offset)

    async def count(self, name: str, flt: models.Filter) -> int:
        request = edge.CountRequest(exact=True, filter=_filter(flt))
        return await asyncio.to_thread(self._shard(name).count, request)

    async def delete(self, name: str, flt: models.Filter) -> None:
        condition = _filter(flt)
        assert condition is not None
        op = edge.UpdateOperation.delete_points_by_filter(condition)
        await asyncio.to_thread(self._shard(name).update, op)

    async def set_payloads(
        self, name: str, updates: Sequence[tuple[dict[str, object], models.Filter]]
    ) -> None:
        ops = []
        for payload, flt in updates:
            condition = _filter(flt)
            assert condition is not None
            ops.append(edge.UpdateOperation.set_payload_by_filter(condition, dict(payload)))
        shard = self._shard(name)

        def apply() -> None:
            for op in ops:
                shard.update(op)

        await asyncio.to_thread(apply)

    async def close(self) -> None:
        shards, self._shards = self._shards, {}

        def close_all() -> None:
            for shard in shards.values():
                shard.flush()
                shard.close()

        await asyncio.to_thread(close_all)


def edge_store(root: Path, dimension: int) -> QdrantStore:
    """A QdrantStore whose collections are Edge shards under ``root``."""
    return QdrantStore(
        partial(EdgeEngine.connect, root),
        dimension,
        where=f"Qdrant Edge at {root}",
        name="qdrant-edge",
    )


def edge_record_store(root: Path) -> QdrantRecordStore:
    """A QdrantRecordStore whose collections are Edge shards under ``root``."""
    return QdrantRecordStore(
        partial(EdgeEngine.connect, root), where=f"Qdrant Edge at {root}", name="qdrant-edge"
    )
