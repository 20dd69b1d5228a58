"""The fallback matrix on a real daemon whose embedding provider and LLM are real HTTP
servers on loopback that fail: BuildSnapshot names every degradation it was served
with, session summaries and consolidation take the deterministic path and say so.
The store's part (reads overlaying the log while it is down) is checked in process."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from google.protobuf import timestamp_pb2

from memoryd.domain.requests import MemoryDraft
from memoryd.domain.snapshot import SnapshotRequest
from memoryd.resilience.degradation import ComponentStates
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import lifecycle_service_pb2_grpc as lgrpc
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1 import snapshot_service_pb2_grpc as sgrpc
from tests.conftest import Daemon
from tests.reliability.test_embedder_outage import DIM, MODEL, Provider, _Handler
from tests.unit.agent_state.chat_server import ChatServer, running_chat_server
from tests.unit.snapshot.world import scope_for, world

AGENT = "fallbacks"


@pytest.fixture
def provider() -> Iterator[Provider]:
    server = Provider(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    with running_chat_server() as server:
        yield server


def _ago(days: int) -> timestamp_pb2.Timestamp:
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(datetime.now(UTC) - timedelta(days=days))
    return ts


def test_everything_failing_is_named(
    provider: Provider, chat: ChatServer, daemon_factory: Callable[..., Daemon]
) -> None:
    daemon = daemon_factory(
        env={
            "MEMORYD_EMBEDDER": "openai",
            "MEMORYD_EMBEDDING__OPENAI_URL": f"http://127.0.0.1:{provider.server_port}/v1",
            "MEMORYD_EMBEDDING__OPENAI_MODEL": MODEL,
            "MEMORYD_EMBEDDING__OPENAI_DIMENSION": str(DIM),
            "MEMORYD_EMBEDDING__OPENAI_TIMEOUT_S": "1",
            "MEMORYD_EMBEDDING__CACHE_SIZE": "0",
            "MEMORYD_RESILIENCE__EMBEDDER_TIMEOUT_S": "1",
            "MEMORYD_LLM__URL": chat.url,
            "MEMORYD_LLM__TIMEOUT_S": "1",
            "MEMORYD_SESSIONS__COMPRESS_THRESHOLD_MESSAGES": "4",
            "MEMORYD_SESSIONS__KEEP_RECENT_MESSAGES": "1",
            "MEMORYD_MAINTENANCE__ENABLED": "false",
        }
    )
    daemon.start()
    provider.mode = "fail"
    chat.mode = "error"
    with daemon.channel() as channel:
        memory = mgrpc.MemoryServiceStub(channel)
        snapshots = sgrpc.SnapshotServiceStub(channel)
        lifecycle = lgrpc.LifecycleServiceStub(channel)
        notes = [f"The user's health note {i}: takes vitamin {c}." for i, c in enumerate("ABCDE")]
        memory.RememberBatch(
            mpb.RememberBatchRequest(
                agent_id=AGENT,
                items=[
                    mpb.RememberRequest(content=n, tags=["health"], created_at=_ago(60))
                    for n in notes
                ],
            ),
            timeout=30,
        )
        appended = memory.AppendMessages(
            mpb.AppendMessagesRequest(
                agent_id=AGENT,
                session_id="run",
                messages=[
                    mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content=f"I need vitamin {c}.")
                    for c in "ABCD"
                ],
            ),
            timeout=30,
        )
        assert appended.compressed and "HTTP 500" in appended.degraded[0].reason

        snap = snapshots.BuildSnapshot(
            spb.BuildSnapshotRequest(agent_id=AGENT, trigger="vitamins", session_id="run"),
            timeout=30,
        )
        reasons = {d.component: d.reason for d in snap.degraded}
        assert set(reasons) >= {"embedder", "llm"}
        assert "extractive" in reasons["llm"] and snap.text  # served, not failed

        result = None
        for event in lifecycle.Consolidate(lpb.ConsolidateRequest(agent_id=AGENT), timeout=60):
            if event.WhichOneof("event") == "result":
                result = event.result
        assert result is not None and result.consolidated == 5
        assert result.details[0].method == "merge"
        assert [d.component for d in result.degraded] == ["llm"]
        assert "merged deterministically" in result.degraded[0].reason


async def test_a_store_outage_is_named_by_the_snapshot() -> None:
    states = ComponentStates()
    async with world(states=states) as w:
        snapshots = w.snapshots
        scope = scope_for()
        await w.memories.remember(scope, MemoryDraft("The deploy runs on Tuesdays"))
        healthy = await snapshots.build(scope, SnapshotRequest(trigger="deploy"))
        assert healthy.degraded == ()
        states.set("store", ok=False, reason="store unavailable; serving the log")
        down = await snapshots.build(scope, SnapshotRequest(trigger="deploy"))
        assert [(d.component, d.reason) for d in down.degraded] == [
            ("store", "store unavailable; serving the log")
        ]
