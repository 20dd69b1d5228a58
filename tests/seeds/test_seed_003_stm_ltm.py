# ruff: noqa: RUF001, RUF002 - the document is Chinese: fullwidth punctuation, on purpose.
"""Seed 003, "Agent Memory 系统设计文档" (the STM / LTM service), replayed against a daemon.

The document designs a two-layer memory: a per-run short-term memory (STM) and a
long-term store (LTM) partitioned by tenant and agent with security levels, a snapshot
built when a run starts, lifecycle tasks and a fallback matrix. Its checkable
requirements, by section:

- 核心组件 §1 MemoryEntry: id, agent_id, tenant_id, content, tags, security_level
  (public / internal / confidential / restricted, default internal), version (1),
  created_at, accessed_at, access_count, archived; 数据库 Schema: content ≤ 2000
  characters is the document's Postgres CHECK (memoryd's limit is a setting, bytes).
  accessed_at / access_count are recorded in batches (storage access_flush_interval_s,
  30 s), so they are tested without a daemon: tests/unit/service/test_memory_service.py
  test_recall_records_access_without_a_store_write_per_hit.
- 数据库 Schema idx_memory_agent (agent_id, tenant_id) and 实现优先级 Phase 2 安全分类:
  every read is within one tenant and one agent; a principal sees no memory above its
  clearance.
- §2 MemoryStore: search(tags, include_archived=False), get_recent, archive(ids),
  delete(ids), count.
- 时间衰减算法: final_score = similarity × exp(-0.693 · age_hours / 168) (the
  "decayed" preset; 7 days old weighs 0.5).
- §4 STMManager (per run): add_trigger(type, payload, focus), add_function_call,
  add_llm_response, inject(instruction), to_prompt_section; 压缩策略: the fixed zone
  (trigger, focus, injected instructions) never compressed, the last 3 function-call
  rounds kept whole, older ones a summary (degrading to truncation); max_tokens 2000.
  与其他模块的集成: Run 结束 → STMManager 销毁.
- §5 SnapshotBuilder.build(trigger_event, focus, max_tokens=500): semantic top-3,
  recent 24 h (at most 5), pinned (tag "pinned"), deduplicated, cut to the budget.
- §6 MemoryService: remember(content, tags), recall(query, limit, tags), compact,
  prune(before, tags, min_access_count), reset; §7 MemoryLifecycleManager
  run_maintenance: archive the excess over max_entries, delete expired, compact tag
  groups over compaction_threshold (50) into an LLM summary.
- 降级策略矩阵: what a healthy shared daemon can show (full-text ranking beside the
  vectors, no degradation reported). The outage rows are tested where a store can be
  taken down: tests/reliability/test_store_outage.py, test_qdrant_outage.py,
  test_keyed_store_outage.py (PostgreSQL / vector store down: writes go to the
  write-ahead log), test_embedder_outage.py (embedding API down: a fallback embedder),
  test_degraded_start.py. memoryd deliberately departs from the row 全部不可用 → 返回成功
  (静默丢弃): a write it cannot keep is refused (UNAVAILABLE), never dropped silently.

Each runs through gRPC (the Python client) and MCP (the official MCP client). Not
checkable against a daemon: PgVector as a backend (memoryd uses LanceDB or Qdrant),
LiteLLM as the embedder, Hatchet cron (memoryd's own scheduler runs maintenance),
governance-ledger and DataMasker integrations, the 1M-memory latency (bench/).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from google.protobuf import timestamp_pb2

from memoryd_client import (
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
)
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.seeds.conftest import ADMIN, GLOBEX, INTERNAL, WRITER, SeedDaemon, agent

LEVELS = ("public", "internal", "confidential", "restricted")
#: The document's trigger_event of an agent run, and what the agent learnt before.
TRIGGER = "订单 #1042 支付失败，用户投诉"
LESSONS = (
    "支付失败时先查询支付网关的回调日志",
    "订单 #1042 的用户上周也投诉过物流延迟",
    "支付网关超时通常在晚上高峰期出现",
    "退款需要财务审批，超过 500 元要主管签字",
    "用户投诉要在 24 小时内首次回复",
    "支付失败的订单自动保留 30 分钟库存",
)
PINNED = "永远不要向用户透露内部工单编号"


def remember_aged(seed: SeedDaemon, name: str, text: str, hours_ago: float) -> str:
    """Remember with a creation time in the past (the Python client's remember has none)."""
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(datetime.now(UTC) - timedelta(hours=hours_ago))
    with seed.daemon.channel() as channel:
        reply = mgrpc.MemoryServiceStub(channel).Remember(
            mpb.RememberRequest(agent_id=name, content=text, created_at=stamp),
            metadata=(("authorization", f"Bearer {WRITER.raw}"),),
            timeout=60,
        )
    return reply.memory.id


def function_round(i: int) -> list[dict[str, Any]]:
    """§4 add_function_call(name, args, result): one round as two messages."""
    call = {"id": f"call_{i}", "name": "query_order", "arguments": f'{{"order": {1000 + i}}}'}
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {
            "role": "tool",
            "name": "query_order",
            "tool_call_id": f"call_{i}",
            "content": f"订单 {1000 + i}：状态 已发货，承运商 顺丰，第 {i} 轮查询结果。",
        },
    ]


