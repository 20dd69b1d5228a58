"""Sessions: append rules, compression triggers, the fixed zone, TTL, EndSession."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from memoryd.domain.agent_state import FixedZoneKind, MessageDraft, MessageRole
from memoryd.domain.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    ResourceExhausted,
)
from memoryd.domain.models import MemoryType, ProvenanceKind, SecurityLevel
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions.extract import FALLBACK_NOTE
from memoryd.service.sessions.service import SessionService
from memoryd.service.sessions.summarize import NO_LLM_REASON
from tests.unit.agent_state.chat_server import ChatServer
from tests.unit.agent_state.conftest import FakeClock
from tests.unit.service.helpers import scope_for

A = scope_for("agent-a")
B = scope_for("agent-b")
Make = Callable[..., SessionService]


def user(text: str, **kw: Any) -> MessageDraft:
    return MessageDraft(MessageRole.USER, text, **kw)


def turns(n: int, start: int = 0) -> list[MessageDraft]:
    return [
        MessageDraft(
            MessageRole.USER if i % 2 == 0 else MessageRole.ASSISTANT,
            f"Turn {i}: we discussed the dentist appointment and item {i}.",
        )
        for i in range(start, start + n)
    ]


def fields_of(err: pytest.ExceptionInfo[InvalidArgument]) -> dict[str, str]:
    return {v.field: v.description for v in err.value.violations}


async def test_append_assigns_seq_and_timestamps(make_sessions: Make, clock: FakeClock) -> None:
    sessions = make_sessions()
    earlier = clock.now - timedelta(minutes=5)
    out = await sessions.append(A, "s1", [user("hello", created_at=earlier), user("again")])
    assert out.message_count == 2 and not out.compressed and out.degraded == ()
    tool = MessageDraft(MessageRole.TOOL, "", name="search", tool_call_id="call-1")
    assert (await sessions.append(A, "s1", [tool])).message_count == 3
    window = await sessions.window(A, "s1")
    assert [m.seq for m in window.recent] == [1, 2, 3]
    assert window.recent[0].created_at == earlier and window.recent[1].created_at == clock.now
    assert window.recent[2].name == "search" and window.recent[2].tool_call_id == "call-1"
    assert window.summary == "" and window.token_counter == "estimate"
    assert window.summarizer == "extractive" and window.degraded == ()


async def test_bad_messages_name_their_fields_and_store_nothing(
    make_sessions: Make, clock: FakeClock
) -> None:
    sessions = make_sessions(max_message_bytes=100)
    bad = [
        user("fine"),
        MessageDraft(None, "no role"),
        user("   "),
        user("x" * 101),
        user("ok", name="bad\nname"),
        user("ok", tool_call_id="t" * 300),
        user("ok", created_at=clock.now + timedelta(hours=1)),
        MessageDraft(MessageRole.ASSISTANT, "nul\x00"),
    ]
    with pytest.raises(InvalidArgument) as err:
        await sessions.append(A, "s1", bad)
    assert set(fields_of(err)) == {
        "messages[1].role",
        "messages[2].content",
        "messages[3].content",
        "messages[4].name",
        "messages[5].tool_call_id",
        "messages[6].created_at",
        "messages[7].content",
    }
    with pytest.raises(NotFound):
        await sessions.window(A, "s1")
    for session_id, field in (
        ("", "session_id"),
        ("s" * 257, "session_id"),
        ("a\tb", "session_id"),
    ):
        with pytest.raises(InvalidArgument) as err:
            await sessions.append(A, session_id, [user("x")])
        assert field in fields_of(err)
    with pytest.raises(InvalidArgument) as err:
        await sessions.append(A, "s1", [])
    assert "messages" in fields_of(err)
    with pytest.raises(InvalidArgument) as err:
        await sessions.append(A, "s1", [user("x")], ttl=timedelta(0))
    assert "ttl" in fields_of(err)


async def test_message_limit_is_resource_exhausted(make_sessions: Make) -> None:
    sessions = make_sessions(max_messages=5)
    await sessions.append(A, "s1", turns(3))
    with pytest.raises(ResourceExhausted, match=r"sessions\.max_messages \(5\)"):
        await sessions.append(A, "s1", turns(3))
    assert (await sessions.append(A, "s1", turns(2))).message_count == 5
    with pytest.raises(ResourceExhausted):
        await sessions.append(A, "s1", turns(1))


async def test_compression_on_message_count(make_sessions: Make) -> None:
    sessions = make_sessions()  # defaults: 30 messages, keep 10, budget 8000
    for i in range(29):
        assert not (await sessions.append(A, "s1", turns(1, start=i))).compressed
    out = await sessions.append(A, "s1", turns(1, start=29))
    assert out.compressed and out.message_count == 30
    assert out.degraded[0].component == "llm" and out.degraded[0].reason == NO_LLM_REASON
    window = await sessions.window(A, "s1")
    assert [m.seq for m in window.recent] == list(range(21, 31))
    assert window.summary and window.summarizer == "extractive"
    assert "Turn" in window.summary and "Turn 25" not in window.summary
    assert [d.component for d in window.degraded] == ["llm"]
    # 10 kept + 19 more stay verbatim; the 20th folds again.
    for i in range(30, 49):
        assert not (await sessions.append(A, "s1", turns(1, start=i))).compressed
    assert (await sessions.append(A, "s1", turns(1, start=49))).compressed
    window = await sessions.window(A, "s1")
    assert [m.seq for m in window.recent] == list(range(41, 51))


async def test_compression_on_token_ratio(make_sessions: Make) -> None:
    # 0.3 x 1000 = 300 tokens; each message is "user: " + 48 words = 50 tokens (estimate).
    sessions = make_sessions(context_budget_tokens=1000, keep_recent_messages=2)
    message = user("word " * 48)
    for _ in range(5):
        assert not (await sessions.append(A, "s1", [message])).compressed  # up to 250
    out = await sessions.append(A, "s1", [message])  # 300: at the threshold
    assert out.compressed
    window = await sessions.window(A, "s1")
    assert [m.seq for m in window.recent] == [5, 6]


async def test_no_compression_when_only_kept_turns_remain(make_sessions: Make) -> None:
    sessions = make_sessions(context_budget_tokens=100, keep_recent_messages=3)
    big = user("word " * 200)  # far over the ratio on its own
    for _ in range(3):
        assert not (await sessions.append(A, "s1", [big])).compressed
    assert (await sessions.append(A, "s1", [big])).compressed


async def test_fixed_zone(make_sessions: Make) -> None:
    sessions = make_sessions(max_fixed_zone_entries=4)
    zone = await sessions.inject(A, "s1", FixedZoneKind.TRIGGER, "user asked for a dentist")
    assert [e.kind for e in zone] == [FixedZoneKind.TRIGGER]
    await sessions.inject(A, "s1", FixedZoneKind.INSTRUCTION, "answer in French")
    await sessions.inject(A, "s1", FixedZoneKind.FOCUS, "find a slot")
    await sessions.inject(A, "s1", FixedZoneKind.INSTRUCTION, "be brief")
    zone = await sessions.inject(A, "s1", FixedZoneKind.FOCUS, "confirm the slot")  # replaces
    assert [(e.kind.value, e.content) for e in zone] == [
        ("trigger", "user asked for a dentist"),
        ("instruction", "answer in French"),
        ("instruction", "be brief"),
        ("focus", "confirm the slot"),
    ]
    with pytest.raises(ResourceExhausted, match="max_fixed_zone_entries"):
        await sessions.inject(A, "s1", FixedZoneKind.INSTRUCTION, "one too many")
    for kind, content, field in ((None, "x", "kind"), (FixedZoneKind.FOCUS, " ", "content")):
        with pytest.raises(InvalidArgument) as err:
            await sessions.inject(A, "s1", kind, content)
        assert field in fields_of(err)
    # The fixed zone survives compression untouched.
    small = make_sessions(compress_threshold_messages=4, keep_recent_messages=1)
    await small.append(A, "s1", turns(8))
    window = await small.window(A, "s1")
    assert window.fixed_zone == zone and [m.seq for m in window.recent] == [8]


async def test_window_budget_truncates_the_fixed_zone_and_says_so(make_sessions: Make) -> None:
    sessions = make_sessions()
    await sessions.inject(A, "s1", FixedZoneKind.TRIGGER, "short trigger")  # 4 tokens
    await sessions.inject(A, "s1", FixedZoneKind.INSTRUCTION, "word " * 50)
    await sessions.append(A, "s1", turns(2))
    window = await sessions.window(A, "s1", token_budget=20)
    assert window.tokens_used <= 20 and window.recent == []
    assert [e.kind for e in window.fixed_zone] == [FixedZoneKind.TRIGGER, FixedZoneKind.INSTRUCTION]
    assert window.fixed_zone[1].content.startswith("word word")
    assert window.fixed_zone[1].content != "word " * 50
    assert [d.component for d in window.degraded] == ["token_budget"]
    assert "fixed zone needs" in window.degraded[0].reason
    with pytest.raises(InvalidArgument) as err:
        await sessions.window(A, "s1", token_budget=-1)
    assert "token_budget" in fields_of(err)


async def test_window_keeps_the_newest_turns_that_fit(make_sessions: Make) -> None:
    sessions = make_sessions()
    await sessions.append(A, "s1", [user("word " * 10) for _ in range(5)])  # 12 tokens each
    whole = await sessions.window(A, "s1", token_budget=60)
    assert [m.seq for m in whole.recent] == [1, 2, 3, 4, 5] and whole.tokens_used == 60
    assert whole.summary == "" and whole.degraded == ()
    # Turns that do not fit leave a third of the room to a summary of them.
    window = await sessions.window(A, "s1", token_budget=36)
    assert [m.seq for m in window.recent] == [4, 5] and window.summary.startswith("user: word")
    assert window.summarized_through_seq == 3 and window.tokens_used <= 36
    assert [d.reason for d in window.degraded] == [
        "turns 1..3 did not fit token_budget: the window's summary covers them"
    ]
    # The newest turn alone over budget is shown cut, and the window says so.
    tiny = await sessions.window(A, "s1", token_budget=11)
    assert [m.seq for m in tiny.recent] == [5] and tiny.recent[0].content.endswith(" […]")
    assert tiny.tokens_used <= 11
    assert any("newest turn (seq 5)" in d.reason for d in tiny.degraded)


async def test_sessions_are_per_agent(make_sessions: Make) -> None:
    sessions = make_sessions()
    await sessions.append(A, "shared-id", [user("secret of A")])
    with pytest.raises(NotFound):
        await sessions.window(B, "shared-id")
    with pytest.raises(NotFound):
        await sessions.end(B, "shared-id", extract=False)
    await sessions.append(B, "shared-id", [user("B's own")])
    assert [m.content for m in (await sessions.window(B, "shared-id")).recent] == ["B's own"]
    assert [m.content for m in (await sessions.window(A, "shared-id")).recent] == ["secret of A"]


async def test_ttl_from_the_last_append(make_sessions: Make, clock: FakeClock) -> None:
    sessions = make_sessions()  # default: 7 days
    await sessions.append(A, "s1", [user("one")])
    clock.advance(days=6)
    await sessions.append(A, "s1", [user("two")])
    clock.advance(days=6)
    assert len((await sessions.window(A, "s1")).recent) == 2
    await sessions.inject(A, "s1", FixedZoneKind.FOCUS, "also counts as activity")
    clock.advance(days=6, hours=23)
    assert len((await sessions.window(A, "s1")).recent) == 2
    clock.advance(hours=1)
    with pytest.raises(NotFound):
        await sessions.window(A, "s1")
    # An expired session is absent: appending starts a new one.
    assert (await sessions.append(A, "s1", [user("fresh")])).message_count == 1
    await sessions.append(A, "short", [user("x")], ttl=timedelta(minutes=1))
    clock.advance(minutes=2)
    assert await sessions.purge_expired(A.partition) == 1
    with pytest.raises(NotFound):
        await sessions.window(A, "short")
    assert (await sessions.window(A, "s1")).recent[0].content == "fresh"


async def test_end_without_llm_keeps_every_user_fact_and_the_summary(
    make_sessions: Make, memories: MemoryService, clock: FakeClock
) -> None:
    sessions = make_sessions(compress_threshold_messages=6, keep_recent_messages=2)
    fact = "My dentist is Dr. Lee on Baker Street."
    await sessions.append(A, "run-7", [*turns(8), user(fact)])
    out = await sessions.end(A, "run-7", extract=True)
    assert out.summary and "Turn" in out.summary
    assert [(d.component, d.reason) for d in out.degraded] == [("llm", NO_LLM_REASON)]
    *facts, episode = out.extracted
    # The users' turns talk about the conversation ("we discussed ... item 4"): no
    # facts. The statement is one, kept on its own and not again in the episode.
    assert [(m.content, m.memory_type) for m in facts] == [(fact, MemoryType.FACT)]
    assert episode.memory_type is MemoryType.EPISODE and fact not in episode.content
    # The episode is the summary's other lines, the user's without "user: " before them.
    assert "Turn 0: we discussed the dentist appointment and item 0." in episode.content
    assert "assistant: Turn 1: we discussed" in episode.content
    assert "user:" not in episode.content
    assert episode.source is not None and episode.source.kind is ProvenanceKind.AGENT
    assert episode.source.name == "session" and episode.source.locator == "session:run-7"
    assert episode.source.retrieved_at == clock.now
    assert "session" in episode.tags and episode.metadata == {"session_id": "run-7"}
    assert (await memories.get(A, episode.id)).content == episode.content

    with pytest.raises(FailedPrecondition, match="has ended"):
        await sessions.append(A, "run-7", [user("late")])
    with pytest.raises(FailedPrecondition):
        await sessions.inject(A, "run-7", FixedZoneKind.FOCUS, "late")
    with pytest.raises(FailedPrecondition):
        await sessions.end(A, "run-7", extract=True)
    assert (await sessions.window(A, "run-7")).summary == out.summary  # still readable


async def test_end_without_extraction_and_empty_sessions(make_sessions: Make) -> None:
    sessions = make_sessions()
    await sessions.append(A, "s1", turns(3))
    out = await sessions.end(A, "s1", extract=False)
    assert out.summary and out.extracted == []
    await sessions.inject(A, "empty", FixedZoneKind.TRIGGER, "nothing happened")
    out = await sessions.end(A, "empty", extract=True)
    assert out.summary == "" and out.extracted == []
    with pytest.raises(NotFound):
        await sessions.end(A, "never-started", extract=True)


async def test_extracted_memories_respect_a_low_clearance(make_sessions: Make) -> None:
    public = scope_for("agent-a", clearance=SecurityLevel.PUBLIC)
    sessions = make_sessions()
    await sessions.append(public, "s1", [*turns(2), user("I live in Porto.")])
    out = await sessions.end(public, "s1", extract=True)
    assert [m.security_level for m in out.extracted] == [SecurityLevel.PUBLIC] * 2


# ---------------------------------------------------------------- with an LLM on loopback


async def test_llm_summaries_and_extraction(
    make_sessions: Make, chat: ChatServer, memories: MemoryService
) -> None:
    sessions = make_sessions(
        llm_url=chat.url, compress_threshold_messages=6, keep_recent_messages=2
    )
    out = await sessions.append(A, "s1", turns(6))
    assert out.compressed and out.degraded == ()
    window = await sessions.window(A, "s1")
    assert window.summarizer == "llm" and window.summary.startswith("LLM SUMMARY")
    assert window.degraded == ()
    prompt = chat.requests[0]["messages"][1]["content"]
    assert "Turn 0" in prompt and "Turn 3" in prompt and "Turn 4" not in prompt

    ended = await sessions.end(A, "s1", extract=True)
    assert ended.degraded == () and ended.summary.startswith("LLM SUMMARY")
    assert [m.memory_type for m in ended.extracted] == [MemoryType.FACT, MemoryType.PREFERENCE]
    fact = ended.extracted[0]
    assert fact.importance == pytest.approx(0.8) and fact.tags == ("session", "calendar")
    assert fact.source is not None and fact.source.locator == "session:s1"
    assert (await memories.get(A, fact.id)).content.startswith("The user's dentist")


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("error", "HTTP 500"), ("slow", "timed out"), ("malformed", "not JSON")],
)
async def test_llm_failures_fall_back_to_extractive(
    make_sessions: Make, chat: ChatServer, mode: str, reason: str
) -> None:
    chat.mode = mode  # type: ignore[assignment]
    # Only the slow server must outlast the timeout (it waits for `release`, so any
    # timeout does); the others answer at once, and on a loaded machine a short timeout
    # could fire before their answer and turn "HTTP 500" into "timed out".
    timeout_s = 0.2 if mode == "slow" else 30.0
    sessions = make_sessions(
        llm_url=chat.url,
        llm_timeout_s=timeout_s,
        compress_threshold_messages=6,
        keep_recent_messages=2,
    )
    out = await sessions.append(A, "s1", turns(6))
    chat.release.set()
    assert out.compressed
    assert [d.component for d in out.degraded] == ["llm"] and reason in out.degraded[0].reason
    assert "extractive" in out.degraded[0].reason
    window = await sessions.window(A, "s1")
    assert window.summarizer == "extractive" and "Turn 0" in window.summary
    assert window.degraded == out.degraded

    ended = await sessions.end(A, "s1", extract=True)
    # The facts are what extraction without an LLM keeps of the same session.
    extractive = make_sessions(compress_threshold_messages=6, keep_recent_messages=2)
    await extractive.append(A, "extractive", turns(6))
    baseline = await extractive.end(A, "extractive", extract=True)
    *facts, episode = ended.extracted
    assert [(m.memory_type, m.content) for m in facts] == [
        (m.memory_type, m.content) for m in baseline.extracted[:-1]
    ]
    assert episode.memory_type is MemoryType.EPISODE
    reasons = [d.reason for d in ended.degraded]
    assert any(FALLBACK_NOTE in r for r in reasons)
    assert all(d.component == "llm" for d in ended.degraded)


async def test_malformed_extraction_falls_back_to_an_episode(
    make_sessions: Make, chat: ChatServer
) -> None:
    def reply(request: dict[str, Any]) -> str:
        if "extract long-term memories" in request["messages"][0]["content"]:
            return '[{"content": "", "memory_type": "gossip"}]'
        return "LLM SUMMARY"

    chat.reply = reply
    sessions = make_sessions(llm_url=chat.url)
    stated = MessageDraft(MessageRole.USER, "My dentist appointment is on Tuesday.")
    await sessions.append(A, "s1", [*turns(3), stated])
    ended = await sessions.end(A, "s1", extract=True)
    assert ended.summary == "LLM SUMMARY"
    *facts, episode = ended.extracted
    # The user's statement is kept; talk about the conversation is not a fact.
    assert [m.content for m in facts] == ["My dentist appointment is on Tuesday."]
    assert episode.memory_type is MemoryType.EPISODE and episode.content == "LLM SUMMARY"
    (note,) = ended.degraded
    assert note.component == "llm" and "does not match the expected shape" in note.reason
