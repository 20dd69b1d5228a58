"""Short-term memory that keeps facts, end to end on a real daemon without an LLM
(LanceDB on disk, the local model), through the Python client and raw gRPC: the
audit's peanut-allergy conversation survives compression and EndSession, the whole
history is readable until the session expires, messages can be deleted and cleared,
tool calls stay structured and compression is set per session."""

from __future__ import annotations

import time
import uuid

import grpc
import pytest

from memoryd_client import InvalidArgumentError, MemorydClient, NotFoundError
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from tests.conftest import Daemon

#: Polling deadline for expiry; generous, not a performance assertion.
EXPIRY_DEADLINE_S = 30.0

FACTS = [
    "My name is Alice and I am allergic to peanuts.",
    "I live in Lisbon with my partner Jonas.",
    "My daughter's birthday is on 14 March.",
    "I prefer window seats on long flights.",
    "Our budget for the trip is 3200 euros.",
]
QUESTIONS = [
    ("What is Alice allergic to?", "peanuts"),
    ("Where does the user live?", "Lisbon"),
    ("When is the daughter's birthday?", "14 March"),
    ("Which seat does the user like on planes?", "window seats"),
    ("How much money can the trip cost?", "3200 euros"),
]


def agent() -> str:
    return f"stm-{uuid.uuid4().hex[:10]}"


def conversation() -> list[tuple[str, str]]:
    """45 turns: the facts early on, then small talk that pushes them into the summary."""
    turns: list[tuple[str, str]] = []
    for i, fact in enumerate(FACTS):
        turns.append(("user", fact))
        turns.append(("assistant", f"Noted, thank you. Shall we look at option {i + 1}?"))
    for i in range(35):
        if i % 2:
            turns.append(("user", "Sounds good, go on."))
        else:
            turns.append(("assistant", f"Here is itinerary draft number {i} for you."))
    return turns


def test_peanut_allergy_survives_compression_and_session_end(shared_daemon: Daemon) -> None:
    a, sid = agent(), "trip-planning"
    with MemorydClient(shared_daemon.address) as client:
        for turn in conversation():
            client.append_messages(a, sid, [turn])
        window = client.get_session_window(a, sid, token_budget=100_000)
        assert window.summarized_through_seq > 0 and window.summarizer == "extractive"
        assert window.stored_messages == 45
        assert all(f"user: {fact}" in window.summary for fact in FACTS)

        # Nothing was deleted by compression: every message reads back, in pages.
        seqs, token = [], ""
        while True:
            page = client.get_session_messages(a, sid, page_size=20, page_token=token)
            seqs.extend(m.seq for m in page)
            token = page.next_page_token
            if not token:
                break
        assert seqs == list(range(1, 46))
        first = client.get_session_messages(a, sid, to_seq=1)
        assert [m.content for m in first] == [FACTS[0]]

        ended = client.end_session(a, sid, extract_memories=True)
        kept = [m.content for m in ended.extracted]
        for fact in FACTS:
            assert fact in kept
        assert [d.component for d in ended.degraded] == ["llm"]  # no LLM: said so
        for question, needle in QUESTIONS:
            hits = client.recall(a, question, limit=5)
            assert any(needle in h.memory.content for h in hits), question
        # The closed session is still readable.
        assert len(client.get_session_messages(a, sid, page_size=100)) == 45


def test_history_is_readable_until_the_session_expires(shared_daemon: Daemon) -> None:
    a, sid = agent(), "short-lived"
    with MemorydClient(shared_daemon.address) as client:
        client.append_messages(
            a,
            sid,
            [("user", f"Message {i} about the project plan.") for i in range(40)],
            compress_threshold_messages=10,
            keep_recent_messages=2,
        )
        window = client.get_session_window(a, sid)
        assert window.summarized_through_seq == 38 and [m.seq for m in window.recent] == [39, 40]
        assert len(client.get_session_messages(a, sid, page_size=100)) == 40
        client.append_messages(a, sid, [("user", "last words")], ttl=2)
        deadline = time.monotonic() + EXPIRY_DEADLINE_S
        while True:
            try:
                client.get_session_messages(a, sid)
            except NotFoundError:
                break
            assert time.monotonic() < deadline, "the session never expired"
            time.sleep(0.2)
        # The same id starts afresh, without the expired session's messages.
        assert client.append_messages(a, sid, [("user", "new start")]).message_count == 1
        assert [m.content for m in client.get_session_messages(a, sid)] == ["new start"]


def test_delete_and_clear_through_the_client(shared_daemon: Daemon) -> None:
    a, sid = agent(), "privacy"
    with MemorydClient(shared_daemon.address) as client:
        messages = [("user", "My card PIN is 4931, keep it safe.")]
        messages += [("assistant", f"Working on request {i}.") for i in range(6)]
        client.append_messages(
            a, sid, messages, compress_threshold_messages=4, keep_recent_messages=1
        )
        assert "4931" in client.get_session_window(a, sid).summary
        deleted = client.delete_messages(a, sid, [1, 99])
        assert deleted.deleted_seqs == (1,) and deleted.summary_rebuilt
        assert "4931" not in client.get_session_window(a, sid).summary
        assert [m.seq for m in client.get_session_messages(a, sid)] == [2, 3, 4, 5, 6, 7]
        assert client.clear_session(a, sid) == 6
        window = client.get_session_window(a, sid)
        assert window.summary == "" and window.recent == () and window.stored_messages == 0
        with pytest.raises(InvalidArgumentError) as err:
            client.delete_messages(a, sid, [0])
        assert err.value.field_violations[0].field == "seqs"


def test_tool_calls_keep_their_structure(shared_daemon: Daemon) -> None:
    a, sid = agent(), "tools"
    call = {
        "id": "call_9",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Oslo", "days": 3}'},
    }
    with MemorydClient(shared_daemon.address) as client:
        client.append_messages(
            a,
            sid,
            [
                {"role": "user", "content": "Weather in Oslo?"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "content": '{"temp": -2}', "tool_call_id": "call_9"},
            ],
        )
        (_, calling, result) = client.get_session_messages(a, sid)
        assert calling.tool_calls[0].name == "get_weather"
        assert calling.tool_calls[0].arguments == {"city": "Oslo", "days": 3}
        assert calling.as_chat()["tool_calls"][0]["function"]["name"] == "get_weather"
        assert result.tool_call_id == "call_9"


def test_raw_grpc_bad_input_names_fields(memory_stub: MemoryServiceStub) -> None:
    a = agent()
    bad = mpb.AppendMessagesRequest(
        agent_id=a,
        session_id="s",
        messages=[mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content="hi")],
        compression=mpb.SessionCompression(keep_recent_messages=40),
    )
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.AppendMessages(bad)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "compression.keep_recent_messages" in (err.value.details() or "")
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.GetSessionMessages(mpb.GetSessionMessagesRequest(agent_id=a, session_id="s"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND  # nothing was stored
