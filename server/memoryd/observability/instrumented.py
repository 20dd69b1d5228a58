"""Wrappers that time the embedder and the stores into :class:`Metrics` and trace each
call as a child span (observability/tracing.py) when either is on, and delegate.

The store wrappers are delegating layers (storage/delegating.py) that override one
method, ``through``, which every forwarded protocol call passes: each call is timed
under its own operation name. ``open``, ``close`` and the backend extras
(``optimize``, ``disk_bytes``) are forwarded untimed: they are not request traffic.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from memoryd.domain.models import Partition
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
from memoryd.storage.base import Store
from memoryd.storage.delegating import DelegatingRecordStore, DelegatingStore
from memoryd.storage.records import RecordStore

T = TypeVar("T")


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


class _TimedCalls:
    """What both store wrappers do with every forwarded call (``through``): time it
    and, with tracing on, wrap it in a span ``<operation> <store>`` (``get memories``)."""

    STORE: str
    _metrics: Metrics | None
    _tracing: Tracing

    async def through(
        self, operation: str, call: Awaitable[T], partition: Partition | None = None
    ) -> T:
        span: Span = NO_SPAN
        if self._tracing.enabled:
            attributes = {DB_OPERATION: operation, DB_COLLECTION: self.STORE}
            span = self._tracing.span(f"{operation} {self.STORE}", attributes)
        started = time.perf_counter()
        with span:
            try:
                answer = await call
            except Exception:
                # A cancelled call (not an Exception) is neither a sample nor an error.
                self._observe(operation, started, ok=False)
                raise
        self._observe(operation, started, ok=True)
        return answer

    def _observe(self, operation: str, started: float, *, ok: bool) -> None:
        if self._metrics is not None:
            elapsed = time.perf_counter() - started
            self._metrics.observe_store(self.STORE, operation, elapsed, ok=ok)


class InstrumentedStore(_TimedCalls, DelegatingStore):
    """A Store that records ``memoryd_store_operation_duration_seconds{store="memories"}``
    (with ``metrics``) and a span per call (with tracing)."""

    STORE = "memories"

    def __init__(
        self, inner: Store, metrics: Metrics | None, tracing: Tracing = NO_TRACING
    ) -> None:
        super().__init__(inner)
        self._metrics, self._tracing = metrics, tracing


class InstrumentedRecordStore(_TimedCalls, DelegatingRecordStore):
    """A RecordStore that records ``memoryd_store_operation_duration_seconds{store="records"}``
    (with ``metrics``) and a span per call (with tracing)."""

    STORE = "records"

    def __init__(
        self, inner: RecordStore, metrics: Metrics | None, tracing: Tracing = NO_TRACING
    ) -> None:
        super().__init__(inner)
        self._metrics, self._tracing = metrics, tracing
