"""Sessions keep every message on every record backend: folded turns as
SESSION_MESSAGE records (keys with NUL separators, listed by prefix), read back in
seq order, deleted by seq, cleared, purged with their expired session, per partition."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from memoryd.config import LimitsSettings, RecallSettings, SessionSettings
from memoryd.domain.agent_state import MessageDraft, MessageRole, SessionMessagesQuery
from memoryd.domain.errors import NotFound
from memoryd.domain.records import RecordKind
from memoryd.embedding import HashingEmbedder
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.service.common.tokens import EstimateCounter
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.memories.access_stats import AccessStatsBuffer
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions.service import SessionService
from memoryd.service.sessions.summarize import Summarizer
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.records import KeyPage, RecordStore
from tests.unit.service.helpers import scope_for

from .conftest import ReopenRecords

A = scope_for("agent-a")
B = scope_for("agent-b")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def memories() -> AsyncIterator[MemoryService]:
    store = InMemoryStore(dimension=32)
    await store.open()
    writer = WriteBatcher(store, max_batch=100)
    writer.start()
    access = AccessStatsBuffer(store, interval_s=3600, max_pending=100)
    access.start()
    yield MemoryService(
        store=store,
        embedder=HashingEmbedder(32),
        writer=writer,
        access=access,
        page_tokens=PageTokenCodec(b"m" * 32),
        limits=LimitsSettings(),
        recall=RecallSettings(),
    )
    await access.close()
    await writer.close()
    await store.close()


def service(records: RecordStore, memories: MemoryService, clock: Clock) -> SessionService:
    counter = EstimateCounter()
    return SessionService(
        records=records,
        memories=memories,
        summarizer=Summarizer(counter=counter, max_tokens=64, llm=None),
        counter=counter,
        settings=SessionSettings(compress_threshold_messages=6, keep_recent_messages=2),
        limits=LimitsSettings(),
        page_tokens=PageTokenCodec(b"p" * 32),
        clock=clock,
    )


def turns(n: int) -> list[MessageDraft]:
    return [MessageDraft(MessageRole.USER, f"message {i} 会话 {i}") for i in range(1, n + 1)]


async def seqs(sessions: SessionService, scope: object, session_id: str) -> list[int]:
    out: list[int] = []
    token = ""
    while True:
        page = await sessions.messages(
            scope,  # type: ignore[arg-type]
            SessionMessagesQuery(session_id, page_size=4, page_token=token),
        )
        out.extend(m.seq for m in page.messages)
        token = page.next_page_token
        if not token:
            return out


async def test_every_message_is_kept_read_deleted_and_cleared(
    record_store: RecordStore, memories: MemoryService
) -> None:
    clock = Clock()
    sessions = service(record_store, memories, clock)
    for draft in turns(20):
        await sessions.append(A, "s/1 é", [draft])
    await sessions.append(B, "s/1 é", turns(3))
    assert await seqs(sessions, A, "s/1 é") == list(range(1, 21))
    assert await seqs(sessions, B, "s/1 é") == [1, 2, 3]
    window = await sessions.window(A, "s/1 é")
    # Folded at 6, 10, 14 and 18 turns, keeping 2 each time.
    assert window.summarized_through_seq == 16
    assert [m.seq for m in window.recent] == [17, 18, 19, 20]
    assert await record_store.count_records(A.partition, RecordKind.SESSION_MESSAGE) == 16

    out = await sessions.delete_messages(A, "s/1 é", [3, 20])
    assert out.deleted == [3, 20] and out.summary_rebuilt
    assert await seqs(sessions, A, "s/1 é") == [s for s in range(1, 21) if s not in (3, 20)]
    assert await sessions.clear(A, "s/1 é") == 18
    assert await seqs(sessions, A, "s/1 é") == []
    assert await seqs(sessions, B, "s/1 é") == [1, 2, 3]  # the other agent's is untouched


async def test_messages_go_with_their_expired_session(
    record_store: RecordStore, memories: MemoryService
) -> None:
    clock = Clock()
    sessions = service(record_store, memories, clock)
    await sessions.append(A, "short", turns(12), ttl=timedelta(minutes=5))
    await sessions.append(A, "long", turns(12))
    clock.now += timedelta(minutes=10)
    with pytest.raises(NotFound):
        await sessions.messages(A, SessionMessagesQuery("short"))
    assert await sessions.purge_expired(A.partition) == 1
    left = await record_store.list_records(
        A.partition, RecordKind.SESSION_MESSAGE, KeyPage(limit=100)
    )
    assert len(left) == 10 and all(r.key.startswith("long\x00") for r in left)


async def test_messages_persist(
    record_store: RecordStore, memories: MemoryService, reopen_records: ReopenRecords
) -> None:
    clock = Clock()
    await service(record_store, memories, clock).append(A, "s", turns(9))
    reopened = await reopen_records()
    assert await seqs(service(reopened, memories, clock), A, "s") == list(range(1, 10))
