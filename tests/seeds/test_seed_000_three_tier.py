# ruff: noqa: RUF001, RUF002 - the document is Chinese: fullwidth punctuation, on purpose.
"""Seed 000, "P1-1: 三层记忆系统实现方案" (three-tier memory), replayed against a daemon.

The document designs agent.md (tier 1), working memory per (thread_id, resource_id)
scope with TTL and JSON Schema (tier 2) and a namespaced semantic store (tier 3), with
middlewares that inject tiers 1 and 2 into the system prompt and an
``update_working_memory`` tool. Its checkable requirements, by section:

- §1.1/§3.1 agent.md: Read, Write, Exists (a read before any write finds nothing);
  §1.1/§4.1 injected into the system prompt of each model call.
- §2.2/§3.2 working memory: a Scope is thread_id plus an optional resource_id;
  Get of an absent scope is nil; Set/Get round trip; TTL counted from UpdatedAt
  (expired reads as absent); JSON Schema {type, properties, required} enforced;
  Delete (absent: success); List of scopes. §4.2 loaded per scope into the prompt.
- §5.1 update_working_memory(thread_id, data, ttl_seconds): data merged key by key
  into what is stored; ttl_seconds 0 means never expires; thread_id and data required.
- §2.2/§3.3 semantic memory: Store(namespace, text, metadata) with automatic
  embedding; Recall(namespace, query, topK) best first, at most topK, with ID,
  Content, Metadata, Score, Namespace, Provenance (Source, Timestamp, Agent) and
  Confidence; Delete(namespace).
- §6 the example: agent.md of a task-management agent, then "创建一个新任务：实现三层记忆系统"
  lands in working memory, and the next model call sees both.

Not checkable against a daemon: the Go package layout (§2.1), the middleware
priorities (§4), the codex instructions (§7).
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from memoryd_client import InvalidArgumentError, NotFoundError, PermissionDeniedError
from memoryd_client.requests import remember_request
from memoryd_proto.v1 import common_pb2
from tests.seeds.conftest import ADMIN, WRITER, SeedDaemon, agent

#: §6: the agent.md the example writes, verbatim.
AGENT_MD = """# Agent 配置

我是一个任务管理 Agent，专门帮助用户跟踪和完成任务。

