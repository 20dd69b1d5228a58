"""The shared-store code paths in one process: two sets of services ("replicas", each
with its own locks and no shared memory) over one record store that declares itself
shared, so every read-modify-write goes through put_record_if and the two really
race. The store's conditional write is exact here (the in-process store's lock);
against a real Qdrant server: tests/reliability/test_replica_history.py."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence

import pytest

from memoryd.config import (
    KeysSettings,
    LimitsSettings,
    ProfileSettings,
    RecallSettings,
    SessionSettings,
    WorkingMemorySettings,
)
from memoryd.domain.agent_state import (
    MessageDraft,
    MessageRole,
    SessionMessagesQuery,
    WorkingMemoryMode,
    WorkingMemoryWrite,
    WorkingScope,
)
from memoryd.domain.errors import FailedPrecondition
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyWrite
from memoryd.domain.models import Partition, Provenance, ProvenanceKind
from memoryd.domain.records import Record, RecordKind
from memoryd.embedding import HashingEmbedder
from memoryd.security.settings import QuotaSettings
from memoryd.service.agent_state.profile import ProfileService
from memoryd.service.agent_state.working import WorkingMemoryService
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.service.common.quotas import Quotas
from memoryd.service.common.tokens import EstimateCounter
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.keyed.service import KeyedMemoryService
from memoryd.service.memories.access_stats import AccessStatsBuffer
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions.service import SessionService
from memoryd.service.sessions.summarize import Summarizer
from memoryd.storage.base import Capabilities
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from tests.unit.keyed.conftest import scope_for

DIM = 32
SOURCE = Provenance(ProvenanceKind.AGENT, "shared test")
S = scope_for()


class SharedRecords(InMemoryRecordStore):
    """The in-process store, declaring that other processes write it too; every read
    yields to the loop, so another replica's write can land between a read and the
    write based on it (as over a network)."""

    capabilities = Capabilities(shared=True)

    async def get_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[Record]:
        await asyncio.sleep(0)
        found = await super().get_records(partition, kind, keys)
        await asyncio.sleep(0)
        return found


class SharedMemories(InMemoryStore):
    capabilities = Capabilities(shared=True)


class Replica:
    def __init__(self, records: SharedRecords, store: SharedMemories) -> None:
        embedder = HashingEmbedder(DIM)
        writer = WriteBatcher(store, max_batch=100)
        writer.start()
        self.writer = writer
        tokens = PageTokenCodec(b"s" * 32)
        memories = MemoryService(
            store=store,
            embedder=embedder,
            writer=writer,
            access=AccessStatsBuffer(store, interval_s=3600, max_pending=1000),
            page_tokens=tokens,
            limits=LimitsSettings(),
            recall=RecallSettings(),
        )
        self.keyed = KeyedMemoryService(
            records=records,
            store=store,
            embedder=embedder,
            writer=writer,
            page_tokens=tokens,
            limits=LimitsSettings(),
            keys=KeysSettings(),
            quotas=Quotas(QuotaSettings(), store),
        )
        self.working = WorkingMemoryService(
            records=records,
            page_tokens=tokens,
            settings=WorkingMemorySettings(),
            limits=LimitsSettings(),
        )
        self.profiles = ProfileService(records=records, settings=ProfileSettings())
        counter = EstimateCounter()
        self.sessions = SessionService(
            records=records,
            memories=memories,
            summarizer=Summarizer(counter=counter, max_tokens=200, llm=None),
            counter=counter,
            settings=SessionSettings(compress_threshold_messages=6, keep_recent_messages=2),
            limits=LimitsSettings(),
            page_tokens=tokens,
        )


@pytest.fixture
async def replicas() -> list[Replica]:
    records, store = SharedRecords(), SharedMemories(DIM)
    await records.open()
    await store.open()
    return [Replica(records, store), Replica(records, store)]


async def test_key_versions_are_unique_and_if_version_exact(replicas: list[Replica]) -> None:
    writes = [
        replicas[i % 2].keyed.set(
            S, KeyWrite(key=f"/k{i % 3}", content=Json.of(f"v{i}"), source=SOURCE)
        )
        for i in range(30)
    ]
    entries = await asyncio.gather(*writes)
    versions = [e.version for e in entries]
    assert len(set(versions)) == len(versions)  # unique in the partition
    # Both replicas read the key at one version and write over it: exactly one wins.
    current = await replicas[0].keyed.get(S, "/k0")
    results = await asyncio.gather(
        *(
            r.keyed.set(
                S,
                KeyWrite(
                    key="/k0",
                    content=Json.of(f"from {i}"),
                    source=SOURCE,
                    if_version=current.version,
                ),
            )
            for i, r in enumerate(replicas)
        ),
        return_exceptions=True,
    )
    assert sum(isinstance(r, FailedPrecondition) for r in results) == 1
    winner = next(r for r in results if not isinstance(r, BaseException))
    assert (await replicas[1].keyed.get(S, "/k0")).version == winner.version


async def test_no_merge_is_lost(replicas: list[Replica]) -> None:
    scope = WorkingScope(thread_id="t", resource_id="r")
    merges = [
        replicas[i % 2].working.set(
            S,
            WorkingMemoryWrite(
                scope=scope, content=Json.of({f"f{i}": i}), mode=WorkingMemoryMode.MERGE
            ),
        )
        for i in range(40)
    ]
    await asyncio.gather(*merges)
    final = await replicas[0].working.get(S, scope)
    assert final.content == {f"f{i}": i for i in range(40)}
    assert final.version == 40
    # A delete expires the scope: a later merge starts it afresh over the record.
    assert await replicas[1].working.delete(S, scope)
    again = await replicas[0].working.set(
        S,
        WorkingMemoryWrite(
            scope=scope, content=Json.of({"after": 1}), mode=WorkingMemoryMode.MERGE
        ),
    )
    assert again.content == {"after": 1} and again.version == 1


async def test_no_append_is_lost(replicas: list[Replica]) -> None:
    appends = [
        replicas[i % 2].sessions.append(
            S, "s1", [MessageDraft(role=MessageRole.USER, content=f"m{i}")]
        )
        for i in range(30)
    ]
    await asyncio.gather(*appends)
    page = await replicas[0].sessions.messages(S, _messages_query("s1"))
    contents = Counter(m.content for m in page.messages)
    assert set(contents) == {f"m{i}" for i in range(30)} and max(contents.values()) == 1
    assert [m.seq for m in page.messages] == list(range(1, 31))


async def test_profile_etags_are_exact(replicas: list[Replica]) -> None:
    first = await replicas[0].profiles.set(S, "v1", "none")
    results = await asyncio.gather(
        *(r.profiles.set(S, f"from {i}", first.etag) for i, r in enumerate(replicas)),
        return_exceptions=True,
    )
    assert sum(isinstance(r, FailedPrecondition) for r in results) == 1


async def test_a_record_written_twice_in_one_race_keeps_its_lineage(
    replicas: list[Replica],
) -> None:
    """The counter record every SetMemory claims on: one claim per write."""
    await asyncio.gather(
        *(
            replicas[i % 2].keyed.set(S, KeyWrite(key=f"/c{i}", content=Json.of(i), source=SOURCE))
            for i in range(20)
        )
    )
    records = replicas[0].keyed._records
    [counter] = await records.get_records(S.partition, RecordKind.COUNTER, ["keys"])
    assert counter.version == 20


def _messages_query(session_id: str) -> SessionMessagesQuery:
    return SessionMessagesQuery(session_id=session_id, page_size=100)
