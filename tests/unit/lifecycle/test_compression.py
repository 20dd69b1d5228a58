"""The layered-memory design's compression (seed 001, §2.2 and compress_old_memories)
in scheduled maintenance, without an LLM: memories 90 days untouched and accessed
fewer than 5 times, grouped by type; 3 or more become 1 to 3 condensed memories
(near-identical statements once, a changed value's newest only, distinct facts
kept); the originals archived and the whole undoable."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from memoryd.config import CompressionSettings, MaintenanceSettings
from memoryd.domain.lifecycle import MaintenanceOptions, MaintenanceResult, MemorySelector
from memoryd.domain.models import AccessUpdate, Memory, MemoryFilter, MemoryType
from memoryd.domain.relations import derived_from, superseded_by
from memoryd.domain.requests import MemoryDraft, RecallQuery
from memoryd.storage.base import ListPage
from tests.unit.snapshot.world import World, scope_for, world

S = scope_for()
#: Ten related facts of one project, as an agent would have written them over time.
FACTS = [
    "The Atlas project deadline is Friday.",
    "The Atlas project uses Postgres 16.",
    "The Atlas project uses Redis for caching.",
    "Atlas project uses Postgres 16",  # near-identical
    "The Atlas project deadline moved to Monday.",  # the deadline changed
    "The Atlas project budget is 40000 euros.",
    "The Atlas project uses Kafka for events.",
    "Anna leads the Atlas design reviews.",
    "The Atlas project uses Postgres 16 on AWS.",  # the same, with more detail
    "Anna leads the Atlas design reviews every Thursday.",
]
PREFERENCES = [
    "The user prefers blue slides.",
    "The user prefers short answers.",
    "The user prefers morning meetings.",
]


async def remember(w: World, text: str, days_ago: float, **draft: Any) -> Memory:
    created = w.clock.now - timedelta(days=days_ago)
    return (await w.memories.remember(S, MemoryDraft(text, created_at=created, **draft))).memory


async def everything(w: World) -> dict[str, Memory]:
    found = await w.store.list(
        S.partition, MemoryFilter(include_archived=True), ListPage(limit=1000)
    )
    return {m.id: m for m in found}


async def maintain(w: World) -> MaintenanceResult:
    result = None
    async for event in w.lifecycle.run_maintenance(S, MaintenanceOptions()):
        result = event
    assert isinstance(result, MaintenanceResult)
    return result


async def test_old_rarely_used_memories_are_condensed_by_type() -> None:
    assert MaintenanceSettings().compression.enabled  # scheduled by default
    async with world() as w:
        facts = [
            await remember(w, t, 120 - i, memory_type=MemoryType.FACT) for i, t in enumerate(FACTS)
        ]
        prefs = [
            await remember(w, t, 100 - i, memory_type=MemoryType.PREFERENCE)
            for i, t in enumerate(PREFERENCES)
        ]
        result = await maintain(w)
        assert result.consolidated == len(FACTS) + len(PREFERENCES)
        stored = await everything(w)
        derived = [m for m in stored.values() if not m.archived]
        by_type = {t: [m for m in derived if m.memory_type is t] for t in MemoryType}
        assert 1 <= len(by_type[MemoryType.FACT]) <= 3
        assert len(by_type[MemoryType.PREFERENCE]) == 1
        text = "\n".join(m.content for m in by_type[MemoryType.FACT])
        # Distinct facts kept, each once; the detailed form of a repeated one; the newest
        # deadline only.
        for fact in ("Redis", "Kafka", "40000 euros", "every Thursday", "on AWS", "Monday"):
            assert text.count(fact) == 1, (fact, text)
        assert "Friday" not in text and text.count("Postgres 16") == 1
        assert len(text) < sum(len(t) for t in FACTS) * 0.75
        # Statements sharing their first words folded into one.
        assert by_type[MemoryType.PREFERENCE][0].content == (
            "The user prefers blue slides, short answers, morning meetings."
        )
        # Every original archived, pointing at the memory it went into.
        sources = {i for m in derived for i in derived_from(m.metadata)}
        assert sources == {m.id for m in facts + prefs}
        for m in facts + prefs:
            assert stored[m.id].archived and superseded_by(stored[m.id].metadata)
        found = await w.memories.recall(S, RecallQuery(query="Atlas deadline", limit=1))
        assert "Monday" in found.results[0].memory.content

        undone, back = await w.lifecycle.undo_consolidation(
            S, MemorySelector(ids=tuple(m.id for m in derived))
        )
        assert (undone, back) == (len(derived), len(FACTS) + len(PREFERENCES))
        live = {m.content for m in (await everything(w)).values() if not m.archived}
        assert live == set(FACTS) | set(PREFERENCES)


async def test_recent_used_and_small_groups_are_left_alone() -> None:
    async with world() as w:
        recent = [await remember(w, f"The user owns bike number {i}.", 60) for i in range(4)]
        used = [await remember(w, f"The user visited city number {i}.", 200) for i in range(3)]
        await w.store.record_access(
            S.partition, {used[0].id: AccessUpdate(5, w.clock.now - timedelta(days=100))}
        )
        pair = [
            await remember(
                w, f"The user plays chess variant {i}.", 200, memory_type=MemoryType.SKILL
            )
            for i in range(2)
        ]
        result = await maintain(w)
        assert result.consolidated == 0  # 60 days; 2 of 3 rarely used; a skill pair
        live = {m.id for m in (await everything(w)).values() if not m.archived}
        assert {m.id for m in recent + used + pair} <= live


async def test_compression_can_be_turned_off() -> None:
    settings = MaintenanceSettings(compression=CompressionSettings(enabled=False))
    async with world(maintenance=settings) as w:
        for i, t in enumerate(FACTS):
            await remember(w, t, 120 - i)
        assert (await maintain(w)).consolidated == 0
