"""Wrappers that time the embedder and the stores into :class:`Metrics` and trace each
call as a child span (observability/tracing.py) when either is on, and delegate.

Each implements its protocol method by method (tests/unit/observability fails when a
protocol gains a method that is not wrapped here), and the backend extras the services
use (``optimize``, ``disk_bytes``) explicitly, untimed: they are not request traffic.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Mapping, Sequence
from types import TracebackType

import numpy as np
import numpy.typing as npt

from memoryd.domain.models import (
    AccessUpdate,
    Memory,
    MemoryFilter,
    MemoryOrder,
    PageCursor,
    Partition,
    TextHit,
    Vector,
    VectorHit,
)
from memoryd.domain.records import Record, RecordKind
from memoryd.embedding.base import Embedder, EmbedKind
from memoryd.observability.metrics import Metrics
from memoryd.observability.tracing import (
    DB_COLLECTION,
    DB_OPERATION,
    EMBEDDING_DIMENSION,
    NO_SPAN,
    NO_TRACING,
    OPERATION_NAME,
    REQUEST_MODEL,
    Span,
    Tracing,
)
from memoryd.storage.base import PartitionUpsert, Store, compact, disk_bytes, upsert_many
from memoryd.storage.records import RecordStore, put_records_many


class InstrumentedEmbedder:
    """Times each call to the model and records its batch size; failures are counted.

    Put it under the cache (``build_embedder(..., wrap=...)``) so it measures the
    model, not cache hits. Its span (``embeddings <model>``) records the model, the
    kind and the number of texts, never the texts."""

    def __init__(
        self, inner: Embedder, metrics: Metrics | None, tracing: Tracing = NO_TRACING
    ) -> None:
        self.inner = inner
        self._metrics = metrics
        self._tracing = tracing

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed(
        self, texts: Sequence[str], *, kind: EmbedKind = "document"
    ) -> npt.NDArray[np.float32]:
        model = self.inner.model_id
        started = time.perf_counter()
        with self._span(model, kind, len(texts)):
            try:
                vectors = await self.inner.embed(texts, kind=kind)
            except Exception:
                if self._metrics is not None:
                    self._metrics.embedding_failed(model)
                raise
        if self._metrics is not None:
            self._metrics.observe_embedding(model, kind, len(texts), time.perf_counter() - started)
        return vectors

    def _span(self, model: str, kind: EmbedKind, texts: int) -> Span:
        if not self._tracing.enabled:
            return NO_SPAN
        return self._tracing.span(
            f"embeddings {model}",
            {
                OPERATION_NAME: "embeddings",
                REQUEST_MODEL: model,
                EMBEDDING_DIMENSION: self.inner.dimension,
                "memoryd.embedding.kind": kind,
                "memoryd.embedding.texts": texts,
            },
        )

    async def close(self) -> None:
        await self.inner.close()


class _Timed:
    """``with self._timed("get"):`` around one awaited storage call: its latency and,
    with tracing on, a span ``<operation> <store>`` (``get memories``)."""

    __slots__ = ("_metrics", "_operation", "_span", "_started", "_store", "_tracing")

    def __init__(
        self, metrics: Metrics | None, tracing: Tracing, store: str, operation: str
    ) -> None:
        self._metrics, self._store, self._operation = metrics, store, operation
        self._tracing = tracing
        self._started = 0.0
        self._span: Span = NO_SPAN

    def __enter__(self) -> None:
        if self._tracing.enabled:
            self._span = self._tracing.span(
                f"{self._operation} {self._store}",
                {DB_OPERATION: self._operation, DB_COLLECTION: self._store},
            )
        self._started = time.perf_counter()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._span.__exit__(exc_type, exc, tb)
        # A cancelled call is neither a latency sample nor an error of the store.
        if self._metrics is None or (exc_type is not None and not issubclass(exc_type, Exception)):
            return
        self._metrics.observe_store(
            self._store,
            self._operation,
            time.perf_counter() - self._started,
            ok=exc_type is None,
        )


class InstrumentedStore:
    """A Store that records ``memoryd_store_operation_duration_seconds{store="memories"}``
    (with ``metrics``) and a span per call (with tracing)."""

    STORE = "memories"
    inner: Store

    def __init__(
        self, inner: Store, metrics: Metrics | None, tracing: Tracing = NO_TRACING
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.capabilities = inner.capabilities
        self._metrics = metrics
        self._tracing = tracing

    def _timed(self, operation: str) -> _Timed:
        return _Timed(self._metrics, self._tracing, self.STORE, operation)

    async def open(self) -> None:
        await self.inner.open()

    async def close(self) -> None:
        await self.inner.close()

    async def upsert(
        self,
        partition: Partition,
        memories: Sequence[Memory],
        *,
        new_ids: frozenset[str] = frozenset(),
        stored_ids: frozenset[str] = frozenset(),
    ) -> None:
        with self._timed("upsert"):
            await self.inner.upsert(partition, memories, new_ids=new_ids, stored_ids=stored_ids)

    async def upsert_many(self, writes: Sequence[PartitionUpsert]) -> None:
        with self._timed("upsert_many"):
            await upsert_many(self.inner, writes)

    async def upsert_if(
        self,
        partition: Partition,
        memories: Sequence[Memory],
        expected: Mapping[str, int | None],
        *,
        delete: Sequence[str] = (),
    ) -> list[str]:
        with self._timed("upsert_if"):
            return await self.inner.upsert_if(partition, memories, expected, delete=delete)

    async def get(
        self, partition: Partition, ids: Sequence[str], *, with_vectors: bool = False
    ) -> list[Memory]:
        with self._timed("get"):
            return await self.inner.get(partition, ids, with_vectors=with_vectors)

    async def delete(self, partition: Partition, ids: Sequence[str]) -> list[str]:
        with self._timed("delete"):
            return await self.inner.delete(partition, ids)

    async def search(
        self, partition: Partition, vector: Vector, flt: MemoryFilter, limit: int
    ) -> list[VectorHit]:
        with self._timed("search"):
            return await self.inner.search(partition, vector, flt, limit)

    async def search_many(
        self,
        partition: Partition,
        vectors: Sequence[Vector],
        flt: MemoryFilter,
        limit: int,
        *,
        min_similarity: float | None = None,
    ) -> list[list[VectorHit]]:
        with self._timed("search_many"):
            return await self.inner.search_many(
                partition, vectors, flt, limit, min_similarity=min_similarity
            )

    async def text_search(
        self, partition: Partition, query: str, flt: MemoryFilter, limit: int
    ) -> list[TextHit]:
        with self._timed("text_search"):
            return await self.inner.text_search(partition, query, flt, limit)

    async def find_by_content(
        self, partition: Partition, content_hashes: Sequence[str], flt: MemoryFilter
    ) -> list[Memory]:
        with self._timed("find_by_content"):
            return await self.inner.find_by_content(partition, content_hashes, flt)

    async def list(
        self,
        partition: Partition,
        flt: MemoryFilter,
        *,
        order: MemoryOrder = MemoryOrder.CREATED_DESC,
        after: PageCursor | None = None,
        limit: int = 50,
    ) -> builtins.list[Memory]:
        with self._timed("list"):
            return await self.inner.list(partition, flt, order=order, after=after, limit=limit)

    async def count(self, partition: Partition, flt: MemoryFilter) -> int:
        with self._timed("count"):
            return await self.inner.count(partition, flt)

    async def record_access(
        self, partition: Partition, updates: Mapping[str, AccessUpdate]
    ) -> None:
        with self._timed("record_access"):
            await self.inner.record_access(partition, updates)

    async def list_partitions(self, tenant_id: str | None = None) -> builtins.list[Partition]:
        with self._timed("list_partitions"):
            return await self.inner.list_partitions(tenant_id)

    # -- backend extras (untimed) -----------------------

    async def optimize(self) -> bool:
        return await compact(self.inner)

    def disk_bytes(self) -> int:
        return disk_bytes(self.inner)


class InstrumentedRecordStore:
    """A RecordStore that records ``memoryd_store_operation_duration_seconds{store="records"}``
    (with ``metrics``) and a span per call (with tracing)."""

    STORE = "records"
    inner: RecordStore

    def __init__(
        self, inner: RecordStore, metrics: Metrics | None, tracing: Tracing = NO_TRACING
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.capabilities = inner.capabilities
        self._metrics = metrics
        self._tracing = tracing

    def _timed(self, operation: str) -> _Timed:
        return _Timed(self._metrics, self._tracing, self.STORE, operation)

    async def open(self) -> None:
        await self.inner.open()

    async def close(self) -> None:
        await self.inner.close()

    async def put_record_if(
        self, partition: Partition, record: Record, expected: Record | None
    ) -> bool:
        with self._timed("put_record_if"):
            return await self.inner.put_record_if(partition, record, expected)

    async def put_records(self, partition: Partition, records: Sequence[Record]) -> None:
        with self._timed("put_records"):
            await self.inner.put_records(partition, records)

    async def put_records_many(self, writes: Sequence[tuple[Partition, Sequence[Record]]]) -> None:
        with self._timed("put_records_many"):
            await put_records_many(self.inner, writes)

    async def get_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[Record]:
        with self._timed("get_records"):
            return await self.inner.get_records(partition, kind, keys)

    async def list_records(
        self,
        partition: Partition,
        kind: RecordKind,
        *,
        prefix: str = "",
        after: str | None = None,
        limit: int = 100,
    ) -> list[Record]:
        with self._timed("list_records"):
            return await self.inner.list_records(
                partition, kind, prefix=prefix, after=after, limit=limit
            )

    async def delete_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[str]:
        with self._timed("delete_records"):
            return await self.inner.delete_records(partition, kind, keys)

    async def count_records(self, partition: Partition, kind: RecordKind) -> int:
        with self._timed("count_records"):
            return await self.inner.count_records(partition, kind)

    async def list_partitions(self, tenant_id: str | None = None) -> list[Partition]:
        with self._timed("list_partitions"):
            return await self.inner.list_partitions(tenant_id)

    async def optimize(self) -> bool:
        return await compact(self.inner)
