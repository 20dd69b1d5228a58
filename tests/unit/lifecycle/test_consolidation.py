"""Consolidation: older related memories condensed into one without losing a
statement (or by an LLM on loopback), originals archived with links, a dry run, undo,
and a run inside maintenance."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import pytest

from memoryd.config import ConsolidationSettings, MaintenanceSettings
from memoryd.domain.lifecycle import (
    ConsolidateOptions,
    ConsolidateResult,
    MaintenanceOptions,
    MaintenanceResult,
    MemorySelector,
)
from memoryd.domain.models import Memory, MemoryFilter
from memoryd.domain.relations import RelationKind, derived_from, relations_of, superseded_by
from memoryd.domain.requests import MemoryDraft, RecallQuery
from memoryd.service.common.llm import ChatClient
from memoryd.service.lifecycle.consolidation import CONSOLIDATED_TAG
from memoryd.storage.base import ListPage
from tests.unit.agent_state.chat_server import ChatServer, running_chat_server
from tests.unit.snapshot.world import World, scope_for, world

S = scope_for()
TRAVEL = [
    "The user flies from Lisbon.",
    "The user prefers window seats. The user flies from Lisbon.",
    "The user's passport expires in 2027.",
    "The user needs a vegetarian meal on flights.",
    "The user collects airline miles with TAP.",
    "The user likes early morning departures.",
]


@asynccontextmanager
async def consolidating(llm_url: str | None = None, **settings: Any) -> AsyncIterator[World]:
    maintenance = MaintenanceSettings(consolidation=ConsolidationSettings(**settings))
    llm = ChatClient(url=llm_url, model="m", timeout_s=2.0) if llm_url else None
    try:
        async with world(maintenance=maintenance, llm=llm) as w:
            yield w
    finally:
        if llm is not None:
            await llm.close()


async def remember(w: World, text: str, days_ago: float, **draft: Any) -> Memory:
    created = w.clock.now - timedelta(days=days_ago)
    return (await w.memories.remember(S, MemoryDraft(text, created_at=created, **draft))).memory


async def everything(w: World) -> dict[str, Memory]:
    found = await w.store.list(
        S.partition, MemoryFilter(include_archived=True), ListPage(limit=1000)
    )
    return {m.id: m for m in found}


async def run(w: World, **options: Any) -> ConsolidateResult:
    result = None
    async for event in w.lifecycle.consolidate(S, ConsolidateOptions(**options)):
        if isinstance(event, ConsolidateResult):
            result = event
    assert result is not None
    return result


async def test_a_tag_group_condenses_without_losing_a_statement() -> None:
    async with consolidating() as w:
        old = [
            await remember(w, t, days_ago=90 - i, tags=("travel",)) for i, t in enumerate(TRAVEL)
        ]
        recent = await remember(w, "The user booked a flight to Oslo.", 2, tags=("travel",))
        pinned = await remember(w, "The user's seat is 14A.", 90, tags=("travel", "pinned"))
        result = await run(w)
        assert (result.groups, result.consolidated, result.dry_run) == (1, 6, False)
        (group,) = result.details
        assert group.group == "tag:travel" and group.method == "merge"
        assert set(group.source_ids) == {m.id for m in old}
        stored = await everything(w)
        derived = stored[group.derived_id]
        lines = derived.content.split("\n")
        # Every distinct sentence once ("flies from Lisbon" was said twice), in order.
        assert lines == [
            "The user flies from Lisbon.",
            "The user prefers window seats.",
            "The user's passport expires in 2027.",
            "The user needs a vegetarian meal on flights.",
            "The user collects airline miles with TAP.",
            "The user likes early morning departures.",
        ]
        assert derived_from(derived.metadata) == [m.id for m in old]
        assert set(derived.tags) == {"travel", CONSOLIDATED_TAG} and not derived.archived
        assert derived.created_at == old[0].created_at
        assert derived.source is not None and derived.source.name == "consolidation"
        for m in old:
            assert stored[m.id].archived and superseded_by(stored[m.id].metadata) == derived.id
            kinds = {r.kind: r.strength for r in relations_of(stored[m.id].metadata)}
            assert kinds[RelationKind.CONSOLIDATED_INTO] == 1.0  # wholly derived
        assert not stored[recent.id].archived and not stored[pinned.id].archived
        found = await w.memories.recall(S, RecallQuery(query="passport expiry", limit=3))
        assert found.results[0].memory.id == derived.id


async def test_a_dry_run_reports_and_changes_nothing() -> None:
    async with consolidating() as w:
        for i, t in enumerate(TRAVEL):
            await remember(w, t, days_ago=60 + i, tags=("travel",))
        before = await everything(w)
        result = await run(w, dry_run=True)
        assert result.dry_run and result.groups == 1 and result.consolidated == 6
        assert result.details[0].derived_id == "" and "passport" in result.details[0].content
        assert await everything(w) == before


async def test_a_consolidation_can_be_undone() -> None:
    async with consolidating() as w:
        old = [
            await remember(w, t, days_ago=60 + i, tags=("travel",)) for i, t in enumerate(TRAVEL)
        ]
        (group,) = (await run(w)).details
        undone, back = await w.lifecycle.undo_consolidation(
            S, MemorySelector(ids=(group.derived_id,))
        )
        assert (undone, back) == (1, 6)
        stored = await everything(w)
        assert stored[group.derived_id].archived
        for m in old:
            assert not stored[m.id].archived and superseded_by(stored[m.id].metadata) == ""
        # Undoing twice changes nothing more.
        assert await w.lifecycle.undo_consolidation(S, MemorySelector(ids=(group.derived_id,))) == (
            0,
            0,
        )


async def test_untagged_memories_cluster_by_similarity() -> None:
    async with consolidating(cluster_similarity=0.5, min_group_size=3) as w:
        report = [
            "Quarterly report for client Acme is due on the 5th.",
            "Quarterly report for client Acme needs the revenue table.",
            "Quarterly report for client Acme goes to Maria.",
        ]
        for i, t in enumerate(report):
            await remember(w, t, days_ago=45 + i)
        other = await remember(w, "Buy oat milk and bananas.", 45)
        result = await run(w)
        assert result.groups == 1 and result.details[0].group == "cluster"
        assert not (await everything(w))[other.id].archived


async def test_a_long_merge_is_split_into_memories_that_fit() -> None:
    async with consolidating(min_group_size=3) as w:
        topics = ["budget", "staffing", "vendors", "milestones", "risks"]
        for i, topic in enumerate(topics):
            sentences = " ".join(f"Zephyr {topic} {j} reads {j * 7 + i}." for j in range(60))
            await remember(w, sentences, days_ago=40 + i, tags=("zephyr",))
        result = await run(w)
        assert result.consolidated == 5 and len(result.details) > 1
        stored = await everything(w)
        text = "\n".join(stored[g.derived_id].content for g in result.details)
        for i, topic in enumerate(topics):
            for j in range(60):
                assert f"Zephyr {topic} {j} reads {j * 7 + i}." in text
        assert all(len(stored[g.derived_id].content.encode()) <= 8192 for g in result.details)


@pytest.fixture
def chat() -> Any:
    with running_chat_server() as server:
        yield server


async def test_an_llm_summarises_when_configured(chat: ChatServer) -> None:
    chat.reply = lambda request: "The user flies from Lisbon in a window seat, vegetarian."
    async with consolidating(llm_url=chat.url) as w:
        for i, t in enumerate(TRAVEL):
            await remember(w, t, days_ago=60 + i, tags=("travel",))
        result = await run(w)
        assert result.degraded == () and result.details[0].method == "llm"
        assert result.details[0].content.startswith("The user flies from Lisbon in a window")
        prompt = chat.requests[-1]["messages"][1]["content"]
        assert all(t in prompt for t in TRAVEL) and prompt.startswith("1. ")


async def test_a_failing_llm_falls_back_to_the_merge_and_says_so(chat: ChatServer) -> None:
    chat.mode = "error"
    async with consolidating(llm_url=chat.url) as w:
        for i, t in enumerate(TRAVEL):
            await remember(w, t, days_ago=60 + i, tags=("travel",))
        result = await run(w)
        assert result.details[0].method == "merge"
        (note,) = result.degraded
        assert note.component == "llm" and "HTTP 500" in note.reason and "merged" in note.reason


async def test_maintenance_consolidates_when_asked() -> None:
    async with consolidating() as w:
        for i, t in enumerate(TRAVEL):
            await remember(w, t, days_ago=60 + i, tags=("travel",))
        result = None
        async for event in w.lifecycle.run_maintenance(S, MaintenanceOptions()):
            result = event
        assert isinstance(result, MaintenanceResult) and result.consolidated == 0  # off by default
        async for event in w.lifecycle.run_maintenance(S, MaintenanceOptions(consolidate=True)):
            result = event
        assert isinstance(result, MaintenanceResult) and result.consolidated == 6
