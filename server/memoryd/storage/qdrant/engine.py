"""The few Qdrant operations the stores use, behind one small interface.

Two engines implement it: :class:`ClientEngine` (qdrant-client's AsyncQdrantClient:
a Qdrant server over gRPC/REST, or the client's local mode on disk) and
``EdgeEngine`` (edge.py: the Qdrant engine in-process). Requests and results are
qdrant-client models either way, so the stores are written once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import warnings
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol, TypeVar

from qdrant_client import AsyncQdrantClient, models
from qdrant_client import grpc as qgrpc
from qdrant_client.conversions.conversion import RestToGrpc

from memoryd.storage.qdrant import wire
from memoryd.storage.qdrant.schema import DENSE, CollectionSpec
from memoryd.storage.settings import QDRANT_REST_PORT, ReadConsistency, url_port

#: A read's consistency as qdrant-client's calls and as memoryd's gRPC messages take it.
_Rest = models.ReadConsistencyType | None
_Grpc = qgrpc.ReadConsistency | None
#: What Qdrant answers a read whose shard has fewer active copies than it asks.
TOO_FEW_COPIES = "does not have enough active replicas"
_T = TypeVar("_T")


class IncompatibleCollection(Exception):
    """An existing collection does not fit the spec (e.g. another vector size)."""


@dataclass(frozen=True, slots=True)
class QdrantOptions:
    """Where the collections live: a server (``url``) or local mode on disk (``path``)."""

    url: str | None = None
    api_key: str | None = None
    path: Path | None = None
    #: gRPC to ``grpc_port`` of the server's host when both are set, else REST to
    #: ``url`` (the port is never defaulted: see storage.settings.QdrantSettings).
    prefer_grpc: bool = True
    grpc_port: int | None = None
    timeout_s: float = 10.0
    collection_prefix: str = "memoryd_"
    #: Other processes write the same collections (storage.qdrant.shared).
    shared: bool = False
    #: Qdrant's write ordering for every write (a server only; None: the server's).
    write_ordering: str | None = None
    #: Settings of collections memoryd creates (None: the server's defaults).
    shard_number: int | None = None
    replication_factor: int | None = None
    write_consistency_factor: int | None = None
    #: Qdrant's read consistency for every read (a server only): storage.settings.
    read_consistency: ReadConsistency = "one"

    def __post_init__(self) -> None:
        if (self.url is None) == (self.path is None):
            raise ValueError("exactly one of url (a Qdrant server) or path (local mode) is needed")
        if self.shared and self.url is None:
            raise ValueError("a shared store needs a server: local mode is one process's")

    @property
    def ordering(self) -> models.WriteOrdering | None:
        if self.url is None or self.write_ordering is None:
            return None
        return models.WriteOrdering(self.write_ordering)

    @property
    def consistency(self) -> models.ReadConsistencyType | None:
        """The ``consistency`` every read sends (None: Qdrant's default, one copy)."""
        if self.url is None or self.read_consistency == "one":
            return None
        return models.ReadConsistencyType(self.read_consistency)

    @property
    def grpc(self) -> bool:
        """Whether the client talks gRPC (to ``grpc_port``) rather than REST."""
        return self.url is not None and self.prefer_grpc and self.grpc_port is not None

    @property
    def where(self) -> str:
        if self.url is None:
            return f"local mode at {self.path}"
        return f"{self.url} (gRPC port {self.grpc_port})" if self.grpc else f"{self.url} (REST)"


class Engine(Protocol):
    async def open_collection(self, spec: CollectionSpec) -> None:
        """Create the collection with its payload indexes (before any point), or check
        that the existing one fits ``spec`` (raises IncompatibleCollection)."""

    async def upsert(self, name: str, points: Sequence[models.PointStruct]) -> None:
        """Insert or replace, acknowledged once applied (``wait=True``)."""

    async def upsert_if(
        self, name: str, points: Sequence[models.PointStruct], condition: models.Filter | None
    ) -> None:
        """Conditional upsert in one request, each point judged on its own: with
        ``condition`` None each is inserted only if absent, else updated only if it
        exists and matches ``condition``. Qdrant does not say whether it wrote: the
        caller reads the points back."""

    async def retrieve(
        self, name: str, ids: Sequence[str], *, with_vectors: bool
    ) -> list[models.Record]: ...

    async def query(self, name: str, request: models.QueryRequest) -> list[models.ScoredPoint]:
        """Best first, with payloads (and the vectors ``request.with_vector`` names)."""

    async def query_batch(
        self, name: str, requests: Sequence[models.QueryRequest]
    ) -> list[list[models.ScoredPoint]]:
        """Several queries planned and run as one request (payloads, no vectors)."""

    async def scroll(
        self, name: str, request: models.ScrollRequest
    ) -> tuple[list[models.Record], str | None]:
        """A page of ``request`` (filter, limit, order_by, offset), with payloads and
        without vectors, and the offset of the next page (None: no more)."""

    async def facet(self, name: str, key: str, flt: models.Filter | None, limit: int) -> list[str]:
        """The distinct keyword values of ``key`` among the points ``flt`` selects
        (exact counts, at most ``limit`` values)."""

    async def count(self, name: str, flt: models.Filter) -> int: ...

    async def delete(self, name: str, flt: models.Filter) -> None: ...

    async def set_payloads(
        self, name: str, updates: Sequence[tuple[dict[str, object], models.Filter]]
    ) -> None:
        """Each (payload, filter) merges ``payload`` into the points ``filter`` selects;
        all in one batched request."""

    async def close(self) -> None: ...


def _point_id(value: object) -> str | None:
    return None if value is None else str(value)


class _LoopThread:
    """One worker thread running its own event loop.

    Local mode does all its work (numpy scans, one SQLite commit per point)
    synchronously inside the client's coroutines; running them here keeps the
    daemon's loop responsive, and one thread keeps the client single-threaded.
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="qdrant-local", daemon=True
        )
        self.thread.start()

    async def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    async def call(self, fn: Callable[[], _T]) -> _T:
        """Run a plain function on the worker thread."""
        future: concurrent.futures.Future[_T] = concurrent.futures.Future()

        def job() -> None:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn())
                except BaseException as exc:
                    future.set_exception(exc)

        self.loop.call_soon_threadsafe(job)
        return await asyncio.wrap_future(future)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


def _local_client(path: Path) -> AsyncQdrantClient:
    path.mkdir(parents=True, exist_ok=True)
    return AsyncQdrantClient(path=str(path))


class ClientEngine:
    """qdrant-client's AsyncQdrantClient against a server, or in local mode."""

    def __init__(
        self,
        options: QdrantOptions,
        client: AsyncQdrantClient,
        worker: _LoopThread | None,
        points: wire.PointsChannel | None = None,
    ) -> None:
        self.options = options
        self.client = client
        self._worker = worker
        #: A server over gRPC: the calls every write and read makes go through a
        #: channel of memoryd's own (wire.PointsChannel), the rest through the client.
        self._wire = points
        self._ordering = (
            None
            if options.ordering is None
            else RestToGrpc.convert_write_ordering(options.ordering)
        )
        #: Every read's consistency (QdrantOptions.consistency), as REST and gRPC spell it.
        self._rest_consistency = options.consistency
        self._grpc_consistency = (
            None
            if self._rest_consistency is None
            else RestToGrpc.convert_read_consistency(self._rest_consistency)
        )

    @classmethod
    async def connect(cls, options: QdrantOptions) -> ClientEngine:
        if options.path is not None:
            worker = _LoopThread()
            try:
                # Construction loads every local collection into memory: off the loop too.
                client = await worker.call(partial(_local_client, options.path))
            except BaseException:
                worker.stop()
                raise
            return cls(options, client, worker)
        assert options.url is not None, "a server's options"
        # Over REST no gRPC channel is opened; were one ever, it would go to the REST
        # port and fail, never to a default port another server may hold.
        rest_port = url_port(options.url) or QDRANT_REST_PORT
        client = AsyncQdrantClient(
            url=options.url,
            api_key=options.api_key,
            prefer_grpc=options.grpc,
            grpc_port=options.grpc_port if options.grpc_port is not None else rest_port,
            timeout=max(1, round(options.timeout_s)),
            grpc_options=dict(wire.RECONNECT_BACKOFF),
            # The version probe is a blocking HTTP call at construction; the first
            # real request (open_collection) reports an unreachable server instead.
            check_compatibility=False,
        )
        points = None
        if options.grpc and options.url is not None and options.grpc_port is not None:
            points = wire.PointsChannel(
                options.url, options.grpc_port, options.api_key, options.timeout_s
            )
        return cls(options, client, None, points)

    async def _call(self, coro: Coroutine[Any, Any, _T]) -> _T:
        if self._worker is None:
            return await coro
        return await self._worker.run(coro)

    @property
    def local(self) -> bool:
        return self._worker is not None

    async def open_collection(self, spec: CollectionSpec) -> None:
        if not await self._call(self.client.collection_exists(spec.name)):
            try:
                await self._create(spec)
                return
            except Exception:
                # Another process may have created it meanwhile; if not, re-raise.
                if not await self._call(self.client.collection_exists(spec.name)):
                    raise
        info = await self._call(self.client.get_collection(spec.name))
        vectors = info.config.params.vectors
        found = vectors.get(DENSE) if isinstance(vectors, dict) else None
        if spec.dense_size is not None and (found is None or found.size != spec.dense_size):
            size = "no" if found is None else f"{found.size}-dimensional"
            raise IncompatibleCollection(
                f"collection {spec.name!r} holds {size} vectors but "
                f"{spec.dense_size}-dimensional ones are expected"
            )
        # Indexes added to the spec after the collection was made (older memoryd).
        missing = {k: v for k, v in spec.indexes.items() if k not in info.payload_schema}
        if missing and not self.local:
            await self._create_indexes(spec.name, missing)

    async def _create(self, spec: CollectionSpec) -> None:
        dense = (
            {}
            if spec.dense_size is None
            else {DENSE: models.VectorParams(size=spec.dense_size, distance=models.Distance.DOT)}
        )
        sparse = {
            name: models.SparseVectorParams(modifier=models.Modifier.IDF) for name in spec.sparse
        }
        o = self.options
        await self._call(
            self.client.create_collection(
                spec.name,
                vectors_config=dense,
                sparse_vectors_config=sparse or None,
                hnsw_config=spec.hnsw,
                shard_number=o.shard_number,
                replication_factor=o.replication_factor,
                write_consistency_factor=o.write_consistency_factor,
            )
        )
        await self._create_indexes(spec.name, spec.indexes)

    async def _create_indexes(
        self, name: str, indexes: Mapping[str, models.PayloadSchemaParams]
    ) -> None:
        with warnings.catch_warnings():
            # Local mode warns that payload indexes have no effect there; they are
            # still recorded, and a server needs them.
            warnings.simplefilter("ignore", UserWarning)
            for field, params in indexes.items():
                await self._call(self.client.create_payload_index(name, field, params, wait=True))

    async def upsert(self, name: str, points: Sequence[models.PointStruct]) -> None:
        if self._wire is not None:
            await self._wire.upsert(name, points, self._ordering)
            return
        await self._call(
            self.client.upsert(name, list(points), wait=True, ordering=self.options.ordering)
        )

    async def upsert_if(
        self, name: str, points: Sequence[models.PointStruct], condition: models.Filter | None
    ) -> None:
        mode = models.UpdateMode.INSERT_ONLY if condition is None else models.UpdateMode.UPDATE_ONLY
        if self._wire is not None:
            await self._wire.upsert(name, points, self._ordering, condition, mode)
            return
        await self._call(
            self.client.upsert(
                name,
                list(points),
                wait=True,
                ordering=self.options.ordering,
                update_filter=condition,
                update_mode=mode,
            )
        )

    async def _read(self, send: Callable[[_Rest, _Grpc], Awaitable[_T]]) -> _T:
        """``send`` with the store's read consistency; again with one copy where the
        shard has fewer active copies than it asks (a node down, a copy being
        recovered): the active copies are then the ones every write acknowledged since
        reached, and reads go on through an outage."""
        try:
            return await send(self._rest_consistency, self._grpc_consistency)
        except Exception as exc:
            if self._rest_consistency is None or TOO_FEW_COPIES not in str(exc):
                raise
        return await send(None, None)

    async def retrieve(
        self, name: str, ids: Sequence[str], *, with_vectors: bool
    ) -> list[models.Record]:
        vectors: bool | list[str] = [DENSE] if with_vectors else False

        async def send(rest: _Rest, grpc: _Grpc) -> list[models.Record]:
            if self._wire is not None:
                return await self._wire.retrieve(name, ids, [DENSE] if with_vectors else None, grpc)
            return await self._call(
                self.client.retrieve(
                    name, list(ids), with_payload=True, with_vectors=vectors, consistency=rest
                )
            )

        return await self._read(send)

    async def query(self, name: str, request: models.QueryRequest) -> list[models.ScoredPoint]:
        r = request

        async def send(rest: _Rest, grpc: _Grpc) -> list[models.ScoredPoint]:
            if self._wire is not None:
                return await self._wire.query(name, r, grpc)
            response = await self._call(
                self.client.query_points(
                    name,
                    query=r.query,
                    using=r.using,
                    prefetch=r.prefetch,
                    query_filter=r.filter,
                    search_params=r.params,
                    limit=r.limit or 10,
                    with_payload=True,
                    with_vectors=r.with_vector or False,
                    consistency=rest,
                )
            )
            return response.points

        return await self._read(send)

    async def query_batch(
        self, name: str, requests: Sequence[models.QueryRequest]
    ) -> list[list[models.ScoredPoint]]:
        if not requests:
            return []

        async def send(rest: _Rest, grpc: _Grpc) -> list[list[models.ScoredPoint]]:
            if self._wire is not None:
                return await self._wire.query_batch(name, requests, grpc)
            responses = await self._call(
                self.client.query_batch_points(name, list(requests), consistency=rest)
            )
            return [r.points for r in responses]

        return await self._read(send)

    async def facet(self, name: str, key: str, flt: models.Filter | None, limit: int) -> list[str]:
        async def send(rest: _Rest, grpc: _Grpc) -> list[str]:
            response = await self._call(
                self.client.facet(
                    name, key, facet_filter=flt, limit=limit, exact=True, consistency=rest
                )
            )
            return [str(hit.value) for hit in response.hits]

        return await self._read(send)

    async def scroll(
        self, name: str, request: models.ScrollRequest
    ) -> tuple[list[models.Record], str | None]:
        r = request

        async def send(rest: _Rest, grpc: _Grpc) -> tuple[list[models.Record], str | None]:
            if self._wire is not None:
                return await self._wire.scroll(name, r, grpc)
            records, next_offset = await self._call(
                self.client.scroll(
                    name,
                    scroll_filter=r.filter,
                    limit=r.limit or 10,
                    order_by=r.order_by,
                    offset=r.offset,
                    with_payload=True,
                    with_vectors=False,
                    consistency=rest,
                )
            )
            return records, _point_id(next_offset)

        return await self._read(send)

    async def count(self, name: str, flt: models.Filter) -> int:
        async def send(rest: _Rest, grpc: _Grpc) -> int:
            if self._wire is not None:
                return await self._wire.count(name, flt, grpc)
            if rest is not None:
                # qdrant-client's count takes no consistency: REST's own request does.
                response = await self.client.http.points_api.count_points(
                    name,
                    consistency=rest,
                    count_request=models.CountRequest(filter=flt, exact=True),
                )
                assert response.result is not None, "Qdrant answered a count without its result"
                return response.result.count
            result = await self._call(self.client.count(name, count_filter=flt, exact=True))
            return result.count

        return await self._read(send)

    async def delete(self, name: str, flt: models.Filter) -> None:
        selector = models.FilterSelector(filter=flt)
        await self._call(
            self.client.delete(name, selector, wait=True, ordering=self.options.ordering)
        )

    async def set_payloads(
        self, name: str, updates: Sequence[tuple[dict[str, object], models.Filter]]
    ) -> None:
        if not updates:
            return
        ops: list[models.UpdateOperation] = [
            models.SetPayloadOperation(set_payload=models.SetPayload(payload=p, filter=f))
            for p, f in updates
        ]
        await self._call(
            self.client.batch_update_points(name, ops, wait=True, ordering=self.options.ordering)
        )

    async def close(self) -> None:
        try:
            if self._wire is not None:
                await self._wire.close()
            await self._call(self.client.close())
        finally:
            if self._worker is not None:
                self._worker.stop()
