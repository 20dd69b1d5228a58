"""GetStats, Archive / Restore, Prune, Reset, Reembed and list_partitions."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from memoryd.domain.errors import InvalidArgument
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyWrite
from memoryd.domain.lifecycle import (
    MaintenanceOptions,
    MemorySelector,
    Progress,
    PruneCriteria,
    ReembedResult,
)
from memoryd.domain.models import (
    MemoryFilter,
    MemoryType,
    Partition,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
)
from memoryd.domain.principal import Role
from memoryd.domain.records import RecordKind
from memoryd.domain.requests import ListQuery, MemoryDraft, RecallQuery
from memoryd.domain.snapshot import SnapshotRequest
from tests.unit.lifecycle.helpers import everything, populate_everything
from tests.unit.snapshot.world import SwitchableEmbedder, drain, scope_for, world

USER_SOURCE = Provenance(ProvenanceKind.USER)

A = scope_for("agent-a")


async def test_stats_counts_only_what_the_caller_may_see() -> None:
    low = scope_for("agent-a", clearance=SecurityLevel.INTERNAL, roles=frozenset({Role.READ}))
    async with world() as w:
        await populate_everything(w, A)
        full = await w.lifecycle.stats(A)
        limited = await w.lifecycle.stats(low)
        await drain(w.lifecycle.run_maintenance(A, MaintenanceOptions()))
        after = await w.lifecycle.stats(A)
    assert full.memories == 8 and full.archived == 1
    assert full.by_memory_type == {"episode": 1, "fact": 6, "preference": 1}
    assert full.by_security_level == {
        "public": 0,
        "internal": 7,
        "confidential": 0,
        "restricted": 1,
    }
    assert limited.memories == 7
    assert list(limited.by_security_level) == ["public", "internal"]
    assert full.keys == 2  # tombstones are not keys
    assert full.sessions == 2 and full.working_scopes == 2
    assert full.by_embedding_model == {w.embedder.model_id: 8}
    assert 0.5 <= full.average_importance <= 0.6
    assert full.last_maintenance_at is None
    assert after.last_maintenance_at is not None
    assert full.store_bytes == 0  # the in-memory store has no files


async def test_archive_and_restore_by_ids_and_by_filter() -> None:
    async with world() as w:
        ids = [
            (
                await w.memories.remember(
                    A,
                    MemoryDraft(
                        content=f"Fact {i} about travel", tags=("travel",) if i % 2 else ()
                    ),
                )
            ).memory.id
            for i in range(6)
        ]
        assert await w.lifecycle.archive(A, MemorySelector(ids=(ids[0], ids[1], "missing"))) == 2
        assert await w.lifecycle.archive(A, MemorySelector(ids=(ids[0],))) == 0  # already
        assert await w.lifecycle.archive(A, MemorySelector(tags=("travel",))) == 2  # 3 and 5
        page = await w.memories.list_memories(A, ListQuery())
        assert {m.id for m in page.memories} == {ids[2], ids[4]}
        recalled = await w.memories.recall(A, RecallQuery(query="travel fact", limit=10))
        assert {r.memory.id for r in recalled.results} == {ids[2], ids[4]}
        snap = await w.snapshots.build(A, SnapshotRequest(trigger="travel"))
        assert {i.id for i in snap.items} <= {ids[2], ids[4]}
        archived = await w.store.get(A.partition, [ids[0]])
        assert archived[0].archived and archived[0].version == 2
        assert await w.lifecycle.restore(A, MemorySelector(memory_types=(MemoryType.FACT,))) == 4
        assert len((await w.memories.list_memories(A, ListQuery())).memories) == 6
        # Other agents' ids behave like missing ones.
        assert await w.lifecycle.archive(scope_for("agent-b"), MemorySelector(ids=(ids[2],))) == 0
        with pytest.raises(InvalidArgument) as err:
            await w.lifecycle.archive(A, MemorySelector())
        assert err.value.violations[0].field == "selector"


async def test_archive_skips_memories_above_clearance() -> None:
    low = scope_for("agent-a", clearance=SecurityLevel.INTERNAL)
    async with world() as w:
        secret = await w.memories.remember(
            A, MemoryDraft(content="secret", tags=("x",), security_level=SecurityLevel.RESTRICTED)
        )
        assert await w.lifecycle.archive(low, MemorySelector(tags=("x",))) == 0
        assert await w.lifecycle.archive(low, MemorySelector(ids=(secret.memory.id,))) == 0
        assert not (await w.store.get(A.partition, [secret.memory.id]))[0].archived


async def test_prune_dry_run_then_for_real() -> None:
    async with world() as w:
        old = await w.memories.remember(
            A, MemoryDraft(content="old unused note", created_at=w.clock() - timedelta(days=90))
        )
        used = await w.memories.remember(
            A, MemoryDraft(content="old used note", created_at=w.clock() - timedelta(days=90))
        )
        await w.memories.get(A, used.memory.id)
        await w.access.flush()
        await w.memories.remember(A, MemoryDraft(content="new note"))
        await w.keyed.set(
            A, KeyWrite("/k", Json.of("a key's mirror is never pruned"), source=USER_SOURCE)
        )
        criteria = PruneCriteria(
            created_before=w.clock() - timedelta(days=30), min_access_count=1, dry_run=True
        )
        dry = await w.lifecycle.prune(A, criteria)
        assert dry.dry_run and dry.ids == [old.memory.id] and dry.pruned == 1
        assert await w.store.count(A.partition, MemoryFilter(include_archived=True)) == 4
        real = await w.lifecycle.prune(
            A, PruneCriteria(created_before=criteria.created_before, min_access_count=1)
        )
        assert real.pruned == 1 and not real.dry_run
        assert await w.store.get(A.partition, [old.memory.id]) == []
        by_type = await w.lifecycle.prune(
            A, PruneCriteria(memory_types=(MemoryType.FACT,), dry_run=True)
        )
        assert len(by_type.ids) == 2  # the key's mirror is left to its key
        with pytest.raises(InvalidArgument):
            await w.lifecycle.prune(A, PruneCriteria())


async def test_prune_by_namespace_deletes_that_namespace_only() -> None:
    """Three-tier memory's SemanticMemoryStore.Delete(namespace): Prune with the
    namespace alone (dry run first); other namespaces, other agents and keyed
    memories' mirrors stay."""
    b = scope_for("agent-b")
    async with world() as w:
        kb = await w.memories.remember_batch(
            A, [MemoryDraft(content=f"kb fact {i}", namespace="kb-v1") for i in range(3)]
        )
        await w.memories.remember(A, MemoryDraft(content="kb v2 fact", namespace="kb-v2"))
        await w.memories.remember(A, MemoryDraft(content="no namespace"))
        await w.memories.remember(b, MemoryDraft(content="b's kb fact", namespace="kb-v1"))
        dry = await w.lifecycle.prune(A, PruneCriteria(namespace="kb-v1", dry_run=True))
        assert sorted(dry.ids) == sorted(o.memory.id for o in kb) and dry.dry_run
        assert await w.store.count(A.partition, MemoryFilter(namespace="kb-v1")) == 3
        real = await w.lifecycle.prune(A, PruneCriteria(namespace="kb-v1"))
        assert real.pruned == 3 and not real.dry_run
        assert await w.store.count(A.partition, MemoryFilter(namespace="kb-v1")) == 0
        assert await w.store.count(A.partition, MemoryFilter()) == 2
        assert await w.store.count(b.partition, MemoryFilter(namespace="kb-v1")) == 1
        with pytest.raises(InvalidArgument) as err:
            await w.lifecycle.prune(A, PruneCriteria(namespace="bad\nname"))
        assert err.value.violations[0].field == "namespace"


