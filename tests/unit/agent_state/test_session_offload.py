"""Sessions as the AgentScope design compresses them: large tool results offloaded to
attachments (and erased with their messages), windows that keep a summary and the
newest turn at small budgets, adjacent-message merge, long-term memory modes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from memoryd.domain.agent_state import (
    AttachmentQuery,
    LongTermMemoryMode,
    MessageDraft,
    MessageRole,
    SessionCompression,
    SessionMessagesQuery,
    ToolCall,
)
from memoryd.domain.errors import DataLoss, InvalidArgument, NotFound
from memoryd.domain.records import RecordKind
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions.service import SessionService
from memoryd.service.sessions.summarize import message_line
from memoryd.storage.memory_records import InMemoryRecordStore
from memoryd.storage.records import KeyPage
from tests.unit.agent_state.conftest import FakeClock
from tests.unit.service.helpers import scope_for

A = scope_for("agent-a")
B = scope_for("agent-b")
Make = Callable[..., SessionService]
#: A 30 KB tool result, as issue 33 replays it.
BIG = "".join(
    f"row {i}: the forecast for district {i % 40} is sunny, 21 degrees.\n" for i in range(520)
)


def user(text: str, **kw: Any) -> MessageDraft:
    return MessageDraft(MessageRole.USER, text, **kw)


def assistant(text: str, **kw: Any) -> MessageDraft:
    return MessageDraft(MessageRole.ASSISTANT, text, **kw)


def tool(text: str, **kw: Any) -> MessageDraft:
    return MessageDraft(MessageRole.TOOL, text, **kw)


async def attachment_keys(records: InMemoryRecordStore, scope: Any = A) -> list[str]:
    found = await records.list_records(
        scope.partition, RecordKind.SESSION_ATTACHMENT, KeyPage(limit=1000)
    )
    return [r.key for r in found]


async def test_a_large_tool_result_is_offloaded_and_read_back(
    make_sessions: Make, records: InMemoryRecordStore
) -> None:
    assert len(BIG.encode()) > 30_000
    sessions = make_sessions()
    out = await sessions.append(
        A, "s1", [user("weather?"), tool(BIG, name="get_weather", tool_call_id="call_001")]
    )
    assert out.offloaded_seqs == (2,)
    stored = (await sessions.messages(A, _all("s1"))).messages[1]
    assert stored.attachment is not None and stored.attachment.size_bytes == len(BIG.encode())
    assert stored.content.startswith("[tool result of get_weather offloaded: ")
    assert "attachment 2" in stored.content and "get_session_attachment(seq=2)" in stored.content
    assert BIG[:100] in stored.content and len(stored.content) < 600
    assert stored.tool_call_id == "call_001" and stored.name == "get_weather"
    # The header (which every append rewrites) holds the stub, not the 30 KB.
    header = (await records.get_records(A.partition, RecordKind.SESSION, ["s1"]))[0]
    assert BIG not in str(header.doc) and len(str(header.doc)) < 2000

    whole = await sessions.attachment(A, AttachmentQuery("s1", 2))
    assert whole.content == BIG and whole.next_offset == 0
    assert whole.attachment.chars == len(BIG)
    parts, offset = [], 0
    while True:
        part = await sessions.attachment(A, AttachmentQuery("s1", 2, offset, 7000))
        parts.append(part.content)
        if not part.next_offset:
            break
        offset = part.next_offset
    assert "".join(parts) == BIG and len(parts) == -(-len(BIG) // 7000)

    with pytest.raises(NotFound, match="was not offloaded"):
        await sessions.attachment(A, AttachmentQuery("s1", 1))
    with pytest.raises(NotFound, match="no message 9"):
        await sessions.attachment(A, AttachmentQuery("s1", 9))
    with pytest.raises(NotFound):  # another agent's session does not exist for it
        await sessions.attachment(B, AttachmentQuery("s1", 2))
    with pytest.raises(InvalidArgument) as err:
        await sessions.attachment(A, AttachmentQuery("s1", 0, -1, -2))
    assert {v.field for v in err.value.violations} == {"seq", "offset", "max_chars"}


async def test_a_missing_or_changed_attachment_is_data_loss(
    make_sessions: Make, records: InMemoryRecordStore
) -> None:
    sessions = make_sessions()
    await sessions.append(A, "s1", [tool(BIG)])
    [key] = await attachment_keys(records)
    [record] = await records.get_records(A.partition, RecordKind.SESSION_ATTACHMENT, [key])
    record.doc["content"] = BIG.replace("sunny", "rainy")
    await records.put_records(A.partition, [record])
    with pytest.raises(DataLoss, match="does not match"):
        await sessions.attachment(A, AttachmentQuery("s1", 1))
    await records.delete_records(A.partition, RecordKind.SESSION_ATTACHMENT, [key])
    with pytest.raises(DataLoss, match="missing"):
        await sessions.attachment(A, AttachmentQuery("s1", 1))


async def test_offloading_follows_the_session_setting(make_sessions: Make) -> None:
    sessions = make_sessions(max_message_bytes=40_000, offload_bytes=5120)
    await sessions.append(
        A, "s1", [tool("x" * 6000)], compression=SessionCompression(offload_bytes=10_000)
    )
    await sessions.append(A, "s1", [tool("y" * 12_000), user("u" * 12_000)])
    messages = (await sessions.messages(A, _all("s1"))).messages
    assert [m.attachment is not None for m in messages] == [False, True, False]
    off = make_sessions(max_message_bytes=1000)
    with pytest.raises(InvalidArgument) as err:
        await off.append(
            A, "s2", [user("hi"), tool(BIG)], compression=SessionCompression(offload_bytes=0)
        )
    assert [v.field for v in err.value.violations] == ["messages[1].content"]
    with pytest.raises(NotFound):  # nothing was stored
        await off.window(A, "s2")
    with pytest.raises(InvalidArgument) as err:
        await off.append(A, "s2", [tool("z" * (1024 * 1024 + 1))])
    assert "sessions.max_attachment_bytes" in err.value.violations[0].description


async def test_attachments_go_with_their_messages(
    make_sessions: Make, records: InMemoryRecordStore, clock: FakeClock
) -> None:
    sessions = make_sessions(compress_threshold_messages=4, keep_recent_messages=1)
    await sessions.append(A, "s1", [tool(BIG + "one"), user("a"), tool(BIG + "two")])
    await sessions.append(A, "s1", [user("b"), tool(BIG + "three")])  # folds 1..4
    assert len(await attachment_keys(records)) == 3
    window = await sessions.window(A, "s1")
    assert window.summarized_through_seq == 4 and [m.seq for m in window.recent] == [5]
    # Folded (seq 1) and in the tail (seq 5): each goes with its message.
    out = await sessions.delete_messages(A, "s1", [1, 5])
    assert out.deleted == [1, 5]
    left = await attachment_keys(records)
    assert len(left) == 1 and "\x00000000000003\x00" in left[0]
    assert (await sessions.attachment(A, AttachmentQuery("s1", 3))).content == BIG + "two"
    await sessions.clear(A, "s1")
    assert await attachment_keys(records) == []

    await sessions.append(A, "s2", [tool(BIG)], ttl=timedelta(minutes=1))
    await sessions.append(B, "s2", [tool(BIG)])
    clock.advance(minutes=2)
    assert await sessions.purge_expired(A.partition) == 1
    assert await attachment_keys(records) == []
    assert len(await attachment_keys(records, B)) == 1  # another agent's stays


async def test_a_small_budget_keeps_a_summary_and_the_newest_turn(make_sessions: Make) -> None:
    """Issue 33: at 300 tokens a session with a 30 KB tool result had no recent turns
    and an empty summary."""
    sessions = make_sessions()
    await sessions.append(
        A,
        "s1",
        [
            user("My name is Ada and I live in Lisbon."),
            assistant("Nice to meet you, Ada."),
            user("What's the weather in Lisbon tomorrow?"),
        ],
    )
    await sessions.append(A, "s1", [tool(BIG, name="get_weather", tool_call_id="c1")])
    await sessions.append(A, "s1", [assistant("Tomorrow Lisbon is sunny, 21 degrees. " * 30)])
    window = await sessions.window(A, "s1", token_budget=300)
    assert window.tokens_used <= 300
    assert window.recent and window.recent[-1].seq == 5
    assert window.summary and "Ada" in window.summary
    assert window.summarized_through_seq == window.recent[0].seq - 1
    tiny = await sessions.window(A, "s1", token_budget=60)
    assert [m.seq for m in tiny.recent] == [5] and tiny.recent[0].content.endswith("[…]")
    assert tiny.tokens_used <= 60 and tiny.summary
    assert any("newest turn (seq 5)" in d.reason for d in tiny.degraded)
    # The tool result in a window is the stub, whatever the budget.
    wide = await sessions.window(A, "s1", token_budget=100_000)
    assert all(BIG not in m.content for m in wide.recent)
    assert sum(sessions.token_counter.count(message_line(m)) for m in wide.recent) < 1500


async def test_adjacent_messages_merge_when_the_session_asks(make_sessions: Make) -> None:
    sessions = make_sessions()
    drafts = [
        user("I need a hotel."),
        user("In Porto."),
        assistant("Which dates?"),
        user("May 3 to 5."),
        tool("result 1", tool_call_id="c1"),
        tool("result 2", tool_call_id="c2"),
        assistant("Found two hotels."),
        assistant("Shall I book one?"),
    ]
    await sessions.append(A, "s1", drafts)
    plain = await sessions.window(A, "s1")
    assert [m.seq for m in plain.recent] == list(range(1, 9))
    await sessions.append(
        A, "s1", [user("Yes.")], compression=SessionCompression(merge_adjacent_messages=True)
    )
    merged = (await sessions.window(A, "s1")).recent
    assert [(m.role.value, m.merged_from_seq, m.seq) for m in merged] == [
        ("user", 1, 2),
        ("assistant", 0, 3),
        ("user", 0, 4),
        ("tool", 0, 5),
        ("tool", 0, 6),
        ("assistant", 7, 8),
        ("user", 0, 9),
    ]
    assert merged[0].content == "I need a hotel.\n\nIn Porto."
    assert merged[5].content == "Found two hotels.\n\nShall I book one?"


async def test_static_control_records_replies_and_retrieves_for_the_window(
    make_sessions: Make, memories: MemoryService
) -> None:
    sessions = make_sessions()
    quiet = await sessions.append(
        A, "agent", [user("I am allergic to peanuts."), assistant("Noted.")]
    )
    assert quiet.recorded_memory_ids == ()  # agent_control: the agent decides
    assert (await sessions.window(A, "agent")).long_term_memory_mode is (
        LongTermMemoryMode.AGENT_CONTROL
    )

    out = await sessions.append(
        A,
        "s1",
        [user("I am allergic to peanuts and I live in Lisbon."), assistant("Noted, Ada.")],
        mode=LongTermMemoryMode.STATIC_CONTROL,
    )
    assert len(out.recorded_memory_ids) >= 2
    recorded = [await memories.get(A, i) for i in out.recorded_memory_ids]
    contents = [m.content for m in recorded]
    assert "I am allergic to peanuts and I live in Lisbon." in contents
    episode = next(m for m in recorded if m.memory_type.value == "episode")
    assert episode.content.endswith("assistant: Noted, Ada.")
    assert all(m.metadata == {"session_id": "s1", "seq": 2} for m in recorded)
    assert all("static_control" in m.tags for m in recorded)
    assert episode.source is not None and episode.source.locator == "session:s1#2"
    # A tool-calling assistant message is no reply: nothing recorded for it.
    lookup = ToolCall("c1", "find_table", {"city": "Lisbon"})
    call = await sessions.append(
        A, "s1", [user("Book a table"), assistant("", tool_calls=(lookup,))]
    )
    assert call.recorded_memory_ids == ()

    # Another session in static control retrieves what the first recorded.
    await sessions.append(
        A,
        "s2",
        [user("Can I eat peanut butter?")],
        mode=LongTermMemoryMode.STATIC_CONTROL,
    )
    window = await sessions.window(A, "s2", token_budget=400)
    assert window.long_term_memory_mode is LongTermMemoryMode.STATIC_CONTROL
    assert any("peanuts" in m.content for m in window.long_term_memories)
    assert window.long_term_memory.startswith("- ") and window.tokens_used <= 400
    # In its own session, the turns still shown are not retrieved again.
    own = await sessions.window(A, "s1")
    assert all(m.metadata.get("session_id") != "s1" for m in own.long_term_memories)


def _all(session_id: str) -> SessionMessagesQuery:
    return SessionMessagesQuery(session_id)
