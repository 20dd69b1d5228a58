"""The trust filter of Recall and BuildSnapshot over gRPC (the Python client and the raw
wire) and MCP against the suite's live daemon: only the admitted provenance comes back,
k results are filled from it, and an unknown kind is INVALID_ARGUMENT naming the field."""

from __future__ import annotations

import json
import uuid
from typing import Any

import grpc
import pytest

from memoryd_client import MemorydClient
from memoryd_client.errors import InvalidArgumentError
from memoryd_client.tools import MemoryTools, ToolContext
from memoryd_proto.v1 import common_pb2, memory_service_pb2, snapshot_service_pb2
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from memoryd_proto.v1 import snapshot_service_pb2_grpc as sgrpc
from tests.mcp.conftest import ALICE, McpDaemon
from tests.mcp.support import error_of, mcp_client

#: (content, source): the tea memories of every provenance, and one without any.
SEEDS: list[tuple[str, Any]] = [
    ("Ada drinks sencha green tea every morning", "user"),
    ("Ada said she likes jasmine tea after lunch", "agent"),
    ("The tea shop page says matcha is the best tea", "web:https://tea.example/matcha"),
    ("The tea tool reported oolong tea in stock", "tool:tea-inventory"),
    ("The notes file lists rooibos tea as caffeine free", "file:/notes/tea.md"),
    ("Ada keeps chamomile tea for the evening", None),
]


@pytest.fixture(scope="module")
def agent(mcp_daemon: McpDaemon) -> str:
    """An agent holding SEEDS (written once through the MCP remember tool)."""
    name = f"trust-{uuid.uuid4().hex[:8]}"
    with MemorydClient(mcp_daemon.daemon.address, api_key=ALICE.raw) as client:
        tools = MemoryTools(client, ToolContext(agent_id=name))  # over gRPC
        for content, source in SEEDS:
            args = {"content": content, "source": source} if source else {"content": content}
            assert "error" not in json.loads(tools.handle_tool_call("remember", args))
    return name


def _kinds(memories: list[Any]) -> set[str | None]:
    return {m.source.kind if m.source is not None else None for m in memories}


def test_recall_over_grpc_admits_only_the_trusted_kinds(mcp_daemon: McpDaemon, agent: str) -> None:
    with MemorydClient(mcp_daemon.daemon.address, api_key=ALICE.raw) as client:
        everything = client.recall(agent, "which tea?", limit=10)
        user_only = client.recall(agent, "which tea?", limit=10, trust=["user"])
        stated = client.recall(
            agent, "which tea?", limit=2, trust=["user", "agent"], trust_unattributed=True
        )
        nothing = client.recall(agent, "which tea?", limit=10, trust=[])
    assert _kinds([h.memory for h in everything]) == {"user", "agent", "web", "tool", "file", None}
    assert _kinds([h.memory for h in user_only]) == {"user"}
    assert len(stated) == 2  # k filled from the admitted, never fewer
    assert _kinds([h.memory for h in stated]) <= {"user", "agent", None}
    assert list(nothing) == []


def test_the_clients_tools_pass_trust_over_grpc(mcp_daemon: McpDaemon, agent: str) -> None:
    with MemorydClient(mcp_daemon.daemon.address, api_key=ALICE.raw) as client:
        tools = MemoryTools(client, ToolContext(agent_id=agent), names=("recall", "build_snapshot"))
        hits = json.loads(
            tools.handle_tool_call("recall", {"query": "tea", "trust": {"kinds": ["file"]}})
        )
        snap = json.loads(
            tools.handle_tool_call(
                "build_snapshot", {"trigger": "tea", "trust": {"kinds": ["tool"]}}
            )
        )
        bad = json.loads(
            tools.handle_tool_call("recall", {"query": "tea", "trust": {"kinds": ["rumour"]}})
        )
    assert {h["source"] for h in hits["memories"]} == {"file"}
    assert {i.get("source") for i in snap["items"]} == {"tool"}
    assert "trust.kinds[0]" in json.dumps(bad)


def test_snapshot_over_grpc_admits_only_the_trusted_kinds(
    mcp_daemon: McpDaemon, agent: str
) -> None:
    with MemorydClient(mcp_daemon.daemon.address, api_key=ALICE.raw) as client:
        snap = client.build_snapshot(agent, "which tea?", token_budget=2000, trust=["user"])
        full = client.build_snapshot(agent, "which tea?", token_budget=2000)
    memory_items = [i for i in snap.items if i.section in ("semantic", "recent", "pinned")]
    assert memory_items and all(i.source and i.source.kind == "user" for i in memory_items)
    assert "matcha" not in snap.text and "sencha" in snap.text
    assert "matcha" in full.text  # without the filter the web page is there (quoted)


@pytest.mark.parametrize(
    ("rpc", "field"),
    [("recall", "trust.kinds[1]"), ("snapshot", "trust.kinds[1]")],
)
def test_an_unknown_kind_on_the_wire_is_invalid_argument_naming_it(
    mcp_daemon: McpDaemon, agent: str, rpc: str, field: str
) -> None:
    trust = common_pb2.TrustFilter(kinds=[common_pb2.PROVENANCE_KIND_USER, 99])
    metadata = ALICE.metadata
    channel = grpc.insecure_channel(mcp_daemon.daemon.address)
    with channel, pytest.raises(grpc.RpcError) as caught:
        if rpc == "recall":
            mgrpc.MemoryServiceStub(channel).Recall(
                memory_service_pb2.RecallRequest(agent_id=agent, query="tea", trust=trust),
                metadata=metadata,
            )
        else:
            sgrpc.SnapshotServiceStub(channel).BuildSnapshot(
                snapshot_service_pb2.BuildSnapshotRequest(agent_id=agent, trust=trust),
                metadata=metadata,
            )
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert field in (caught.value.details() or "")
    client = MemorydClient(mcp_daemon.daemon.address, api_key=ALICE.raw)
    with client, pytest.raises(InvalidArgumentError) as named:
        client.recall(agent, "tea", trust=["user", "gossip"])
    assert "trust[1]" in str(named.value)


async def test_recall_and_snapshot_over_mcp(mcp_daemon: McpDaemon, agent: str) -> None:
    async with mcp_client("http", mcp_daemon.daemon, mcp_daemon.url, ALICE.raw) as client:
        recalled = await client.call_tool(
            "recall",
            {"query": "which tea?", "limit": 10, "trust": {"kinds": ["user"]}, "agent_id": agent},
        )
        snap = await client.call_tool(
            "build_snapshot",
            {
                "trigger": "which tea?",
                "token_budget": 2000,
                "trust": {"kinds": ["web"], "unattributed": True},
                "agent_id": agent,
            },
        )
        bad = error_of(
            await client.call_tool(
                "recall", {"query": "tea", "trust": {"kinds": ["gossip"]}, "agent_id": agent}
            )
        )
    assert recalled.structured_content is not None and snap.structured_content is not None
    hits = recalled.structured_content["memories"]
    assert hits and {h["source"] for h in hits} == {"user"}
    items = [i for i in snap.structured_content["items"] if i["section"] != "session"]
    assert {i.get("source") for i in items} == {"web", None}
    assert "matcha" in snap.structured_content["text"]
    assert "sencha" not in snap.structured_content["text"]
    assert bad["error"] == "INVALID_ARGUMENT"
    assert "trust.kinds[0]" in bad["fields"]
