"""Reembed: give memories embedded by another model this daemon's embedding.

After a model change (same dimension; a store of another dimension refuses to open)
or after a period on the fallback embedder, memories whose ``embedding_model`` is
not the configured embedder's are embedded again, in batches: each batch re-reads
its memories, embeds their content and writes the new vectors (content, version and
timestamps unchanged) over the versions it embedded (service/common/memory_writes.py).
A memory changed by a request in between keeps the request's write. The selection is "model differs", so an interrupted run resumes where it
stopped when run again. Every level is re-embedded (nothing is returned to the
caller but counts).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence

import numpy as np

from memoryd.domain.lifecycle import Progress, ReembedResult
from memoryd.domain.models import Memory, Partition
from memoryd.service.common import scanning
from memoryd.service.lifecycle.bulk import EVERYTHING, LifecycleDeps

DEFAULT_BATCH = 256
MAX_BATCH = 4096


class Reembedder:
    def __init__(self, deps: LifecycleDeps) -> None:
        self._deps = deps

    async def stale(self, partition: Partition) -> list[str]:
        """Ids of the memories embedded by another model than the configured one."""
        embedder = self._deps.embedder
        ids: list[str] = []
        async for page in scanning.scan(self._deps.store, partition, EVERYTHING):
            ids.extend(
                m.id
                for m in page
                if m.embedding_model != embedder.model_id
                or m.embedding_dimension != embedder.dimension
            )
        return ids

    async def reembed(
        self, partitions: Sequence[Partition], batch_size: int
    ) -> AsyncIterator[Progress | ReembedResult]:
        deps = self._deps
        embedder = deps.embedder
        yield Progress("scan", message="finding memories embedded by another model")
        todo = [(p, await self.stale(p)) for p in partitions]
        total = sum(len(ids) for _, ids in todo)
        done = written = 0
        yield Progress("reembed", 0, total, embedder.model_id)
        for partition, ids in todo:
            for chunk in scanning.chunks(ids, batch_size):
                written += await self._batch(partition, chunk)
                done += len(chunk)
                yield Progress("reembed", done, total, embedder.model_id)
                await scanning.pause()
        yield ReembedResult(reembedded=written, embedding_model=embedder.model_id)

    async def _batch(self, partition: Partition, ids: Sequence[str]) -> int:
        """Re-embed the memories ``ids`` still of another model; how many were written."""
        deps = self._deps
        embedder = deps.embedder
        current = await deps.store.get(partition, ids)
        stale = [m for m in current if m.embedding_model != embedder.model_id]
        if not stale:
            return 0
        vectors = await embedder.embed([m.content for m in stale])
        fresh = {
            m.id: (m.version, vector)
            for m, vector in zip(stale, vectors, strict=True)
            if np.any(vector)
        }

        def reembedded(m: Memory) -> Memory | None:
            # A request's update since the embedding started wins.
            if m.version != fresh[m.id][0]:
                return None
            return dataclasses.replace(
                m,
                vector=fresh[m.id][1],
                embedding_model=embedder.model_id,
                embedding_dimension=embedder.dimension,
            )

        return await deps.writes.rewrite(
            partition, list(fresh), reembedded, batch=max(len(fresh), 1)
        )
