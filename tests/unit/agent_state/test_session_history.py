"""Sessions keep every message until they expire: compression builds the summary view,
GetSessionMessages / DeleteMessages / ClearSession work on the whole record, the
summary and EndSession keep the users' facts without an LLM, settings per session,
structured tool calls."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from memoryd.domain.agent_state import (
    FixedZoneKind,
    MessageDraft,
    MessageRole,
    SessionCompression,
    SessionMessagesQuery,
    ToolCall,
)
from memoryd.domain.errors import InvalidArgument, NotFound
from memoryd.domain.models import MemoryType
from memoryd.domain.records import Record, RecordKind
from memoryd.domain.requests import RecallQuery
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions.service import SessionService
from memoryd.storage.memory_records import InMemoryRecordStore
from tests.unit.agent_state.conftest import FakeClock
from tests.unit.service.helpers import scope_for

A = scope_for("agent-a")
B = scope_for("agent-b")
Make = Callable[..., SessionService]

FACTS = [
    "My name is Alice and I am allergic to peanuts.",
    "I live in Lisbon with my partner Jonas.",
    "My daughter's birthday is on 14 March.",
    "I prefer window seats on long flights.",
    "Our budget for the trip is 3200 euros.",
]


def chat(n: int, start: int = 0) -> list[MessageDraft]:
    """Small talk that states nothing, alternating user and assistant."""
    out = []
    for i in range(start, start + n):
        if i % 2 == 0:
            out.append(MessageDraft(MessageRole.USER, "Okay, thanks!"))
        else:
            out.append(
                MessageDraft(MessageRole.ASSISTANT, f"Happy to help with step {i} of the plan.")
            )
    return out


def user(text: str) -> MessageDraft:
    return MessageDraft(MessageRole.USER, text)


async def all_messages(sessions: SessionService, session_id: str, **kw: int) -> list[int]:
    seqs: list[int] = []
    token = ""
    while True:
        page = await sessions.messages(
            A, SessionMessagesQuery(session_id, page_token=token, page_size=7, **kw)
        )
        seqs.extend(m.seq for m in page.messages)
        token = page.next_page_token
        if not token:
            return seqs


async def test_compression_keeps_every_message(make_sessions: Make) -> None:
    """45 appends with a 100k-token budget: the old code kept only seq 21-45."""
    sessions = make_sessions(context_budget_tokens=100_000)
    for i in range(45):
        await sessions.append(A, "s1", chat(1, start=i))
    window = await sessions.window(A, "s1")
    # Folded at 30 (keeping 10): the summary covers 1-20, the window shows 21-45.
    assert window.summary and window.summarized_through_seq == 20
    assert [m.seq for m in window.recent] == list(range(21, 46))
    assert window.stored_messages == 45
    assert await all_messages(sessions, "s1") == list(range(1, 46))
    assert await all_messages(sessions, "s1", from_seq=18, to_seq=33) == list(range(18, 34))
    page = await sessions.messages(A, SessionMessagesQuery("s1", from_seq=44))
    assert [m.content for m in page.messages] == [
        "Happy to help with step 43 of the plan.",
        "Okay, thanks!",
    ]
    assert page.message_count == 45 and page.summarized_through_seq == 20


async def test_page_tokens_are_bound_to_the_query(make_sessions: Make) -> None:
    sessions = make_sessions()
    await sessions.append(A, "s1", chat(10))
    await sessions.append(A, "s2", chat(10))
    first = await sessions.messages(A, SessionMessagesQuery("s1", page_size=3))
    for other in (
        SessionMessagesQuery("s2", page_token=first.next_page_token),
        SessionMessagesQuery("s1", from_seq=2, page_token=first.next_page_token),
    ):
        with pytest.raises(InvalidArgument) as err:
            await sessions.messages(A, other)
        assert err.value.violations[0].field == "page_token"
    with pytest.raises(NotFound):
        await sessions.messages(B, SessionMessagesQuery("s1"))
    with pytest.raises(InvalidArgument) as err:
        await sessions.messages(A, SessionMessagesQuery("s1", from_seq=5, to_seq=2))
    assert err.value.violations[0].field == "to_seq"


async def test_extractive_summary_keeps_the_users_facts(make_sessions: Make) -> None:
    sessions = make_sessions(summary_max_tokens=110)
    drafts = [user(FACTS[0]), *chat(11), user(FACTS[1]), *chat(11), user(FACTS[2])]
    drafts += [*chat(5), user(FACTS[3]), *chat(5), user(FACTS[4]), *chat(18)]
    for draft in drafts:
        await sessions.append(A, "trip", [draft])
    window = await sessions.window(A, "trip")
    assert window.summarized_through_seq == 40  # the last fact is seq 37
    for fact in FACTS:
        assert f"user: {fact}" in window.summary, fact


async def test_peanut_allergy_survives_compression_and_session_end(
    make_sessions: Make, memories: MemoryService
) -> None:
    sessions = make_sessions(summary_max_tokens=32)  # far too small for five facts
    drafts = [user(f) for f in FACTS]
    for i in range(40):
        drafts.insert(1 + i % 5 * 8, chat(1, start=i)[0])
    for draft in drafts:
        await sessions.append(A, "trip", [draft])
    assert (await sessions.window(A, "trip")).summarized_through_seq > 0
    ended = await sessions.end(A, "trip", extract=True)
    kept = {m.content: m for m in ended.extracted}
    for fact in FACTS:
        assert fact in kept, fact
    assert kept[FACTS[3]].memory_type is MemoryType.PREFERENCE
    assert kept[FACTS[0]].memory_type is MemoryType.FACT
    for question, needle in (
        ("what is the user allergic to?", "peanuts"),
        ("where does the user live?", "Lisbon"),
        ("when is the daughter's birthday?", "14 March"),
        ("which seats does the user prefer?", "window seats"),
        ("how big is the trip budget?", "3200 euros"),
    ):
        found = await memories.recall(A, RecallQuery(query=question, limit=3))
        assert any(needle in r.memory.content for r in found.results), question
    # The whole conversation stays readable until the session expires.
    assert await all_messages(sessions, "trip") == list(range(1, 46))


async def test_many_facts_are_packed_not_dropped(make_sessions: Make) -> None:
    sessions = make_sessions(max_extracted_memories=4)
    facts = [f"My locker number at gym {i} is {100 + i}." for i in range(12)]
    await sessions.append(A, "s", [user(f) for f in facts])
    ended = await sessions.end(A, "s", extract=True)
    assert len(ended.extracted) <= 4
    text = "\n".join(m.content for m in ended.extracted)
    for fact in facts:
        assert fact in text


async def test_compression_settings_per_session(make_sessions: Make) -> None:
    sessions = make_sessions()  # daemon defaults: 30 messages, keep 10
    tight = SessionCompression(compress_threshold_messages=4, keep_recent_messages=1)
    out = await sessions.append(A, "tight", chat(3), compression=tight)
    assert not out.compressed
    assert (await sessions.append(A, "tight", chat(1, start=3))).compressed
    window = await sessions.window(A, "tight")
    assert [m.seq for m in window.recent] == [4] and window.summarized_through_seq == 3
    # Another session keeps the daemon's settings.
    assert not (await sessions.append(A, "loose", chat(4))).compressed
    # A later append may change one setting; the others stay.
    await sessions.append(
        A, "tight", chat(1, start=4), compression=SessionCompression(context_budget_tokens=50)
    )
    assert (await sessions.window(A, "tight")).tokens_used <= 50
    for bad, field in (
        (SessionCompression(keep_recent_messages=4), "compression.keep_recent_messages"),
        (
            SessionCompression(compress_threshold_messages=1),
            "compression.compress_threshold_messages",
        ),
        (SessionCompression(compress_token_ratio=1.5), "compression.compress_token_ratio"),
        (SessionCompression(context_budget_tokens=3), "compression.context_budget_tokens"),
    ):
        with pytest.raises(InvalidArgument) as err:
            await sessions.append(A, "tight", chat(1), compression=bad)
        assert err.value.violations[0].field == field


async def test_tool_calls_are_structured(make_sessions: Make) -> None:
    sessions = make_sessions(compress_threshold_messages=3, keep_recent_messages=1)
    call = ToolCall("call-1", "get_weather", {"city": "Oslo", "days": [1, 2]})
    await sessions.append(
        A,
        "s",
        [
            user("What's the weather in Oslo?"),
            MessageDraft(MessageRole.ASSISTANT, "", tool_calls=(call,)),
            MessageDraft(MessageRole.TOOL, '{"temp": 3}', tool_call_id="call-1"),
        ],
    )
    page = await sessions.messages(A, SessionMessagesQuery("s"))
    assert page.summarized_through_seq == 2  # the call was folded into a record
    assert page.messages[1].tool_calls == (call,) and page.messages[1].content == ""
    assert "get_weather" in (await sessions.window(A, "s")).summary
    bad = [
        MessageDraft(MessageRole.USER, "hi", tool_calls=(call,)),
        MessageDraft(MessageRole.ASSISTANT, "", tool_calls=(ToolCall("c", "", {}),)),
        MessageDraft(MessageRole.ASSISTANT, "", tool_calls=(ToolCall("c", "f", float("nan")),)),
    ]
    with pytest.raises(InvalidArgument) as err:
        await sessions.append(A, "s", bad)
    assert {v.field for v in err.value.violations} == {
        "messages[0].tool_calls",
        "messages[1].tool_calls[0].name",
        "messages[2].tool_calls[0].arguments",
    }


async def test_delete_messages_rebuilds_a_summary_that_covered_them(make_sessions: Make) -> None:
    sessions = make_sessions(compress_threshold_messages=6, keep_recent_messages=2)
    await sessions.append(A, "s", [user("My PIN code is 4931."), *chat(5), user(FACTS[1])])
    before = await sessions.window(A, "s")
    assert "4931" in before.summary and before.summarized_through_seq == 5
    out = await sessions.delete_messages(A, "s", [1, 7, 99])
    assert out.deleted == [1, 7] and out.summary_rebuilt
    after = await sessions.window(A, "s")
    assert "4931" not in after.summary and after.summary
    assert [m.seq for m in after.recent] == [6] and after.stored_messages == 5
    assert await all_messages(sessions, "s") == [2, 3, 4, 5, 6]
    tail_only = await sessions.delete_messages(A, "s", [6])
    assert tail_only.deleted == [6] and not tail_only.summary_rebuilt
    with pytest.raises(InvalidArgument):
        await sessions.delete_messages(A, "s", [0])
    with pytest.raises(NotFound):
        await sessions.delete_messages(B, "s", [2])


async def test_clear_session(make_sessions: Make, records: InMemoryRecordStore) -> None:
    sessions = make_sessions(compress_threshold_messages=6, keep_recent_messages=2)
    await sessions.inject(A, "s", FixedZoneKind.TRIGGER, "plan a trip")
    await sessions.append(A, "s", chat(9))
    assert await records.count_records(A.partition, RecordKind.SESSION_MESSAGE) == 7
    assert await sessions.clear(A, "s") == 9
    window = await sessions.window(A, "s")
    assert window.summary == "" and window.recent == [] and window.stored_messages == 0
    assert [e.content for e in window.fixed_zone] == ["plan a trip"]
    assert await records.count_records(A.partition, RecordKind.SESSION_MESSAGE) == 0
    assert (await sessions.append(A, "s", chat(1))).message_count == 10  # seqs go on
    await sessions.clear(A, "s", fixed_zone=True)
    assert (await sessions.window(A, "s")).fixed_zone == []


async def test_messages_expire_with_their_session(
    make_sessions: Make, records: InMemoryRecordStore, clock: FakeClock
) -> None:
    sessions = make_sessions(compress_threshold_messages=6, keep_recent_messages=2)
    await sessions.append(A, "s", chat(12), ttl=timedelta(hours=1))
    await sessions.append(A, "kept", chat(12))
    assert await records.count_records(A.partition, RecordKind.SESSION_MESSAGE) == 20
    clock.advance(hours=2)
    with pytest.raises(NotFound):
        await sessions.messages(A, SessionMessagesQuery("s"))
    # A new session of the same id never sees the old one's messages.
    await sessions.append(A, "s", chat(1))
    assert await all_messages(sessions, "s") == [1]
    await sessions.append(A, "gone", chat(8), ttl=timedelta(minutes=1))
    clock.advance(minutes=2)
    assert await sessions.purge_expired(A.partition) == 1
    assert await records.count_records(A.partition, RecordKind.SESSION_MESSAGE) == 10


async def test_orphaned_message_records_are_purged(
    make_sessions: Make, records: InMemoryRecordStore, clock: FakeClock
) -> None:
    """A crash between deleting a session's messages and its header, or the reverse,
    leaves records behind: maintenance removes them and nothing else."""
    sessions = make_sessions(compress_threshold_messages=6, keep_recent_messages=2)
    await sessions.append(A, "live", chat(8))
    stray = Record(RecordKind.SESSION_MESSAGE, "dead\x00abc\x00000000000001", {}, 1, clock.now)
    old_generation = Record(
        RecordKind.SESSION_MESSAGE, "live\x00abc\x00000000000001", {}, 1, clock.now
    )
    await records.put_records(A.partition, [stray, old_generation])
    assert await sessions.purge_expired(A.partition) == 0
    keys = [r.key for r in await records.list_records(A.partition, RecordKind.SESSION_MESSAGE)]
    assert len(keys) == 6 and all(k.startswith("live\x00") and "abc" not in k for k in keys)
    assert await all_messages(sessions, "live") == list(range(1, 9))


async def test_a_header_from_before_messages_were_kept_still_reads(
    make_sessions: Make, records: InMemoryRecordStore, clock: FakeClock
) -> None:
    sessions = make_sessions()
    legacy = {
        "status": "open",
        "created_at": clock.now.isoformat(),
        "ttl_s": 3600.0,
        "fixed_zone": [],
        "summary": "user: earlier turns",
        "summarizer": "extractive",
        "summary_degraded": [],
        "messages": [
            {
                "role": "user",
                "content": "hello",
                "name": "",
                "tool_call_id": "",
                "created_at": clock.now.isoformat(),
                "seq": 31,
            }
        ],
        "message_count": 31,
    }
    header = Record(RecordKind.SESSION, "old", legacy, 3, clock.now, clock.now + timedelta(hours=1))
    await records.put_records(A.partition, [header])
    window = await sessions.window(A, "old")
    assert window.summarized_through_seq == 30 and window.stored_messages == 1
    await sessions.append(A, "old", chat(1))
    assert await all_messages(sessions, "old") == [31, 32]