## 核心能力
- 任务创建和更新
- 进度跟踪
- 优先级管理
"""
#: §3.2: a JSON Schema of the document's shape (type, properties, required).
TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"task": {"type": "string"}, "status": {"type": "string"}},
    "required": ["task"],
}
#: Polling deadline for a TTL to pass; generous, not a performance assertion.
EXPIRY_DEADLINE_S = 30.0


# ---------------------------------------------------------------- tier 1: agent.md


def test_agent_md_read_write_exists_and_injection_grpc(seed_daemon: SeedDaemon) -> None:
    """§1.1 / §3.1 AgentMemoryStore Read / Write / Exists, and §4.1 the middleware's
    injection of agent.md into the system prompt (BuildSnapshot's profile section)."""
    name = agent("s000-md")
    with seed_daemon.grpc() as client:
        with pytest.raises(NotFoundError):  # Exists: false before the first Write
            client.get_profile(name)
        written = client.set_profile(name, AGENT_MD)
        assert client.get_profile(name).content == AGENT_MD  # Read returns what was written
        client.set_profile(name, AGENT_MD + "- 截止日期提醒\n", if_match=written.etag)
        snapshot = client.build_snapshot(name, "创建一个新任务")
    assert "我是一个任务管理 Agent" in snapshot.text and "截止日期提醒" in snapshot.text


async def test_agent_md_tools_mcp(seed_daemon: SeedDaemon) -> None:
    """§1.2 the read_agent_memory / update_agent_memory tools, over MCP."""
    name = agent("s000-md-mcp")
    async with seed_daemon.mcp() as mcp:
        tools = await mcp.tools()
        assert {"read_agent_memory", "update_agent_memory"} <= set(tools)
        assert (await mcp.call("read_agent_memory", agent_id=name))["found"] is False
        await mcp.call("update_agent_memory", content=AGENT_MD, etag="none", agent_id=name)
        read = await mcp.call("read_agent_memory", agent_id=name)
    assert read["found"] is True and read["content"] == AGENT_MD


# ---------------------------------------------------------------- tier 2: working memory


def test_working_memory_scopes_ttl_schema_delete_list_grpc(seed_daemon: SeedDaemon) -> None:
    """§2.2 Scope{ThreadID, ResourceID}, §3.2 FileWorkingMemoryStore semantics."""
    name = agent("s000-wm")
    with seed_daemon.grpc() as client:
        # §3.2 Get: an absent scope is nil (NOT_FOUND here).
        with pytest.raises(NotFoundError):
            client.get_working_memory(name, thread_id="t1")
        # §2.2 a scope of thread_id alone ("default.json") and one with a resource_id.
        client.set_working_memory(name, {"step": 1}, thread_id="t1")
        client.set_working_memory(name, {"doc": "spec.md"}, thread_id="t1", resource_id="r1")
        assert client.get_working_memory(name, thread_id="t1").content == {"step": 1}
        both = client.get_working_memory(name, thread_id="t1", resource_id="r1")
        assert both.content == {"doc": "spec.md"}
        # §3.2 List: every scope.
        listed = client.list_working_memory_scopes(name)
        assert {(w.thread_id, w.resource_id) for w in listed} == {("t1", ""), ("t1", "r1")}
        # §3.2 JSON Schema: a write that breaks it is refused, naming the content.
        client.set_working_memory(
            name, {"task": "实现三层记忆系统"}, thread_id="t2", json_schema=TASK_SCHEMA
        )
        with pytest.raises(InvalidArgumentError) as err:
            client.set_working_memory(name, {"task": 3}, thread_id="t2")
        assert any(v.field.startswith("content") for v in err.value.field_violations)
        with pytest.raises(InvalidArgumentError):
            client.set_working_memory(name, {"status": "todo"}, thread_id="t2", replace=True)
        assert client.get_working_memory(name, thread_id="t2").content == {
            "task": "实现三层记忆系统"
        }
        # §3.2 timestamps: UpdatedAt is kept (CreatedAt: the version 1 write).
        assert client.get_working_memory(name, thread_id="t2").updated_at is not None
        # §3.2 Delete: gone; deleting what is absent is success.
        assert client.delete_working_memory(name, thread_id="t1") is True
        assert client.delete_working_memory(name, thread_id="t1") is False
        with pytest.raises(NotFoundError):
            client.get_working_memory(name, thread_id="t1")
        # §3.2 TTL: counted from UpdatedAt; expired reads as absent.
        client.set_working_memory(name, {"temp": True}, thread_id="ttl", ttl=1.0)
        _wait_until_absent(lambda: client.get_working_memory(name, thread_id="ttl"))
        # §5.1 ttl 0: never expires (an expiry set before is removed).
        client.set_working_memory(name, {"a": 1}, thread_id="keep", ttl=3600)
        kept = client.set_working_memory(name, {"b": 2}, thread_id="keep", ttl=0)
    assert kept.expires_at is None and kept.content == {"a": 1, "b": 2}


async def test_update_working_memory_tool_as_the_document_defines_it(
    seed_daemon: SeedDaemon,
) -> None:
    """§5.1 UpdateWorkingMemoryTool: name, parameters (thread_id, data, ttl_seconds with
    0 = never expires), data merged key by key; §4.2 the middleware's injection."""
    name = agent("s000-tool")
    async with seed_daemon.mcp() as mcp:
        tool = (await mcp.tools())["update_working_memory"]
        properties = tool.input_schema["properties"]
        assert {"thread_id", "data", "ttl_seconds"} <= set(properties)
        assert properties["data"]["type"] == "object"
        assert properties["ttl_seconds"]["minimum"] == 0
        # The document's call, verbatim in shape.
        first = await mcp.call(
            "update_working_memory",
            thread_id="task-42",
            data={"task": "实现三层记忆系统", "status": "created"},
            ttl_seconds=0,
            agent_id=name,
        )
        assert first["expires_at"] is None and first["version"] == 1
        # "合并数据": for k, v := range data { wm.Data[k] = v }.
        merged = await mcp.call(
            "update_working_memory",
            thread_id="task-42",
            data={"status": "in_progress", "progress": 0.3},
            agent_id=name,
        )
        assert merged["content"] == {
            "task": "实现三层记忆系统", "status": "in_progress", "progress": 0.3
        }  # fmt: skip
        # ttl_seconds > 0 expires; 0 removes the expiry again.
        timed = await mcp.call(
            "update_working_memory", thread_id="task-42", data={}, ttl_seconds=600, agent_id=name
        )
        assert timed["expires_at"] is not None
        never = await mcp.call(
            "update_working_memory", thread_id="task-42", data={}, ttl_seconds=0, agent_id=name
        )
        assert never["expires_at"] is None
        # data is required ("Required: thread_id, data"); memoryd's updates is the same.
        missing = await mcp.error("update_working_memory", thread_id="task-42", agent_id=name)
        assert missing["error"] == "INVALID_ARGUMENT" and "updates" in missing["fields"]
        both = await mcp.error(
            "update_working_memory", thread_id="t", data={}, updates={}, agent_id=name
        )
        assert "data" in both["fields"]
        # §4.2 WorkingMemoryMiddleware: the scope's data reaches the prompt.
        snapshot = await mcp.call("build_snapshot", thread_id="task-42", agent_id=name)
        got = await mcp.call("get_working_memory", thread_id="task-42", agent_id=name)
    assert "实现三层记忆系统" in snapshot["text"] and "in_progress" in snapshot["text"]
    assert got["found"] is True and got["content"]["progress"] == 0.3


async def test_working_memory_ttl_expires_over_mcp(seed_daemon: SeedDaemon) -> None:
    """§3.2 Get: ``wm.TTL > 0 && time.Since(wm.UpdatedAt) > wm.TTL`` reads as absent."""
    name = agent("s000-ttl")
    async with seed_daemon.mcp() as mcp:
        await mcp.call(
            "update_working_memory", thread_id="t", data={"x": 1}, ttl_seconds=1, agent_id=name
        )
        deadline = time.monotonic() + EXPIRY_DEADLINE_S
        while (await mcp.call("get_working_memory", thread_id="t", agent_id=name))["found"]:
            assert time.monotonic() < deadline, "the working memory never expired"
            await asyncio.sleep(0.2)


# ---------------------------------------------------------------- tier 3: semantic memory


def test_semantic_store_recall_delete_by_namespace_grpc(seed_daemon: SeedDaemon) -> None:
    """§2.2 SemanticMemoryStore: Store(namespace, text, metadata), Recall(namespace,
    query, topK), Delete(namespace); §2.2 Memory's fields and Provenance."""
    name = agent("s000-sem")
    docs = [
        "三层记忆系统把 Agent 的记忆分为长期人格记忆、短期工作记忆和语义记忆。",
        "Working memory is scoped by thread_id and resource_id and may expire.",
        "Semantic memory stores documents with embeddings for TopK search.",
        "The vector store can be Chroma, Pinecone or Qdrant.",
    ]
    with seed_daemon.grpc() as client:
        stored = []
        for i, text in enumerate(docs):
            request = remember_request(
                name, text, namespace="kb", metadata={"doc": "P1-1", "part": i}
            )
            source = common_pb2.Provenance(  # Provenance{Source, Timestamp, Agent}
                kind=common_pb2.PROVENANCE_KIND_FILE,
                name="P1-1-Three-Tier-Memory.md",
                locator="docs/P1-1-Three-Tier-Memory.md",
            )
            source.retrieved_at.FromDatetime(datetime.now(UTC))
            request.source.CopyFrom(source)
            stored.extend(client.remember_batch(name, [request]))
        client.remember(name, "Semantic memory in another namespace.", namespace="other")
        hits = client.recall(name, "semantic memory TopK search", limit=2, namespace="kb")
        assert 0 < len(hits) <= 2  # at most topK
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)  # sortByScore: best first
        best = hits[0].memory
        assert best.namespace == "kb" and best.content == docs[2]
        assert best.id and best.metadata == {"doc": "P1-1", "part": 2}
        assert best.source is not None and best.source.name == "P1-1-Three-Tier-Memory.md"
        assert best.source.retrieved_at is not None
        assert best.created_at is not None and best.agent_id == name and best.confidence > 0
        assert all(h.memory.namespace == "kb" for h in hits)
        chinese = client.recall(name, "长期人格记忆", limit=1, namespace="kb")
        assert chinese[0].memory.content == docs[0]
        # Delete(namespace): Prune by namespace (admin), dry run first.
        with pytest.raises(PermissionDeniedError):
            client.prune(name, namespace="kb", dry_run=True)
    with seed_daemon.grpc(ADMIN) as admin:
        dry = admin.prune(name, namespace="kb", dry_run=True)
        assert sorted(dry.ids) == sorted(r.memory.id for r in stored) and dry.dry_run
        assert len(admin.recall(name, "semantic memory", namespace="kb", limit=10)) == 4
        assert admin.prune(name, namespace="kb").pruned == 4
        assert list(admin.recall(name, "semantic memory", namespace="kb", limit=10)) == []
        other = admin.recall(name, "semantic memory", namespace="other", limit=10)
    assert [h.memory.content for h in other] == ["Semantic memory in another namespace."]


