"""A stored record that no longer decodes degrades reads; it never turns them into
INTERNAL (issue 30).

Before the JSON checks a 400-digit integer could be stored in a key, a working
memory or a saved state, and afterwards every read of the agent (and the tenant-wide
export) answered INTERNAL, across restarts. Such records are planted here directly in
the stopped daemon's LanceDB store, as a daemon before the fix left them; after a
restart (and another) each read that names one answers DATA_LOSS naming it, every
listing, history, snapshot and export answers OK without it and says what it left out
(a degradation in the trailing metadata, a "skipped" event in an export), and the key
can be written again.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf.message import Message

from memoryd.domain.models import Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.lancedb.records import LanceDBRecordStore
from memoryd.storage.records import KeyPage
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from tests.conftest import Daemon
from tests.security.support import Outcome, all_rpcs, invoke

RPCS = {rpc.label: rpc for rpc in all_rpcs()}
USER = pb.Provenance(kind=pb.PROVENANCE_KIND_USER)
#: What a daemon before the fix stored: an integer no double holds.
POISON = '{"v": 1' + "0" * 400 + "}"
AGENT, OTHER = "victim", "bystander"
PARTITION = Partition("default", AGENT)
GOOD, BAD = pb.WorkingMemoryScope(thread_id="good"), pb.WorkingMemoryScope(thread_id="bad")
DEGRADED_KEY = "x-memoryd-degraded"


def call(channel: grpc.Channel, label: str, request: Message) -> Outcome:
    return invoke(channel, RPCS[label], request)


def trailers(channel: grpc.Channel, label: str, request: Message) -> tuple[Message, list[str]]:
    """A unary call's response and its degradations (trailing metadata)."""
    rpc = RPCS[label]
    stub = channel.unary_unary(
        rpc.path, rpc.request_class.SerializeToString, rpc.response_class.FromString
    )
    response, state = stub.with_call(request, timeout=30)
    return response, [v for k, v in state.trailing_metadata() or () if k == DEGRADED_KEY]


def seed(channel: grpc.Channel) -> None:
    for agent in (AGENT, OTHER):
        for key in ("/good", "/bad"):
            request = mpb.SetMemoryRequest(
                agent_id=agent, key=key, content_json='{"v": 1}', source=USER
            )
            assert call(channel, "MemoryService.SetMemory", request).ok
    for scope in (GOOD, BAD):
        request = mpb.SetWorkingMemoryRequest(agent_id=AGENT, scope=scope, content_json='{"v": 1}')
        assert call(channel, "MemoryService.SetWorkingMemory", request).ok
    components = [spb.StateComponent(name=name, state_json='{"v": 1}') for name in ("good", "bad")]
    request = spb.SaveStateRequest(agent_id=AGENT, session_id="s", components=components)
    assert call(channel, "SnapshotService.SaveState", request).ok


async def plant(data_dir: Path) -> int:
    """Rewrite the "bad" records as a daemon before the fix stored them."""
    store = LanceDBRecordStore(data_dir / "lancedb")
    await store.open()
    try:
        planted: list[Record] = []
        for kind, keys, field in (
            (RecordKind.KEY, ["/bad"], "content_json"),
            (RecordKind.WORKING, ["bad\x00"], "content_json"),
            (RecordKind.STATE, ["s\x00bad"], "state_json"),
        ):
            for record in await store.get_records(PARTITION, kind, keys):
                planted.append(dataclasses.replace(record, doc={**record.doc, field: POISON}))
        events = await store.list_records(
            PARTITION, RecordKind.KEY_EVENT, KeyPage(prefix="/bad\x00")
        )
        planted += [dataclasses.replace(e, doc={**e.doc, "content_json": POISON}) for e in events]
        await store.put_records(PARTITION, planted)
        return len(planted)
    finally:
        await store.close()


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    root = tmp_path_factory.mktemp("undecodable")
    daemon = Daemon(data_dir=root / "data", env={"MEMORYD_EMBEDDER": "hashing"})
    daemon.start()
    try:
        with daemon.channel() as channel:
            seed(channel)
        assert daemon.stop() == 0
        assert asyncio.run(plant(daemon.data_dir)) == 4
        daemon.start()
        yield daemon
    finally:
        daemon.kill()


