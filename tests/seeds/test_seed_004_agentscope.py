# ruff: noqa: RUF001, RUF002 - the document is Chinese: fullwidth punctuation, on purpose.
"""Seed 004, "记忆架构" (AgentScope-style memory), replayed against a daemon.

The document designs a short-term message memory (a session) that compresses itself,
a long-term memory the framework or the agent drives, and state save / load. Its
checkable requirements, by section:

- 短期记忆 / 接口定义: addMessage, getMessages, deleteMessage(index), clear.
- 消息生命周期: user message, assistant reply, tool result, in that order.
- AutoContextMemory: msgThreshold(30), tokenRatio(0.3), lastKeep(10); 50 messages
  become about 15 plus a summary plus offload references; progressive compression:
  1. merge adjacent messages, 2. summarise history, 3. offload large content.
- 上下文窗口管理: a token estimate; when over the limit, summary + recent messages
  (窗口滑动策略: truncate to the last N, summarise, offload to external storage).
- 工具调用的记忆: an assistant message with ToolUseBlock(call_001, get_weather,
  {city: 北京}) and a tool result for call_001 ("北京：晴").
- 长期记忆 / 接口定义: record(List<Msg>), retrieve(Msg).
- 工作模式: STATIC_CONTROL (retrieve before reasoning into <long_term_memory>, record
  after the reply), AGENT_CONTROL (tools), BOTH.
- AGENT_CONTROL: record_to_memory(thinking: String, content: List<String>) and
  retrieve_from_memory(keywords: List<String>), by those names.
- Mem0 实现: memories per agentId and userId.
- 状态持久化: saveState / loadState; SessionManager.forSessionId("user123"),
  loadIfExists, saveSession; the JsonSession storage format example.
- 消息流转: getMessages() → a Formatter → the LLM API's format.
"""

from __future__ import annotations

import json
from typing import Any

from memoryd_client import (
    AGENT_CONTROL_TOOLS,
    AsyncMemorydClient,
    AsyncMemoryTools,
    MemoryTools,
    ToolContext,
)
from tests.seeds.conftest import WRITER, SeedDaemon, agent

#: A 30 KB tool result (issue 33 replayed the document's offloading with one).
FORECAST = "".join(
    f"北京 {i % 16} 区：晴，{15 + i % 10} 度，东北风 {i % 4 + 1} 级。 district {i}: sunny.\n"
    for i in range(500)
)
#: 存储格式: the JsonSession example, verbatim.
JSON_SESSION: dict[str, Any] = {
    "sessionId": "user123",
    "components": {
        "InMemoryMemory": {
            "messages": [
                {"role": "USER", "content": [{"type": "text", "text": "你好"}]},
                {
                    "role": "ASSISTANT",
                    "content": [{"type": "text", "text": "你好！有什么可以帮助你的？"}],
                },
            ]
        },
        "ReActAgent": {"memory": "InMemoryMemory", "interrupted": False},
    },
    "timestamp": "2024-01-15T10:30:00Z",
}
#: 工具调用的记忆: the two messages of one tool call.
TOOL_CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [
        {
            "id": "call_001",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": "北京"})},
        }
    ],
}
TOOL_RESULT = {"role": "tool", "content": "北京：晴", "tool_call_id": "call_001"}


def turns(n: int, start: int = 0) -> list[dict[str, str]]:
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"第 {i} 轮：we talked about the Beijing trip, item {i}.",
        }
        for i in range(start, start + n)
    ]


# ---------------------------------------------------------------- short-term memory


def test_memory_interface_and_message_lifecycle_grpc(seed_daemon: SeedDaemon) -> None:
    """接口定义 addMessage / getMessages / deleteMessage / clear, and 消息生命周期 (user,
    assistant, tool result, in order); 工具调用的记忆 (the call and its result)."""
    name = agent("s004-mem")
    with seed_daemon.grpc() as client:
        client.append_messages(name, "run", [{"role": "user", "content": "北京天气怎么样？"}])
        client.append_messages(name, "run", [TOOL_CALL])
        client.append_messages(name, "run", [TOOL_RESULT])
        client.append_messages(name, "run", [{"role": "assistant", "content": "北京今天晴。"}])
        got = client.get_session_messages(name, "run")  # getMessages(): every one, in order
        assert [(m.role, m.seq) for m in got] == [
            ("user", 1), ("assistant", 2), ("tool", 3), ("assistant", 4)
        ]  # fmt: skip
        call = got.items[1].tool_calls[0]
        assert (call.id, call.name, call.arguments) == ("call_001", "get_weather", {"city": "北京"})
        assert got.items[2].tool_call_id == "call_001" and got.items[2].content == "北京：晴"
        # The Formatter's input: the messages in the LLM API's shape.
        assert got.items[1].as_chat()["tool_calls"][0]["function"]["name"] == "get_weather"
        assert got.items[2].as_chat() == TOOL_RESULT
        # deleteMessage(index 0): messages are addressed by seq (index + 1 before any
        # deletion), so a deletion never shifts the others.
        assert client.delete_messages(name, "run", [1]).deleted_seqs == (1,)
        assert [m.seq for m in client.get_session_messages(name, "run")] == [2, 3, 4]
        assert client.clear_session(name, "run") == 3  # clear()
        assert list(client.get_session_messages(name, "run")) == []


