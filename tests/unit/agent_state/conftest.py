"""Fixtures: the in-process record store, an injectable clock and the services."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memoryd.config import (
    LimitsSettings,
    ProfileSettings,
    RecallSettings,
    SessionSettings,
    WorkingMemorySettings,
)
from memoryd.embedding import HashingEmbedder
from memoryd.service.agent_state.profile import ProfileService
from memoryd.service.agent_state.schema_evaluators import ThreadEvaluator
from memoryd.service.agent_state.schema_runner import SchemaRunner
from memoryd.service.agent_state.working import WorkingMemoryService
from memoryd.service.common.llm import ChatClient
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.service.common.tokens import EstimateCounter, TokenCounter
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.memories.access_stats import AccessStatsBuffer
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions.service import SessionService
from memoryd.service.sessions.summarize import Summarizer
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from tests.clock import CountingCpu
from tests.unit.agent_state.chat_server import ChatServer, running_chat_server

T0 = datetime(2026, 2, 23, 9, 0, tzinfo=UTC)


@dataclass
class FakeClock:
    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> None:
        self.now += timedelta(**kwargs)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def records() -> AsyncIterator[InMemoryRecordStore]:
    store = InMemoryRecordStore()
    await store.open()
    yield store
    await store.close()


@pytest.fixture
def working(records: InMemoryRecordStore, clock: FakeClock) -> Iterator[WorkingMemoryService]:
    settings = WorkingMemorySettings(max_content_bytes=2048)
    # Schemas evaluated in threads here (the daemon's worker processes: see
    # test_schema_processes.py).
    runner = SchemaRunner(settings, evaluator=ThreadEvaluator(cpu_clock=CountingCpu()))
    yield WorkingMemoryService(
        records=records,
        page_tokens=PageTokenCodec(b"w" * 32),
        settings=settings,
        limits=LimitsSettings(),
        clock=clock,
        schemas=runner,
    )
    runner.close()


@pytest.fixture
def profiles(records: InMemoryRecordStore, clock: FakeClock) -> ProfileService:
    return ProfileService(
        records=records, settings=ProfileSettings(max_content_bytes=1024), clock=clock
    )


@pytest.fixture
async def memories() -> AsyncIterator[MemoryService]:
    store = InMemoryStore(dimension=64)
    await store.open()
    writer = WriteBatcher(store, max_batch=100)
    writer.start()
    access = AccessStatsBuffer(store, interval_s=3600, max_pending=10_000)
    access.start()
    yield MemoryService(
        store=store,
        embedder=HashingEmbedder(64),
        writer=writer,
        access=access,
        page_tokens=PageTokenCodec(b"k" * 32),
        limits=LimitsSettings(),
        recall=RecallSettings(),
    )
    await access.close()
    await writer.close()
    await store.close()


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    with running_chat_server() as server:
        yield server


@dataclass
class SessionFactory:
    records: InMemoryRecordStore
    memories: MemoryService
    clock: FakeClock
    clients: list[ChatClient] = field(default_factory=list)

    def __call__(
        self,
        *,
        llm_url: str | None = None,
        llm_timeout_s: float = 5.0,
        counter: TokenCounter | None = None,
        **settings: Any,
    ) -> SessionService:
        counter = counter or EstimateCounter()
        config = SessionSettings(**settings)
        llm = None
        if llm_url is not None:
            llm = ChatClient(
                url=llm_url, model="test-model", api_key="sk-test", timeout_s=llm_timeout_s
            )
            self.clients.append(llm)
        return SessionService(
            records=self.records,
            memories=self.memories,
            summarizer=Summarizer(counter=counter, max_tokens=config.summary_max_tokens, llm=llm),
            counter=counter,
            settings=config,
            limits=LimitsSettings(),
            page_tokens=PageTokenCodec(b"s" * 32),
            clock=self.clock,
        )


@pytest.fixture
async def make_sessions(
    records: InMemoryRecordStore, memories: MemoryService, clock: FakeClock
) -> AsyncIterator[Callable[..., SessionService]]:
    factory = SessionFactory(records, memories, clock)
    yield factory
    for client in factory.clients:
        await client.close()
