"""Extraction when a session summary is made (seed 001, extract_from_conversation:
"触发时机 2. Context摘要生成时"), not only at EndSession: the facts of the turns folded
into the summary become long-term memories as the fold happens."""

from __future__ import annotations

from collections.abc import Callable

from memoryd.domain.agent_state import MessageDraft, MessageRole
from memoryd.domain.models import Memory
from memoryd.domain.requests import ListQuery
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions.service import SessionService
from tests.unit.service.helpers import scope_for

A = scope_for("agent-a")
Make = Callable[..., SessionService]
TURNS = [
    MessageDraft(MessageRole.USER, "My name is Alice. Can you help me plan the week?"),
    MessageDraft(MessageRole.ASSISTANT, "Of course: what is on it?"),
    MessageDraft(MessageRole.USER, "I am allergic to peanuts, so no Thai food for me."),
    MessageDraft(MessageRole.ASSISTANT, "Noted. Anything else?"),
    MessageDraft(MessageRole.USER, "That is all for now."),
    MessageDraft(MessageRole.ASSISTANT, "Have a good week."),
]


async def stored(memories: MemoryService) -> dict[str, Memory]:
    page = await memories.list_memories(A, ListQuery(page_size=100))
    return {m.content: m for m in page.memories}


async def test_the_facts_of_folded_turns_are_remembered_when_summarised(
    make_sessions: Make, memories: MemoryService
) -> None:
    sessions = make_sessions(compress_threshold_messages=4, keep_recent_messages=2)
    first = await sessions.append(A, "s1", TURNS[:3])
    assert not first.compressed and first.recorded_memory_ids == ()
    assert await stored(memories) == {}
    folded = await sessions.append(A, "s1", TURNS[3:4])  # 4 turns: the first 2 fold
    assert folded.compressed
    kept = await stored(memories)
    assert set(kept) == {"My name is Alice."}  # the fact, not the request or the reply
    assert set(folded.recorded_memory_ids) == {kept["My name is Alice."].id}
    memory = kept["My name is Alice."]
    assert "session" in memory.tags and memory.metadata["session_id"] == "s1"
    assert memory.source is not None and memory.source.locator == "session:s1"
    again = await sessions.append(A, "s1", TURNS[4:6])
    assert again.compressed
    assert set(await stored(memories)) == {
        "My name is Alice.",
        "I am allergic to peanuts, so no Thai food for me.",
    }
    # EndSession keeps them once (deduplicated) and adds the episode.
    await sessions.end(A, "s1", extract=True)
    contents = list((await stored(memories)).keys())
    assert contents.count("My name is Alice.") == 1


async def test_extraction_on_summary_can_be_turned_off(
    make_sessions: Make, memories: MemoryService
) -> None:
    sessions = make_sessions(
        compress_threshold_messages=4, keep_recent_messages=2, extract_on_summary=False
    )
    out = await sessions.append(A, "s1", TURNS[:4])
    assert out.compressed and out.recorded_memory_ids == ()
    assert await stored(memories) == {}
