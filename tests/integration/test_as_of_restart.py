"""As-of reads across restarts, over real gRPC (a real daemon on LanceDB, its memory
history in files under <data_dir>/as_of, docs/as-of.md): reads as of instants before
a clean restart, and before a SIGKILL, answer exactly what they answered before it (a
snapshot of every section: the profile, working memory and session included); a
history kept in memory only (history.persist false) moves the horizon instead."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime

import grpc
import pytest
from google.protobuf import field_mask_pb2, struct_pb2

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from memoryd_proto.v1.snapshot_service_pb2_grpc import SnapshotServiceStub
from tests.conftest import Daemon
from tests.integration.test_as_of import USER, _reads, at, between_writes

ENV = {"MEMORYD_EMBEDDER": "hashing", "MEMORYD_MAINTENANCE__ENABLED": "false"}
Answers = dict[datetime, tuple[str, list[str], str, str, list[str], str]]
SCOPE = pb.WorkingMemoryScope(thread_id="t1", resource_id="r1")
SESSION = "s1"


def _state(memory: MemoryServiceStub, agent: str, label: str) -> None:
    """The agent's profile, the scope's working memory and a session turn."""
    memory.SetProfile(mpb.SetProfileRequest(agent_id=agent, content=f"# Assistant ({label})"))
    content = struct_pb2.Struct()
    content.update({"plan": f"plan {label}"})
    memory.SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(agent_id=agent, scope=SCOPE, content=content)
    )
    memory.AppendMessages(
        mpb.AppendMessagesRequest(
            agent_id=agent,
            session_id=SESSION,
            messages=[
                mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content=f"what now ({label})?")
            ],
        )
    )


def _life(memory: MemoryServiceStub, agent: str, round_: int) -> list[datetime]:
    """Remember, update, forget, key writes and the agent's state, an instant after
    each."""
    instants = []
    _state(memory, agent, f"round {round_} start")
    tea = memory.Remember(
        mpb.RememberRequest(agent_id=agent, content=f"The user drinks green tea (round {round_})")
    ).memory
    other = memory.Remember(
        mpb.RememberRequest(agent_id=agent, content=f"The user drinks coffee at noon {round_}")
    ).memory
    memory.SetMemory(
        mpb.SetMemoryRequest(
            agent_id=agent, key="/user/drink", content_json=f'"tea {round_}"', source=USER
        )
    )
    instants.append(between_writes())
    memory.UpdateMemory(
        mpb.UpdateMemoryRequest(
            agent_id=agent,
            memory=pb.Memory(id=tea.id, content=f"The user switched to black tea {round_}"),
            update_mask=field_mask_pb2.FieldMask(paths=["content"]),
        )
    )
    _state(memory, agent, f"round {round_} middle")
    instants.append(between_writes())
    memory.ForgetMemories(mpb.ForgetMemoriesRequest(agent_id=agent, ids=[other.id]))
    memory.SetMemory(
        mpb.SetMemoryRequest(
            agent_id=agent, key="/user/drink", content_json=f'"black tea {round_}"', source=USER
        )
    )
    instants.append(between_writes())
    return instants


def _answers(daemon: Daemon, agent: str, instants: list[datetime]) -> Answers:
    """The reads of test_as_of.py and a snapshot of every section, as of each instant."""
    with daemon.channel() as channel:
        memory, snapshot = MemoryServiceStub(channel), SnapshotServiceStub(channel)
        return {
            t: (
                *_reads(memory, snapshot, agent, at(t)),
                snapshot.BuildSnapshot(
                    spb.BuildSnapshotRequest(
                        agent_id=agent,
                        trigger="what does the user drink?",
                        scope=SCOPE,
                        session_id=SESSION,
                        as_of=at(t),
                    )
                ).text,
            )
            for t in instants
        }


def test_as_of_before_a_restart_and_a_sigkill_answers_as_then(
    daemon_factory: Callable[..., Daemon],
) -> None:
    daemon = daemon_factory(env=ENV)
    daemon.start()
    agent = f"restart-{uuid.uuid4().hex[:8]}"
    with daemon.channel() as channel:
        instants = _life(MemoryServiceStub(channel), agent, 1)
    before = _answers(daemon, agent, instants)
    assert len({a[0] for a in before.values()}) == len(instants)  # each instant differs
    whole = [a[5] for a in before.values()]
    assert all("plan round 1" in text and "round 1" in text for text in whole), whole
    assert len(set(whole)) == len(instants)

    daemon.stop()
    daemon.start()
    assert _answers(daemon, agent, instants) == before

    with daemon.channel() as channel:
        later = _life(MemoryServiceStub(channel), agent, 2)
    before.update(_answers(daemon, agent, later))
    assert daemon.process is not None
    daemon.process.kill()  # SIGKILL: no shutdown, no flush
    daemon.process.wait()
    daemon.process = None
    daemon.start()
    assert _answers(daemon, agent, [*instants, *later]) == before
    daemon.stop()


def test_a_history_in_memory_only_starts_again_at_a_restart(
    daemon_factory: Callable[..., Daemon],
) -> None:
    daemon = daemon_factory(env={**ENV, "MEMORYD_HISTORY__PERSIST": "false"})
    daemon.start()
    agent = f"volatile-{uuid.uuid4().hex[:8]}"
    with daemon.channel() as channel:
        [first, *_] = _life(MemoryServiceStub(channel), agent, 1)
    daemon.stop()
    daemon.start()
    with daemon.channel() as channel, pytest.raises(grpc.RpcError) as refused:
        MemoryServiceStub(channel).Recall(
            mpb.RecallRequest(agent_id=agent, query="drink", as_of=at(first))
        )
    assert refused.value.code() == grpc.StatusCode.OUT_OF_RANGE
    assert "as_of" in (refused.value.details() or "")
    assert not (daemon.data_dir / "as_of").exists()
    daemon.stop()