def test_auto_context_memory_compresses_as_configured_grpc(seed_daemon: SeedDaemon) -> None:
    """AutoContextMemory(msgThreshold 30, tokenRatio 0.3, lastKeep 10): 50 messages
    become a summary and the last ones (≤ 15), a large result an offload reference, and
    adjacent messages merge; nothing is lost from the record."""
    name = agent("s004-auto")
    with seed_daemon.grpc() as client:
        first = client.append_messages(
            name,
            "auto",
            turns(48),
            compress_threshold_messages=30,
            compress_token_ratio=0.3,
            keep_recent_messages=10,
            merge_adjacent_messages=True,
        )
        assert first.compressed  # 48 >= msgThreshold: older turns folded
        offloaded = client.append_messages(
            name,
            "auto",
            [{"role": "tool", "content": FORECAST, "name": "get_weather", "tool_call_id": "c9"}],
        )
        assert offloaded.offloaded_seqs == (49,)
        client.append_messages(
            name,
            "auto",
            [{"role": "assistant", "content": "晴。"}, {"role": "assistant", "content": "Sunny."}],
        )
        window = client.get_session_window(name, "auto")
        # "压缩后消息 (15 条) + 摘要消息 + 卸载引用"
        assert window.summary and window.summarized_through_seq >= 38
        assert 0 < len(window.recent) <= 15
        merged = window.recent[-1]  # 1. 合并相邻消息: the two assistant replies
        assert (merged.merged_from_seq, merged.seq) == (50, 51)
        assert merged.content == "晴。\n\nSunny."
        stub = next(m for m in window.recent if m.seq == 49)  # 3. 卸载大内容: a reference
        assert stub.attachment is not None and "attachment 49" in stub.content
        assert len(stub.content) < 1000 and stub.attachment.size_bytes == len(FORECAST.encode())
        back = client.get_session_attachment(name, "auto", 49)
        assert back.content == FORECAST and back.tool_call_id == "c9"
        # The record keeps every message (compression builds a view).
        assert window.stored_messages == 51
        every = client.get_session_messages(name, "auto", page_size=100)
        assert [m.seq for m in every] == list(range(1, 52))


async def test_small_window_keeps_summary_and_newest_turn_mcp(seed_daemon: SeedDaemon) -> None:
    """上下文窗口管理: over the limit, "summary + recent messages" — at a 300-token budget
    with a 30 KB tool result the window still holds a summary and the newest turn (issue
    33 found neither); the offloaded result is fetched by the tool its stub names."""
    name = agent("s004-window")
    async with seed_daemon.mcp() as mcp:
        tools = await mcp.tools()
        assert tools["get_session_attachment"].annotations.read_only_hint is True
        facts = [
            {"role": "user", "content": "My name is Ada and I am planning a trip to Beijing."},
            {"role": "assistant", "content": "Great, Ada. When do you travel?"},
            {"role": "user", "content": "I travel on May 3. What's the weather there?"},
        ]
        await mcp.call("record_messages", session_id="trip", messages=facts, agent_id=name)
        out = await mcp.call(
            "record_messages",
            session_id="trip",
            messages=[
                {"role": "tool", "content": FORECAST, "name": "get_weather", "tool_call_id": "c1"}
            ],
            agent_id=name,
        )
        assert out["offloaded_seqs"] == [4]
        await mcp.call(
            "record_messages",
            session_id="trip",
            messages=[{"role": "assistant", "content": "Beijing will be sunny. " * 40}],
            agent_id=name,
        )
        window = await mcp.call(
            "get_session_window", session_id="trip", token_budget=300, agent_id=name
        )
        assert window["tokens_used"] <= 300
        assert "Ada" in window["summary"]  # 2. 摘要历史对话
        assert window["messages"][-1]["role"] == "assistant"  # the newest turn
        tiny = await mcp.call(
            "get_session_window", session_id="trip", token_budget=60, agent_id=name
        )
        assert tiny["tokens_used"] <= 60 and tiny["summary"]
        assert tiny["messages"][-1]["content"].endswith("[…]")
        assert any("newest turn" in d["reason"] for d in tiny["degraded"])
        wide = await mcp.call("get_session_window", session_id="trip", agent_id=name)
        stub = next(m for m in wide["messages"] if m["role"] == "tool")["content"]
        assert "get_session_attachment(seq=4)" in stub and len(stub) < 1000
        parts, offset = [], 0
        while True:
            part = await mcp.call(
                "get_session_attachment",
                session_id="trip",
                seq=4,
                offset=offset,
                max_chars=10_000,
                agent_id=name,
            )
            parts.append(part["content"])
            if not part["next_offset"]:
                break
            offset = part["next_offset"]
        missing = await mcp.error("get_session_attachment", session_id="trip", seq=1, agent_id=name)
    assert "".join(parts) == FORECAST and part["chars"] == len(FORECAST)
    assert missing["error"] == "NOT_FOUND"