# ---------------------------------------------------------------- §1 MemoryEntry


def test_memory_entry_fields_and_security_levels_grpc(seed_daemon: SeedDaemon) -> None:
    """§1 MemoryEntry: the fields, their starting values, the four levels; a level
    outside them is INVALID_ARGUMENT naming security_level and stores nothing."""
    name = agent("s003-entry")
    with seed_daemon.grpc() as client:
        entry = client.remember(name, LESSONS[0], tags=["payment"]).memory
        assert (entry.agent_id, entry.tenant_id) == (name, "acme")
        assert entry.security_level == "internal"  # the dataclass default
        assert entry.version == 1 and entry.access_count == 0 and entry.archived is False
        assert entry.created_at is not None and entry.tags == ("payment",)
        for i, level in enumerate(LEVELS):
            kept = client.remember(name, f"level {level} note {i}", security_level=level)
            assert kept.memory.security_level == level
        with pytest.raises(InvalidArgumentError) as err:
            client.remember(name, "secret-ish", security_level="top_secret")
        assert "security_level" in {v.field for v in err.value.field_violations}
        # 数据库 Schema CHECK (char_length(content) <= 2000): memoryd's bound is the
        # limits.max_content_bytes setting (8 KiB by default); over it names content.
        with pytest.raises(InvalidArgumentError) as err:
            client.remember(name, "支" * 3000)  # 9000 bytes of UTF-8
        assert "content" in {v.field for v in err.value.field_violations}
        updated = client.update(name, entry.id, content=LESSONS[0] + "（已验证）")
        assert updated.version == 2  # version counts the entry's revisions
        assert client.get_stats(name).memories == 1 + len(LEVELS)


# ---------------------------------------------------------------- isolation


def test_tenant_agent_and_clearance_isolation_grpc(seed_daemon: SeedDaemon) -> None:
    """数据库 Schema (agent_id, tenant_id) and Phase 2 安全分类: the same agent id in
    two tenants, two agents in one tenant, and a principal cleared to "internal"."""
    name, other = agent("s003-iso"), agent("s003-iso-b")
    with seed_daemon.grpc() as acme, seed_daemon.grpc(GLOBEX) as globex:
        acme.remember(name, "acme: 支付网关是 Stripe", tags=["payment"])
        globex.remember(name, "globex: 支付网关是 Adyen", tags=["payment"])
        acme.remember(other, "acme other agent: 支付网关是 PayPal", tags=["payment"])
        assert [h.memory.content for h in acme.recall(name, "支付网关")] == [
            "acme: 支付网关是 Stripe"
        ]
        assert [h.memory.content for h in globex.recall(name, "支付网关")] == [
            "globex: 支付网关是 Adyen"
        ]
        assert acme.get_stats(name).memories == 1 and globex.get_stats(name).memories == 1
        assert globex.get_stats(other).memories == 0  # nor counts another tenant's
        secret = acme.remember(name, "acme: 网关密钥轮换在周五", security_level="restricted")
        with seed_daemon.grpc(INTERNAL) as internal:
            seen = [h.memory.content for h in internal.recall(name, "网关")]
            assert "acme: 支付网关是 Stripe" in seen and "acme: 网关密钥轮换在周五" not in seen
            with pytest.raises(NotFoundError):  # not even told that it exists
                internal.get(name, secret.memory.id)
            with pytest.raises(PermissionDeniedError) as err:
                internal.remember(name, "above my clearance", security_level="confidential")
            assert "security_level" in str(err.value)
        with pytest.raises(NotFoundError):  # another tenant cannot read it by id either
            globex.get(name, secret.memory.id)


# ---------------------------------------------------------------- §2 / §6 LTM