async def test_semantic_memory_over_mcp(seed_daemon: SeedDaemon) -> None:
    """§2.2 Store / Recall by namespace over MCP (remember / recall tools)."""
    name = agent("s000-sem-mcp")
    async with seed_daemon.mcp() as mcp:
        await mcp.call(
            "remember",
            content="Qdrant is one vector store the semantic tier may use.",
            namespace="kb",
            source="file:docs/P1-1-Three-Tier-Memory.md",
            agent_id=name,
        )
        await mcp.call("remember", content="Qdrant in another namespace.", agent_id=name)
        hits = await mcp.call("recall", query="vector store Qdrant", namespace="kb", agent_id=name)
    assert [m["content"] for m in hits["memories"]] == [
        "Qdrant is one vector store the semantic tier may use."
    ]


# ---------------------------------------------------------------- §6 the example


async def test_the_usage_example(seed_daemon: SeedDaemon) -> None:
    """§6: write agent.md, register the middlewares and update_working_memory, run
    "创建一个新任务：实现三层记忆系统" — the model sees agent.md and updates working
    memory; the next call sees both (BuildSnapshot, also as the MCP prompt)."""
    name = agent("s000-example")
    with seed_daemon.grpc() as client:
        client.set_profile(name, AGENT_MD)
    async with seed_daemon.mcp(WRITER) as mcp:
        # What the model is shown first: agent.md.
        before = await mcp.call(
            "build_snapshot", trigger="创建一个新任务：实现三层记忆系统", agent_id=name
        )
        assert "任务管理 Agent" in before["text"]
        # The tool call the model makes for the user's request.
        await mcp.call(
            "update_working_memory",
            thread_id="session-1",
            data={"tasks": [{"title": "实现三层记忆系统", "status": "created"}]},
            ttl_seconds=0,
            agent_id=name,
        )
        after = await mcp.call(
            "build_snapshot", trigger="进度如何？", thread_id="session-1", agent_id=name
        )
    assert "任务管理 Agent" in after["text"] and "实现三层记忆系统" in after["text"]


def _wait_until_absent(read: Any) -> None:
    deadline = time.monotonic() + EXPIRY_DEADLINE_S
    while True:
        try:
            read()
        except NotFoundError:
            return
        assert time.monotonic() < deadline, "the working memory never expired"
        time.sleep(0.2)
