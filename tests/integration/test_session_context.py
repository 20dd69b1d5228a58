"""Context expansion over real gRPC (the shared daemon: LanceDB on disk, the real model):
Remember/RememberBatch take a session id and sequence, Recall's and BuildSnapshot's
context_window add the best hit's neighbouring turns from its session, never another
agent's and never one above the request's security ceiling; bad values are
INVALID_ARGUMENT naming the field."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import grpc
import pytest

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from memoryd_proto.v1.snapshot_service_pb2_grpc import SnapshotServiceStub

from ..conftest import Daemon
from .test_memory_api import violations

TURNS = [
    "Ana: how was your weekend?",
    "Ben: I ran the Lisbon marathon on Sunday",
    "Ana: did you finish it?",
    "Ben: yes, in four hours and ten minutes",
    "Ana: congratulations!",
]
QUERY = "Lisbon marathon"


@pytest.fixture(scope="module")
def snapshot_stub(shared_daemon: Daemon) -> Iterator[SnapshotServiceStub]:
    with shared_daemon.channel() as channel:
        yield SnapshotServiceStub(channel)


def remember_chat(stub: MemoryServiceStub, agent: str, *, hidden: int | None = None) -> list[str]:
    """The chat as session "run-1" of ``agent`` (the first turn by Remember, the rest by
    one RememberBatch); turn ``hidden`` RESTRICTED."""

    def item(i: int) -> mpb.RememberRequest:
        level = pb.SECURITY_LEVEL_RESTRICTED if i == hidden else pb.SECURITY_LEVEL_INTERNAL
        return mpb.RememberRequest(
            agent_id=agent,
            content=TURNS[i],
            session_id="run-1",
            sequence=i + 1,
            security_level=level,
        )

    first = stub.Remember(item(0)).memory
    assert first.metadata["session_id"] == "run-1" and first.metadata["seq"] == 1
    rest = stub.RememberBatch(
        mpb.RememberBatchRequest(agent_id=agent, items=[item(i) for i in range(1, len(TURNS))])
    ).results
    return [first.id, *(r.memory.id for r in rest)]


def test_recall_adds_the_best_hits_neighbouring_turns_of_its_session(
    memory_stub: MemoryServiceStub,
) -> None:
    agent = f"ctx-{uuid.uuid4().hex[:8]}"
    other = f"ctx-other-{uuid.uuid4().hex[:8]}"
    ids = remember_chat(memory_stub, agent, hidden=2)
    remember_chat(memory_stub, other)  # the same session id, another agent
    request = mpb.RecallRequest(agent_id=agent, query=QUERY, limit=5, context_window=1)
    results = memory_stub.Recall(request).results
    got = [r.memory.id for r in results]
    assert got[0] == ids[1]
    assert ids[0] in got and ids[2] in got  # the turns either side
    assert all(r.memory.agent_id == agent for r in results)
    # Under a ceiling below the hidden turn it is left out, the rest stays.
    request.max_security_level = pb.SECURITY_LEVEL_INTERNAL
    low = [r.memory.id for r in memory_stub.Recall(request).results]
    assert low[0] == ids[1] and ids[0] in low and ids[2] not in low
    # A neighbour ranks at 0.5 x the hit's relevance; explicitly off, the turn before
    # (no word of the query) is back to what the searches made of it, far below.
    relevance = {r.memory.id: r.components.relevance for r in results}
    assert relevance[ids[0]] == pytest.approx(0.5 * relevance[ids[1]])
    request.context_window = 0
    off = {r.memory.id: r.components.relevance for r in memory_stub.Recall(request).results}
    assert off.get(ids[0], 0.0) < 0.4 * off[ids[1]]


def test_bad_values_are_invalid_argument_naming_the_field(
    memory_stub: MemoryServiceStub, snapshot_stub: SnapshotServiceStub
) -> None:
    calls = [
        (
            lambda: memory_stub.Recall(
                mpb.RecallRequest(agent_id="ctx-bad", query="x", context_window=6)
            ),
            "context_window",
        ),
        (
            lambda: memory_stub.RememberBatch(
                mpb.RememberBatchRequest(
                    agent_id="ctx-bad", items=[mpb.RememberRequest(content="x", sequence=2)]
                )
            ),
            "items[0].sequence",
        ),
        (
            lambda: memory_stub.Remember(
                mpb.RememberRequest(agent_id="ctx-bad", content="x", session_id="a\x01")
            ),
            "session_id",
        ),
        (
            lambda: snapshot_stub.BuildSnapshot(
                spb.BuildSnapshotRequest(agent_id="ctx-bad", trigger="x", context_window=-1)
            ),
            "context_window",
        ),
    ]
    for call, field in calls:
        with pytest.raises(grpc.RpcError) as err:
            call()
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert field in violations(err.value)
    listed = memory_stub.ListMemories(mpb.ListMemoriesRequest(agent_id="ctx-bad")).memories
    assert not listed


def test_the_snapshots_semantic_section_takes_the_neighbours(
    memory_stub: MemoryServiceStub, snapshot_stub: SnapshotServiceStub
) -> None:
    agent = f"ctx-{uuid.uuid4().hex[:8]}"
    ids = remember_chat(memory_stub, agent)
    request = spb.BuildSnapshotRequest(
        agent_id=agent,
        trigger=QUERY,
        sections=[spb.SNAPSHOT_SECTION_SEMANTIC],
        semantic_limit=3,
        context_window=1,
        token_budget=2000,
    )
    items = [i.id for i in snapshot_stub.BuildSnapshot(request).items]
    assert items[0] == ids[1] and set(items) == {ids[0], ids[1], ids[2]}
