"""Export then import into an empty store reproduces the partition exactly: every
memory (vector included) and every record of every kind. Import is idempotent,
validates every record and re-derives keyed mirrors' ids in another agent."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from memoryd.api import convert
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyWrite
from memoryd.domain.lifecycle import (
    EXPORT_FORMAT,
    ExportedKeyEvent,
    ExportedMemory,
    ExportHeader,
    ExportItem,
    MaintenanceOptions,
    Progress,
)
from memoryd.domain.models import Provenance, ProvenanceKind, SecurityLevel
from memoryd.domain.principal import CallScope
from memoryd.domain.records import RecordKind
from memoryd.domain.snapshot import SnapshotRequest
from memoryd.service.keyed.docs import mirror_id
from memoryd.service.lifecycle.maintenance import MAINTENANCE_KEY
from tests.unit.lifecycle.helpers import everything, memory_fields, populate_everything
from tests.unit.snapshot.world import World, drain, scope_for, world

USER_SOURCE = Provenance(ProvenanceKind.USER)

A = scope_for("agent-a")


async def export_items(w: World, scope: CallScope, *, vectors: bool = True) -> list[ExportItem]:
    partitions = await w.lifecycle.export_partitions(scope, False)
    return [
        item
        async for item in w.lifecycle.export(
            scope, partitions, all_agents=False, include_vectors=vectors
        )
        if not isinstance(item, Progress)
    ]


def through_jsonl(items: list[ExportItem]) -> list[ExportItem]:
    """Each item as one JSON line and back, as memoryctl export / import does."""
    lines = [convert.export_line(convert.export_record(item)) for item in items]
    assert all("\n" not in line for line in lines)
    return [convert.export_item_from(convert.parse_export_line(line)) for line in lines]


async def import_items(w: World, scope: CallScope, items: list[ExportItem]):  # type: ignore[no-untyped-def]
    importer = w.lifecycle.importer()
    for i, item in enumerate(items):
        if not isinstance(item, ExportHeader):
            await importer.add(i, scope, item)
    return await importer.finish()


@pytest.mark.parametrize("backend", ["memory", "lancedb"])
async def test_round_trip_reproduces_every_record(backend: str, tmp_path: Path) -> None:
    source_dir = tmp_path / "source" if backend == "lancedb" else None
    target_dir = tmp_path / "target" if backend == "lancedb" else None
    async with world(data_dir=source_dir) as src:
        await populate_everything(src, A)
        before = await everything(src, A.partition)
        items = through_jsonl(await export_items(src, A))
    header = items[0]
    assert isinstance(header, ExportHeader) and header.format == EXPORT_FORMAT
    assert header.agent_id == "agent-a" and header.embedding_dimension == 64

    async with world(data_dir=target_dir) as dst:
        outcome = await import_items(dst, A, items)
        after = await everything(dst, A.partition)
        again = await import_items(dst, A, items)
        after_again = await everything(dst, A.partition)

    assert outcome.rejected == [] and outcome.skipped == 0
    assert outcome.imported == len(items) - 1
    assert again.imported == 0 and again.skipped == len(items) - 1 and again.rejected == []
    memories, records = before
    kinds_present = {kind for kind, rs in records.items() if rs}
    assert kinds_present == set(RecordKind)  # the test covers every kind
    assert len(memories) == 8  # six remembered, two keys mirrored
    assert [memory_fields(m) for m in after[0]] == [memory_fields(m) for m in memories]
    for kind in RecordKind:
        assert after[1][kind] == records[kind], kind
    assert [memory_fields(m) for m in after_again[0]] == [memory_fields(m) for m in after[0]]
    assert after_again[1] == after[1]


async def test_without_vectors_memories_are_embedded_again() -> None:
    async with world() as src:
        await populate_everything(src, A)
        before = await everything(src, A.partition)
        items = await export_items(src, A, vectors=False)
    assert all(item.memory.vector is None for item in items if isinstance(item, ExportedMemory))
    async with world() as dst:
        outcome = await import_items(dst, A, items)
        after = await everything(dst, A.partition)
    assert outcome.rejected == []
    assert [memory_fields(m) for m in after[0]] == [memory_fields(m) for m in before[0]]


async def test_import_into_another_agent_rederives_mirror_ids() -> None:
    b = scope_for("agent-b")
    async with world() as w:
        await populate_everything(w, A)
        items = await export_items(w, A)
        outcome = await import_items(w, b, items)
        assert outcome.rejected == []
        entry = await w.keyed.get(b, "/user/style")
        assert entry.memory_id == mirror_id("t1", "agent-b", "/user/style")
        mirror = (await w.store.get(b.partition, [entry.memory_id]))[0]
        assert mirror.key == "/user/style" and mirror.agent_id == "agent-b"
        # The imported agent works like any other: a snapshot sees its memories.
        snap = await w.snapshots.build(b, SnapshotRequest(trigger="slides colour"))
        assert "dark blue" in snap.text
        # Key versions continue after the imported ones.
        counter = await w.records.get_records(b.partition, RecordKind.COUNTER, ["keys"])
        written = await w.keyed.set(b, KeyWrite("/new", Json.of("value"), source=USER_SOURCE))
        assert written.version == counter[0].version + 1


async def test_export_leaves_out_what_the_caller_may_not_see() -> None:
    low = scope_for("agent-a", clearance=SecurityLevel.INTERNAL)
    async with world() as w:
        await populate_everything(w, A)
        items = await export_items(w, low)
    memories = [i.memory for i in items if isinstance(i, ExportedMemory)]
    assert memories and all(m.security_level <= SecurityLevel.INTERNAL for m in memories)
    assert "Secret launch date is in May." not in {m.content for m in memories}


async def test_every_bad_record_is_rejected_and_the_rest_imported() -> None:
    low = scope_for("agent-a", clearance=SecurityLevel.INTERNAL)
    async with world() as src:
        await populate_everything(src, A)
        items = await export_items(src, A)
    broken = list(items)
    first_memory = next(i for i, it in enumerate(broken) if isinstance(it, ExportedMemory))
    item = broken[first_memory]
    assert isinstance(item, ExportedMemory)
    broken[first_memory] = ExportedMemory(dataclasses.replace(item.memory, content=""))
    first_key = next(i for i, it in enumerate(broken) if isinstance(it, ExportedKeyEvent))
    key_item = broken[first_key]
    assert isinstance(key_item, ExportedKeyEvent)
    broken[first_key] = dataclasses.replace(
        key_item, entry=dataclasses.replace(key_item.entry, key="/a/../b")
    )
    async with world() as dst:
        outcome = await import_items(dst, low, broken)
    reasons = {r.index: r.reason for r in outcome.rejected}
    assert "memory.memory.content: must not be empty" in reasons[first_memory]
    assert "key_event.entry.key" in reasons[first_key]
    # The restricted memory is refused (above the importer's clearance), never stored.
    assert any("above the caller's clearance" in r for r in reasons.values())
    assert outcome.imported == len(items) - 1 - len(outcome.rejected)


async def test_maintenance_marker_is_not_exported() -> None:
    async with world() as w:
        await populate_everything(w, A)
        await drain(w.lifecycle.run_maintenance(A, MaintenanceOptions()))
        marker = await w.records.get_records(A.partition, RecordKind.COUNTER, [MAINTENANCE_KEY])
        assert marker
        items = await export_items(w, A)
    async with world() as dst:
        await import_items(dst, A, items)
        assert (
            await dst.records.get_records(A.partition, RecordKind.COUNTER, [MAINTENANCE_KEY]) == []
        )
