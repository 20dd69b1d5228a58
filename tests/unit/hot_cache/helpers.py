"""Builders and an inner store whose scans and writes can be held at a gate."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from memoryd.domain.models import Memory, MemoryFilter, Partition, TextHit, Vector
from memoryd.storage.base import NO_HINTS, UpsertHints
from memoryd.storage.memory import InMemoryStore

DIM = 16
BASE = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
P = Partition("tenant", "agent")
_ids = itertools.count()


def unit_vector(rng: np.random.Generator, dim: int = DIM) -> Vector:
    v = rng.normal(size=dim).astype(np.float32)
    out: Vector = (v / np.linalg.norm(v)).astype(np.float32)
    return out


def clustered(n: int, rng: np.random.Generator, dim: int) -> Vector:
    """Text-embedding-like unit rows: mixes of a few hundred centres plus noise."""
    centres = rng.normal(size=(300, dim))
    x = centres[rng.integers(0, 300, n)] + 0.6 * rng.normal(size=(n, dim))
    out: Vector = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    return out


def memory(partition: Partition = P, *, vector: Vector | None = None, **fields: Any) -> Memory:
    n = next(_ids)
    fields.setdefault("content", f"memory {n}")
    fields.setdefault("created_at", BASE + timedelta(seconds=n))
    fields.setdefault("updated_at", fields["created_at"])
    return Memory(
        id=fields.pop("id", f"m-{n:06d}"),
        tenant_id=partition.tenant_id,
        agent_id=partition.agent_id,
        vector=vector if vector is not None else unit_vector(np.random.default_rng(n)),
        **fields,
    )


class GatedStore(InMemoryStore):
    """InMemoryStore whose next vector read (``get(with_vectors=True)``, as a partition
    load does) waits at ``gate`` after reading, once ``hold_next_read`` is set; and
    whose upserts can be made to fail after committing. Counts the text searches it
    answers (the cache should answer them itself once a partition is indexed)."""

    def __init__(self, dimension: int = DIM) -> None:
        super().__init__(dimension)
        self.hold_next_read = False
        self.gate = asyncio.Event()
        self.held = asyncio.Event()
        self.fail_after_write = False
        self.vector_reads = 0
        self.text_searches = 0

    async def get(
        self, partition: Partition, ids: Sequence[str], *, with_vectors: bool = False
    ) -> list[Memory]:
        found = await super().get(partition, ids, with_vectors=with_vectors)
        if with_vectors:
            self.vector_reads += 1
            if self.hold_next_read:
                self.hold_next_read = False
                self.held.set()
                await self.gate.wait()
        return found

    async def text_search(
        self, partition: Partition, query: str, flt: MemoryFilter, limit: int
    ) -> list[TextHit]:
        self.text_searches += 1
        return await super().text_search(partition, query, flt, limit)

    async def upsert(
        self, partition: Partition, memories: Sequence[Memory], hints: UpsertHints = NO_HINTS
    ) -> None:
        await super().upsert(partition, memories, hints)
        if self.fail_after_write:
            raise RuntimeError("disk full (after the commit)")
