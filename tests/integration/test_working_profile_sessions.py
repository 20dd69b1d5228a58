"""Working memory, agent profile and sessions over real gRPC against a real daemon
(LanceDB on disk, the local model); with an LLM: test_session_llm.py."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2, struct_pb2
from typer.testing import CliRunner, Result

from memoryd.cli.memoryctl import app as memoryctl
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub

from ..conftest import Daemon
from .test_memory_api import violations

#: Polling deadline for expiry; generous, not a performance assertion.
EXPIRY_DEADLINE_S = 30.0


def fresh_agent() -> str:
    return f"state-{uuid.uuid4().hex[:10]}"


def struct(data: dict[str, Any]) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    out.update(data)
    return out


def duration(seconds: float) -> duration_pb2.Duration:
    out = duration_pb2.Duration()
    out.FromTimedelta(timedelta(seconds=seconds))
    return out


def code_of(call: Callable[[], Any]) -> tuple[grpc.StatusCode, grpc.RpcError]:
    with pytest.raises(grpc.RpcError) as err:
        call()
    return err.value.code(), err.value


def msg(role: int, content: str, **kw: Any) -> mpb.SessionMessage:
    return mpb.SessionMessage(role=role, content=content, **kw)  # type: ignore[arg-type]


def turns(n: int, start: int = 0) -> list[mpb.SessionMessage]:
    return [
        msg(
            mpb.MESSAGE_ROLE_USER if i % 2 == 0 else mpb.MESSAGE_ROLE_ASSISTANT,
            f"Turn {i}: the dentist appointment is on Monday the 23rd at 10:00, item {i}.",
        )
        for i in range(start, start + n)
    ]


# ---------------------------------------------------------------- working memory


def test_working_memory_round_trip(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    scope = pb.WorkingMemoryScope(thread_id="thread-1", resource_id="doc-9")
    first = memory_stub.SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(
            agent_id=agent, scope=scope, content=struct({"goal": "book", "steps": ["call"]})
        )
    ).working_memory
    assert first.version == 1 and first.scope == scope and not first.HasField("expires_at")
    merged = memory_stub.SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(agent_id=agent, scope=scope, content=struct({"n": 3}))
    ).working_memory
    assert merged.version == 2 and dict(merged.content) == {
        "goal": "book",
        "steps": merged.content["steps"],
        "n": 3,
    }
    replaced = memory_stub.SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(
            agent_id=agent,
            scope=scope,
            content=struct({"only": True}),
            mode=mpb.WORKING_MEMORY_MODE_REPLACE,
            ttl=duration(3600),
        )
    ).working_memory
    assert dict(replaced.content) == {"only": True} and replaced.version == 3
    expires = replaced.expires_at.ToDatetime() - replaced.updated_at.ToDatetime()
    assert expires == timedelta(hours=1)

    got = memory_stub.GetWorkingMemory(
        mpb.GetWorkingMemoryRequest(agent_id=agent, scope=scope)
    ).working_memory
    assert got == replaced

    # Another agent sees nothing, and cannot delete it.
    other = fresh_agent()
    code, _ = code_of(
        lambda: memory_stub.GetWorkingMemory(
            mpb.GetWorkingMemoryRequest(agent_id=other, scope=scope)
        )
    )
    assert code == grpc.StatusCode.NOT_FOUND
    assert not memory_stub.DeleteWorkingMemory(
        mpb.DeleteWorkingMemoryRequest(agent_id=other, scope=scope)
    ).deleted
    listed = memory_stub.ListWorkingMemoryScopes(mpb.ListWorkingMemoryScopesRequest(agent_id=other))
    assert list(listed.scopes) == []

    delete = mpb.DeleteWorkingMemoryRequest(agent_id=agent, scope=scope)
    assert memory_stub.DeleteWorkingMemory(delete).deleted
    assert not memory_stub.DeleteWorkingMemory(delete).deleted
    code, _ = code_of(
        lambda: memory_stub.GetWorkingMemory(
            mpb.GetWorkingMemoryRequest(agent_id=agent, scope=scope)
        )
    )
    assert code == grpc.StatusCode.NOT_FOUND


def test_working_memory_schema_and_bad_input(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    scope = pb.WorkingMemoryScope(thread_id="plan")
    schema = {
        "type": "object",
        "properties": {"steps": {"type": "array", "items": {"type": "string"}}},
        "required": ["steps"],
    }
    memory_stub.SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(
            agent_id=agent,
            scope=scope,
            content=struct({"steps": ["a"]}),
            json_schema=struct(schema),
        )
    )
    bad = mpb.SetWorkingMemoryRequest(
        agent_id=agent, scope=scope, content=struct({"steps": ["a", "b", 3]})
    )
    code, err = code_of(lambda: memory_stub.SetWorkingMemory(bad))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "is not of type 'string'" in violations(err)["content.$.steps[2]"]

    cases: list[tuple[mpb.SetWorkingMemoryRequest, str]] = [
        (mpb.SetWorkingMemoryRequest(agent_id=agent, scope=pb.WorkingMemoryScope()), "scope"),
        (
            mpb.SetWorkingMemoryRequest(
                agent_id=agent, scope=pb.WorkingMemoryScope(thread_id="x" * 300)
            ),
            "scope.thread_id",
        ),
        (
            mpb.SetWorkingMemoryRequest(
                agent_id=agent, scope=scope, json_schema=struct({"type": "nope"})
            ),
            "json_schema",
        ),
        (
            mpb.SetWorkingMemoryRequest(agent_id=agent, scope=scope, ttl=duration(-5)),
            "ttl",
        ),
        (
            mpb.SetWorkingMemoryRequest(
                agent_id=agent, scope=scope, content=struct({"steps": ["x" * 70_000]})
            ),
            "content",
        ),
        (mpb.SetWorkingMemoryRequest(agent_id=agent, scope=scope, mode=7), "mode"),  # type: ignore[arg-type]
    ]
    for request, field in cases:
        code, err = code_of(lambda r=request: memory_stub.SetWorkingMemory(r))  # type: ignore[misc]
        assert code == grpc.StatusCode.INVALID_ARGUMENT, field
        assert field in violations(err), (field, violations(err))
    # Nothing of that was stored.
    got = memory_stub.GetWorkingMemory(mpb.GetWorkingMemoryRequest(agent_id=agent, scope=scope))
    assert got.working_memory.version == 1


def test_working_memory_listing_pages_and_filters(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    for t in range(3):
        for r in range(3):
            memory_stub.SetWorkingMemory(
                mpb.SetWorkingMemoryRequest(
                    agent_id=agent,
                    scope=pb.WorkingMemoryScope(thread_id=f"t{t}", resource_id=f"r{r}"),
                    content=struct({"t": t, "r": r}),
                )
            )
    seen: list[tuple[str, str]] = []
    token = ""
    while True:
        page = memory_stub.ListWorkingMemoryScopes(
            mpb.ListWorkingMemoryScopesRequest(agent_id=agent, page_size=4, page_token=token)
        )
        seen.extend((w.scope.thread_id, w.scope.resource_id) for w in page.scopes)
        token = page.next_page_token
        if not token:
            break
    assert seen == [(f"t{t}", f"r{r}") for t in range(3) for r in range(3)]
    by_resource = memory_stub.ListWorkingMemoryScopes(
        mpb.ListWorkingMemoryScopesRequest(agent_id=agent, resource_id="r2")
    )
    assert [w.scope.thread_id for w in by_resource.scopes] == ["t0", "t1", "t2"]
    code, err = code_of(
        lambda: memory_stub.ListWorkingMemoryScopes(
            mpb.ListWorkingMemoryScopesRequest(agent_id=fresh_agent(), page_token="forged")
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "page_token" in violations(err)


def test_working_memory_ttl_expires(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    scope = pb.WorkingMemoryScope(resource_id="short-lived")
    memory_stub.SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(
            agent_id=agent, scope=scope, content=struct({"x": 1}), ttl=duration(1)
        )
    )
    get = mpb.GetWorkingMemoryRequest(agent_id=agent, scope=scope)
    deadline = time.monotonic() + EXPIRY_DEADLINE_S
    while True:
        try:
            memory_stub.GetWorkingMemory(get)
        except grpc.RpcError as exc:
            assert exc.code() == grpc.StatusCode.NOT_FOUND
            break
        assert time.monotonic() < deadline, "the scope never expired"
        time.sleep(0.1)
    listed = memory_stub.ListWorkingMemoryScopes(mpb.ListWorkingMemoryScopesRequest(agent_id=agent))
    assert list(listed.scopes) == []


# ---------------------------------------------------------------- profile


def test_profile_etags(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    code, _ = code_of(lambda: memory_stub.GetProfile(mpb.GetProfileRequest(agent_id=agent)))
    assert code == grpc.StatusCode.NOT_FOUND
    created = memory_stub.SetProfile(
        mpb.SetProfileRequest(agent_id=agent, content="# Agent\nBe brief.", if_match="none")
    ).profile
    assert created.etag and created.content == "# Agent\nBe brief."
    assert memory_stub.GetProfile(mpb.GetProfileRequest(agent_id=agent)).profile == created
    updated = memory_stub.SetProfile(
        mpb.SetProfileRequest(agent_id=agent, content="v2", if_match=f'"{created.etag}"')
    ).profile
    for stale in (created.etag, "none"):
        code, _ = code_of(
            lambda e=stale: memory_stub.SetProfile(  # type: ignore[misc]
                mpb.SetProfileRequest(agent_id=agent, content="lost", if_match=e)
            )
        )
        assert code == grpc.StatusCode.FAILED_PRECONDITION
    code, err = code_of(
        lambda: memory_stub.SetProfile(mpb.SetProfileRequest(agent_id=agent, content="x" * 70_000))
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "content" in violations(err)
    assert memory_stub.GetProfile(mpb.GetProfileRequest(agent_id=agent)).profile == updated
    # Per agent: another agent has none and its "none" precondition holds.
    other = fresh_agent()
    memory_stub.SetProfile(mpb.SetProfileRequest(agent_id=other, content="o", if_match="none"))
    assert memory_stub.GetProfile(mpb.GetProfileRequest(agent_id=agent)).profile.content == "v2"


# ---------------------------------------------------------------- sessions (no LLM)


def test_session_without_llm(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    sid = f"run-{uuid.uuid4().hex[:6]}"
    zone = memory_stub.InjectInstruction(
        mpb.InjectInstructionRequest(
            agent_id=agent,
            session_id=sid,
            kind=mpb.FIXED_ZONE_KIND_TRIGGER,
            content="The user asked to book a dentist appointment",
        )
    ).fixed_zone
    assert [z.kind for z in zone] == [mpb.FIXED_ZONE_KIND_TRIGGER]
    # Two user turns state facts; the others talk about the conversation.
    stated = {
        0: "My dentist appointment is on Monday the 23rd at 10:00.",
        2: "My dentist is Dr Lee on Baker Street.",
    }
    for i in range(29):
        turn = [msg(mpb.MESSAGE_ROLE_USER, stated[i])] if i in stated else turns(1, start=i)
        out = memory_stub.AppendMessages(
            mpb.AppendMessagesRequest(agent_id=agent, session_id=sid, messages=turn)
        )
        assert out.message_count == i + 1 and not out.compressed
    out = memory_stub.AppendMessages(
        mpb.AppendMessagesRequest(agent_id=agent, session_id=sid, messages=turns(1, start=29))
    )
    assert out.compressed and [d.component for d in out.degraded] == ["llm"]

    window = memory_stub.GetSessionWindow(
        mpb.GetSessionWindowRequest(agent_id=agent, session_id=sid, token_budget=4000)
    )
    assert window.summarizer == "extractive" and window.summary
    assert window.token_counter == "tokenizer:all-MiniLM-L6-v2"
    assert [m.seq for m in window.recent] == list(range(21, 31))
    assert window.fixed_zone[0].content.startswith("The user asked")
    assert 0 < window.tokens_used <= 4000
    assert "llm" in [d.component for d in window.degraded]
    tight = memory_stub.GetSessionWindow(
        mpb.GetSessionWindowRequest(agent_id=agent, session_id=sid, token_budget=60)
    )
    assert tight.tokens_used <= 60 and len(tight.recent) < 10

    # Another agent sees nothing.
    code, _ = code_of(
        lambda: memory_stub.GetSessionWindow(
            mpb.GetSessionWindowRequest(agent_id=fresh_agent(), session_id=sid)
        )
    )
    assert code == grpc.StatusCode.NOT_FOUND

    ended = memory_stub.EndSession(
        mpb.EndSessionRequest(agent_id=agent, session_id=sid, extract_memories=True)
    )
    *facts, episode = ended.extracted
    # The users' statements are kept as memories of their own, the talk about the
    # conversation is not.
    assert [(f.memory_type, f.content) for f in facts] == [
        (pb.MEMORY_TYPE_FACT, text) for text in stated.values()
    ]
    # The episode is the summary without the lines kept as facts, the user's own lines
    # in their words alone ("user: " on every line matched every question about them).
    assert all(f"user: {text}" in ended.summary.splitlines() for text in stated.values())
    lines = [line.partition(": ") for line in ended.summary.splitlines()]
    assert episode.memory_type == pb.MEMORY_TYPE_EPISODE and episode.content == "\n".join(
        said if who == "user" else f"{who}: {said}"
        for who, _, said in lines
        if said not in stated.values()
    )
    assert not any(text in episode.content for text in stated.values())
    assert episode.source.kind == pb.PROVENANCE_KIND_AGENT
    assert episode.source.name == "session" and episode.source.locator == f"session:{sid}"
    assert episode.source.HasField("retrieved_at")
    got = memory_stub.GetMemory(mpb.GetMemoryRequest(agent_id=agent, id=episode.id)).memory
    assert got.content == episode.content
    # The extracted facts (one per user turn, all about the appointment) rank before
    # the long summary: recall every candidate, not the default 10.
    hits = memory_stub.Recall(
        mpb.RecallRequest(agent_id=agent, query="dentist appointment", limit=50)
    )
    assert episode.id in [r.memory.id for r in hits.results]
    # Every message stays readable, the summarised ones included.
    stored = memory_stub.GetSessionMessages(
        mpb.GetSessionMessagesRequest(agent_id=agent, session_id=sid, page_size=100)
    )
    assert [m.seq for m in stored.messages] == list(range(1, 31))
    assert stored.summarized_through_seq == 30 and not stored.next_page_token

    code, _ = code_of(
        lambda: memory_stub.AppendMessages(
            mpb.AppendMessagesRequest(agent_id=agent, session_id=sid, messages=turns(1))
        )
    )
    assert code == grpc.StatusCode.FAILED_PRECONDITION


def test_session_bad_input_names_fields(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    cases: list[tuple[Callable[[], Any], str]] = [
        (
            lambda: memory_stub.AppendMessages(
                mpb.AppendMessagesRequest(
                    agent_id=agent,
                    session_id="s",
                    messages=[msg(mpb.MESSAGE_ROLE_USER, "ok"), msg(0, "no role")],
                )
            ),
            "messages[1].role",
        ),
        (
            lambda: memory_stub.AppendMessages(
                mpb.AppendMessagesRequest(
                    agent_id=agent, session_id="s", messages=[msg(mpb.MESSAGE_ROLE_USER, "")]
                )
            ),
            "messages[0].content",
        ),
        (
            lambda: memory_stub.AppendMessages(
                mpb.AppendMessagesRequest(agent_id=agent, session_id="", messages=turns(1))
            ),
            "session_id",
        ),
        (
            lambda: memory_stub.AppendMessages(
                mpb.AppendMessagesRequest(agent_id=agent, session_id="s")
            ),
            "messages",
        ),
        (
            lambda: memory_stub.InjectInstruction(
                mpb.InjectInstructionRequest(agent_id=agent, session_id="s", content="x")
            ),
            "kind",
        ),
        (
            lambda: memory_stub.GetSessionWindow(
                mpb.GetSessionWindowRequest(agent_id=agent, session_id="s", token_budget=-3)
            ),
            "token_budget",
        ),
    ]
    for call, field in cases:
        code, err = code_of(call)
        assert code == grpc.StatusCode.INVALID_ARGUMENT, field
        assert field in violations(err), (field, violations(err))
    code, _ = code_of(
        lambda: memory_stub.GetSessionWindow(
            mpb.GetSessionWindowRequest(agent_id=agent, session_id="s")
        )
    )
    assert code == grpc.StatusCode.NOT_FOUND  # nothing was created by the bad calls
    # A tool message may omit its content.
    tool = msg(mpb.MESSAGE_ROLE_TOOL, "", name="search", tool_call_id="call-1")
    out = memory_stub.AppendMessages(
        mpb.AppendMessagesRequest(agent_id=agent, session_id="s", messages=[tool])
    )
    assert out.message_count == 1


@pytest.fixture
def ctl(shared_daemon: Daemon) -> Callable[..., Result]:
    runner = CliRunner()
    env = {"MEMORYD_ADDRESS": shared_daemon.address, "MEMORYD_AGENT": None, "COLUMNS": None}

    def invoke(*args: str, input: str | None = None) -> Result:
        return runner.invoke(memoryctl, ["--timeout", "60", *args], env=env, input=input)

    return invoke


def ok_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_memoryctl_working_memory(ctl: Callable[..., Result], tmp_path: Path) -> None:
    a = ("--agent", fresh_agent())
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"properties": {"step": {"type": "integer"}}}))
    out = ok_json(
        ctl(
            "wm",
            "set",
            '{"step": 1, "goal": "dentist"}',
            "-T",
            "t1",
            "--schema",
            f"@{schema}",
            "--json",
            *a,
        )
    )
    assert out["working_memory"]["version"] == "1"
    ok_json(ctl("wm", "set", "-", "-T", "t1", "--ttl", "600", "--json", *a, input='{"step": 2}'))
    got = ok_json(ctl("wm", "get", "-T", "t1", "--json", *a))["working_memory"]
    assert got["content"] == {"step": 2.0, "goal": "dentist"} and got["expires_at"]
    bad = ctl("wm", "set", '{"step": "two"}', "-T", "t1", *a)
    assert bad.exit_code == 1 and "content.$.step" in bad.stderr
    table = ctl("wm", "ls", *a)
    assert table.exit_code == 0 and "t1" in table.stdout and "dentist" in table.stdout
    # Shown as stored: the text as typed, 1.50 not 1.5.
    assert ctl("wm", "set", '{"price": 1.50}', "-T", "t1", *a).exit_code == 0
    shown = ctl("wm", "get", "-T", "t1", *a)
    assert '"price":1.50' in shown.stdout, shown.stdout
    assert ok_json(ctl("wm", "delete", "-T", "t1", "--json", *a))["deleted"] is True
    assert "Nothing to delete" in ctl("wm", "delete", "-T", "t1", *a).stdout
    missing = ctl("wm", "get", "-T", "t1", *a)
    assert missing.exit_code == 1 and "NOT_FOUND" in missing.stderr


def test_memoryctl_profile(ctl: Callable[..., Result], tmp_path: Path) -> None:
    a = ("--agent", fresh_agent())
    doc = tmp_path / "agent.md"
    doc.write_text("# Agent\nAnswer in French.\n")
    etag = ok_json(ctl("profile", "set", str(doc), "--if-match", "none", "--json", *a))["profile"][
        "etag"
    ]
    shown = ctl("profile", "get", *a)
    assert shown.exit_code == 0 and shown.stdout == "# Agent\nAnswer in French.\n"
    assert etag in shown.stderr
    updated = ctl("profile", "set", "-", "--if-match", etag, *a, input="v2")
    assert updated.exit_code == 0 and "Saved profile" in updated.stdout
    stale = ctl("profile", "set", "-", "--if-match", etag, *a, input="v3")
    assert stale.exit_code == 1 and "FAILED_PRECONDITION" in stale.stderr


def test_memoryctl_session(ctl: Callable[..., Result]) -> None:
    a = ("--agent", fresh_agent())
    inject = ctl("session", "inject", "run-1", "Answer in French", *a)
    assert inject.exit_code == 0 and "[instruction] Answer in French" in inject.stdout
    ok_json(ctl("session", "append", "run-1", "My dentist appointment is on Monday.", "--json", *a))
    lines = "\n".join(
        json.dumps({"role": r, "content": c})
        for r, c in (("assistant", "Which time?"), ("user", "I need it at 10:00."))
    )
    appended = ok_json(ctl("session", "append", "run-1", "--jsonl", "-", "--json", *a, input=lines))
    assert appended["message_count"] == "3"
    window = ctl("session", "window", "run-1", "--budget", "200", *a)
    assert window.exit_code == 0
    assert (
        "#3 user: I need it at 10:00." in window.stdout
        and "tokenizer:all-MiniLM-L6-v2" in window.stdout
    )
    data = ok_json(ctl("session", "window", "run-1", "--json", *a))
    assert [m["seq"] for m in data["recent"]] == ["1", "2", "3"]
    ended = ok_json(ctl("session", "end", "run-1", "--extract", "--json", *a))
    kept = [(m["memory_type"], m["content"]) for m in ended["extracted"]]
    assert kept[:2] == [
        ("MEMORY_TYPE_FACT", "My dentist appointment is on Monday."),
        ("MEMORY_TYPE_FACT", "I need it at 10:00."),
    ]
    assert [t for t, _ in kept[2:]] == ["MEMORY_TYPE_EPISODE"]
    # One message a page: the command joins the pages.
    listed = ctl("session", "messages", "run-1", "--from", "2", "--page-size", "1", *a)
    assert listed.exit_code == 0 and "#2 assistant: Which time?" in listed.stdout
    assert "#3 user: I need it at 10:00." in listed.stdout
    assert "#1 " not in listed.stdout
    deleted = ok_json(ctl("session", "delete", "run-1", "2", "--json", *a))
    assert deleted["deleted_seqs"] == ["2"]
    cleared = ctl("session", "clear", "run-1", "--yes", *a)
    assert cleared.exit_code == 0 and "2 messages deleted" in cleared.stdout
    late = ctl("session", "append", "run-1", "too late", *a)
    assert late.exit_code == 1 and "FAILED_PRECONDITION" in late.stderr
    usage = ctl("session", "append", "run-2", *a)
    assert usage.exit_code == 2
