"""Sessions with an LLM on loopback (a real OpenAI-compatible chat server): summaries,
memory extraction, limits, and the fall back to extractive summaries on LLM failures."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import grpc
import pytest

from memoryd.service.sessions.extract import FALLBACK_NOTE
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from tests.unit.agent_state.chat_server import ChatServer, default_reply, running_chat_server

from ..conftest import Daemon
from .test_working_profile_sessions import code_of, fresh_agent, msg, turns

#: A user's statement: a fact sentence (the turns talk about the conversation).
STATED = "My dentist appointment is on Tuesday."


@pytest.fixture(scope="module")
def loopback_llm() -> Iterator[ChatServer]:
    with running_chat_server() as server:
        yield server


@pytest.fixture(scope="module")
def llm_daemon(
    tmp_path_factory: pytest.TempPathFactory, loopback_llm: ChatServer
) -> Iterator[Daemon]:
    """One daemon for the LLM tests, pointed at the loopback chat server by env."""
    daemon = Daemon(
        data_dir=tmp_path_factory.mktemp("llm") / "data",
        env={
            "MEMORYD_LLM__URL": loopback_llm.url,
            "MEMORYD_LLM__MODEL": "loopback-model",
            "MEMORYD_LLM__API_KEY": "sk-loopback",
            "MEMORYD_LLM__TIMEOUT_S": "0.5",
            "MEMORYD_SESSIONS__COMPRESS_THRESHOLD_MESSAGES": "6",
            "MEMORYD_SESSIONS__KEEP_RECENT_MESSAGES": "2",
            "MEMORYD_SESSIONS__MAX_MESSAGES": "12",
        },
    )
    daemon.start()
    yield daemon
    loopback_llm.release.set()
    assert daemon.stop() == 0, daemon.logs()  # graceful: the LLM client closes too


@pytest.fixture
def chat(loopback_llm: ChatServer) -> Iterator[ChatServer]:
    """The loopback server, answering normally and with a fresh request log per test."""
    loopback_llm.mode = "ok"
    loopback_llm.reply = default_reply
    loopback_llm.requests.clear()
    loopback_llm.headers.clear()
    loopback_llm.release = threading.Event()
    yield loopback_llm
    loopback_llm.release.set()  # frees handlers still blocked in "slow" mode


@pytest.fixture
def llm_stub(llm_daemon: Daemon, chat: ChatServer) -> Iterator[MemoryServiceStub]:
    with llm_daemon.channel() as channel:
        yield MemoryServiceStub(channel)  # type: ignore[no-untyped-call]


def test_llm_summaries_extraction_and_limits(llm_stub: MemoryServiceStub, chat: ChatServer) -> None:
    agent = fresh_agent()
    out = llm_stub.AppendMessages(
        mpb.AppendMessagesRequest(agent_id=agent, session_id="s1", messages=turns(6))
    )
    assert out.compressed and list(out.degraded) == []
    window = llm_stub.GetSessionWindow(mpb.GetSessionWindowRequest(agent_id=agent, session_id="s1"))
    assert window.summarizer == "llm" and window.summary.startswith("LLM SUMMARY")
    assert [m.seq for m in window.recent] == [5, 6] and list(window.degraded) == []
    request = chat.requests[0]
    assert request["model"] == "loopback-model"
    assert chat.headers[0]["Authorization"] == "Bearer sk-loopback"
    assert "Turn 0" in request["messages"][1]["content"]

    code, err = code_of(
        lambda: llm_stub.AppendMessages(
            mpb.AppendMessagesRequest(agent_id=agent, session_id="s1", messages=turns(7, start=6))
        )
    )
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "sessions.max_messages (12)" in (err.details() or "")

    ended = llm_stub.EndSession(
        mpb.EndSessionRequest(agent_id=agent, session_id="s1", extract_memories=True)
    )
    assert list(ended.degraded) == []
    assert [m.memory_type for m in ended.extracted] == [
        pb.MEMORY_TYPE_FACT,
        pb.MEMORY_TYPE_PREFERENCE,
    ]
    assert all(m.source.locator == "session:s1" for m in ended.extracted)
    assert "calendar" in ended.extracted[0].tags


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("error", "HTTP 500"), ("slow", "timed out"), ("malformed", "not JSON")],
)
def test_llm_failures_fall_back_to_extractive(
    llm_stub: MemoryServiceStub,
    memory_stub: MemoryServiceStub,
    chat: ChatServer,
    mode: str,
    reason: str,
) -> None:
    chat.mode = mode  # type: ignore[assignment]
    agent = fresh_agent()
    messages = [*turns(5), msg(mpb.MESSAGE_ROLE_USER, STATED)]
    out = llm_stub.AppendMessages(
        mpb.AppendMessagesRequest(agent_id=agent, session_id="s1", messages=messages)
    )
    assert out.compressed
    assert [d.component for d in out.degraded] == ["llm"] and reason in out.degraded[0].reason
    window = llm_stub.GetSessionWindow(mpb.GetSessionWindowRequest(agent_id=agent, session_id="s1"))
    assert window.summarizer == "extractive" and "Turn 0" in window.summary
    assert reason in window.degraded[0].reason
    ended = llm_stub.EndSession(
        mpb.EndSessionRequest(agent_id=agent, session_id="s1", extract_memories=True)
    )
    # The deterministic path: the facts are what extraction without an LLM (the shared
    # daemon has none) keeps of the same session, the user's statement; then the
    # summary as an episode; and it says so.
    memory_stub.AppendMessages(
        mpb.AppendMessagesRequest(agent_id=agent, session_id="extractive", messages=messages)
    )
    baseline = memory_stub.EndSession(
        mpb.EndSessionRequest(agent_id=agent, session_id="extractive", extract_memories=True)
    )
    *facts, episode = ended.extracted
    assert [(m.memory_type, m.content) for m in facts] == [
        (m.memory_type, m.content) for m in baseline.extracted[:-1]
    ]
    assert [(m.memory_type, m.content) for m in facts] == [(pb.MEMORY_TYPE_FACT, STATED)]
    assert episode.memory_type == pb.MEMORY_TYPE_EPISODE
    assert {d.component for d in ended.degraded} == {"llm"}
    assert any(FALLBACK_NOTE in d.reason for d in ended.degraded)


# ---------------------------------------------------------------- memoryctl
