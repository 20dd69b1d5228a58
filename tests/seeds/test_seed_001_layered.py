# ruff: noqa: RUF001 - the document is Chinese: fullwidth punctuation, on purpose.
"""Seed 001, "Memory设计文档" (layered memory), replayed against a daemon.

The document layers episodic, semantic and procedural memory and asks, by section:

- 2.2 自动压缩原则: older memories compress over time (10 facts -> 3 -> 1); rarely used
  and outdated ones are compressed; 冲突的记忆 → 保留最新 (the newest of a conflict wins).
- 2.3 / 4.1 retrieve_relevant_memories: vector search, then time decay and importance:
  score = 0.6 * cosine + 0.2 * exp(-days since last access / 30) + 0.2 * importance.
- 3.2 记忆类型: preference / fact / pattern / skill, with its MEMORY_EXAMPLES.
- 4.1 compress_old_memories(90): memories 90 days since access with fewer than 5
  accesses, grouped by type; a group of 3 or more becomes 1-3; the originals archived.
- 4.2 _format_memories_for_context: "# USER MEMORY", "## User Preferences", "## Known
  Facts", "## User Patterns", "## Proven Skills".

- 4.1 extract_from_conversation, 触发时机: at session end and when a context summary is
  made (5.1 _on_summary_created).

- 3.1 memory_relations: relation_type and strength on both memories.

- 1 / 2.1 memory.md and learnings.md (Source of Truth, 人类可读可编辑): rendered per agent
  in the memory_root after writes, and a person's edit read back (provenance file).
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from google.protobuf import timestamp_pb2

from memoryd_proto.v1 import common_pb2
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.seeds.conftest import ADMIN, WRITER, SeedDaemon, agent

#: 3.2 MEMORY_EXAMPLES, one per type.
EXAMPLES = {
    "preference": "用户偏好使用蓝色配色方案",
    "fact": "用户的公司名称是'TechCorp'，主营AI产品",
    "pattern": "用户通常在周一上午9-11点使用Agent做周报",
    "skill": "Deep Research任务：先web_search → read_url → summarize",
}
REPORT = "The Atlas report is due on the first of the month"
HEADERS = {
    "preference": "## User Preferences",
    "fact": "## Known Facts",
    "pattern": "## User Patterns",
    "skill": "## Proven Skills",
}


def remember_at(
    seed: SeedDaemon,
    name: str,
    text: str,
    days_ago: float,
    memory_type: int = common_pb2.MEMORY_TYPE_FACT,
    namespace: str = "",
) -> str:
    """Remember with a creation time in the past (the Python client's remember has none)."""
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(datetime.now(UTC) - timedelta(days=days_ago))
    with seed.daemon.channel() as channel:
        reply = mgrpc.MemoryServiceStub(channel).Remember(
            mpb.RememberRequest(
                agent_id=name,
                content=text,
                created_at=stamp,
                memory_type=memory_type,
                namespace=namespace,
            ),
            metadata=(("authorization", f"Bearer {WRITER.raw}"),),
            timeout=60,
        )
    return reply.memory.id


# ---------------------------------------------------------------- 2.3 / 4.1 scoring


def test_recall_weighs_recency_and_importance_grpc(seed_daemon: SeedDaemon) -> None:
    """4.1 _calculate_relevance_score: a 60-day-old memory no longer ranks as if new
    (the default, blended), and the document's formula is the "layered" preset."""
    name = agent("s001-score")
    # The same statement in two namespaces (deduplication is per namespace): equally
    # relevant, so recency alone tells them apart.
    old = remember_at(seed_daemon, name, REPORT, 60, namespace="2025")
    with seed_daemon.grpc() as client:
        new = client.remember(name, REPORT, namespace="2026").memory.id
        found = client.recall(name, "when is the Atlas report due?", limit=2)
        assert [h.memory.id for h in found] == [new, old]
        old_hit = next(h for h in found if h.memory.id == old)
        assert math.isclose(old_hit.components.recency, math.exp(-60 / 30), rel_tol=1e-3)
        layered = client.recall(name, "when is the Atlas report due?", limit=2, scoring="layered")
        for hit in layered:
            c = hit.components
            days = 60 if hit.memory.id == old else 0
            assert math.isclose(c.recency, math.exp(-days / 30), rel_tol=1e-6)
            assert math.isclose(
                hit.score, 0.6 * c.similarity + 0.2 * c.recency + 0.2 * c.importance, rel_tol=1e-6
            )


async def test_recall_scoring_presets_mcp(seed_daemon: SeedDaemon) -> None:
    name = agent("s001-score-mcp")
    old = remember_at(seed_daemon, name, REPORT, 60, namespace="2025")
    async with seed_daemon.mcp() as tools:
        await tools.call("remember", content=REPORT, agent_id=name, namespace="2026")
        found = await tools.call("recall", query="when is the Atlas report due?", agent_id=name)
        assert found["memories"][-1]["id"] == old
        layered = await tools.call(
            "recall", query="when is the Atlas report due?", agent_id=name, scoring="layered"
        )
        assert {m["id"] for m in layered["memories"]} == {m["id"] for m in found["memories"]}
        assert (await tools.tools())["recall"].input_schema["properties"]["scoring"]["enum"][
            :2
        ] == [
            "blended",
            "layered",
        ]


# ---------------------------------------------------------------- 2.2 conflicts


def test_the_newest_of_a_conflict_wins_grpc(seed_daemon: SeedDaemon) -> None:
    """2.2 冲突的记忆 → 保留最新, without an LLM, in English and Chinese; another
    project's deadline is another subject and stays."""
    name = agent("s001-conflict")
    with seed_daemon.grpc() as client:
        friday = client.remember(name, "The deadline is Friday").memory.id
        other = client.remember(name, "The Beta project deadline is Thursday").memory.id
        monday = client.remember(name, "The deadline moved to Monday").memory.id
        zh_old = client.remember(name, "截止日期是周五").memory.id
        zh_new = client.remember(name, "截止日期改到周一了").memory.id
        found = client.recall(name, "when is the deadline?", limit=5)
        ids = [h.memory.id for h in found]
        assert monday in ids and other in ids and friday not in ids
        stale = client.get(name, friday)
        assert stale.archived
        # 3.1 memory_relations (relation_type, strength): on both memories.
        (relation,) = stale.relations
        assert (relation.kind, relation.memory_id) == ("superseded_by", monday)
        assert 0 < relation.strength <= 1
        assert client.get(name, monday).relations[0].strength == relation.strength
        assert client.get(name, zh_old).archived
        assert not client.get(name, zh_new).archived


async def test_the_newest_of_a_conflict_wins_mcp(seed_daemon: SeedDaemon) -> None:
    name = agent("s001-conflict-mcp")
    async with seed_daemon.mcp() as tools:
        await tools.call("remember", content="The deadline is Friday", agent_id=name)
        await tools.call("remember", content="The deadline moved to Monday", agent_id=name)
        found = await tools.call("recall", query="when is the deadline?", agent_id=name)
        assert [m["content"] for m in found["memories"]] == ["The deadline moved to Monday"]


# ---------------------------------------------------------------- 4.2 context block


def test_the_context_block_grouped_by_type_grpc(seed_daemon: SeedDaemon) -> None:
    """4.2 _format_memories_for_context with 3.2's MEMORY_EXAMPLES."""
    name = agent("s001-context")
    with seed_daemon.grpc() as client:
        for memory_type, content in EXAMPLES.items():
            client.remember(name, content, memory_type=memory_type, tags=("pinned",))
        snap = client.build_snapshot(name, format="user_memory", sections=("pinned",))
    assert snap.text == "\n\n".join(
        ["# USER MEMORY"] + [f"{HEADERS[t]}\n- {c}" for t, c in EXAMPLES.items()]
    )
    assert snap.tokens_used <= snap.token_budget


async def test_the_context_block_grouped_by_type_mcp(seed_daemon: SeedDaemon) -> None:
    name = agent("s001-context-mcp")
    async with seed_daemon.mcp() as tools:
        for memory_type, content in EXAMPLES.items():
            await tools.call(
                "remember", content=content, memory_type=memory_type, agent_id=name, tags=["x"]
            )
        snap = await tools.call(
            "build_snapshot",
            trigger="帮我生成一份市场分析PPT",
            format="user_memory",
            token_budget=400,
            agent_id=name,
        )
    text = snap["text"]
    assert text.startswith("# USER MEMORY\n\n")
    for memory_type, content in EXAMPLES.items():
        assert f"{HEADERS[memory_type]}\n" in text and f"- {content}" in text


# ---------------------------------------------------------------- 4.1 compression


def test_old_rarely_used_memories_compress_grpc(seed_daemon: SeedDaemon) -> None:
    """4.1 compress_old_memories: 90 days since access, fewer than 5 accesses, by type,
    3 or more -> 1-3; the originals archived (and UndoConsolidation brings them back)."""
    name = agent("s001-compress")
    facts = [
        "The Atlas project uses Postgres 16.",
        "The Atlas project uses Redis for caching.",
        "The Atlas project uses Kafka for events.",
        "The Atlas project budget is 40000 euros.",
        "Anna leads the Atlas design reviews.",
    ]
    ids = [remember_at(seed_daemon, name, t, 120 - i) for i, t in enumerate(facts)]
    recent = remember_at(seed_daemon, name, "The Atlas project uses Grafana.", 10)
    with seed_daemon.grpc(ADMIN) as client:
        result = client.run_maintenance(name)
        assert result.consolidated == len(facts)
        live = list(client.list(name).items)
        derived = [m for m in live if m.id != recent]
        assert 1 <= len(derived) <= 3
        text = "\n".join(m.content for m in derived)
        for word in ("Postgres 16", "Redis", "Kafka", "40000 euros", "Anna"):
            assert text.count(word) == 1
        assert len(text) < sum(len(t) for t in facts)
        assert all(client.get(name, i).archived for i in ids)
        undone = client.undo_consolidation(name, [m.id for m in derived])
        assert undone.restored == len(facts)
        assert not any(client.get(name, i).archived for i in ids)


# ---------------------------------------------------------------- 4.1 / 5.1 extraction


def test_extraction_when_a_summary_is_made_grpc(seed_daemon: SeedDaemon) -> None:
    """4.1 extract_from_conversation, 触发时机 2 (Context摘要生成时) and 5.1
    _on_summary_created: the turns folded into the summary yield their facts then,
    before the session ends."""
    name = agent("s001-extract")
    turns = [
        {"role": "user", "content": "我的公司名称是TechCorp。帮我生成一份市场分析PPT。"},
        {"role": "assistant", "content": "好的，用什么配色？"},
        {"role": "user", "content": "我喜欢蓝色配色方案。"},
        {"role": "assistant", "content": "明白。"},
    ]
    with seed_daemon.grpc() as client:
        out = client.append_messages(
            name, "ppt", turns, compress_threshold_messages=4, keep_recent_messages=2
        )
        assert out.compressed and out.recorded_memory_ids
        kept = [client.get(name, i).content for i in out.recorded_memory_ids]
        assert kept == ["我的公司名称是TechCorp。"]


# ---------------------------------------------------------------- memory.md / learnings.md


def _view(seed: SeedDaemon, name: str, file: str, wanted: str) -> Path:
    """The agent's ``file`` once it shows ``wanted`` (views are refreshed off the
    request path, shortly after a write)."""
    root = seed.daemon.data_dir / "memory_root"
    for _ in range(600):
        for path in root.glob(f"*/{name}/{file}"):
            if wanted in path.read_text(encoding="utf-8"):
                return path
        time.sleep(0.05)
    raise AssertionError(f"{file} of {name} never showed {wanted!r}")


def test_memory_md_and_learnings_md_are_two_way_grpc(seed_daemon: SeedDaemon) -> None:
    """2.1: memory.md / learnings.md, the human-editable source of truth."""
    name = agent("s001-files")
    with seed_daemon.grpc() as client:
        for memory_type, content in EXAMPLES.items():
            client.remember(name, content, memory_type=memory_type)
        memory_md = _view(seed_daemon, name, "memory.md", EXAMPLES["pattern"])
        learnings = _view(seed_daemon, name, "learnings.md", EXAMPLES["skill"])
        text = memory_md.read_text(encoding="utf-8")
        assert text.startswith("# USER MEMORY") and HEADERS["fact"] in text
        assert HEADERS["skill"] in learnings.read_text(encoding="utf-8")
        # A person edits the file: the next refresh (after any write) reads it in.
        edited = text.replace("TechCorp", "TechCorp GmbH").replace(
            "## Known Facts\n", "## Known Facts\n- 用户的团队有六个人\n"
        )
        memory_md.write_text(edited, encoding="utf-8")
        client.remember(name, "用户喜欢简短的回答", memory_type="preference")
        _view(seed_daemon, name, "memory.md", "用户喜欢简短的回答")
        stored = {m.content: m for m in client.list(name, page_size=50).items}
    fact = stored["用户的公司名称是'TechCorp GmbH'，主营AI产品"]
    assert fact.source is not None and fact.source.kind == "file"
    assert stored["用户的团队有六个人"].source.kind == "file"  # type: ignore[union-attr]
    assert "TechCorp GmbH" in memory_md.read_text(encoding="utf-8")
