"""JSON values read back as written (issue 22), over real gRPC and the Python client.

Through ``google.protobuf.Value`` / ``Struct`` numbers are doubles: 12345678901234567
came back as 1.2345678901234568e+16 and 1 as 1.0. The ``*_json`` fields carry text:
keyed content is stored as its text, working memory, saved state and metadata keep
integers digit for digit.
"""

from __future__ import annotations

import json
import uuid

import grpc
import pytest
from google.protobuf import field_mask_pb2, struct_pb2

from memoryd_client import InvalidArgumentError, JsonText, MemorydClient
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1.lifecycle_service_pb2_grpc import LifecycleServiceStub
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from memoryd_proto.v1.snapshot_service_pb2_grpc import SnapshotServiceStub

from ..conftest import Daemon
from .test_memory_api import violations

USER = pb.Provenance(kind=pb.PROVENANCE_KIND_USER)
#: The issue's examples, and a few spellings a parser would change.
TEXTS = [
    "12345678901234567",
    "1",
    '{"step": 2}',
    '{"big": 123456789012345678901234567890, "f": 1.50, "e": 1e2, "esc": "\\u00e9\\/"}',
    '[0.1, -0, 1E-7, true, null, "漢字"]',
]


def agent() -> str:
    return f"json-{uuid.uuid4().hex[:10]}"


def compact(text: str) -> str:
    return text.replace(": ", ":").replace(", ", ",")


@pytest.mark.parametrize("text", TEXTS)
def test_keyed_content_json_round_trips_byte_for_byte(
    memory_stub: MemoryServiceStub, text: str
) -> None:
    a = agent()
    written = memory_stub.SetMemory(
        mpb.SetMemoryRequest(agent_id=a, key="/k", content_json=text, source=USER)
    ).entry
    assert written.content_json == compact(text)
    got = memory_stub.GetKey(mpb.GetKeyRequest(agent_id=a, key="/k")).entry
    assert got.content_json == compact(text)
    history = memory_stub.KeyHistory(mpb.KeyHistoryRequest(agent_id=a, key="/k")).entries
    assert [e.content_json for e in history] == [compact(text)]
    listed = memory_stub.ListKeys(mpb.ListKeysRequest(agent_id=a, prefix="/")).entries
    assert [e.content_json for e in listed] == [compact(text)]


def test_the_value_form_still_works_and_says_json_text_too(memory_stub: MemoryServiceStub) -> None:
    a = agent()
    value = struct_pb2.Value()
    value.struct_value.update({"step": 2})
    entry = memory_stub.SetMemory(
        mpb.SetMemoryRequest(agent_id=a, key="/k", content=value, source=USER)
    ).entry
    assert entry.content_json == '{"step":2}'
    assert entry.content.struct_value.fields["step"].number_value == 2.0


def test_both_forms_at_once_are_rejected(memory_stub: MemoryServiceStub) -> None:
    a = agent()
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.SetMemory(
            mpb.SetMemoryRequest(
                agent_id=a,
                key="/k",
                content_json="1",
                content=struct_pb2.Value(number_value=1),
                source=USER,
            )
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert set(violations(err.value)) == {"content_json"}


def test_working_memory_state_and_metadata_keep_integers(
    shared_daemon: Daemon, memory_stub: MemoryServiceStub
) -> None:
    a = agent()
    wm = memory_stub.SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(
            agent_id=a,
            scope=pb.WorkingMemoryScope(thread_id="t1"),
            content_json='{"step": 2, "id": 12345678901234567, "one": 1}',
        )
    ).working_memory
    assert wm.content_json == '{"step":2,"id":12345678901234567,"one":1}'
    merged = memory_stub.SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(
            agent_id=a, scope=pb.WorkingMemoryScope(thread_id="t1"), content_json='{"step": 3}'
        )
    ).working_memory
    assert merged.content_json == '{"step":3,"id":12345678901234567,"one":1}'

    with shared_daemon.channel() as channel:
        snapshots = SnapshotServiceStub(channel)
        saved = snapshots.SaveState(
            spb.SaveStateRequest(
                agent_id=a,
                session_id="s1",
                components=[spb.StateComponent(name="planner", state_json='{"step": 2}')],
            )
        ).components
        assert [c.state_json for c in saved] == ['{"step":2}']
        loaded = snapshots.LoadState(spb.LoadStateRequest(agent_id=a, session_id="s1"))
        assert [c.state_json for c in loaded.components] == ['{"step":2}']

    remembered = memory_stub.Remember(
        mpb.RememberRequest(
            agent_id=a,
            content="The order number is on the receipt",
            metadata_json='{"order": 12345678901234567, "n": 1}',
        )
    ).memory
    assert json.loads(remembered.metadata_json) == {"order": 12345678901234567, "n": 1}
    got = memory_stub.GetMemory(mpb.GetMemoryRequest(agent_id=a, id=remembered.id)).memory
    assert '"order":12345678901234567' in got.metadata_json


