"""Seed 003's tag compaction in maintenance (run_maintenance → _compact_tag_groups): a
tag group with more live memories than ``maintenance.tag_compaction_threshold`` (50,
the document's compaction_threshold) is condensed whatever its age, the originals
archived and restorable; a group at the threshold is left alone."""

from __future__ import annotations

from datetime import timedelta

from memoryd.config import CompressionSettings, MaintenanceSettings
from memoryd.domain.lifecycle import MaintenanceOptions, MaintenanceResult, MemorySelector
from memoryd.domain.models import Memory, MemoryFilter
from memoryd.domain.relations import derived_from
from memoryd.domain.requests import MemoryDraft
from memoryd.storage.base import ListPage
from tests.unit.snapshot.world import World, scope_for, world

S = scope_for()
THRESHOLD = 5
#: Compression off, so only the tag compaction condenses.
SETTINGS = MaintenanceSettings(
    tag_compaction_threshold=THRESHOLD, compression=CompressionSettings(enabled=False)
)


async def tagged(w: World, tag: str, count: int) -> list[Memory]:
    created = w.clock.now - timedelta(hours=1)  # fresh: no age limit applies
    return [
        (
            await w.memories.remember(
                S,
                MemoryDraft(f"{tag} record {i}: service svc-{i}", tags=(tag,), created_at=created),
            )
        ).memory
        for i in range(count)
    ]


async def maintain(w: World, consolidate: bool | None = None) -> MaintenanceResult:
    result = None
    async for event in w.lifecycle.run_maintenance(S, MaintenanceOptions(consolidate=consolidate)):
        result = event
    assert isinstance(result, MaintenanceResult)
    return result


async def live(w: World) -> list[Memory]:
    return await w.store.list(S.partition, MemoryFilter(), ListPage(limit=1000))


def test_the_default_threshold_is_the_documents() -> None:
    assert MaintenanceSettings().tag_compaction_threshold == 50


async def test_a_group_over_the_threshold_is_condensed_and_undoable() -> None:
    async with world(maintenance=SETTINGS) as w:
        over = await tagged(w, "deploy", THRESHOLD + 1)
        at = await tagged(w, "oncall", THRESHOLD)
        result = await maintain(w)
        assert result.consolidated == THRESHOLD + 1
        kept = await live(w)
        derived = [m for m in kept if "consolidated" in m.tags]
        assert len(derived) == 1 and "deploy" in derived[0].tags
        assert set(derived_from(derived[0].metadata)) == {m.id for m in over}
        assert {m.id for m in kept} == {derived[0].id} | {m.id for m in at}
        assert all(f"svc-{i}" in derived[0].content for i in range(THRESHOLD + 1))
        undone, back = await w.lifecycle.undo_consolidation(S, MemorySelector(ids=(derived[0].id,)))
        assert (undone, back) == (1, THRESHOLD + 1)
        assert {m.id for m in await live(w)} == {m.id for m in over + at}


async def test_off_or_consolidate_false_leaves_the_group() -> None:
    off = MaintenanceSettings(
        tag_compaction_threshold=None, compression=CompressionSettings(enabled=False)
    )
    async with world(maintenance=off) as w:
        await tagged(w, "deploy", THRESHOLD + 1)
        assert (await maintain(w)).consolidated == 0
    async with world(maintenance=SETTINGS) as w:
        await tagged(w, "deploy", THRESHOLD + 1)
        assert (await maintain(w, consolidate=False)).consolidated == 0
        assert len(await live(w)) == THRESHOLD + 1
