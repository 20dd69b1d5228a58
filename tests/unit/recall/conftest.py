"""A MemoryService over the in-process store, with configurable recall and dedup."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from memoryd.config import DedupSettings, LimitsSettings, RecallSettings
from memoryd.domain.models import Clock, Partition, SecurityLevel, Vector, utcnow
from memoryd.domain.principal import CallScope, Principal, Role
from memoryd.embedding import HashingEmbedder
from memoryd.embedding.base import Embedder
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.memories.access_stats import AccessStatsBuffer
from memoryd.service.memories.service import MemoryService
from memoryd.storage.memory import InMemoryStore

DIM = 64


def scope_for(
    agent: str = "a1", tenant: str = "t1", clearance: SecurityLevel = SecurityLevel.RESTRICTED
) -> CallScope:
    principal = Principal("test", tenant, frozenset({"*"}), clearance, frozenset(Role))
    return CallScope(principal, Partition(tenant, agent))


def unit(values: Any) -> Vector:
    v = np.asarray(values, dtype=np.float32)
    out: Vector = v / np.linalg.norm(v)
    return out


def with_cosine(base: Vector, cosine: float, seed: int = 0) -> Vector:
    """A unit vector whose cosine with the unit vector ``base`` is exactly ``cosine``."""
    other = np.random.default_rng(seed).normal(size=base.shape).astype(np.float64)
    other -= other.dot(base) * base
    other /= np.linalg.norm(other)
    return unit(cosine * base + np.sqrt(1 - cosine**2) * other)


@dataclass
class Rig:
    service: MemoryService
    store: InMemoryStore


MakeRig = Callable[..., Awaitable[Rig]]


@pytest.fixture
async def make_rig() -> AsyncIterator[MakeRig]:
    async with AsyncExitStack() as stack:

        async def make(
            recall: RecallSettings | None = None,
            dedup: DedupSettings | None = None,
            *,
            embedder: Embedder | None = None,
            store: InMemoryStore | None = None,
            clock: Clock = utcnow,
        ) -> Rig:
            store = store or InMemoryStore(dimension=DIM)
            await store.open()
            stack.push_async_callback(store.close)
            writer = WriteBatcher(store, max_batch=100)
            writer.start()
            stack.push_async_callback(writer.close)
            access = AccessStatsBuffer(store, interval_s=3600, max_pending=10_000)
            access.start()
            stack.push_async_callback(access.close)
            service = MemoryService(
                store=store,
                embedder=embedder or HashingEmbedder(DIM),
                writer=writer,
                access=access,
                page_tokens=PageTokenCodec(b"k" * 32),
                limits=LimitsSettings(),
                recall=recall or RecallSettings(),
                dedup=dedup,
                clock=clock,
            )
            return Rig(service, store)

        yield make


@pytest.fixture
async def rig(make_rig: MakeRig) -> Rig:
    return await make_rig()
