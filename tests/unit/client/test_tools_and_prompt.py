"""Agent tool definitions and planning (pure), prompt injection, and the snapshot
fallback to recall against a real loopback server that lacks BuildSnapshot."""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest

from memoryd_client import AsyncMemorydClient, MemorydClient, inject_context, tool_definitions
from memoryd_client.prompt import HEADER, MemoryContext
from memoryd_client.tool_table import TOOLS
from memoryd_client.tools import (
    TOOL_NAMES,
    MemoryTools,
    ToolArgumentError,
    ToolContext,
    UnknownToolError,
    plan_tool_call,
)
from memoryd_proto.v1 import common_pb2 as pb
from tests.unit.client.fake_server import Script, fake_daemon

CTX = ToolContext(agent_id="agent", session_id="s1", thread_id="t1")


def test_definitions_have_the_openai_function_shape() -> None:
    defs = tool_definitions()
    assert [d["function"]["name"] for d in defs] == list(TOOL_NAMES)
    assert set(TOOL_NAMES) == {
        "remember", "recall", "set_memory", "update_working_memory", "read_agent_memory",
        "update_agent_memory", "record", "retrieve",
    }  # fmt: skip
    for d in defs:
        assert d["type"] == "function"
        fn = d["function"]
        assert fn["description"] and fn["parameters"]["type"] == "object"
        assert set(fn["parameters"]["required"]) <= set(fn["parameters"]["properties"])
        # Whose memory comes from the ToolContext, never from the model.
        assert not {"agent_id", "session_id", "thread_id"} & set(fn["parameters"]["properties"])
        json.dumps(d)  # plain JSON
    defs[0]["function"]["name"] = "changed"
    assert tool_definitions()[0]["function"]["name"] == "remember"  # copies
    with pytest.raises(UnknownToolError):
        tool_definitions(["nope"])


def test_plans_map_arguments_to_requests() -> None:
    call = plan_tool_call(CTX, "remember", '{"content": "likes tea", "tags": ["drink"]}')
    assert (call.method, call.request.content, list(call.request.tags)) == (
        "Remember",
        "likes tea",
        ["drink"],
    )
    assert call.request.agent_id == "agent" and not call.idempotent
    assert plan_tool_call(CTX, "recall", {"query": "tea", "limit": 3}).request.limit == 3
    key = plan_tool_call(
        CTX, "set_memory", {"key": "/user/theme", "value": None, "source": "agent"}
    ).request
    assert key.key == "/user/theme" and key.content_json == "null"
    assert key.source.kind == pb.PROVENANCE_KIND_AGENT
    wm = plan_tool_call(CTX, "update_working_memory", {"updates": {"step": 2}}).request
    assert wm.scope.thread_id == "t1" and wm.content_json == '{"step":2}'
    rec = plan_tool_call(CTX, "record", {"messages": [{"role": "user", "content": "hi"}]})
    assert rec.method == "RememberBatch"  # AgentScope's record: to long-term memory
    assert [(i.content, list(i.tags)) for i in rec.request.items] == [("hi", ["role:user"])]
    sourced = plan_tool_call(
        CTX, "set_memory", {"key": "/kb/tea", "value": "x", "source": "web:https://e.org/t"}
    ).request
    assert (sourced.source.name, sourced.source.locator) == ("e.org", "https://e.org/t")
    assert sourced.source.HasField("retrieved_at")
    ttl = plan_tool_call(CTX, "update_working_memory", {"updates": {}, "ttl_seconds": 60}).request
    assert ttl.ttl.seconds == 60
    profile = plan_tool_call(CTX, "update_agent_memory", {"content": "# A", "etag": "abc"})
    assert (profile.method, profile.request.if_match) == ("SetProfile", "abc")
    assert plan_tool_call(CTX, "retrieve", {"source": "session"}).method == "GetSessionWindow"
    memory = plan_tool_call(CTX, "retrieve", {"source": "memory", "query": "tea"})
    assert memory.method == "Recall"
    snap = plan_tool_call(CTX, "build_snapshot", {"trigger": "tea", "context_window": 2})
    assert (snap.method, snap.request.context_window) == ("BuildSnapshot", 2)
    assert not plan_tool_call(CTX, "build_snapshot", {}).request.HasField("context_window")


