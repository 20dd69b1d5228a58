"""SnapshotService over real gRPC against the shared daemon (LanceDB on disk, the
local model): BuildSnapshot, DefaultRead, SaveState / LoadState, and memoryctl."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from typer.testing import CliRunner

from memoryd.cli.memoryctl import app as memoryctl
from memoryd_proto.v1 import common_pb2
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from memoryd_proto.v1.snapshot_service_pb2_grpc import SnapshotServiceStub

from ..conftest import Daemon
from .test_memory_api import violations

USER_SOURCE_PB = common_pb2.Provenance(kind=common_pb2.PROVENANCE_KIND_USER)

S = spb
SCOPE = pb.WorkingMemoryScope(thread_id="thread-1")


def fresh_agent() -> str:
    return f"snap-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def snapshot_stub(shared_daemon: Daemon) -> Iterator[SnapshotServiceStub]:
    with shared_daemon.channel() as channel:
        yield SnapshotServiceStub(channel)


def value(data: Any) -> struct_pb2.Value:
    out = struct_pb2.Value()
    if data is None:
        out.null_value = struct_pb2.NULL_VALUE
    elif isinstance(data, str):
        out.string_value = data
    else:
        out.struct_value.update(data)
    return out


def populate(memory: MemoryServiceStub, agent: str) -> dict[str, str]:
    def remember(text: str, **kw: Any) -> str:
        return str(
            memory.Remember(mpb.RememberRequest(agent_id=agent, content=text, **kw)).memory.id
        )

    ids = {
        "pinned": remember("The user is allergic to peanuts.", tags=["pinned"], importance=0.9),
        "dentist": remember("The dentist appointment is on Monday at 10:00."),
        "slides": remember("The user prefers dark blue slides for presentations."),
        "secret": remember(
            "The launch code name is Bluebird.", security_level=pb.SECURITY_LEVEL_RESTRICTED
        ),
    }
    memory.SetProfile(mpb.SetProfileRequest(agent_id=agent, content="You are a careful assistant."))
    content = struct_pb2.Struct()
    content.update({"goal": "reschedule the dentist", "step": 2})
    memory.SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(agent_id=agent, scope=SCOPE, content=content)
    )
    memory.InjectInstruction(
        mpb.InjectInstructionRequest(
            agent_id=agent,
            session_id="s1",
            kind=mpb.FIXED_ZONE_KIND_TRIGGER,
            content="The dentist called.",
        )
    )
    memory.AppendMessages(
        mpb.AppendMessagesRequest(
            agent_id=agent,
            session_id="s1",
            messages=[
                mpb.SessionMessage(
                    role=mpb.MESSAGE_ROLE_USER, content="Please move my appointment."
                ),
                mpb.SessionMessage(role=mpb.MESSAGE_ROLE_ASSISTANT, content="To which day?"),
            ],
        )
    )
    return ids


def test_build_snapshot_every_section(
    memory_stub: MemoryServiceStub, snapshot_stub: SnapshotServiceStub
) -> None:
    agent = fresh_agent()
    ids = populate(memory_stub, agent)
    resp = snapshot_stub.BuildSnapshot(
        S.BuildSnapshotRequest(
            agent_id=agent,
            trigger="When is my dentist appointment?",
            scope=SCOPE,
            session_id="s1",
            token_budget=1000,
            semantic_limit=1,
        )
    )
    assert resp.token_budget == 1000 and 0 < resp.tokens_used <= 1000
    assert resp.token_counter == "tokenizer:all-MiniLM-L6-v2"
    assert [u.section for u in resp.usage] == [
        S.SNAPSHOT_SECTION_PINNED,
        S.SNAPSHOT_SECTION_PROFILE,
        S.SNAPSHOT_SECTION_WORKING,
        S.SNAPSHOT_SECTION_SEMANTIC,
        S.SNAPSHOT_SECTION_RECENT,
        S.SNAPSHOT_SECTION_SESSION,
    ]
    semantic = [i.id for i in resp.items if i.section == S.SNAPSHOT_SECTION_SEMANTIC]
    assert semantic == [ids["dentist"]]
    assert "## Pinned memories\n- The user is allergic to peanuts." in resp.text
    assert "Bluebird" in resp.text  # the sidecar principal is cleared for RESTRICTED
    lowered = snapshot_stub.BuildSnapshot(
        S.BuildSnapshotRequest(
            agent_id=agent, trigger="code name", max_security_level=pb.SECURITY_LEVEL_INTERNAL
        )
    )
    assert "Bluebird" not in lowered.text
    assert ids["secret"] not in {i.id for i in lowered.items} | {o.id for o in lowered.omitted}


def test_xml_and_every_budget_is_respected(
    memory_stub: MemoryServiceStub, snapshot_stub: SnapshotServiceStub
) -> None:
    agent = fresh_agent()
    populate(memory_stub, agent)
    for budget in (1, 3, 8, 15, 25, 40, 70, 120, 250):
        for fmt in (S.SNAPSHOT_FORMAT_MARKDOWN, S.SNAPSHOT_FORMAT_XML):
            resp = snapshot_stub.BuildSnapshot(
                S.BuildSnapshotRequest(
                    agent_id=agent,
                    trigger="dentist",
                    scope=SCOPE,
                    session_id="s1",
                    token_budget=budget,
                    format=fmt,
                )
            )
            assert resp.tokens_used <= budget
            assert sum(1 for i in resp.items if i.truncated) <= 1
            if fmt == S.SNAPSHOT_FORMAT_XML and resp.items:
                assert resp.text.startswith("<long_term_memory>\n")
                assert resp.text.endswith("\n</long_term_memory>")
            if budget <= 3:
                assert resp.text == "" and resp.items == []
            reasons = {o.reason for o in resp.omitted}
            assert reasons <= {"budget", "duplicate"}


def test_snapshot_bad_input_names_the_field(
    memory_stub: MemoryServiceStub, snapshot_stub: SnapshotServiceStub
) -> None:
    agent = fresh_agent()
    cases = [
        (S.BuildSnapshotRequest(agent_id=agent, token_budget=-1), "token_budget"),
        (S.BuildSnapshotRequest(agent_id=agent, sections=[0]), "sections[0]"),
        (S.BuildSnapshotRequest(agent_id=agent, sections=[S.SNAPSHOT_SECTION_WORKING]), "scope"),
        (
            S.BuildSnapshotRequest(agent_id=agent, sections=[S.SNAPSHOT_SECTION_SESSION]),
            "session_id",
        ),
        (S.BuildSnapshotRequest(agent_id=agent, trigger_embedding=[0.1, 0.2]), "trigger_embedding"),
        (S.BuildSnapshotRequest(agent_id=agent, format=7), "format"),
        (S.BuildSnapshotRequest(agent_id=""), "agent_id"),
    ]
    for request, field in cases:
        with pytest.raises(grpc.RpcError) as err:
            snapshot_stub.BuildSnapshot(request)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert field in violations(err.value), (field, violations(err.value))


def test_default_read(memory_stub: MemoryServiceStub, snapshot_stub: SnapshotServiceStub) -> None:
    agent = fresh_agent()
    soon = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    for key, content in (
        ("/user/style", {"summary": "Short answers, code first.", "type": "preference"}),
        ("/task/today", {"text": "Call the dentist back", "expired_at": soon}),
        ("/user/old", "to delete"),
        ("/user/old", None),
    ):
        memory_stub.SetMemory(
            mpb.SetMemoryRequest(
                agent_id=agent, key=key, content=value(content), source=USER_SOURCE_PB
            )
        )
    resp = snapshot_stub.DefaultRead(S.DefaultReadRequest(agent_id=agent))
    assert resp.text.splitlines() == [
        "[Agent Memory]",
        "/task/today Call the dentist back",
        "/user/style preference Short answers, code first.",
    ]
    assert [line.type for line in resp.lines] == ["", "preference"]
    assert resp.token_counter == "tokenizer:all-MiniLM-L6-v2" and 0 < resp.tokens_used <= 300
    later = S.DefaultReadRequest(agent_id=agent)
    later.current_time.FromDatetime(datetime.now(UTC) + timedelta(hours=2))
    assert [line.key for line in snapshot_stub.DefaultRead(later).lines] == ["/user/style"]
    limit = resp.tokens_used - 1  # room for the header and the first line only
    tiny = snapshot_stub.DefaultRead(S.DefaultReadRequest(agent_id=agent, token_limit=limit))
    assert len(tiny.lines) == 1 and tiny.tokens_used <= limit


def test_save_and_load_state(snapshot_stub: SnapshotServiceStub) -> None:
    agent = fresh_agent()
    state = struct_pb2.Struct()
    state.update({"step": 3, "plan": ["call", "book"], "done": False})
    first = snapshot_stub.SaveState(
        S.SaveStateRequest(
            agent_id=agent,
            session_id="s1",
            components=[S.StateComponent(name="planner", state=state)],
        )
    )
    assert first.components[0].version == 1
    second = snapshot_stub.SaveState(
        S.SaveStateRequest(
            agent_id=agent,
            session_id="s1",
            components=[S.StateComponent(name="planner", state=state)],
        )
    )
    assert second.components[0].version == 2
    loaded = snapshot_stub.LoadState(S.LoadStateRequest(agent_id=agent, session_id="s1"))
    assert [(c.name, c.version) for c in loaded.components] == [("planner", 2)]
    assert loaded.components[0].state == state
    assert not snapshot_stub.LoadState(
        S.LoadStateRequest(agent_id=fresh_agent(), session_id="s1")
    ).components
    with pytest.raises(grpc.RpcError) as err:
        snapshot_stub.SaveState(
            S.SaveStateRequest(
                agent_id=agent, session_id="s1", components=[S.StateComponent(name="")]
            )
        )
    assert "components[0].name" in violations(err.value)


Invoke = Callable[..., Any]


@pytest.fixture
def ctl(shared_daemon: Daemon) -> Invoke:
    runner = CliRunner()

    def invoke(*args: str) -> Any:
        env = {"MEMORYD_ADDRESS": shared_daemon.address, "MEMORYD_AGENT": None, "COLUMNS": None}
        return runner.invoke(memoryctl, ["--timeout", "60", *args], env=env)

    return invoke


def test_memoryctl_snapshot_default_read_and_state(
    memory_stub: MemoryServiceStub, ctl: Invoke
) -> None:
    agent = fresh_agent()
    populate(memory_stub, agent)
    memory_stub.SetMemory(
        mpb.SetMemoryRequest(
            agent_id=agent, key="/user/name", content=value("Ada"), source=USER_SOURCE_PB
        )
    )
    result = ctl("snapshot", "dentist", "--agent", agent, "--budget", "200", "--session", "s1")
    assert result.exit_code == 0, result.output
    assert (
        "## Pinned memories" in result.stdout
        and "user: Please move my appointment." in result.stdout
    )
    assert "total" in result.stderr
    result = ctl("snapshot", "dentist", "--agent", agent, "--format", "xml", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["text"].startswith("<long_term_memory>") and data["tokens_used"] <= 500
    result = ctl("default-read", "--agent", agent)
    assert result.exit_code == 0 and "/user/name Ada" in result.stdout
    result = ctl("state", "save", "s1", "planner", '{"step": 1}', "--agent", agent)
    assert result.exit_code == 0, result.output
    result = ctl("state", "load", "s1", "--agent", agent, "--json")
    assert json.loads(result.stdout)["components"][0]["state"] == {"step": 1}
    result = ctl("state", "save", "s1", "planner", '{"price": 1.50}', "--agent", agent)
    assert result.exit_code == 0 and '{"price":1.50}' in result.stdout, result.output
    result = ctl("snapshot", "x", "--agent", agent, "--section", "working")
    assert result.exit_code == 1 and "scope" in result.stderr
