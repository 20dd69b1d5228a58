"""Keyed writes while the store is down (issue 33, the STM/LTM design's fallback: "with
the store down, writes still succeed somewhere durable"): after a restart, with the
store gone, SetMemory of a new key and of a key this process never read goes to the
write-ahead log, as Remember does, and is applied in order when the store returns.

What still needs the store is refused as UNAVAILABLE, nothing stored: a write with
``if_version`` (it must read the slot), a write in a partition whose version counter
this process could not read, and ListKeys (a listing cannot be answered from the log
alone: it would leave out every key the log does not hold)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memoryd.config import KeysSettings, LimitsSettings
from memoryd.domain.errors import StoreError
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyListQuery, KeyWrite
from memoryd.domain.models import Provenance, ProvenanceKind
from memoryd.domain.records import RecordKind
from memoryd.durability.durable_store import Durability
from memoryd.durability.facades import DurableRecordStore, DurableStore
from memoryd.embedding import HashingEmbedder
from memoryd.resilience.degradation import collecting
from memoryd.security.settings import QuotaSettings
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.service.common.quotas import Quotas
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.keyed.service import KeyedMemoryService
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from tests.reliability.support import open_core, until
from tests.reliability.test_store_outage import FlakyStore
from tests.unit.keyed.conftest import scope_for

DIM = 64
S = scope_for()
USER = Provenance(ProvenanceKind.USER, name="chat")


@dataclass
class Stores:
    core: Durability
    memories: FlakyStore
    records: FlakyStore
    inner_records: InMemoryRecordStore

    def down(self, down: bool) -> None:
        self.memories.down = self.records.down = down

    def service(self, quotas: QuotaSettings | None = None) -> KeyedMemoryService:
        """A keyed service as a (re)started daemon has it: nothing read yet."""
        store = DurableStore(self.core, dimension=DIM)
        return KeyedMemoryService(
            records=DurableRecordStore(self.core),
            store=store,
            embedder=HashingEmbedder(DIM),
            writer=WriteBatcher(store, max_batch=100),
            page_tokens=PageTokenCodec(b"k" * 32),
            limits=LimitsSettings(),
            keys=KeysSettings(),
            quotas=Quotas(quotas or QuotaSettings(), store),
        )


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    inner_memories, inner_records = InMemoryStore(DIM), InMemoryRecordStore()
    await inner_memories.open()
    await inner_records.open()
    memories, records = FlakyStore(inner_memories), FlakyStore(inner_records)
    core = await open_core(tmp_path, memories, records)
    try:
        yield Stores(core, memories, records, inner_records)
    finally:
        records.down = memories.down = False
        await core.close()


async def test_set_memory_goes_to_the_log_while_the_store_is_down(stores: Stores) -> None:
    before = stores.service()
    await before.set(S, KeyWrite("/user/a", Json.of("a1"), source=USER))
    await before.set(S, KeyWrite("/user/b", Json.of("b1"), source=USER))

    restarted = stores.service()
    await restarted.warm()  # the daemon starts it in the background
    stores.down(True)
    with collecting() as degraded:
        new = await restarted.set(S, KeyWrite("/user/c", Json.of("c1"), source=USER))
        # /user/a: written before the restart, never read by this process.
        old = await restarted.set(S, KeyWrite("/user/a", Json.of("a2"), source=USER))
        gone = await restarted.set(S, KeyWrite("/user/b", Json.of(None), source=USER))
    assert (new.version, old.version, gone.version) == (3, 4, 5)
    assert "store" in {d.component for d in degraded}
    assert stores.core.pending  # acknowledged from the log, not applied yet
    # A read of a key the log holds is answered from it.
    assert (await restarted.get(S, "/user/a")).content == "a2"

    # What needs the store is UNAVAILABLE (StoreError), never a wrong answer.
    with pytest.raises(StoreError):
        await restarted.set(S, KeyWrite("/user/d", Json.of(1), source=USER, if_version=0))
    with pytest.raises(StoreError):
        await restarted.list(S, KeyListQuery(prefix="/user/"))
    cold = stores.service()  # its counters never read: a restart with the store down
    with pytest.raises(StoreError):
        await cold.set(S, KeyWrite("/user/e", Json.of(1), source=USER))

    stores.down(False)
    await until(lambda: not stores.core.pending)
    stored = {
        r.key: (r.version, r.doc["content_json"], r.doc["valid"])
        for r in await stores.inner_records.list_records(S.partition, RecordKind.KEY)
    }
    assert stored == {
        "/user/a": (4, '"a2"', True),
        "/user/b": (5, "null", False),
        "/user/c": (3, '"c1"', True),
    }
    counter = await stores.inner_records.get_records(S.partition, RecordKind.COUNTER, ["keys"])
    assert counter[0].version == 5
    listing = await restarted.list(S, KeyListQuery(prefix="/user/"))
    assert [e.key for e in listing.entries] == ["/user/a", "/user/c"]


async def test_the_key_quota_holds_during_the_outage(stores: Stores) -> None:
    """A blind write counts as a new key: the quota still refuses past its limit
    (with the store down, the refusal cannot be recounted: UNAVAILABLE)."""
    quotas = QuotaSettings(max_keys_per_partition=2)
    before = stores.service(quotas)
    await before.set(S, KeyWrite("/k/1", Json.of(1), source=USER))
    restarted = stores.service(quotas)
    await restarted.warm()
    stores.down(True)
    await restarted.set(S, KeyWrite("/k/2", Json.of(2), source=USER))
    with pytest.raises(StoreError):
        await restarted.set(S, KeyWrite("/k/3", Json.of(3), source=USER))
    stores.down(False)
    await until(lambda: not stores.core.pending)
    keys = await stores.inner_records.list_records(S.partition, RecordKind.KEY)
    assert [r.key for r in keys] == ["/k/1", "/k/2"]