def test_the_design_documents_tool_forms() -> None:
    """Seed 000's update_working_memory(thread_id, data, ttl_seconds: 0 = never expires)
    and seed 004's record_to_memory(thinking, content[]) / retrieve_from_memory."""
    data = plan_tool_call(CTX, "update_working_memory", {"data": {"task": "x"}, "ttl_seconds": 0})
    assert data.request.content_json == '{"task":"x"}'
    assert data.request.HasField("ttl") and data.request.ttl.ToTimedelta().total_seconds() == 0
    kept = plan_tool_call(CTX, "update_working_memory", {"updates": {"a": 1}}).request
    assert not kept.HasField("ttl")  # not given: the scope keeps its expiry
    spec = TOOLS["update_working_memory"].input_schema(with_context=False)
    assert spec["required"] == [] and {"data", "updates"} <= set(spec["properties"])
    recorded = plan_tool_call(
        CTX,
        "record_to_memory",
        {"thinking": "the user told me", "content": ["Ada likes tea", "Ada lives in Lisbon"]},
    )
    assert recorded.method == "RememberBatch"
    items = recorded.request.items
    assert [(i.content, list(i.tags)) for i in items] == [
        ("Ada likes tea", ["record_to_memory"]),
        ("Ada lives in Lisbon", ["record_to_memory"]),
    ]
    assert json.loads(items[0].metadata_json) == {"thinking": "the user told me"}
    assert items[0].source.kind == pb.PROVENANCE_KIND_AGENT
    with pytest.raises(UnknownToolError):  # several Recalls: MemoryTools runs them
        plan_tool_call(CTX, "retrieve_from_memory", {"keywords": ["tea"]})


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("update_working_memory", {}, "updates: is required \\(or data\\)"),
        ("update_working_memory", {"data": {}, "updates": {}}, "data: give updates or data"),
        ("update_working_memory", {"data": {}, "ttl_seconds": -1}, "ttl_seconds: must be at"),
        ("record_to_memory", {"thinking": "t", "content": []}, "content: must have at least"),
        ("record_to_memory", {"content": ["x"]}, "thinking: is required"),
        ("remember", "{}", "content: is required"),
        ("remember", "not json", "not JSON"),
        ("remember", "[1]", "JSON object"),
        ("remember", {"content": "x", "mood": "happy"}, "mood: is not an argument"),
        ("remember", {"content": "x", "agent_id": "other"}, "agent_id: is not an argument"),
        ("recall", {"query": 3}, "query: must be of type string"),
        ("build_snapshot", {"context_window": 6}, "context_window: "),
        ("set_memory", {"key": "/k"}, "value: is required"),
        ("set_memory", {"key": "/k", "value": 1, "source": "pigeon"}, "source: "),
        ("retrieve", {"source": "memory"}, "query: is required"),
        ("retrieve", {"source": "elsewhere"}, "source: must be one of"),
    ],
)
def test_bad_arguments_are_explained(name: str, arguments: Any, message: str) -> None:
    with pytest.raises(ToolArgumentError, match=message):
        plan_tool_call(CTX, name, arguments)


def test_session_tools_need_a_session() -> None:
    with pytest.raises(ToolArgumentError, match="session_id"):
        plan_tool_call(ToolContext("agent"), "retrieve", {"source": "session"})


def test_inject_merges_into_the_system_message_and_replaces_old_blocks() -> None:
    messages = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "hi"},
    ]
    once = inject_context(messages, "- likes tea")
    assert once[0]["content"] == f"You are helpful.\n\n{HEADER}\n- likes tea"
    assert messages[0]["content"] == "You are helpful."  # not changed in place
    twice = inject_context(once, "- likes coffee")
    assert twice[0]["content"] == f"You are helpful.\n\n{HEADER}\n- likes coffee"
    assert inject_context([{"role": "user", "content": "hi"}], "x")[0] == {
        "role": "system",
        "content": f"{HEADER}\nx",
    }
    assert inject_context(messages, "  ") == messages


def test_inject_as_its_own_system_message() -> None:
    messages = [{"role": "system", "content": "rules"}, {"role": "user", "content": "hi"}]
    out = inject_context(messages, MemoryContext("- fact", "snapshot"), mode="system")
    assert [m["role"] for m in out] == ["system", "system", "user"]
    assert out[1]["content"] == f"{HEADER}\n- fact"
    again = inject_context(out, "- newer", mode="system")
    assert [m["content"] for m in again] == ["rules", f"{HEADER}\n- newer", "hi"]


def test_snapshot_when_built() -> None:
    script = Script()
    with fake_daemon(script) as address, MemorydClient(address) as client:
        context = client.memory_context("agent", "tea")
    assert (context.source, context.text, context.note) == ("snapshot", "snapshot for tea", "")


def test_falls_back_to_recall_when_build_snapshot_is_unimplemented() -> None:
    script = Script(failures={"BuildSnapshot": 99}, code=grpc.StatusCode.UNIMPLEMENTED)
    with fake_daemon(script) as address, MemorydClient(address) as client:
        context = client.memory_context("agent", "tea")
        messages = client.with_memory([{"role": "user", "content": "coffee?"}], "agent")
    assert context.source == "recall" and "BuildSnapshot is not available" in context.note
    assert context.text == "- about tea"
    assert messages[0] == {"role": "system", "content": f"{HEADER}\n- about coffee?"}
    assert script.calls == {"BuildSnapshot": 2, "Recall": 2}


async def test_async_fallback_and_tools() -> None:
    script = Script(failures={"BuildSnapshot": 99}, code=grpc.StatusCode.UNIMPLEMENTED)
    with fake_daemon(script) as address:
        async with AsyncMemorydClient(address) as client:
            context = await client.memory_context("agent", "tea")
    assert context.source == "recall" and context.text == "- about tea"


def test_tool_errors_reach_the_model_as_json() -> None:
    script = Script(failures={"Remember": 1}, code=grpc.StatusCode.PERMISSION_DENIED)
    with fake_daemon(script) as address, MemorydClient(address) as client:
        tools = MemoryTools(client, CTX)
        denied = json.loads(tools.handle_tool_call("remember", '{"content": "x"}'))
        assert denied["error"] == "PERMISSION_DENIED"
        bad = json.loads(tools.handle_tool_call("remember", "{}"))
        assert bad == {"error": "INVALID_ARGUMENT", "message": "content: is required"}
        ok = json.loads(tools.handle_tool_call("remember", '{"content": "x"}'))
        assert ok == {"id": "m1", "deduplicated": False}
        hits = json.loads(tools.handle_tool_call("recall", '{"query": "tea"}'))
        assert hits["memories"][0]["content"] == "about tea"
        with pytest.raises(UnknownToolError):
            tools.handle_tool_call("delete_everything", "{}")
