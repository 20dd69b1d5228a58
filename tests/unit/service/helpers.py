from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from memoryd.config import LimitsSettings, RecallSettings
from memoryd.domain.models import Partition, SecurityLevel
from memoryd.domain.principal import CallScope, Principal, Role
from memoryd.embedding import HashingEmbedder
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.memories.access_stats import AccessStatsBuffer
from memoryd.service.memories.service import MemoryService
from memoryd.storage.memory import InMemoryStore
from tests.clock import INSTANTS, SteppingClock


def scope_for(
    agent: str = "a1", tenant: str = "t1", clearance: SecurityLevel = SecurityLevel.RESTRICTED
) -> CallScope:
    principal = Principal("test", tenant, frozenset({"*"}), clearance, frozenset(Role))
    return CallScope(principal, Partition(tenant, agent))


@dataclass
class Harness:
    service: MemoryService
    store: InMemoryStore
    access: AccessStatsBuffer
    writer: WriteBatcher
    clock: SteppingClock


@pytest.fixture(params=INSTANTS, ids=lambda instant: instant.strftime("%a-%Y-%m-%d"))
async def harness(request: pytest.FixtureRequest) -> AsyncIterator[Harness]:
    """A MemoryService over the in-process store whose clock starts at each of the
    fixed instants in turn (tests/clock.py)."""
    clock = SteppingClock(request.param)
    store = InMemoryStore(dimension=64)
    await store.open()
    writer = WriteBatcher(store, max_batch=100)
    writer.start()
    access = AccessStatsBuffer(store, interval_s=3600, max_pending=10_000)
    access.start()
    service = MemoryService(
        store=store,
        embedder=HashingEmbedder(64),
        writer=writer,
        access=access,
        page_tokens=PageTokenCodec(b"k" * 32),
        limits=LimitsSettings(),
        recall=RecallSettings(),
        clock=clock,
    )
    yield Harness(service, store, access, writer, clock)
    await access.close()
    await writer.close()
    await store.close()