def test_store_search_archive_delete_count_grpc(seed_daemon: SeedDaemon) -> None:
    """§2 MemoryStore and §6 remember / recall: tags filter the search, archived entries
    are left out (include_archived=False), archive / delete return counts, count."""
    name = agent("s003-store")
    with seed_daemon.grpc() as client:
        ids = [
            client.remember(name, text, tags=["payment"] if "支付" in text else []).memory.id
            for text in LESSONS
        ]
        tagged = client.recall(name, "支付失败", tags=["payment"], limit=5)
        assert tagged and all("payment" in h.memory.tags for h in tagged)
        broad = "订单 支付 用户 投诉 退款 网关 库存"
        assert len(client.recall(name, broad, limit=5)) == 5  # recall(limit=5)
        assert client.get_stats(name).memories == len(LESSONS)  # count()

        def hits() -> set[str]:
            return {h.memory.id for h in client.recall(name, broad, limit=10)}

        assert set(ids) == hits()
        assert client.archive(name, ids=ids[:2]) == 2  # archive(entry_ids) -> int
        assert hits() == set(ids[2:])  # search(include_archived=False)
        assert client.restore(name, ids=ids[:1]) == 1
        assert hits() == set(ids) - {ids[1]}
        assert sorted(client.forget(name, ids[2:4])) == sorted(ids[2:4])  # delete(ids)
        with pytest.raises(NotFoundError):
            client.get(name, ids[2])


def test_time_decay_half_life_of_a_week_grpc(seed_daemon: SeedDaemon) -> None:
    """时间衰减算法: final_score = similarity × exp(-0.693 · age_hours / 168); a memory
    of 7 days weighs half (the "decayed" preset, half_life_hours 168 by default)."""
    name = agent("s003-decay")
    week_old = remember_aged(seed_daemon, name, "支付网关的回调地址是 /hooks/pay", 168)
    with seed_daemon.grpc() as client:
        hits = client.recall(name, "支付网关的回调地址", scoring="decayed", hybrid=False)
        hit = next(h for h in hits if h.memory.id == week_old)
        c = hit.components
        assert math.isclose(c.recency, math.exp(-0.693), rel_tol=1e-2)
        assert math.isclose(hit.score, c.similarity * c.recency, rel_tol=1e-6)


# ---------------------------------------------------------------- §4 STM


def test_stm_per_run_fixed_zone_sliding_rounds_and_end_grpc(seed_daemon: SeedDaemon) -> None:
    """§4 STMManager and 压缩策略: the trigger, focus and injected instruction stay
    whole in the fixed zone; the last 3 function-call rounds whole; older ones in a
    summary; within max_tokens (2000); 与其他模块的集成: the run's end destroys it."""
    name, run = agent("s003-stm"), "run-1"
    with seed_daemon.grpc() as client:
        client.inject_instruction(name, run, f"payment_failed: {TRIGGER}", kind="trigger")
        client.inject_instruction(name, run, "先安抚用户，再查支付网关", kind="focus")
        for i in range(8):  # add_function_call x 8, three rounds kept (6 messages)
            client.append_messages(
                name, run, function_round(i), keep_recent_messages=6, compress_threshold_messages=8
            )
        client.append_messages(name, run, [("assistant", "已查明：网关超时，已发起重试。")])
        client.inject_instruction(name, run, "用户是 VIP，优先处理")  # inject(instruction)
        window = client.get_session_window(name, run, token_budget=2000)
        kinds = [(e.kind, e.content) for e in window.fixed_zone]
        assert kinds == [
            ("trigger", f"payment_failed: {TRIGGER}"),
            ("focus", "先安抚用户，再查支付网关"),
            ("instruction", "用户是 VIP，优先处理"),
        ]
        assert window.tokens_used <= 2000
        # 3. the rounds before: in the summary (without an LLM, extractive: the
        # document's one-sentence LLM summary needs one configured).
        assert all(f"#call_{i}" in window.summary for i in range(5))
        calls = [c.id for m in window.recent for c in m.tool_calls]
        results = [m.tool_call_id for m in window.recent if m.role == "tool"]
        assert calls == results == ["call_5", "call_6", "call_7"]  # 2. the last 3 rounds
        assert window.recent[-1].content == "已查明：网关超时，已发起重试。"
        # A tiny budget cuts the sliding zone, never the fixed zone.
        tiny = client.get_session_window(name, run, token_budget=120)
        assert [(e.kind, e.content) for e in tiny.fixed_zone] == kinds
        # Run 结束 → STMManager 销毁: the ended run takes nothing more; its record stays
        # readable until the session's ttl (memoryd keeps it), and clearing empties it.
        client.end_session(name, run)
        with pytest.raises(FailedPreconditionError):
            client.append_messages(name, run, [("assistant", "too late")])
        with pytest.raises(FailedPreconditionError):
            client.inject_instruction(name, run, "too late")
        assert client.clear_session(name, run, fixed_zone=True) > 0
        gone = client.get_session_window(name, run)
        assert (gone.fixed_zone, gone.recent, gone.summary) == ((), (), "")