def test_python_client_round_trips_exactly(shared_daemon: Daemon) -> None:
    a = agent()
    with MemorydClient(shared_daemon.address) as client:
        entry = client.set_memory(a, "/big", 12345678901234567, source={"kind": "user"})
        assert entry.content == 12345678901234567 and entry.content_json == "12345678901234567"
        assert client.get_key(a, "/big").content == 12345678901234567
        client.set_memory(a, "/one", 1, source={"kind": "agent"})
        one = client.get_key(a, "/one")
        assert one.content == 1 and type(one.content) is int
        assert one.source is not None and one.source.kind == "agent"
        client.set_memory(a, "/plan", {"step": 2}, source={"kind": "user"})
        assert client.get_key(a, "/plan").content_json == '{"step":2}'
        wm = client.set_working_memory(a, {"step": 2, "id": 12345678901234567}, thread_id="t1")
        assert wm.content == {"step": 2, "id": 12345678901234567}
        state = client.save_state(a, "s1", {"planner": {"step": 2}})
        assert state[0].state == {"step": 2} and type(state[0].state["step"]) is int


# ------------------------------------------------ decimals, exponents, -0: byte for byte

#: Spellings a parser changes beyond integers: 1.50 -> 1.5, 1e2 -> 100.0, -0 -> 0.
WRITTEN = (
    '{"price": 1.50, "e": 1e2, "id": 12345678901234567, "z": -0,'
    ' "nested": {"rate": 0.10, "list": [1.0, 2E-3, {"deep": 3.000}]}}'
)
STORED = compact(WRITTEN)


def exported(life: LifecycleServiceStub, agent_id: str) -> list[lpb.ExportRecord]:
    return [
        e.record for e in life.Export(lpb.ExportRequest(agent_id=agent_id)) if e.HasField("record")
    ]


