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
from google.protobuf import struct_pb2

from memoryd_client import MemorydClient
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
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