async def test_stm_function_calls_over_mcp(seed_daemon: SeedDaemon) -> None:
    """§4 add_function_call(name, args, result) / add_llm_response / to_prompt_section as
    an MCP host makes them: record_messages (the call's name and result as a tool
    message), then get_session_window within max_tokens (2000)."""
    name = agent("s003-stm-mcp")
    async with seed_daemon.mcp() as mcp:
        for i in range(4):
            _, result = function_round(i)
            await mcp.call("record_messages", session_id="run", messages=[result], agent_id=name)
        await mcp.call(
            "record_messages",
            session_id="run",
            messages=[{"role": "assistant", "content": "网关超时，已重试。"}],
            agent_id=name,
        )
        window = await mcp.call(
            "get_session_window", session_id="run", token_budget=2000, agent_id=name
        )
    assert window["tokens_used"] <= 2000
    messages = window["messages"]
    assert messages[-1]["content"] == "网关超时，已重试。"
    tools = [m["content"] for m in messages if m["role"] == "tool"]
    assert tools == [function_round(i)[1]["content"] for i in range(4)]


async def test_stm_function_call_args_over_mcp(seed_daemon: SeedDaemon) -> None:
    """§4 add_function_call(name, args, result) over MCP: the call's id, name and args
    and the result's name and tool_call_id read back; a nameless call is refused
    naming the field and stores nothing."""
    name = agent("s003-args-mcp")
    async with seed_daemon.mcp() as mcp:
        await mcp.call(
            "record_messages", session_id="run", messages=function_round(0), agent_id=name
        )
        window = await mcp.call("get_session_window", session_id="run", agent_id=name)
    call, result = window["messages"]
    assert call["tool_calls"][0]["id"] == result["tool_call_id"] == "call_0"
    assert call["tool_calls"][0]["arguments"] == {"order": 1000}  # JSON text parsed
    assert result["name"] == "query_order"
    nameless = function_round(1)
    nameless[0]["tool_calls"].append({"id": "call_x", "name": " "})
    async with seed_daemon.mcp() as mcp:
        refused = await mcp.error(
            "record_messages", session_id="run", messages=nameless, agent_id=name
        )
        assert "messages[0].tool_calls[1].name" in str(refused), refused
        after = await mcp.call("get_session_window", session_id="run", agent_id=name)
    assert len(after["messages"]) == 2


# ---------------------------------------------------------------- §5 snapshot


def by_section(items: list[tuple[str, str]]) -> dict[str, list[str]]:
    """§5 the assembled snapshot's item ids per section; no id twice (去重)."""
    sections: dict[str, list[str]] = {}
    for section, item_id in items:
        sections.setdefault(section, []).append(item_id)
    ids = [i for _, i in items if i]
    assert len(ids) == len(set(ids))
    return sections


def test_snapshot_build_with_its_budget_grpc(seed_daemon: SeedDaemon) -> None:
    """§5 SnapshotBuilder.build(trigger_event, focus, max_tokens=500) with the
    configuration's snapshot_semantic_limit 3 and snapshot_recent_limit 5."""
    name = agent("s003-snap")
    # 2. 时间窗口 (最近 24h): a memory of two days ago is never a "recent" one.
    stale = remember_aged(seed_daemon, name, "仓库的盘点在每月最后一个周五", 48)
    with seed_daemon.grpc() as client:
        for text in LESSONS:
            client.remember(name, text)
        pinned = client.remember(name, PINNED, tags=["pinned"]).memory.id
        snap = client.build_snapshot(
            name,
            TRIGGER,
            focus="先安抚用户",  # joins the trigger in the semantic query
            token_budget=500,
            semantic_limit=3,
            recent_limit=5,
        )
        sections = by_section([(i.section, i.id) for i in snap.items])
        assert 0 < len(sections["semantic"]) <= 3  # 1. top-3
        assert 0 < len(sections["recent"]) <= 5 and stale not in sections["recent"]  # 2.
        assert sections["pinned"] == [pinned]  # 3. pinned, whatever the trigger
        assert snap.token_budget == 500 and snap.tokens_used <= 500  # 4. token 裁剪
        semantic = [i.text for i in snap.items if i.section == "semantic"]
        assert any("支付" in t for t in semantic)
        assert PINNED in snap.text
        tight = client.build_snapshot(name, TRIGGER, token_budget=40)
        assert 0 < tight.tokens_used <= 40  # never over, even when little fits