def test_working_memory_keeps_its_text_and_a_merge_keeps_each_members_text(
    shared_daemon: Daemon, memory_stub: MemoryServiceStub
) -> None:
    a = agent()
    scope = pb.WorkingMemoryScope(thread_id="t1")
    schema = struct_pb2.Struct()
    schema.update({"type": "object", "properties": {"price": {"type": "number", "maximum": 5}}})
    first = memory_stub.SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(
            agent_id=a, scope=scope, content_json=WRITTEN, json_schema=schema
        )
    ).working_memory
    assert first.content_json == STORED
    merged_text = '{"e":2.50,"added":{"x":1.0}}'
    merged = memory_stub.SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(agent_id=a, scope=scope, content_json=merged_text)
    ).working_memory
    expected = STORED[:-1].replace('"e":1e2', '"e":2.50') + ',"added":{"x":1.0}}'
    assert merged.content_json == expected
    got = memory_stub.GetWorkingMemory(mpb.GetWorkingMemoryRequest(agent_id=a, scope=scope))
    assert got.working_memory.content_json == expected
    # The schema checks the value: 7.50 is above its maximum, whatever its spelling.
    with pytest.raises(grpc.RpcError) as err:
        memory_stub.SetWorkingMemory(
            mpb.SetWorkingMemoryRequest(agent_id=a, scope=scope, content_json='{"price": 7.50}')
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert set(violations(err.value)) == {"content.$.price"}

    # Export carries the text, import stores it: the imported agent reads it back.
    with shared_daemon.channel() as channel:
        life = LifecycleServiceStub(channel)
        records = [r for r in exported(life, a) if r.WhichOneof("record") == "working_memory"]
        assert [r.working_memory.working_memory.content_json for r in records] == [expected]
        b = agent()
        life.Import(iter(lpb.ImportRequest(record=r, target_agent_id=b) for r in exported(life, a)))
    imported = memory_stub.GetWorkingMemory(mpb.GetWorkingMemoryRequest(agent_id=b, scope=scope))
    assert imported.working_memory.content_json == expected


def test_saved_state_keeps_its_text(shared_daemon: Daemon) -> None:
    a = agent()
    with shared_daemon.channel() as channel:
        snapshots = SnapshotServiceStub(channel)
        saved = snapshots.SaveState(
            spb.SaveStateRequest(
                agent_id=a,
                session_id="s1",
                components=[spb.StateComponent(name="planner", state_json=WRITTEN)],
            )
        ).components
        assert [c.state_json for c in saved] == [STORED]
        loaded = snapshots.LoadState(spb.LoadStateRequest(agent_id=a, session_id="s1"))
        assert [c.state_json for c in loaded.components] == [STORED]

        life = LifecycleServiceStub(channel)
        records = [r for r in exported(life, a) if r.WhichOneof("record") == "state"]
        assert [r.state.component.state_json for r in records] == [STORED]
        b = agent()
        life.Import(iter(lpb.ImportRequest(record=r, target_agent_id=b) for r in exported(life, a)))
        again = snapshots.LoadState(spb.LoadStateRequest(agent_id=b, session_id="s1"))
        assert [c.state_json for c in again.components] == [STORED]


def test_metadata_keeps_its_text_through_every_read_an_update_a_dedup_and_export(
    shared_daemon: Daemon, memory_stub: MemoryServiceStub
) -> None:
    a = agent()
    content = "The invoice total for the zebra-striped umbrella order"
    remembered = memory_stub.Remember(
        mpb.RememberRequest(agent_id=a, content=content, metadata_json=WRITTEN)
    ).memory
    assert remembered.metadata_json == STORED
    got = memory_stub.GetMemory(mpb.GetMemoryRequest(agent_id=a, id=remembered.id)).memory
    assert got.metadata_json == STORED
    hits = memory_stub.Recall(mpb.RecallRequest(agent_id=a, query="zebra umbrella invoice"))
    assert [r.memory.metadata_json for r in hits.results] == [STORED]
    listed = memory_stub.ListMemories(mpb.ListMemoriesRequest(agent_id=a)).memories
    assert [m.metadata_json for m in listed] == [STORED]

    # A duplicate merges its metadata into the memory: both sides keep their text.
    again = memory_stub.Remember(
        mpb.RememberRequest(agent_id=a, content=content, metadata_json='{"e": 2.50}')
    )
    assert again.deduplicated and again.memory.id == remembered.id
    merged = json.loads(again.memory.metadata_json)
    assert again.memory.metadata_json.startswith(STORED[:-1].replace('"e":1e2', '"e":2.50'))
    assert set(merged) == {"price", "e", "id", "z", "nested", "memoryd:dedup"}

    updated = memory_stub.UpdateMemory(
        mpb.UpdateMemoryRequest(
            agent_id=a,
            memory=pb.Memory(id=remembered.id, metadata_json='{"price": 2.50, "n": 1e3}'),
            update_mask=field_mask_pb2.FieldMask(paths=["metadata"]),
        )
    ).memory
    # The daemon's own members (its dedup record) stay; the new ones are as written.
    expected = '{"memoryd:dedup":{"count":1},"price":2.50,"n":1e3}'
    assert updated.metadata_json == expected

    with shared_daemon.channel() as channel:
        life = LifecycleServiceStub(channel)
        records = [r for r in exported(life, a) if r.WhichOneof("record") == "memory"]
        assert [r.memory.memory.metadata_json for r in records] == [expected]
        b = agent()
        life.Import(iter(lpb.ImportRequest(record=r, target_agent_id=b) for r in exported(life, a)))
    imported = memory_stub.ListMemories(mpb.ListMemoriesRequest(agent_id=b)).memories
    assert [m.metadata_json for m in imported] == [expected]


def test_python_client_sends_json_text_as_written(shared_daemon: Daemon) -> None:
    a = agent()
    with MemorydClient(shared_daemon.address) as client:
        entry = client.set_memory(a, "/price", JsonText(WRITTEN), source={"kind": "user"})
        assert entry.content_json == STORED and entry.content["price"] == 1.5
        assert client.get_key(a, "/price").content_json == STORED

        wm = client.set_working_memory(a, JsonText(WRITTEN), thread_id="t1")
        assert wm.content_json == STORED
        merged = client.set_working_memory(a, JsonText('{"e": 2.50}'), thread_id="t1")
        assert merged.content_json == STORED.replace('"e":1e2', '"e":2.50')
        assert client.get_working_memory(a, thread_id="t1").content_json == merged.content_json

        [state] = client.save_state(a, "s1", {"planner": JsonText(WRITTEN)})
        assert state.state_json == STORED
        assert client.load_state(a, "s1")["planner"].state_json == STORED

        memory = client.remember(
            a, "The receipt for the teal kayak rental", metadata=JsonText(WRITTEN)
        ).memory
        assert memory.metadata_json == STORED
        assert client.get(a, memory.id).metadata_json == STORED
        updated = client.update(a, memory.id, metadata=JsonText('{"price": 2.50}'))
        assert updated.metadata_json == '{"price":2.50}'

        # Checked before it is sent: nothing reaches the daemon.
        with pytest.raises(InvalidArgumentError) as err:
            client.set_working_memory(a, JsonText("[1.50]"), thread_id="t2")
        assert [v.field for v in err.value.field_violations] == ["content"]
        with pytest.raises(InvalidArgumentError):
            client.save_state(a, "s1", {"planner": JsonText("{1.50")})
