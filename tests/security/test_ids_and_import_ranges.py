"""Agent ids in one canonical form, and imported counters within range (issue 30).

Homoglyph and full-width agent ids were separate agents: a full-width id now names the
same agent as its plain letters (NFKC), and an id mixing scripts (a Cyrillic letter in
a Latin name) or holding IPA look-alikes is INVALID_ARGUMENT naming agent_id, over
gRPC and MCP alike; an id in one script of its own stays a valid, separate agent.

Import accepted a session's summarized_through_seq / stored_messages up to 2^63 - 1
(ClearSession then reported 9223372036854775807 deleted): each counter and seq of an
imported session is checked, and the rejection names the record's field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import pytest
from google.protobuf.message import Message

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from tests.conftest import Daemon
from tests.mcp.support import http_client, start_daemon
from tests.security.support import KeySpec, Outcome, all_rpcs, invoke

ADMIN = KeySpec(
    "ids-" + "i" * 26, "ids-admin", "ids", "*", "restricted", ("read", "write", "admin")
)
#: May act for one agent only, named in plain letters.
NARROW = KeySpec(
    "narrow-" + "n" * 23, "narrow", "ids", ("planner",), "restricted", ("read", "write")
)
RPCS = {rpc.label: rpc for rpc in all_rpcs()}
USER = pb.Provenance(kind=pb.PROVENANCE_KIND_USER)
FULL_WIDTH = "".join(chr(0xFEE0 + ord(c)) for c in "planner")  # the same letters, full width
CYRILLIC_A = "\u0430"  # looks like a Latin "a"
MIXED = f"pl{CYRILLIC_A}nner"
IPA_ALPHA = "\u0251"  # LATIN SMALL LETTER ALPHA, an "a" to the eye
ALL_CYRILLIC = "\u0430\u0433\u0435\u043d\u0442"  # a word in one script: a valid id


@dataclass
class World:
    daemon: Daemon
    mcp_url: str
    channel: grpc.Channel

    def call(self, label: str, request: Message | list[Message], key: KeySpec = ADMIN) -> Outcome:
        return invoke(self.channel, RPCS[label], request, key.metadata)

    def agents(self) -> set[str]:
        """The agents the tenant-wide export finds."""
        out = self.call("LifecycleService.Export", lpb.ExportRequest(all_agents=True))
        assert out.ok, out.message
        return {
            r.record.key_event.agent_id for r in out.responses if r.record.HasField("key_event")
        } | {r.record.session.agent_id for r in out.responses if r.record.HasField("session")}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    daemon, url = start_daemon(tmp_path_factory.mktemp("ids"), [ADMIN, NARROW])
    channel = grpc.insecure_channel(daemon.address)
    try:
        yield World(daemon, url, channel)
    finally:
        channel.close()
        daemon.kill()


def set_key(agent: str, key: str = "/k") -> mpb.SetMemoryRequest:
    return mpb.SetMemoryRequest(agent_id=agent, key=key, content_json='"v"', source=USER)


def test_a_full_width_agent_id_names_the_same_agent_over_grpc(world: World) -> None:
    assert world.call("MemoryService.SetMemory", set_key(FULL_WIDTH, "/wide")).ok
    got = world.call("MemoryService.GetKey", mpb.GetKeyRequest(agent_id="planner", key="/wide"))
    assert got.ok, got.message
    listed = world.call("MemoryService.ListKeys", mpb.ListKeysRequest(agent_id=FULL_WIDTH))
    assert [e.key for e in listed.responses[0].entries] == ["/wide"]
    # A principal that may act for "planner" only may use either spelling.
    narrow = world.call(
        "MemoryService.GetKey", mpb.GetKeyRequest(agent_id=FULL_WIDTH, key="/wide"), NARROW
    )
    assert narrow.ok, narrow.message
    assert FULL_WIDTH not in world.agents() and "planner" in world.agents()


@pytest.mark.parametrize("agent", [MIXED, f"pl{IPA_ALPHA}nner", f"x{CYRILLIC_A}", "a\u200bb"])
def test_confusable_agent_ids_are_refused_over_grpc(world: World, agent: str) -> None:
    for label, request in (
        ("MemoryService.SetMemory", set_key(agent)),
        ("MemoryService.GetKey", mpb.GetKeyRequest(agent_id=agent, key="/k")),
        ("MemoryService.Remember", mpb.RememberRequest(agent_id=agent, content="x")),
    ):
        out = world.call(label, request)
        assert out.code == grpc.StatusCode.INVALID_ARGUMENT, (label, out.code, out.message)
        assert [f for f, _ in out.violations] == ["agent_id"]
    narrow = world.call("MemoryService.GetKey", mpb.GetKeyRequest(agent_id=MIXED, key="/k"), NARROW)
    assert narrow.code == grpc.StatusCode.INVALID_ARGUMENT
    assert agent not in world.agents()


def test_an_id_in_one_script_of_its_own_is_a_separate_valid_agent(world: World) -> None:
    assert world.call("MemoryService.SetMemory", set_key(ALL_CYRILLIC)).ok
    assert ALL_CYRILLIC in world.agents()


async def test_agent_ids_over_mcp(world: World) -> None:
    async with http_client(world.mcp_url, ADMIN.raw) as client:
        written = await client.call_tool(
            "set_memory", {"key": "/mcp", "value": 1, "source": "user", "agent_id": FULL_WIDTH}
        )
        assert not written.is_error, written
        got = await client.call_tool("get_memory_key", {"key": "/mcp", "agent_id": "planner"})
        refused = await client.call_tool(
            "set_memory", {"key": "/mcp", "value": 1, "source": "user", "agent_id": MIXED}
        )
        read_refused = await client.call_tool("recall", {"query": "x", "agent_id": MIXED})
    assert got.structured_content is not None and got.structured_content["found"] is True
    for result in (refused, read_refused):
        assert result.is_error
        detail = json.loads(result.content[0].text)
        assert detail["error"] == "INVALID_ARGUMENT" and list(detail["fields"]) == ["agent_id"]


# ---------------------------------------------------------------------- import ranges


def _session_export(world: World, agent: str) -> tuple[lpb.ExportRecord, lpb.ExportRecord]:
    append = mpb.AppendMessagesRequest(
        agent_id=agent,
        session_id="s",
        messages=[
            mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content="one"),
            mpb.SessionMessage(role=mpb.MESSAGE_ROLE_ASSISTANT, content="two"),
        ],
    )
    assert world.call("MemoryService.AppendMessages", append).ok
    out = world.call("LifecycleService.Export", lpb.ExportRequest(agent_id=agent))
    records = [r.record for r in out.responses if r.HasField("record")]
    header = next(r for r in records if r.HasField("header"))
    session = next(r for r in records if r.HasField("session"))
    return header, session


def _imported(
    world: World, header: lpb.ExportRecord, record: lpb.ExportRecord, agent: str
) -> lpb.ImportResponse:
    stream = [
        lpb.ImportRequest(record=header, target_agent_id=agent),
        lpb.ImportRequest(record=record, target_agent_id=agent),
    ]
    out = world.call("LifecycleService.Import", stream)
    assert out.ok, out.message
    response = out.responses[0]
    assert isinstance(response, lpb.ImportResponse)
    return response


MAX_INT64 = 2**63 - 1


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("summarized_through_seq", MAX_INT64, "session.summarized_through_seq"),
        ("stored_messages", MAX_INT64, "session.stored_messages"),
        ("message_count", MAX_INT64, "session.message_count"),
        ("message_count", 10**12, "session.message_count"),
        ("summarized_through_seq", -1, "session.summarized_through_seq"),
        ("stored_messages", 1, "session.stored_messages"),  # fewer than the 2 kept turns
    ],
)
def test_imported_session_counters_are_range_checked(
    world: World, field: str, value: int, named: str
) -> None:
    header, session = _session_export(world, f"src-{field}-{value}")
    poisoned = lpb.ExportRecord()
    poisoned.CopyFrom(session)
    setattr(poisoned.session, field, value)
    if field != "summarized_through_seq":
        poisoned.session.summarized_through_seq = max(poisoned.session.summarized_through_seq, 0)
    target = f"dst-{field}-{value}"
    response = _imported(world, header, poisoned, target)
    assert response.imported == 0 and len(response.rejected) == 1
    assert f"{named}:" in response.rejected[0].reason, response.rejected[0].reason
    window = mpb.GetSessionWindowRequest(agent_id=target, session_id="s")
    assert world.call("MemoryService.GetSessionWindow", window).code == grpc.StatusCode.NOT_FOUND


def test_imported_message_seq_and_compression_are_range_checked(world: World) -> None:
    header, session = _session_export(world, "src-seq")
    poisoned = lpb.ExportRecord()
    poisoned.CopyFrom(session)
    poisoned.session.compression.compress_threshold_messages = 2**31 - 1
    response = _imported(world, header, poisoned, "dst-compression")
    assert "session.compression.compress_threshold_messages:" in response.rejected[0].reason
    message = lpb.ExportRecord()
    message.session_message.agent_id = "src-seq"
    message.session_message.session_id = "s"
    message.session_message.session_created_at.CopyFrom(session.session.created_at)
    message.session_message.message.CopyFrom(session.session.messages[0])
    message.session_message.message.seq = MAX_INT64
    response = _imported(world, header, message, "dst-seq")
    assert "session_message.message.seq:" in response.rejected[0].reason


def test_a_valid_session_imports_and_clears_its_true_count(world: World) -> None:
    header, session = _session_export(world, "src-valid")
    response = _imported(world, header, session, "dst-valid")
    assert response.imported == 1 and not response.rejected
    cleared = world.call(
        "MemoryService.ClearSession", mpb.ClearSessionRequest(agent_id="dst-valid", session_id="s")
    )
    assert cleared.ok and cleared.responses[0].deleted == 2
