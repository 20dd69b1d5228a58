"""The embedding fallback: when the provider fails or is slow, hash instead.

``FallbackEmbedder`` calls the provider under a timeout and a circuit breaker. A
failure (timeout, 5xx, refused connection, malformed answer) falls back to the
hashing embedder for that call: its vectors live in a *separate* space, named by
the hashing model id, and are never compared with the provider's. Memories written
in it are the re-embed queue (``Reembedder`` finds them by ``embedding_model``):
no extra state, nothing to lose.

Vector searches run in one space only (``in_space``): the provider's space when
the query was embedded by it, the fallback space otherwise (and recall then adds
full text, which needs no vectors).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import structlog

from memoryd.aio import Repeating
from memoryd.domain.errors import EmbeddingError, Unavailable
from memoryd.domain.models import (
    MemoryFilter,
    Partition,
)
from memoryd.embedding.base import Embedder, EmbedKind
from memoryd.embedding.hashing import HashingEmbedder
from memoryd.resilience.breaker import BreakerState, CircuitBreaker
from memoryd.resilience.degradation import ComponentStates, report
from memoryd.storage.base import ListPage, Store
from memoryd.storage.conditional import ConditionalWrite

log = structlog.get_logger(__name__)

EMBEDDER = "embedder"
F32 = npt.NDArray[np.float32]


class FallbackEmbedder:
    def __init__(
        self,
        primary: Embedder,
        *,
        states: ComponentStates,
        timeout_s: float,
        failure_threshold: int = 2,
        probe_after_s: float = 2.0,
        timeout_texts: int = 64,
    ) -> None:
        self.primary = primary
        self.fallback = HashingEmbedder(primary.dimension)
        #: The provider's time limit per ``timeout_texts`` texts of a call: a batch of
        #: 1,000 on a slow local model must not count as a stalled provider.
        self.timeout_s = timeout_s
        self.timeout_texts = timeout_texts
        self._states = states
        self.breaker = CircuitBreaker(
            EMBEDDER,
            failure_threshold=failure_threshold,
            reset_after_s=probe_after_s,
            on_change=self._changed,
        )
        #: False only after a sweep found no memory in the fallback space and none
        #: was written since: searches then need no space filter.
        self.fallback_space_used = True
        states.set(EMBEDDER, ok=True)

    @property
    def model_id(self) -> str:
        return self.primary.model_id

    @property
    def fallback_model_id(self) -> str:
        return self.fallback.model_id

    @property
    def dimension(self) -> int:
        return self.primary.dimension

    def _changed(self, state: BreakerState) -> None:
        if state is BreakerState.CLOSED:
            self._states.set(EMBEDDER, ok=True)
            log.info("embedding provider back")
        elif state is BreakerState.OPEN:
            self._states.set(EMBEDDER, ok=False, reason=self._reason())

    def _reason(self) -> str:
        return (
            f"embedding provider unavailable ({self.breaker.last_error}); "
            f"using the fallback space {self.fallback.model_id}"
        )

    async def embed(self, texts: Sequence[str], *, kind: EmbedKind = "document") -> F32:
        return (await self.embed_in_space(texts, kind=kind))[0]

    async def embed_in_space(
        self, texts: Sequence[str], *, kind: EmbedKind = "document"
    ) -> tuple[F32, str]:
        """Vectors and the id of the space (model) they belong to."""
        if self.breaker.allow():
            try:
                vectors = await self.call_primary(texts, kind)
            except (EmbeddingError, TimeoutError, OSError) as exc:
                self.breaker.failure(_describe(exc))
                log.warning("embedding provider failed; hashing instead", error=_describe(exc))
            else:
                self.breaker.success()
                return vectors, self.primary.model_id
        self.fallback_space_used = True
        report(EMBEDDER, self._reason())
        return await self.fallback.embed(texts, kind=kind), self.fallback.model_id

    async def call_primary(self, texts: Sequence[str], kind: EmbedKind) -> F32:
        timeout = self.timeout_s * max(1, math.ceil(len(texts) / self.timeout_texts))
        return await asyncio.wait_for(self.primary.embed(texts, kind=kind), timeout)

    async def close(self) -> None:
        await self.primary.close()


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__


async def embed_in_space(
    embedder: Embedder, texts: Sequence[str], *, kind: EmbedKind = "document"
) -> tuple[F32, str]:
    """``embedder.embed`` plus the model the vectors belong to."""
    if isinstance(embedder, FallbackEmbedder):
        return await embedder.embed_in_space(texts, kind=kind)
    return await embedder.embed(texts, kind=kind), embedder.model_id


def in_space(flt: MemoryFilter, embedder: Embedder, space: str) -> MemoryFilter:
    """``flt`` for a vector search in ``space``: only the memories embedded in it
    (``flt`` itself when only one space can exist). Full-text searches need none."""
    if not isinstance(embedder, FallbackEmbedder):
        return flt
    if space == embedder.fallback_model_id:
        return dataclasses.replace(flt, embedding_model=space)
    if not embedder.fallback_space_used:
        return flt
    return dataclasses.replace(flt, exclude_embedding_model=embedder.fallback_model_id)


class Reembedder:
    """Drains the fallback space: re-embeds its memories with the provider once the
    provider answers again (the breaker's half-open probe), and upserts them."""

    def __init__(
        self, store: Store, embedder: FallbackEmbedder, *, interval_s: float, batch: int
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._batch = batch
        self._rounds = Repeating(
            self._round, interval_s, name="reembed", failed="re-embedding round failed"
        )
        #: Totals for metrics and the drain-rate measurement.
        self.reembedded = 0
        self.busy_s = 0.0

    def start(self) -> None:
        self._rounds.start()

    async def close(self) -> None:
        await self._rounds.close()

    async def _probe(self) -> bool:
        breaker = self._embedder.breaker
        if breaker.state is BreakerState.CLOSED:
            return True
        if not breaker.allow():
            return False
        try:
            await self._embedder.call_primary(["probe"], "document")
        except (EmbeddingError, TimeoutError, OSError) as exc:
            breaker.failure(_describe(exc))
            return False
        breaker.success()
        return True

    async def _round(self) -> None:
        if not self._embedder.fallback_space_used or not await self._probe():
            return
        started = asyncio.get_running_loop().time()
        # Cleared first: a fallback write during the sweep sets it again.
        self._embedder.fallback_space_used = False
        done = 0
        try:
            for partition in await self._store.list_partitions():
                done += await self._drain(partition)
        except BaseException:
            self._embedder.fallback_space_used = True
            raise
        if done:
            spent = asyncio.get_running_loop().time() - started
            self.reembedded += done
            self.busy_s += spent
            log.info("fallback vectors replaced", memories=done, seconds=round(spent, 3))

    async def _drain(self, partition: Partition) -> int:
        fallback = self._embedder.fallback_model_id
        flt = MemoryFilter(embedding_model=fallback, include_archived=True)
        done = 0
        while True:
            page = await self._store.list(partition, flt, ListPage(limit=self._batch))
            if not page:
                return done
            try:
                vectors = await self._embedder.call_primary([m.content for m in page], "document")
            except (EmbeddingError, TimeoutError, OSError) as exc:
                self._embedder.breaker.failure(_describe(exc))
                raise Unavailable(f"embedding provider failed again: {_describe(exc)}") from exc
            # Re-read just before writing, and written only over the versions read
            # (Store.upsert_if): a concurrent update keeps its own vector.
            current = {
                m.id: m
                for m in await self._store.get(partition, [m.id for m in page], with_vectors=True)
            }
            updated = []
            for old, vector in zip(page, vectors, strict=True):
                now = current.get(old.id)
                if now is None or now.embedding_model != fallback or now.version != old.version:
                    continue
                now.vector = vector
                now.embedding_model = self._embedder.model_id
                updated.append(now)
            expected = {m.id: m.version for m in updated}
            if updated and await self._store.upsert_if(
                ConditionalWrite(partition, updated, expected)
            ):
                updated = []  # one changed meanwhile: the page is listed again
            done += len(updated)
            if len(updated) < len(page) and not updated:
                return done  # only concurrently changed ones left: next round