# ---------------------------------------------------------------- long-term memory


async def test_static_control_records_after_the_reply_and_retrieves_before(
    seed_daemon: SeedDaemon,
) -> None:
    """工作模式 STATIC_CONTROL: "推理前召回，回复后记录" — the reply is recorded when it is
    appended, and the next run's window holds what is relevant to its user message
    (the <long_term_memory> of the system prompt); AGENT_CONTROL records nothing."""
    name = agent("s004-static")
    async with seed_daemon.mcp() as mcp:
        quiet = await mcp.call(
            "record_messages",
            session_id="plain",
            messages=[
                {"role": "user", "content": "I collect stamps."},
                {"role": "assistant", "content": "Nice hobby."},
            ],
            agent_id=name,
        )
        assert "recorded_memory_ids" not in quiet  # agent_control: the agent decides
        recorded = await mcp.call(
            "record_messages",
            session_id="day-1",
            messages=[
                {"role": "user", "content": "I am allergic to peanuts."},
                {"role": "assistant", "content": "Noted: no peanuts in any recipe."},
            ],
            long_term_memory_mode="static_control",
            agent_id=name,
        )
        assert len(recorded["recorded_memory_ids"]) >= 2
        found = await mcp.call("recall", query="allergic to peanuts", agent_id=name)
        assert any(m["content"] == "I am allergic to peanuts." for m in found["memories"])
    with seed_daemon.grpc() as client:
        client.append_messages(
            name,
            "day-2",
            [{"role": "user", "content": "Suggest a snack with peanuts?"}],
            long_term_memory_mode="static_control",
        )
        window = client.get_session_window(name, "day-2", token_budget=500)
    assert window.long_term_memory_mode == "static_control"
    assert any("allergic to peanuts" in m.content for m in window.long_term_memories)
    system = window.as_chat()[0]
    assert system["role"] == "system" and "<long_term_memory>" in system["content"]
    assert "allergic to peanuts" in system["content"]


def test_agent_control_tools_on_the_python_adapters(seed_daemon: SeedDaemon) -> None:
    """AGENT_CONTROL: record_to_memory(thinking, content[]) and
    retrieve_from_memory(keywords[]) as the agent's tools (Python adapter over gRPC);
    Mem0 实现: memories per agentId and userId (the namespace)."""
    name = agent("s004-tools")
    with seed_daemon.grpc() as client:
        tools = MemoryTools(
            client,
            ToolContext(agent_id=name, namespace="user123"),
            names=AGENT_CONTROL_TOOLS,
        )
        spec = {d["function"]["name"]: d["function"]["parameters"] for d in tools.definitions}
        assert spec["record_to_memory"]["required"] == ["thinking", "content"]
        assert spec["record_to_memory"]["properties"]["content"]["items"]["type"] == "string"
        assert spec["retrieve_from_memory"]["properties"]["keywords"]["type"] == "array"
        recorded = json.loads(
            tools.handle_tool_call(
                "record_to_memory",
                json.dumps(
                    {
                        "thinking": "The user shared travel facts worth keeping.",
                        "content": ["Ada flies to Beijing on May 3.", "Ada prefers window seats."],
                    }
                ),
            )
        )
        assert len(recorded["ids"]) == 2 and "Recorded 2" in recorded["text"]
        found = json.loads(
            tools.handle_tool_call(
                "retrieve_from_memory", {"keywords": ["Beijing flight", "window seats"]}
            )
        )
        contents = [m["content"] for m in found["memories"]]
        assert {"Ada flies to Beijing on May 3.", "Ada prefers window seats."} <= set(contents)
        assert found["text"].startswith("- ")
        kept = client.get(name, recorded["ids"][0])
        assert kept.namespace == "user123" and kept.metadata == {
            "thinking": "The user shared travel facts worth keeping."
        }
        other_user = MemoryTools(
            client, ToolContext(agent_id=name, namespace="user456"), names=AGENT_CONTROL_TOOLS
        )
        none = json.loads(
            other_user.handle_tool_call("retrieve_from_memory", {"keywords": ["Beijing"]})
        )
        assert none["memories"] == []


