"""A KeyedMemoryService over the in-process stores and the hashing embedder."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import pytest

from memoryd.config import KeysSettings, LimitsSettings, RecallSettings
from memoryd.domain.models import Partition, SecurityLevel
from memoryd.domain.principal import CallScope, Principal, Role
from memoryd.embedding import HashingEmbedder
from memoryd.security.settings import QuotaSettings
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.service.common.quotas import Quotas
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.keyed.observers import KeyObserver
from memoryd.service.keyed.service import KeyedMemoryService
from memoryd.service.memories.access_stats import AccessStatsBuffer
from memoryd.service.memories.service import MemoryService
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore

DIM = 64


def scope_for(
    agent: str = "a1", tenant: str = "t1", clearance: SecurityLevel = SecurityLevel.RESTRICTED
) -> CallScope:
    principal = Principal("test", tenant, frozenset({"*"}), clearance, frozenset(Role))
    return CallScope(principal, Partition(tenant, agent))


@dataclass
class Keyed:
    service: KeyedMemoryService
    memories: MemoryService
    records: InMemoryRecordStore
    store: InMemoryStore
    writer: WriteBatcher
    embedder: HashingEmbedder
    quotas: QuotaSettings

    def new_service(self, observers: Sequence[KeyObserver] = (), **keys: int) -> KeyedMemoryService:
        """Another service over the same stores (a restarted daemon)."""
        return KeyedMemoryService(
            records=self.records,
            store=self.store,
            embedder=self.embedder,
            writer=self.writer,
            page_tokens=PageTokenCodec(b"k" * 32),
            limits=LimitsSettings(),
            keys=KeysSettings(**keys),
            quotas=Quotas(self.quotas, self.store),
            observers=observers,
        )


@pytest.fixture
async def keyed() -> AsyncIterator[Keyed]:
    store = InMemoryStore(DIM)
    records = InMemoryRecordStore()
    await store.open()
    await records.open()
    writer = WriteBatcher(store, max_batch=100)
    writer.start()
    access = AccessStatsBuffer(store, interval_s=3600, max_pending=10_000)
    embedder = HashingEmbedder(DIM)
    memories = MemoryService(
        store=store,
        embedder=embedder,
        writer=writer,
        access=access,
        page_tokens=PageTokenCodec(b"k" * 32),
        limits=LimitsSettings(),
        recall=RecallSettings(),
    )
    quotas = QuotaSettings()
    k = Keyed(None, memories, records, store, writer, embedder, quotas)  # type: ignore[arg-type]
    k.service = k.new_service()
    yield k
    await writer.close()
    await records.close()
    await store.close()
