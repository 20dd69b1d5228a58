"""Compact (tombstones, expiry, near-duplicate merging, history, optimise) and
RunMaintenance (expiry, retention, capacity) plus its scheduler."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memoryd.config import MaintenanceSettings
from memoryd.domain.agent_state import MessageDraft, MessageRole, WorkingMemoryWrite, WorkingScope
from memoryd.domain.errors import NotFound
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyHistoryQuery, KeyListQuery, KeyWrite
from memoryd.domain.lifecycle import (
    CompactOptions,
    CompactResult,
    MaintenanceOptions,
    MaintenanceResult,
    Progress,
)
from memoryd.domain.models import Memory, MemoryFilter, Provenance, ProvenanceKind, SecurityLevel
from memoryd.domain.records import RecordKind
from memoryd.domain.requests import MemoryDraft
from memoryd.service.lifecycle.compaction import DERIVED_FROM
from memoryd.service.lifecycle.maintenance import MaintenanceScheduler, retention_score
from memoryd.storage.base import ListPage
from tests.unit.snapshot.world import World, drain, scope_for, world

USER_SOURCE = Provenance(ProvenanceKind.USER)

A = scope_for("agent-a")
ALL = MemoryFilter(include_archived=True)


async def add(w: World, text: str, **kw: object) -> Memory:
    outcome = await w.memories.remember(A, MemoryDraft(content=text, **kw), dedup=False)  # type: ignore[arg-type]
    return outcome.memory


async def compact(w: World, **kw: object) -> CompactResult:
    events = await drain(w.lifecycle.compact(A, CompactOptions(**kw)))  # type: ignore[arg-type]
    assert all(isinstance(e, Progress) for e in events[:-1])
    result = events[-1]
    assert isinstance(result, CompactResult)
    return result


async def test_merges_near_duplicates_in_big_tag_groups_deterministically() -> None:
    async with world() as w:
        filler = [
            await add(w, f"Unrelated fact number {i} about topic {i * 7}", tags=("work",))
            for i in range(4)
        ]
        old = await add(
            w, "The user likes green tea in the morning", tags=("work", "drinks"), importance=0.9
        )
        await w.memories.get(A, old.id)
        await w.access.flush()
        new = await add(
            w, "the user likes green tea in the morning!", tags=("work", "prefs"), importance=0.3
        )
        # Same text but another level or namespace, or keyed: never merged.
        other_level = await add(
            w,
            "The user likes green tea in the morning",
            tags=("work",),
            security_level=SecurityLevel.CONFIDENTIAL,
        )
        other_ns = await add(
            w, "The user likes green tea in the morning", tags=("work",), namespace="n2"
        )
        await w.keyed.set(
            A,
            KeyWrite(
                "/tea",
                Json.of({"text": "The user likes green tea in the morning", "tags": ["work"]}),
                source=USER_SOURCE,
            ),
        )
        result = await compact(w, merge_group_threshold=3, merge_similarity=0.9)
        assert result.merged == 1
        survivors = {
            m.id: m for m in await w.store.get(A.partition, [old.id, new.id], with_vectors=True)
        }
        assert list(survivors) == [new.id]  # the newest content wins
        merged = survivors[new.id]
        assert merged.content == new.content
        assert merged.tags == ("work", "prefs", "drinks")
        assert merged.importance == 0.9
        assert merged.access_count == 1
        assert merged.created_at == old.created_at
        assert merged.supersedes == old.id
        assert merged.metadata[DERIVED_FROM] == [old.id]
        assert merged.version == new.version + 1
        left = await w.store.get(
            A.partition, [other_level.id, other_ns.id, *(f.id for f in filler)]
        )
        assert len(left) == 6
        # Nothing more to merge: a second pass changes nothing.
        assert (await compact(w, merge_group_threshold=3, merge_similarity=0.9)).merged == 0
        # Groups at or below the threshold are not searched.
        await add(w, "The user likes green tea in the morning.", tags=("work",))
        assert (await compact(w, merge_group_threshold=50)).merged == 0


async def test_purges_tombstones_and_expired_items() -> None:
    async with world() as w:
        await w.keyed.set(A, KeyWrite("/a", Json.of("x"), source=USER_SOURCE))
        await w.keyed.set(A, KeyWrite("/a", Json.of(None), source=USER_SOURCE))
        await w.keyed.set(A, KeyWrite("/b", Json.of("kept"), source=USER_SOURCE))
        soon = w.clock() + timedelta(hours=1)
        await add(w, "expires soon", expires_at=soon)
        await add(w, "stays")
        await w.working.set(
            A,
            WorkingMemoryWrite(
                scope=WorkingScope("t"), content=Json.of({"a": 1}), ttl=timedelta(minutes=5)
            ),
        )
        await w.sessions.append(
            A, "s", [MessageDraft(MessageRole.USER, "hi")], ttl=timedelta(minutes=5)
        )
        w.clock.advance(hours=2)
        result = await compact(w)
        assert result.tombstones_purged == 1
        assert result.expired_purged == 3  # the memory, the scope and the session
        assert result.store_optimized is False  # the in-memory store has nothing to optimise
        assert [
            r.key for r in await w.records.get_records(A.partition, RecordKind.KEY, ["/a", "/b"])
        ] == ["/b"]
        history = await w.keyed.history(A, KeyHistoryQuery("/a"))
        assert [e.valid for e in history.entries] == [True, False]  # history stays
        assert sorted(m.content for m in await w.store.list(A.partition, ALL)) == ["kept", "stays"]


async def test_history_policy_archive_moves_old_writes_to_files(tmp_path: Path) -> None:
    settings = MaintenanceSettings(history_policy="archive", history_archive_after_days=1)
    async with world(maintenance=settings, history_dir=tmp_path) as w:
        for value in ("v1", "v2", "v3"):
            await w.keyed.set(A, KeyWrite("/k", Json.of(value), source=USER_SOURCE))
        await w.keyed.set(A, KeyWrite("/single", Json.of("only"), source=USER_SOURCE))
        w.clock.advance(days=2)
        result = await compact(w)
        assert result.history_archived == 2
        history = await w.keyed.history(A, KeyHistoryQuery("/k"))
        assert [e.content for e in history.entries] == ["v3"]
        assert (await w.keyed.get(A, "/single")).content == "only"
        files = list((tmp_path / "t1" / "agent-a").glob("key-history-*.jsonl"))
        lines = [json.loads(line) for f in files for line in f.read_text().splitlines()]
        assert sorted(json.loads(line["doc"]["content_json"]) for line in lines) == ["v1", "v2"]
        assert {line["key"] for line in lines} == {"/k"}


async def test_lancedb_store_is_optimized(tmp_path: Path) -> None:
    async with world(data_dir=tmp_path) as w:
        await add(w, "something")
        assert (await compact(w)).store_optimized is True


async def test_maintenance_expiry_retention_and_capacity() -> None:
    async with world() as w:
        old = await add(w, "an ancient memory", created_at=w.clock() - timedelta(days=400))
        await add(w, "expiring", expires_at=w.clock() + timedelta(minutes=30))
        pinned = await add(w, "pinned but unimportant", tags=("pinned",), importance=0.0)
        ranked = [await add(w, f"memory of importance {i}", importance=i / 10) for i in range(10)]
        await w.keyed.set(
            A, KeyWrite("/k", Json.of({"text": "keyed", "importance": 0.0}), source=USER_SOURCE)
        )
        w.clock.advance(hours=1)
        events = await drain(
            w.lifecycle.run_maintenance(A, MaintenanceOptions(max_entries=5, retention_days=365))
        )
        result = events[-1]
        assert isinstance(result, MaintenanceResult)
        phases = [e.phase for e in events[:-1] if isinstance(e, Progress)]
        assert phases[:3] == ["expire", "retention", "capacity"]
        assert any(p.startswith("compact:") for p in phases)
        assert result.expired == 1 and result.deleted_by_retention == 1 and result.compacted
        # 12 live (10 ranked, pinned, keyed): 7 archived, the lowest importance first.
        assert result.archived == 7
        live = {m.id for m in await w.store.list(A.partition, MemoryFilter())}
        assert pinned.id in live and old.id not in live
        assert {m.id for m in ranked[7:]} <= live and not {m.id for m in ranked[:7]} & live
        stats = await w.lifecycle.stats(A)
        assert stats.last_maintenance_at == result.finished_at
        # Nothing left to do: a second run archives nothing and does not compact.
        again = (await drain(w.lifecycle.run_maintenance(A, MaintenanceOptions(max_entries=5))))[-1]
        assert isinstance(again, MaintenanceResult)
        assert (again.archived, again.expired, again.compacted) == (0, 0, False)


async def test_maintenance_archives_nothing_without_a_capacity() -> None:
    """The default config sets no max_entries: a big agent keeps every memory."""
    async with world() as w:
        assert w.maintenance.max_entries is None
        kept = [await add(w, f"memory {i}", importance=0.0) for i in range(30)]
        events = await drain(w.lifecycle.run_maintenance(A, MaintenanceOptions()))
        result = events[-1]
        assert isinstance(result, MaintenanceResult) and result.archived == 0
        assert "capacity" not in [e.phase for e in events if isinstance(e, Progress)]
        live = {m.id for m in await w.store.list(A.partition, MemoryFilter(), ListPage(limit=100))}
        assert live == {m.id for m in kept}


def test_retention_score_prefers_important_recent_used_memories() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)

    def memory(importance: float, age_days: float, accesses: int) -> Memory:
        when = now - timedelta(days=age_days)
        return Memory(
            id="x",
            tenant_id="t",
            agent_id="a",
            content="c",
            created_at=when,
            updated_at=when,
            importance=importance,
            access_count=accesses,
        )

    assert retention_score(memory(0.9, 1, 0), now) > retention_score(memory(0.1, 1, 0), now)
    assert retention_score(memory(0.5, 1, 0), now) > retention_score(memory(0.5, 200, 0), now)
    assert retention_score(memory(0.5, 1, 40), now) > retention_score(memory(0.5, 1, 0), now)


async def test_scheduler_runs_every_partition_and_stops() -> None:
    settings = MaintenanceSettings(interval_s=3600, jitter=0.2, initial_delay_s=0)
    async with world(maintenance=settings) as w:
        for agent in ("a", "b"):
            await w.memories.remember(scope_for(agent), MemoryDraft(content="x"))
        await w.profiles.set(scope_for("c", tenant="t2"), "profile only")
        scheduler: MaintenanceScheduler = w.lifecycle.scheduler(seed=7)
        delays = [scheduler.next_delay() for _ in range(200)]
        assert all(2880 <= d <= 4320 for d in delays) and len(set(delays)) > 100
        scheduler.start()
        deadline = time.monotonic() + 30
        while scheduler.runs < 1:
            assert time.monotonic() < deadline, "the scheduled run never finished"
            await asyncio.sleep(0.01)
        await scheduler.close()
        assert scheduler.last_run_at is not None
        for agent, tenant in (("a", "t1"), ("b", "t1"), ("c", "t2")):
            stats = await w.lifecycle.stats(scope_for(agent, tenant=tenant))
            assert stats.last_maintenance_at is not None, agent
        await scheduler.close()  # idempotent


async def test_compaction_removes_keys_whose_content_expired() -> None:
    """Issue 22: a key whose content.expired_at had passed stayed in GetKey, ListKeys
    and the exported state (only DefaultRead and Recall hid it); compaction now
    removes it from the key state and its long-term memory, the history keeps it."""
    async with world() as w:
        soon = (w.clock() + timedelta(minutes=5)).isoformat()
        gone = await w.keyed.set(
            A,
            KeyWrite(
                "/task/today",
                Json.of({"text": "Book the dentist", "expired_at": soon}),
                source=USER_SOURCE,
            ),
        )
        await w.keyed.set(A, KeyWrite("/user/name", Json.of("Alice"), source=USER_SOURCE))
        first = await compact(w)
        assert first.expired_purged == 0
        assert (await w.keyed.get(A, "/task/today")).valid  # not expired yet
        w.clock.advance(minutes=10)
        # Expired: GetKey and ListKeys read it as missing at once, before compaction.
        with pytest.raises(NotFound):
            await w.keyed.get(A, "/task/today")
        listed = await w.keyed.list(A, KeyListQuery(prefix="/", recursive=True))
        assert [e.key for e in listed.entries] == ["/user/name"]
        assert await w.store.get(A.partition, [gone.memory_id]) != []  # until compaction
        result = await compact(w)
        assert result.expired_purged >= 1
        listing = await w.keyed.list(A, KeyListQuery(prefix="/", recursive=True))
        assert [e.key for e in listing.entries] == ["/user/name"]
        with pytest.raises(NotFound):
            await w.keyed.get(A, "/task/today")
        assert await w.store.get(A.partition, [gone.memory_id]) == []
        history = await w.keyed.history(A, KeyHistoryQuery("/task/today"))
        assert [e.version for e in history.entries] == [gone.version]