async def test_agent_control_tools_over_mcp_and_async(seed_daemon: SeedDaemon) -> None:
    """AGENT_CONTROL's tools by their names over MCP (an MCP host) and the async adapter;
    BOTH: the tools with static recording on."""
    name = agent("s004-mcp-tools")
    async with seed_daemon.mcp() as mcp:
        listed = await mcp.tools()
        record = listed["record_to_memory"].input_schema
        assert record["required"] == ["thinking", "content"]
        assert listed["retrieve_from_memory"].input_schema["required"] == ["keywords"]
        assert listed["retrieve_from_memory"].annotations.read_only_hint is True
        ids = await mcp.call(
            "record_to_memory",
            thinking="a preference the user stated",
            content=["Ada drinks jasmine tea."],
            agent_id=name,
        )
        both = await mcp.call(
            "record_messages",
            session_id="both",
            messages=[
                {"role": "user", "content": "I live in Hangzhou."},
                {"role": "assistant", "content": "Hangzhou is lovely."},
            ],
            long_term_memory_mode="both",
            agent_id=name,
        )
        assert both["recorded_memory_ids"]
        found = await mcp.call(
            "retrieve_from_memory", keywords=["jasmine tea", "Hangzhou"], agent_id=name
        )
        bad = await mcp.error("record_to_memory", thinking="x", content=[], agent_id=name)
    contents = {m["content"] for m in found["memories"]}
    assert "Ada drinks jasmine tea." in contents and "I live in Hangzhou." in contents
    assert ids["ids"] and bad["error"] == "INVALID_ARGUMENT" and "content" in bad["fields"]
    async with AsyncMemorydClient(seed_daemon.daemon.address, api_key=WRITER.raw) as client:
        tools = AsyncMemoryTools(
            client, ToolContext(agent_id=name), names=("retrieve_from_memory",)
        )
        out = json.loads(
            await tools.handle_tool_call("retrieve_from_memory", {"keywords": ["tea"]})
        )
    assert any(m["content"] == "Ada drinks jasmine tea." for m in out["memories"])


def test_record_and_retrieve_interface(seed_daemon: SeedDaemon) -> None:
    """长期记忆 接口定义: record(List<Msg>) and retrieve(Msg) (the client's record /
    retrieve tools: long-term memory, or the session's window)."""
    name = agent("s004-record")
    with seed_daemon.grpc() as client:
        tools = MemoryTools(client, ToolContext(agent_id=name, session_id="s"))
        kept = json.loads(
            tools.handle_tool_call(
                "record",
                {"messages": [{"role": "user", "content": "我的生日是五月三日。"}]},
            )
        )
        assert len(kept["ids"]) == 1
        found = json.loads(tools.handle_tool_call("retrieve", {"query": "生日"}))
    assert found["memories"][0]["content"] == "我的生日是五月三日。"


# ---------------------------------------------------------------- state


async def test_state_module_and_json_session(seed_daemon: SeedDaemon) -> None:
    """状态持久化: saveState / loadState per component; SessionManager.forSessionId
    ("user123"): loadIfExists finds nothing at first, saveSession then keeps the
    存储格式 example's components, which load back exactly (gRPC and MCP)."""
    name = agent("s004-state")
    components = JSON_SESSION["components"]
    with seed_daemon.grpc() as client:
        assert client.load_state(name, "user123") == {}  # loadIfExists: nothing yet
        saved = client.save_state(name, "user123", components)
        assert {c.name for c in saved} == {"InMemoryMemory", "ReActAgent"}
        loaded = client.load_state(name, "user123")
        assert {n: c.state for n, c in loaded.items()} == components
    async with seed_daemon.mcp() as mcp:
        back = await mcp.call("load_state", session_id="user123", agent_id=name)
        assert back["components"] == components
        one = await mcp.call(
            "load_state", session_id="user123", names=["ReActAgent"], agent_id=name
        )
    assert one["components"] == {"ReActAgent": {"memory": "InMemoryMemory", "interrupted": False}}
