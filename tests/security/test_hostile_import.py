"""Import streams with values the store cannot hold, over a real daemon (issue 20,
findings 1 and 2): every such record is rejected with its index and reason, nothing of
it is stored, the rest of the stream is imported, and the daemon keeps serving every
tenant and restarts cleanly."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest

from memoryd.domain.limits import MAX_IMPORTED_VERSION
from memoryd_proto.v1 import common_pb2
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1.lifecycle_service_pb2_grpc import LifecycleServiceStub
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from memoryd_proto.v1.snapshot_service_pb2_grpc import SnapshotServiceStub
from tests.conftest import Daemon
from tests.security import records as rec

USER_SOURCE_PB = common_pb2.Provenance(kind=common_pb2.PROVENANCE_KIND_USER)

ENV = {"MEMORYD_EMBEDDER": "hashing", "MEMORYD_MAINTENANCE__ENABLED": "false"}


class Stubs:
    def __init__(self, channel: grpc.Channel) -> None:
        self.memory = MemoryServiceStub(channel)
        self.life = LifecycleServiceStub(channel)
        self.snapshot = SnapshotServiceStub(channel)


@pytest.fixture
def daemon(daemon_factory: Callable[..., Daemon], tmp_path: Path) -> Iterator[Daemon]:
    d = daemon_factory(data_dir=tmp_path / "data", env=ENV)
    d.start()
    yield d
    d.kill()


def write_each_kind(stubs: Stubs, agent: str) -> dict[str, int]:
    """One ordinary write to each imported record; the versions they got."""
    m = stubs.memory
    memories = m.ListMemories(mpb.ListMemoriesRequest(agent_id=agent), timeout=30).memories
    updated = m.UpdateMemory(
        mpb.UpdateMemoryRequest(
            agent_id=agent,
            memory=pb.Memory(id=memories[0].id, importance=0.9),
            update_mask={"paths": ["importance"]},
        ),
        timeout=30,
    )
    key = m.SetMemory(
        mpb.SetMemoryRequest(
            agent_id=agent, key=rec.KEY, content={"string_value": "new"}, source=USER_SOURCE_PB
        ),
        timeout=30,
    )
    wm = m.SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(
            agent_id=agent,
            scope=pb.WorkingMemoryScope(thread_id=rec.SCOPE_THREAD),
            content=rec.struct({"step": 2}),
        ),
        timeout=30,
    )
    m.SetProfile(mpb.SetProfileRequest(agent_id=agent, content="# v2"), timeout=30)
    m.AppendMessages(
        mpb.AppendMessagesRequest(
            agent_id=agent,
            session_id=rec.SESSION,
            messages=[mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content="again")],
        ),
        timeout=30,
    )
    saved = stubs.snapshot.SaveState(
        spb.SaveStateRequest(
            agent_id=agent,
            session_id=rec.SESSION,
            components=[spb.StateComponent(name=rec.COMPONENT, state=rec.struct({"step": 4}))],
        ),
        timeout=30,
    )
    for response in (updated, key):
        assert list(response.degraded) == []
    return {
        "memory": updated.memory.version,
        "key_event": key.entry.version,
        "working_memory": wm.working_memory.version,
        "state": saved.components[0].version,
    }


def test_versions_the_store_cannot_hold_are_rejected_and_nothing_stalls(
    daemon: Daemon,
) -> None:
    with daemon.channel() as channel:
        stubs = Stubs(channel)
        poison = rec.every_kind("poisoned", version=rec.POISON_VERSION)
        highest = rec.every_kind("highest", version=MAX_IMPORTED_VERSION)
        stream = [*poison.values(), *highest.values()]
        response = rec.import_records(stubs.life, stream)
        bad = rec.rejected(response)
        assert sorted(bad) == list(range(len(poison))), bad
        assert all("version" in reason for reason in bad.values()), bad
        assert response.imported == len(highest)

        # Nothing of a rejected record is stored.
        stats = stubs.life.GetStats(lpb.GetStatsRequest(agent_id="poisoned"), timeout=30)
        assert (stats.memories, stats.keys, stats.sessions, stats.working_scopes) == (0, 0, 0, 0)
        with pytest.raises(grpc.RpcError) as err:
            stubs.memory.GetProfile(mpb.GetProfileRequest(agent_id="poisoned"), timeout=30)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND

        # Records imported at the highest version take their next write normally...
        versions = write_each_kind(stubs, "highest")
        for kind in ("memory", "key_event", "working_memory", "state"):
            assert versions[kind] == MAX_IMPORTED_VERSION + 1, (kind, versions)
        # ... and every other tenant's writes are served, not held behind a stuck apply.
        other = stubs.memory.Remember(
            mpb.RememberRequest(agent_id="bystander", content="served as usual"), timeout=30
        )
        assert list(other.degraded) == []

    assert daemon.stop() == 0
    daemon.start()  # replays cleanly: nothing in the log the store cannot take
    with daemon.channel() as channel:
        profile = MemoryServiceStub(channel).GetProfile(
            mpb.GetProfileRequest(agent_id="highest"), timeout=30
        )
        assert profile.profile.content == "# v2"


def test_import_reports_every_bad_record_and_never_stops_part_way(daemon: Daemon) -> None:
    agent = "bulk"
    good = [rec.memory(agent, content=f"fact number {i}") for i in range(1500)]
    bad = {
        1500: rec.session(agent, ttl_s=2**62),  # beyond protobuf Duration's range
        1503: rec.working(agent, ttl_s=rec.MAX_DURATION_S + 1),
        1504: rec.working(agent, ttl_s=5, ttl_nanos=-1),  # signs disagree: not a Duration
        1505: rec.working(agent, ttl_s=rec.MAX_DURATION_S),  # valid, but no datetime holds it
        1506: rec.session(agent, message_count=2**62),
        1507: rec.memory(agent, access_count=2**62),
    }
    stream = [*good, bad[1500], rec.memory(agent), rec.memory(agent), *list(bad.values())[1:]]
    with daemon.channel() as channel:
        stubs = Stubs(channel)
        response = rec.import_records(stubs.life, stream)
        reasons = rec.rejected(response)
        assert sorted(reasons) == sorted(bad), reasons
        for index in (1500, 1503, 1504, 1505):
            assert "ttl" in reasons[index], reasons[index]
        assert "message_count" in reasons[1506] and "access_count" in reasons[1507]
        assert response.imported == 1502
        stats = stubs.life.GetStats(lpb.GetStatsRequest(agent_id=agent), timeout=30)
        assert (stats.memories, stats.sessions, stats.working_scopes) == (1502, 0, 0)