async def test_snapshot_build_over_mcp(seed_daemon: SeedDaemon) -> None:
    """§5 the snapshot an MCP host asks for at run start, within max_tokens 500."""
    name = agent("s003-snap-mcp")
    async with seed_daemon.mcp() as mcp:
        for text in LESSONS[:3]:
            await mcp.call("remember", content=text, agent_id=name)
        await mcp.call("remember", content=PINNED, tags=["pinned"], agent_id=name)
        snap = await mcp.call("build_snapshot", trigger=TRIGGER, token_budget=500, agent_id=name)
    assert snap["tokens_used"] <= 500 and PINNED in snap["text"]
    assert LESSONS[0] in snap["text"]


async def test_snapshot_focus_over_mcp(seed_daemon: SeedDaemon) -> None:
    """§5 build(trigger_event, focus): the focus joins the semantic query, so a focus
    alone (no trigger) still searches the memories."""
    name = agent("s003-focus-mcp")
    async with seed_daemon.mcp() as mcp:
        calming = await mcp.call("remember", content="用户投诉时先安抚情绪再查原因", agent_id=name)
        blind = await mcp.call("build_snapshot", token_budget=500, agent_id=name)
        snap = await mcp.call("build_snapshot", focus="先安抚用户", token_budget=500, agent_id=name)
    assert "semantic" not in {i["section"] for i in blind["items"]}
    semantic = [i["id"] for i in snap["items"] if i["section"] == "semantic"]
    assert semantic == [calming["id"]] and snap["tokens_used"] <= 500


# ---------------------------------------------------------------- remember / recall over MCP


async def test_remember_recall_tags_and_isolation_mcp(seed_daemon: SeedDaemon) -> None:
    """§6 remember(content, tags) / recall(query, limit, tags) as agent tools, and the
    tenant / agent / clearance partitions as MCP hosts of each principal see them."""
    name = agent("s003-mcp")
    async with seed_daemon.mcp() as mcp:
        for text in LESSONS:
            tags = ["payment"] if "支付" in text else ["support"]
            await mcp.call("remember", content=text, tags=tags, agent_id=name)
        await mcp.call(
            "remember", content="网关密钥轮换在周五", security_level="restricted", agent_id=name
        )
        hits = await mcp.call("recall", query="支付", tags=["payment"], limit=5, agent_id=name)
        assert hits["memories"] and len(hits["memories"]) <= 5
        assert all("支付" in m["content"] for m in hits["memories"])
        # recall(limit=5): the tool's default limit is the document's.
        default = await mcp.call("recall", query="订单 支付 用户 投诉 退款", agent_id=name)
        assert len(default["memories"]) == 5
        assert (await mcp.call("recall", query="支付", agent_id=agent("s003-empty")))[
            "memories"
        ] == []
    async with seed_daemon.mcp(GLOBEX) as other_tenant:
        assert (await other_tenant.call("recall", query="支付", agent_id=name))["memories"] == []
    async with seed_daemon.mcp(INTERNAL) as internal:
        seen = await internal.call("recall", query="网关密钥", limit=10, agent_id=name)
        assert seen["memories"] and "网关密钥轮换在周五" not in [
            m["content"] for m in seen["memories"]
        ]


# ---------------------------------------------------------------- §6 / §7 lifecycle