async def test_reset_wipes_the_partition_only() -> None:
    b = scope_for("agent-b")
    async with world() as w:
        await populate_everything(w, A)
        await populate_everything(w, b)
        with pytest.raises(InvalidArgument) as err:
            await w.lifecycle.reset(A, confirm=False)
        assert err.value.violations[0].field == "confirm"
        deleted = await w.lifecycle.reset(A, confirm=True)
        assert deleted > 20
        memories, records = await everything(w, A.partition)
        assert memories == [] and all(not rs for rs in records.values())
        others, other_records = await everything(w, b.partition)
        assert len(others) == 8 and all(other_records[k] for k in RecordKind)
        # Keys start over cleanly after a reset.
        entry = await w.keyed.set(A, KeyWrite("/fresh", Json.of(1), source=USER_SOURCE))
        assert entry.version >= 1
        assert (await w.keyed.get(A, "/fresh")).content == 1


async def test_reembed_after_a_model_change_is_resumable() -> None:
    first = SwitchableEmbedder(model_id="model-a")
    async with world(embedder=first) as w:
        for i in range(7):
            await w.memories.remember(A, MemoryDraft(content=f"memory {i} about gardens"))
        await w.keyed.set(A, KeyWrite("/g", Json.of("garden key"), source=USER_SOURCE))
        first.model = "model-b"
        events = await drain(w.lifecycle.reembed([A.partition], 3))
        progress = [e for e in events if isinstance(e, Progress) and e.phase == "reembed"]
        assert [p.done for p in progress] == [0, 3, 6, 8] and progress[-1].total == 8
        result = events[-1]
        assert isinstance(result, ReembedResult)
        assert result.reembedded == 8 and result.embedding_model == "model-b"
        stats = await w.lifecycle.stats(A)
        assert stats.by_embedding_model == {"model-b": 8}
        again = await drain(w.lifecycle.reembed([A.partition], 3))
        assert isinstance(again[-1], ReembedResult) and again[-1].reembedded == 0
        with pytest.raises(InvalidArgument):
            w.lifecycle.reembed([A.partition], 0)


@pytest.mark.parametrize("backend", ["memory", "lancedb"])
async def test_list_partitions(backend: str, tmp_path: Path) -> None:
    async with world(data_dir=tmp_path if backend == "lancedb" else None) as w:
        assert await w.store.list_partitions() == []
        assert await w.records.list_partitions() == []
        await w.memories.remember(scope_for("b", tenant="t2"), MemoryDraft(content="x"))
        await w.memories.remember(scope_for("a", tenant="t1"), MemoryDraft(content="x"))
        await w.profiles.set(scope_for("c", tenant="t1"), "profile")
        assert await w.store.list_partitions() == [Partition("t1", "a"), Partition("t2", "b")]
        assert await w.store.list_partitions("t2") == [Partition("t2", "b")]
        assert await w.records.list_partitions() == [Partition("t1", "c")]
        assert await w.records.list_partitions("t2") == []
        tenant = scope_for("a", tenant="t1")
        assert await w.lifecycle.export_partitions(tenant, True) == [
            Partition("t1", "a"),
            Partition("t1", "c"),
        ]
