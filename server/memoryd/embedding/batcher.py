"""Documents embedded in batches across callers, queries first.

Each Remember (and each SetMemory's mirror) embeds its own text: with eight writers
the model ran eight one-text calls where one call of eight costs a fraction of them.
``BatchingEmbedder`` coalesces concurrent document requests: while one batch is in
the model, the requests that arrive wait and then go in together as the next batch
(at most ``max_batch`` texts). A lone request is sent at once, so it waits for no
company; a request of ``max_batch`` texts or more is a batch already and goes
straight through. Queries (a Recall's text), and documents a read waits for
(embedding/urgency.py), never queue here: they go to the model
directly, where the local models run them before queued documents
(embedding/worker.py), so a recall's query embedding does not wait behind a batch of
writes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from memoryd.aio import cancel_and_wait
from memoryd.domain.errors import EmbeddingError
from memoryd.embedding.base import CheckedEmbedder, Embedder, EmbedKind
from memoryd.embedding.urgency import awaited


@dataclass(slots=True)
class _Request:
    texts: Sequence[str]
    done: asyncio.Future[npt.NDArray[np.float32]] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class BatchingEmbedder(CheckedEmbedder):
    """Concurrent document requests to ``inner`` as few calls (see the module)."""

    def __init__(self, inner: Embedder, *, max_batch: int) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        super().__init__(inner.model_id, inner.dimension)
        self.inner = inner
        self.max_batch = max_batch
        self._waiting: list[_Request] = []
        self._sender: asyncio.Task[None] | None = None
        self._closed = False
        #: Calls made to ``inner`` for documents, and the requests they carried.
        self.batches = 0
        self.requests = 0

    async def _embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        if kind == "query" or awaited() or len(texts) >= self.max_batch:
            return await self.inner.embed(texts, kind=kind)
        if self._closed:
            raise EmbeddingError(f"{self.inner.model_id} is closed")
        request = _Request(texts)
        self._waiting.append(request)
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send(), name="embedding-batcher")
        return await request.done

    async def _send(self) -> None:
        """Send what waits, a batch at a time, until nothing does."""
        while self._waiting:
            batch: list[_Request] = []
            size = 0
            while self._waiting and (
                not batch or size + len(self._waiting[0].texts) <= self.max_batch
            ):
                request = self._waiting.pop(0)
                if request.done.cancelled():
                    continue  # its caller went away
                batch.append(request)
                size += len(request.texts)
            if not batch:
                continue
            texts = [t for r in batch for t in r.texts]
            self.batches += 1
            self.requests += len(batch)
            try:
                vectors = await self.inner.embed(texts, kind="document")
            except Exception as exc:
                for request in batch:
                    if not request.done.done():
                        request.done.set_exception(exc)
                continue
            start = 0
            for request in batch:
                end = start + len(request.texts)
                if not request.done.done():
                    request.done.set_result(vectors[start:end])
                start = end

    async def close(self) -> None:
        self._closed = True
        await cancel_and_wait(self._sender)
        for request in self._waiting:
            if not request.done.done():
                request.done.set_exception(EmbeddingError(f"{self.inner.model_id} is closed"))
        self._waiting.clear()
        await self.inner.close()