def test_prune_maintenance_compact_and_reset_grpc(seed_daemon: SeedDaemon) -> None:
    """§6 prune(before, tags, min_access_count) and reset (admin), §7 run_maintenance:
    the excess over max_entries archived; compact."""
    name = agent("s003-life")
    old = [
        remember_aged(seed_daemon, name, f"旧的排查记录 {i}：网关超时", 24 * 400) for i in range(3)
    ]
    with seed_daemon.grpc() as writer:
        for text in LESSONS:
            writer.remember(name, text, tags=["support"])
        with pytest.raises(PermissionDeniedError):  # prune is the admin's
            writer.prune(name, created_before=datetime.now(UTC) - timedelta(days=365))
    with seed_daemon.grpc(ADMIN) as admin:
        cutoff = datetime.now(UTC) - timedelta(days=365)  # retention_days: 365
        dry = admin.prune(name, created_before=cutoff, dry_run=True)
        assert dry.dry_run and sorted(dry.ids) == sorted(old)
        assert admin.prune(name, created_before=cutoff).pruned == len(old)
        # min_access_count: those used fewer times are pruned; none has been recalled.
        by_tag = admin.prune(name, tags=["support"], min_access_count=1, dry_run=True)
        assert by_tag.pruned == len(LESSONS)
        assert admin.prune(name, tags=["other"], dry_run=True).pruned == 0
        done = admin.run_maintenance(name, max_entries=4)  # count > max_entries
        assert done.archived == len(LESSONS) - 4
        assert admin.get_stats(name).archived == len(LESSONS) - 4
        assert admin.compact(name) is not None
        assert admin.reset(name, confirm=True) >= len(LESSONS)  # reset -> int
        assert admin.get_stats(name).memories == 0


def deploy_group(seed: SeedDaemon, name: str) -> None:
    """A tag group one over compaction_threshold (50)."""
    with seed.grpc() as writer:
        writer.remember_batch(
            name,
            [
                {"content": f"部署记录 {i}：服务 svc-{i} 在第 {i} 天上线", "tags": ["deploy"]}
                for i in range(51)
            ],
        )


def test_a_tag_group_over_the_threshold_consolidates_on_request_grpc(
    seed_daemon: SeedDaemon,
) -> None:
    """§7 _compact_tag_groups and 实现优先级 Phase 3 Compaction（LLM 摘要合并）, asked for:
    Consolidate by tag with min_group_size 50 condenses the group (an LLM summary when
    one is configured, else a deterministic merge), originals archived."""
    name = agent("s003-tags")
    deploy_group(seed_daemon, name)
    with seed_daemon.grpc(ADMIN) as admin:
        done = admin.consolidate(name, tags=["deploy"], min_age_days=0, min_group_size=50)
        assert done.consolidated == 51 and done.details
        assert {(g.group, g.method in ("llm", "merge")) for g in done.details} == {
            ("tag:deploy", True)
        }
        stats = admin.get_stats(name)
        assert stats.archived == 51  # the originals, restorable (undo_consolidation)
        assert stats.memories - stats.archived == len(done.details) < 51
        merged = "\n".join(g.content for g in done.details)
        assert all(f"svc-{i} " in merged for i in range(51))  # no record lost in the merge


def test_maintenance_compacts_a_tag_group_over_the_threshold(seed_daemon: SeedDaemon) -> None:
    """§7 run_maintenance: if _needs_compaction: _compact_tag_groups, by itself (the
    daemon's maintenance.tag_compaction_threshold, 50 as the document's threshold):
    the group over it is condensed whatever its age, the originals archived; a group
    at the threshold is left alone."""
    name = agent("s003-tags-auto")
    deploy_group(seed_daemon, name)
    with seed_daemon.grpc() as writer:
        writer.remember_batch(
            name, [{"content": f"值班记录 {i}：第 {i} 周", "tags": ["oncall"]} for i in range(50)]
        )
    with seed_daemon.grpc(ADMIN) as admin:
        result = admin.run_maintenance(name)
        assert result.consolidated == 51
        stats = admin.get_stats(name)
        assert stats.archived == 51  # the deploy originals, restorable
        assert stats.memories - stats.archived < 51 + 50  # the deploy group condensed
        oncall = admin.consolidate(name, tags=["oncall"], min_age_days=0, dry_run=True)
        assert oncall.consolidated == 50  # the group at the threshold was left alone


# ---------------------------------------------------------------- 降级策略矩阵


def test_fallback_matrix_what_a_healthy_daemon_shows(seed_daemon: SeedDaemon) -> None:
    """降级策略矩阵, pgvector 不可用 → full-text search: a recall ranks by full text
    beside the vectors (hybrid), so an exact term is found by its keyword score; and a
    healthy daemon reports no degradation. The outage rows: see the module docstring."""
    name = agent("s003-fallback")
    with seed_daemon.grpc() as client:
        kept = client.remember(name, "工单 ZX-4471 的根因是网关证书过期")
        assert kept.degraded == ()
        client.remember(name, "用户投诉要在 24 小时内首次回复")
        found = client.recall(name, "ZX-4471", hybrid=True)
        assert found.degraded == ()
        assert found[0].memory.id == kept.memory.id and found[0].components.keyword > 0
