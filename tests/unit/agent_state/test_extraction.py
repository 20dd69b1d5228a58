"""EndSession's extraction without an LLM on the session fixtures (tests/data/
sessions.json): every fact a user stated is kept, at least 80 % of what is kept are
facts a person would keep (no filler turns, requests or talk about the conversation),
and for a direct question the fact outranks the session's episode (issue 32: the
whole-transcript episode ranked above "My name is Alice" for "what is the user's
name?"), with the default model (e5) over the in-process store."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memoryd.config import LimitsSettings, Settings
from memoryd.domain.agent_state import MessageRole, SessionMessage
from memoryd.domain.models import MemoryFilter, MemoryType
from memoryd.domain.requests import MemoryDraft, RecallQuery
from memoryd.embedding.local import E5SmallEmbedder
from memoryd.model_catalog import profile_of
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.service.common.tokens import EstimateCounter
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.memories.access_stats import AccessStatsBuffer
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions.extract import deterministic_items
from memoryd.service.sessions.summarize import extractive_summary
from memoryd.storage.memory import InMemoryStore
from tests.conftest import needs_e5
from tests.unit.service.helpers import scope_for

FIXTURES = Path(__file__).resolve().parents[2] / "data" / "sessions.json"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
SESSIONS: list[dict[str, Any]] = json.loads(FIXTURES.read_text())["sessions"]


def _messages(session: dict[str, Any]) -> list[SessionMessage]:
    return [
        SessionMessage(MessageRole(role), content, seq, T0)
        for seq, (role, content) in enumerate(session["messages"])
    ]


def _extracted(session: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(fact or preference memories, episode memories) EndSession would keep."""
    messages = _messages(session)
    summary = extractive_summary("", messages, counter=EstimateCounter(), max_tokens=512)
    items = deterministic_items(messages, summary, max_items=20, max_bytes=8192)
    facts = [i.content for i in items if i.memory_type is not MemoryType.EPISODE]
    return facts, [i.content for i in items if i.memory_type is MemoryType.EPISODE]


@pytest.mark.parametrize("session", SESSIONS, ids=[s["id"] for s in SESSIONS])
def test_every_stated_fact_is_kept(session: dict[str, Any]) -> None:
    facts, episodes = _extracted(session)
    assert set(session["facts"]) <= set(facts)
    # The episode no longer repeats the facts kept on their own.
    for fact in session["facts"]:
        assert all(fact not in episode for episode in episodes)


def test_what_is_kept_is_facts() -> None:
    kept = [(fact, s) for s in SESSIONS for fact in _extracted(s)[0]]
    right = [fact for fact, s in kept if fact in s["facts"]]
    assert len(right) / len(kept) >= 0.8, [fact for fact, s in kept if fact not in s["facts"]]
    # The fifteen filler turns are not among them.
    assert not any(fact.startswith("Turn ") for fact, _ in kept)


@pytest.fixture
async def e5_memories() -> AsyncIterator[MemoryService]:
    needs_e5()
    embedder = E5SmallEmbedder(threads=1)
    store = InMemoryStore(dimension=embedder.dimension)
    await store.open()
    writer = WriteBatcher(store, max_batch=100)
    writer.start()
    access = AccessStatsBuffer(store, interval_s=3600, max_pending=10_000)
    settings = Settings(embedder="e5")
    yield MemoryService(
        store=store,
        embedder=embedder,
        writer=writer,
        access=access,
        page_tokens=PageTokenCodec(b"k" * 32),
        limits=LimitsSettings(),
        recall=settings.recall,
        relevance=profile_of("e5").relevance,
    )
    await writer.close()
    await store.close()
    await embedder.close()


async def test_the_fact_outranks_the_episode_for_a_direct_question(
    e5_memories: MemoryService,
) -> None:
    scope = scope_for(agent="sessions")  # every session's memories in one agent
    for session in SESSIONS:
        messages = _messages(session)
        summary = extractive_summary("", messages, counter=EstimateCounter(), max_tokens=512)
        items = deterministic_items(messages, summary, max_items=20, max_bytes=8192)
        drafts = [MemoryDraft(content=i.content, memory_type=i.memory_type) for i in items]
        await e5_memories.remember_batch(scope, drafts, dedup=False)
    for session in SESSIONS:
        for question, answer in session["questions"]:
            outcome = await e5_memories.recall(
                scope, RecallQuery(query=question, limit=3, filter=MemoryFilter())
            )
            assert outcome.results[0].memory.content == answer, (question, outcome.results)