def check_reads(channel: grpc.Channel) -> None:
    # Reads that name the record: DATA_LOSS naming it, never INTERNAL.
    for label, request, named in (
        ("MemoryService.GetKey", mpb.GetKeyRequest(agent_id=AGENT, key="/bad"), "/bad"),
        (
            "MemoryService.GetWorkingMemory",
            mpb.GetWorkingMemoryRequest(agent_id=AGENT, scope=BAD),
            "'bad'",
        ),
    ):
        out = call(channel, label, request)
        assert out.code == grpc.StatusCode.DATA_LOSS, (label, out.code, out.message)
        assert named in out.message and "no longer decodes" in out.message
    # Everything else of the agent reads as before.
    good = call(channel, "MemoryService.GetKey", mpb.GetKeyRequest(agent_id=AGENT, key="/good"))
    assert good.ok and good.responses[0].entry.content_json == '{"v":1}'
    scope = mpb.GetWorkingMemoryRequest(agent_id=AGENT, scope=GOOD)
    assert call(channel, "MemoryService.GetWorkingMemory", scope).ok

    # Listings leave the record out and say so.
    listed, degraded = trailers(
        channel, "MemoryService.ListKeys", mpb.ListKeysRequest(agent_id=AGENT, recursive=True)
    )
    assert [e.key for e in listed.entries] == ["/good"]
    assert any("/bad" in d and "no longer decodes" in d for d in degraded), degraded
    history, degraded = trailers(
        channel, "MemoryService.KeyHistory", mpb.KeyHistoryRequest(agent_id=AGENT, key="/")
    )
    assert [e.key for e in history.entries] == ["/good"] and degraded
    scopes, degraded = trailers(
        channel,
        "MemoryService.ListWorkingMemoryScopes",
        mpb.ListWorkingMemoryScopesRequest(agent_id=AGENT),
    )
    assert [s.scope.thread_id for s in scopes.scopes] == ["good"] and degraded
    state, degraded = trailers(
        channel, "SnapshotService.LoadState", spb.LoadStateRequest(agent_id=AGENT, session_id="s")
    )
    assert [c.name for c in state.components] == ["good"] and degraded
    for label, request in (
        ("SnapshotService.DefaultRead", spb.DefaultReadRequest(agent_id=AGENT)),
        ("SnapshotService.BuildSnapshot", spb.BuildSnapshotRequest(agent_id=AGENT, trigger="v")),
        ("LifecycleService.GetStats", lpb.GetStatsRequest(agent_id=AGENT)),
    ):
        out = call(channel, label, request)
        assert out.ok, (label, out.code, out.message)

    # Exports, the agent's and the tenant's, go on past it and name what they skipped.
    for request in (lpb.ExportRequest(agent_id=AGENT), lpb.ExportRequest(all_agents=True)):
        out = call(channel, "LifecycleService.Export", request)
        assert out.ok, (out.code, out.message)
        skipped = [r.progress.message for r in out.responses if r.progress.phase == "skipped"]
        assert len(skipped) == 3 and all("no longer decodes" in m for m in skipped), skipped
        keys = {
            r.record.key_event.entry.key for r in out.responses if r.record.HasField("key_event")
        }
        assert "/bad" not in {
            r.record.key_event.entry.key
            for r in out.responses
            if r.record.key_event.agent_id == AGENT
        }
        assert "/good" in keys
    # The other agent of the tenant is untouched.
    other = mpb.ListKeysRequest(agent_id=OTHER, recursive=True)
    assert [e.key for e in call(channel, "MemoryService.ListKeys", other).responses[0].entries] == [
        "/bad",
        "/good",
    ]


def test_reads_degrade_never_internal_across_restarts(planted: Daemon) -> None:
    with planted.channel() as channel:
        check_reads(channel)
    assert planted.stop() == 0
    planted.start()
    with planted.channel() as channel:
        check_reads(channel)
    assert "undecodable record skipped" in planted.logs()


def test_a_record_that_no_longer_decodes_can_be_written_again(planted: Daemon) -> None:
    with planted.channel() as channel:
        write = mpb.SetMemoryRequest(agent_id=AGENT, key="/bad", content_json="[2]", source=USER)
        assert call(channel, "MemoryService.SetMemory", write).ok
        got = call(channel, "MemoryService.GetKey", mpb.GetKeyRequest(agent_id=AGENT, key="/bad"))
        assert got.ok and got.responses[0].entry.content_json == "[2]"
        replace = mpb.SetWorkingMemoryRequest(
            agent_id=AGENT,
            scope=BAD,
            content_json='{"v": 2}',
            mode=mpb.WORKING_MEMORY_MODE_REPLACE,
        )
        assert call(channel, "MemoryService.SetWorkingMemory", replace).ok
        merge = mpb.SetWorkingMemoryRequest(agent_id=AGENT, scope=BAD, content_json='{"w": 3}')
        assert call(channel, "MemoryService.SetWorkingMemory", merge).ok
        state = spb.SaveStateRequest(
            agent_id=AGENT, session_id="s", components=[spb.StateComponent(name="bad")]
        )
        assert call(channel, "SnapshotService.SaveState", state).ok
        loaded = call(
            channel,
            "SnapshotService.LoadState",
            spb.LoadStateRequest(agent_id=AGENT, session_id="s"),
        )
        assert [c.name for c in loaded.responses[0].components] == ["bad", "good"]
