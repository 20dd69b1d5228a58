"""qdrant-client's gRPC messages for the calls a write burst repeats, built directly.

qdrant-client turns its pydantic models into gRPC messages generically: type checks
on every field and vector, the filter converted again for each query of a batch
(and, in AsyncQdrantClient.query_batch_points, a deep copy of every request first,
its vector float by float). A RememberBatch of 500 spent most of the daemon's CPU
there. The shapes memoryd sends most (a point with a dense and a sparse vector; a
dense query with a filter) are converted here directly; anything else goes through
the client's own conversion, so the messages are the same either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast
from urllib.parse import urlsplit

import grpc
from qdrant_client import grpc as qgrpc
from qdrant_client import models
from qdrant_client.conversions.conversion import GrpcToRest, RestToGrpc

#: How soon a gRPC channel to Qdrant tries again to connect once the server went away.
#: gRPC's default backoff grows toward two minutes: after an outage of a few seconds a
#: channel that had failed to reconnect several times kept refusing calls
#: (UNAVAILABLE, at once) well after Qdrant was back, while the other channel's writes
#: went on. Every channel to Qdrant (this one and qdrant-client's) tries again within
#: a second; an attempt costs a connect on the cluster's network.
#: ``min_reconnect_backoff_ms`` is not a backoff: gRPC core takes it as the least time a
#: connect attempt is given (its ``min_connect_timeout``, 20 s by default). At 100 ms,
#: connects to a loaded server (or over a slow link) failed with "timed out before
#: receiving SETTINGS frame" and the store did not open; it keeps gRPC's 20 s.
RECONNECT_BACKOFF: dict[str, int] = {
    "grpc.initial_reconnect_backoff_ms": 100,
    "grpc.max_reconnect_backoff_ms": 1000,
    "grpc.min_reconnect_backoff_ms": 20_000,
}


def point(p: models.PointStruct) -> qgrpc.PointStruct:
    """``p`` as a gRPC point (named dense and sparse vectors, a uuid id)."""
    vectors = p.vector
    if not isinstance(p.id, str) or not isinstance(vectors, dict):
        return RestToGrpc.convert_point_struct(p)
    named: dict[str, qgrpc.Vector] = {}
    for name, vector in vectors.items():
        dense = _dense(vector)
        if dense is not None:
            named[name] = qgrpc.Vector(dense=qgrpc.DenseVector(data=dense))
        elif isinstance(vector, models.SparseVector):
            sparse = qgrpc.SparseVector(indices=vector.indices, values=vector.values)
            named[name] = qgrpc.Vector(sparse=sparse)
        else:
            return RestToGrpc.convert_point_struct(p)
    return qgrpc.PointStruct(
        id=qgrpc.PointId(uuid=p.id),
        vectors=qgrpc.Vectors(vectors=qgrpc.NamedVectors(vectors=named)),
        payload=RestToGrpc.convert_payload(p.payload) if p.payload is not None else None,
    )


class QueryConverter:
    """Queries of one batch as gRPC messages; a filter shared by several of them (one
    object) is converted once."""

    def __init__(self, collection: str) -> None:
        self._collection = collection
        self._filters: dict[int, tuple[models.Filter, qgrpc.Filter]] = {}

    def __call__(self, r: models.QueryRequest) -> qgrpc.QueryPoints:
        query, payload, vectors = _dense(r.query), r.with_payload, r.with_vector
        simple = (
            query is not None
            and r.prefetch is None
            and r.params is None
            and r.offset is None
            and r.lookup_from is None
            and r.shard_key is None
            and (payload is None or isinstance(payload, bool))
            and (vectors is None or isinstance(vectors, bool))
        )
        if not simple or query is None:
            return RestToGrpc.convert_query_request(r, self._collection)
        dense = qgrpc.VectorInput(dense=qgrpc.DenseVector(data=query))
        fields: dict[str, Any] = {}
        if isinstance(payload, bool):
            fields["with_payload"] = qgrpc.WithPayloadSelector(enable=payload)
        if isinstance(vectors, bool):
            fields["with_vectors"] = qgrpc.WithVectorsSelector(enable=vectors)
        return qgrpc.QueryPoints(
            collection_name=self._collection,
            query=qgrpc.Query(nearest=dense),
            using=r.using,
            filter=self._filter(r.filter),
            score_threshold=r.score_threshold,
            limit=r.limit,
            **fields,
        )

    def _filter(self, flt: models.Filter | None) -> qgrpc.Filter | None:
        if flt is None:
            return None
        # Keyed by identity, the filter kept alive with its conversion: an id is
        # not reused while the object lives.
        cached = self._filters.get(id(flt))
        if cached is None:
            cached = self._filters[id(flt)] = (flt, RestToGrpc.convert_filter(flt))
        return cached[1]


def _dense(vector: object) -> list[float] | None:
    """``vector`` when it is one dense vector (a list of floats), else None."""
    if isinstance(vector, list) and (not vector or isinstance(vector[0], float)):
        return cast(list[float], vector)
    return None


class PointsChannel:
    """A gRPC channel of its own to a Qdrant server's Points service, for the calls
    every write and read makes (upserts, conditional upserts, queries, retrieves,
    scrolls, counts): one channel, so a read goes wherever a write just went.

    qdrant-client's channels carry an interceptor that adds its headers to each
    call, which makes grpc.aio run every call through its intercepted-call path (a
    task and a wrapper call more each): in shared mode that path was about a sixth of
    a replica's CPU. Here the headers (the API key) go with each call instead, and
    the messages are built as above."""

    def __init__(self, url: str, port: int, api_key: str | None, timeout_s: float) -> None:
        parts = urlsplit(url)
        target = f"{parts.hostname}:{port}"
        options = [
            ("grpc.max_send_message_length", -1),
            ("grpc.max_receive_message_length", -1),
            ("grpc.primary_user_agent", "memoryd"),
            *RECONNECT_BACKOFF.items(),
        ]
        if parts.scheme == "https":
            credentials = grpc.ssl_channel_credentials()
            self._channel = grpc.aio.secure_channel(target, credentials, options)
        else:
            self._channel = grpc.aio.insecure_channel(target, options)
        self._points = qgrpc.PointsStub(self._channel)  # type: ignore[no-untyped-call]
        self._metadata = (("api-key", api_key),) if api_key else None
        self._timeout = timeout_s

    async def upsert(
        self,
        name: str,
        points: Sequence[models.PointStruct],
        ordering: qgrpc.WriteOrdering | None,
        condition: models.Filter | None = None,
        mode: models.UpdateMode | None = None,
    ) -> None:
        request = qgrpc.UpsertPoints(
            collection_name=name,
            wait=True,
            points=[point(p) for p in points],
            ordering=ordering,
            update_filter=None if condition is None else RestToGrpc.convert_filter(condition),
            update_mode=None if mode is None else cast(Any, RestToGrpc.convert_update_mode(mode)),
        )
        await self._points.Upsert(request, timeout=self._timeout, metadata=self._metadata)

    async def query_batch(
        self,
        name: str,
        requests: Sequence[models.QueryRequest],
        consistency: qgrpc.ReadConsistency | None,
    ) -> list[list[models.ScoredPoint]]:
        convert = QueryConverter(name)
        request = qgrpc.QueryBatchPoints(
            collection_name=name,
            query_points=[convert(r) for r in requests],
            read_consistency=consistency,
        )
        response = await self._points.QueryBatch(
            request, timeout=self._timeout, metadata=self._metadata
        )
        return [[GrpcToRest.convert_scored_point(p) for p in r.result] for r in response.result]

    async def query(
        self,
        name: str,
        request: models.QueryRequest,
        consistency: qgrpc.ReadConsistency | None,
    ) -> list[models.ScoredPoint]:
        message = QueryConverter(name)(request)
        if consistency is not None:
            message.read_consistency.CopyFrom(consistency)
        response = await self._points.Query(message, timeout=self._timeout, metadata=self._metadata)
        return [GrpcToRest.convert_scored_point(p) for p in response.result]

    async def retrieve(
        self,
        name: str,
        ids: Sequence[str],
        vectors: list[str] | None,
        consistency: qgrpc.ReadConsistency | None,
    ) -> list[models.Record]:
        with_vectors = (
            qgrpc.WithVectorsSelector(enable=False)
            if vectors is None
            else qgrpc.WithVectorsSelector(include=qgrpc.VectorsSelector(names=vectors))
        )
        request = qgrpc.GetPoints(
            collection_name=name,
            ids=[qgrpc.PointId(uuid=i) for i in ids],
            with_payload=qgrpc.WithPayloadSelector(enable=True),
            with_vectors=with_vectors,
            read_consistency=consistency,
        )
        response = await self._points.Get(request, timeout=self._timeout, metadata=self._metadata)
        return [GrpcToRest.convert_retrieved_point(p) for p in response.result]

    async def scroll(
        self,
        name: str,
        request: models.ScrollRequest,
        consistency: qgrpc.ReadConsistency | None,
    ) -> tuple[list[models.Record], str | None]:
        """A page of ``request`` (filter, limit, order_by, offset) with payloads and
        without vectors, and the next page's offset (None: no more)."""
        message = qgrpc.ScrollPoints(
            collection_name=name,
            filter=None if request.filter is None else RestToGrpc.convert_filter(request.filter),
            order_by=(
                None
                if request.order_by is None
                else RestToGrpc.convert_order_by_interface(request.order_by)
            ),
            offset=(
                None
                if request.offset is None
                else RestToGrpc.convert_extended_point_id(request.offset)
            ),
            limit=request.limit,
            with_payload=qgrpc.WithPayloadSelector(enable=True),
            with_vectors=qgrpc.WithVectorsSelector(enable=False),
            read_consistency=consistency,
        )
        response = await self._points.Scroll(
            message, timeout=self._timeout, metadata=self._metadata
        )
        following = (
            str(GrpcToRest.convert_point_id(response.next_page_offset))
            if response.HasField("next_page_offset")
            else None
        )
        return [GrpcToRest.convert_retrieved_point(p) for p in response.result], following

    async def count(
        self, name: str, flt: models.Filter, consistency: qgrpc.ReadConsistency | None
    ) -> int:
        """Exact count of the points ``flt`` selects."""
        request = qgrpc.CountPoints(
            collection_name=name,
            filter=RestToGrpc.convert_filter(flt),
            exact=True,
            read_consistency=consistency,
        )
        response = await self._points.Count(request, timeout=self._timeout, metadata=self._metadata)
        return int(response.result.count)

    async def close(self) -> None:
        await self._channel.close()
