"""Memory writes answered at the log's fsync and applied behind (``apply_behind``):
the caller reads its own write through every read while the store has not got it,
the backlog is bounded, a crash replays it, a store failure keeps it, and the order
of writes is the log's."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memoryd.domain.errors import StoreError
from memoryd.domain.models import Memory, MemoryFilter, Partition, unit_queries, utcnow
from memoryd.domain.records import Record, RecordKind
from memoryd.durability.durable_store import Durability
from memoryd.durability.facades import DurableRecordStore, DurableStore
from memoryd.durability.ops import decode
from memoryd.durability.set_aside import requeue, set_aside_entries
from memoryd.durability.wal import REJECTED_PREFIX
from memoryd.storage.base import NO_HINTS, ListPage, Nearest, UpsertHints
from memoryd.storage.lancedb import LanceDBStore
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from memoryd.text.normalize import content_hash
from tests.reliability.support import open_core, until

P = Partition("t", "a")
OTHER = Partition("t", "b")
DIM = 8
EVERYTHING = MemoryFilter()


class HeldStore:
    """An in-memory store whose writes wait while ``held`` (a slow commit), and fail
    while ``down``; ``applied`` counts the write calls that completed."""

    def __init__(self, inner: InMemoryStore) -> None:
        self.inner = inner
        self.name = inner.name
        self.released = asyncio.Event()
        self.released.set()
        self.down = False
        #: Raise ValueError (input the store calls invalid) while set.
        self.rejecting = False
        #: Upserts of these ids are rejected as invalid.
        self.invalid_ids: set[str] = set()
        self.applied = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def hold(self) -> None:
        self.released.clear()

    def release(self) -> None:
        self.released.set()

    async def _write(self) -> None:
        await self.released.wait()
        if self.down:
            raise StoreError("connection refused")
        if self.rejecting:
            raise ValueError("rejected")

    async def upsert(
        self, partition: Partition, memories: Sequence[Memory], hints: UpsertHints = NO_HINTS
    ) -> None:
        await self._write()
        if any(m.id in self.invalid_ids for m in memories):
            raise ValueError("rejected")
        await self.inner.upsert(partition, memories, hints)
        self.applied += 1

    async def delete(self, partition: Partition, ids: Sequence[str]) -> list[str]:
        await self._write()
        gone = await self.inner.delete(partition, ids)
        self.applied += 1
        return gone


def _memory(i: int, content: str | None = None, partition: Partition = P) -> Memory:
    now = utcnow()
    vec = np.full(DIM, 0.01, dtype=np.float32)
    vec[i % DIM] = 1.0
    return Memory(
        id=f"m{i}",
        tenant_id=partition.tenant_id,
        agent_id=partition.agent_id,
        content=content or f"the user likes colour number {i}",
        created_at=now,
        updated_at=now,
        vector=vec / np.linalg.norm(vec),
    )


async def _core(tmp: Path, store: Any, *, behind: int = 8, delay_s: float = 0.0) -> Durability:
    records = InMemoryRecordStore()
    await records.open()
    return await open_core(tmp, store, records, apply_behind=behind, apply_delay_s=delay_s)


async def _held(
    tmp: Path, *, behind: int = 8, delay_s: float = 0.0
) -> tuple[HeldStore, Durability, DurableStore]:
    inner = InMemoryStore(DIM)
    await inner.open()
    held = HeldStore(inner)
    core = await _core(tmp, held, behind=behind, delay_s=delay_s)
    return held, core, DurableStore(core, dimension=DIM)


async def test_a_write_is_answered_before_the_store_has_it_and_every_read_sees_it(
    tmp_path: Path,
) -> None:
    held, core, store = await _held(tmp_path)
    held.hold()
    async with asyncio.timeout(10):  # answered while the store's commit is held
        await store.upsert(P, [_memory(1)])
        await store.upsert(P, [_memory(2, "a note about the dentist")])
    assert await held.inner.get(P, ["m1", "m2"]) == []  # the store has neither yet
    assert len(core.pending) == 2

    assert [m.id for m in await store.get(P, ["m1", "m2"])] == ["m1", "m2"]
    assert {m.id for m in await store.list(P, EVERYTHING)} == {"m1", "m2"}
    hits = await store.search(P, _memory(2).vector, EVERYTHING, 1)  # type: ignore[arg-type]
    assert [h.memory.id for h in hits] == ["m2"]
    near = await store.search_many(
        P, [_memory(1).vector, _memory(2).vector], EVERYTHING, Nearest(5, min_similarity=0.99)
    )
    assert [[h.memory.id for h in row] for row in near] == [["m1"], ["m2"]]
    dupes = await store.find_by_content(P, [content_hash("a note about the dentist")], EVERYTHING)
    assert [m.id for m in dupes] == ["m2"]
    assert await store.search(OTHER, _memory(1).vector, EVERYTHING, 5) == []  # type: ignore[arg-type]

    # Full text is laid over too (scored with the store's statistics, see
    # test_text_overlay.py): it does not wait for the held apply.
    async with asyncio.timeout(10):
        assert [h.memory.id for h in await store.text_search(P, "dentist", EVERYTHING, 5)] == ["m2"]
    # Reads with no overlay wait until what was answered is applied.
    count = asyncio.ensure_future(store.count(P, EVERYTHING))
    partitions = asyncio.ensure_future(store.list_partitions())
    await asyncio.sleep(0.05)
    assert not (count.done() or partitions.done())
    held.release()
    async with asyncio.timeout(10):
        assert await count == 2
        assert await partitions == [P]
    await until(lambda: not core.pending)
    assert len(await held.inner.get(P, ["m1", "m2"])) == 2
    await core.close()


async def test_the_backlog_is_bounded(tmp_path: Path) -> None:
    held, core, store = await _held(tmp_path, behind=3)
    held.hold()
    async with asyncio.timeout(10):
        await store.upsert(P, [_memory(1), _memory(2)])
        await store.upsert(P, [_memory(3)])  # 3 waiting: still within the bound
    fourth = asyncio.ensure_future(store.upsert(P, [_memory(4)]))
    await asyncio.sleep(0.1)
    assert not fourth.done()  # past the bound a write waits for its apply
    held.release()
    async with asyncio.timeout(10):
        await fourth
    assert fourth.result() is None
    assert len(await held.inner.get(P, ["m1", "m2", "m3", "m4"])) == 4
    assert not core.pending
    await core.close()


async def test_a_write_being_applied_holds_up_no_other_partition(tmp_path: Path) -> None:
    held, core, store = await _held(tmp_path, behind=2)
    await store.upsert(P, [_memory(1, "an applied note about parking")])
    await until(lambda: not core.pending)
    held.hold()
    bulk = asyncio.ensure_future(
        store.upsert(OTHER, [_memory(i, partition=OTHER) for i in range(2, 6)])
    )
    await asyncio.sleep(0.05)
    assert not bulk.done()
    async with asyncio.timeout(5):  # agent a's reads do not queue behind agent b's apply
        hits = await store.text_search(P, "parking", EVERYTHING, 5)
        assert [h.memory.id for h in hits] == ["m1"]
        assert await store.count(P, EVERYTHING) == 1
    held.release()
    await bulk
    assert await store.count(OTHER, EVERYTHING) == 4
    await core.close()


async def test_a_batch_larger_than_the_bound_is_applied_before_its_answer(tmp_path: Path) -> None:
    held, core, store = await _held(tmp_path, behind=4)
    await store.upsert(P, [_memory(i) for i in range(5)])
    assert held.applied == 1 and not core.pending
    await core.close()


async def test_record_writes_are_applied_behind_and_read_through_the_log(
    tmp_path: Path,
) -> None:
    # Keys, working memory, profiles and sessions like memories: answered at the
    # fsync (a SetMemory held its agent's key lock through two commits before).
    _, core, _ = await _held(tmp_path, delay_s=60)  # no background pass here
    records = DurableRecordStore(core)
    record = Record(kind=RecordKind.KEY, key="k", doc={}, version=1, updated_at=utcnow())
    await records.put_records(P, [record])
    assert await core.records.get_records(P, RecordKind.KEY, ["k"]) == []  # not applied
    assert [r.key for r in await records.get_records(P, RecordKind.KEY, ["k"])] == ["k"]
    assert [r.key for r in await records.list_records(P, RecordKind.KEY)] == ["k"]
    assert await records.count_records(P, RecordKind.KEY) == 1  # applied first
    assert [r.key for r in await core.records.get_records(P, RecordKind.KEY, ["k"])] == ["k"]
    await core.close()


async def test_writes_apply_in_log_order(tmp_path: Path) -> None:
    held, core, store = await _held(tmp_path)
    held.hold()
    await store.upsert(P, [_memory(1)])
    await store.upsert(P, [_memory(1, "changed")])
    await store.delete(P, ["m1"])
    await store.upsert(P, [_memory(2)])
    assert [m.id for m in await store.get(P, ["m1", "m2"])] == ["m2"]  # the overlay
    held.release()
    await until(lambda: not core.pending)
    assert [m.id for m in await held.inner.get(P, ["m1", "m2"])] == ["m2"]
    await core.close()


async def test_writes_answered_during_an_apply_go_to_the_store_together(tmp_path: Path) -> None:
    held, core, store = await _held(tmp_path)
    held.hold()
    await store.upsert(P, [_memory(1)])  # its apply starts and is held
    await asyncio.sleep(0.05)
    for i in (2, 3, 4):
        await store.upsert(P, [_memory(i)])
    held.release()
    await until(lambda: not core.pending)
    assert held.applied == 2  # m1, then m2-m4 in one store call
    assert len(await held.inner.get(P, ["m1", "m2", "m3", "m4"])) == 4
    await core.close()


async def test_a_crash_before_the_apply_loses_nothing_answered(tmp_path: Path) -> None:
    held, core, store = await _held(tmp_path)
    held.hold()
    await store.upsert(P, [_memory(i) for i in range(4)])
    await store.delete(P, ["m0"])
    # "Crash": the process is gone with the writes answered and not applied.
    core._closed = True
    fresh = InMemoryStore(DIM)
    await fresh.open()
    again = await _core(tmp_path, fresh)
    assert again.replayed == 2
    assert sorted(m.id for m in await fresh.get(P, [f"m{i}" for i in range(4)])) == [
        "m1",
        "m2",
        "m3",
    ]
    await again.close()


async def test_a_store_failure_behind_the_answer_keeps_the_write(tmp_path: Path) -> None:
    held, core, store = await _held(tmp_path)
    held.down = True
    await store.upsert(P, [_memory(1)])  # answered from the log; the apply fails behind
    await until(lambda: not core.states.get("store").ok)  # type: ignore[union-attr]
    assert [m.id for m in await store.get(P, ["m1"])] == ["m1"]
    # Reads that cannot overlay do not wait on a failing store: answered degraded.
    async with asyncio.timeout(10):
        await store.count(P, EVERYTHING)
    held.down = False
    await until(lambda: not core.pending)
    assert [m.id for m in await held.inner.get(P, ["m1"])] == ["m1"]
    await until(lambda: core.states.get("store").ok)  # type: ignore[union-attr]
    await core.close()


def _set_aside_ids(tmp: Path) -> list[list[str]]:
    return [
        [m.id for op in decode(path.read_bytes()) for m in op.memories]
        for path in sorted((tmp / "wal").glob(f"{REJECTED_PREFIX}*.bin"))
    ]


async def test_an_answered_write_the_store_rejects_is_set_aside_and_holds_up_nothing(
    tmp_path: Path,
) -> None:
    # Applied first, a write the store calls invalid is not stored and its caller
    # hears why; answered first, nobody would hear it, so it is set aside next to the
    # log (memoryd wal set-aside / requeue), never retried: a retry that can never
    # succeed would hold up every later write of every partition.
    held, core, store = await _held(tmp_path)
    held.invalid_ids = {"m1"}
    await store.upsert(P, [_memory(1)])
    await store.upsert(OTHER, [_memory(2, partition=OTHER)])
    await store.upsert(P, [_memory(3)])
    await until(lambda: not core.pending)
    assert _set_aside_ids(tmp_path) == [["m1"]]
    assert sorted(m.id for m in await held.inner.get(P, ["m1", "m3"])) == ["m3"]
    assert [m.id for m in await held.inner.get(OTHER, ["m2"])] == ["m2"]
    assert core.states.get("store").ok  # type: ignore[union-attr]
    await core.close()


async def test_a_write_answered_while_the_store_fails_is_set_aside_if_rejected(
    tmp_path: Path,
) -> None:
    # Answered from the log (degraded), then rejected as invalid when the store is
    # back: set aside (the caller was told it was stored), the rest applied.
    held, core, store = await _held(tmp_path, behind=0)
    held.down = True
    await store.upsert(P, [_memory(1)])
    await store.upsert(OTHER, [_memory(2, partition=OTHER)])
    held.invalid_ids = {"m1"}
    held.down = False
    await until(lambda: not core.pending)
    assert _set_aside_ids(tmp_path) == [["m1"]]
    assert [m.id for m in await held.inner.get(OTHER, ["m2"])] == ["m2"]
    await core.close()


async def test_replay_sets_aside_an_entry_the_store_rejects(tmp_path: Path) -> None:
    # Whether a logged entry was answered is not in the log, so a replay that the store
    # rejects keeps the entry's bytes next to the log instead of dropping them.
    held, core, store = await _held(tmp_path)
    held.hold()
    await store.upsert(P, [_memory(1)])
    await store.upsert(P, [_memory(2)])
    core._closed = True  # "crash" with both answered and unapplied
    fresh = HeldStore(InMemoryStore(DIM))
    await fresh.inner.open()
    fresh.invalid_ids = {"m1"}
    again = await _core(tmp_path, fresh)
    assert [m.id for m in await fresh.inner.get(P, ["m1", "m2"])] == ["m2"]
    kept = sorted((tmp_path / "wal").glob(f"{REJECTED_PREFIX}*.bin"))
    assert len(kept) == 1
    (op,) = decode(kept[0].read_bytes())
    assert op.kind == "upsert" and [m.id for m in op.memories] == ["m1"]
    await again.close()
    # Set aside, not replayed again.
    fresh.invalid_ids = set()
    once_more = await _core(tmp_path, fresh)
    assert once_more.replayed == 0
    await once_more.close()
    # Requeued once the cause is gone (`memoryd wal requeue`), the next start applies it.
    # Seqs 1 and 2 were logged: the requeued entry is the next, 3.
    assert requeue(tmp_path / "wal") == {1: 3}
    assert set_aside_entries(tmp_path / "wal") == []
    requeued = await _core(tmp_path, fresh)
    assert requeued.replayed == 1
    assert [m.id for m in await fresh.inner.get(P, ["m1", "m2"])] == ["m1", "m2"]
    await requeued.close()


async def test_a_requeued_entry_still_rejected_is_set_aside_again(tmp_path: Path) -> None:
    held, core, store = await _held(tmp_path)
    held.hold()
    await store.upsert(P, [_memory(1)])
    core._closed = True
    fresh = HeldStore(InMemoryStore(DIM))
    await fresh.inner.open()
    fresh.invalid_ids = {"m1"}
    await (await _core(tmp_path, fresh)).close()
    (first,) = set_aside_entries(tmp_path / "wal")
    moved = requeue(tmp_path / "wal", {first.seq})
    again = await _core(tmp_path, fresh)  # still invalid
    (second,) = set_aside_entries(tmp_path / "wal")
    assert second.seq == moved[first.seq] > first.seq
    assert [(op.kind, op.targets) for op in second.ops] == [("upsert", ("m1",))]
    assert await fresh.inner.get(P, ["m1"]) == []
    await again.close()
    with pytest.raises(ValueError, match="no set-aside entry 99"):
        requeue(tmp_path / "wal", {99})


async def test_close_applies_what_was_answered(tmp_path: Path) -> None:
    held, core, store = await _held(tmp_path)
    held.hold()
    await store.upsert(P, [_memory(1)])
    closing = asyncio.ensure_future(core.close())
    await asyncio.sleep(0.05)
    held.release()
    async with asyncio.timeout(10):
        await closing
    assert [m.id for m in await held.inner.get(P, ["m1"])] == ["m1"]


async def test_zero_applies_before_answering(tmp_path: Path) -> None:
    held, core, store = await _held(tmp_path, behind=0)
    held.hold()
    write = asyncio.ensure_future(store.upsert(P, [_memory(1)]))
    await asyncio.sleep(0.1)
    assert not write.done()
    held.release()
    async with asyncio.timeout(10):
        await write
    assert held.applied == 1
    await core.close()


@pytest.mark.parametrize("behind", [0, 256])
async def test_a_replaced_memory_never_vanishes_from_any_read(tmp_path: Path, behind: int) -> None:
    # LanceDB replaces a stored row by a delete and then an add (two commits); every
    # read between them must still find the memory, old or new version.
    lance = LanceDBStore(tmp_path / "lance", DIM)
    await lance.open()
    core = await _core(tmp_path, lance, behind=behind)
    store = DurableStore(core, dimension=DIM)
    others = [_memory(i, f"filler memory {i} about gardening") for i in range(2, 8)]
    await store.upsert(P, [_memory(1, "version 0 of the parking note"), *others])
    done = False

    async def writer() -> None:
        nonlocal done
        for v in range(1, 25):
            await store.upsert(P, [_memory(1, f"version {v} of the parking note")])
        done = True

    async def reader() -> int:
        reads = 0
        while not done:
            got = await store.get(P, ["m1"])
            hits = await store.search(P, _memory(1).vector, EVERYTHING, 1)  # type: ignore[arg-type]
            text = await store.text_search(P, "parking note", EVERYTHING, 5)
            listed = await store.list(P, EVERYTHING, ListPage(limit=50))
            assert [m.id for m in got] == ["m1"]
            assert [h.memory.id for h in hits] == ["m1"]
            assert [h.memory.id for h in text] == ["m1"]
            assert "m1" in {m.id for m in listed}
            assert await store.count(P, EVERYTHING) == 7
            reads += 1
            await asyncio.sleep(0)
        return reads

    async with asyncio.timeout(60):
        _, reads = await asyncio.gather(writer(), reader())
    assert reads > 0
    got = await store.get(P, ["m1"])
    assert got[0].content == "version 24 of the parking note"
    await core.close()
    await lance.close()


async def test_vector_search_over_unapplied_writes_is_exact(tmp_path: Path) -> None:
    held, core, store = await _held(tmp_path, behind=64)
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((40, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[31] = vectors[32] = vectors[30]  # a three-way tie
    memories = [_memory(i) for i in range(40)]
    for m, v in zip(memories, vectors, strict=True):
        m.vector = v
    await store.upsert(P, memories[:20])  # applied: in the store
    await until(lambda: not core.pending)
    held.hold()
    await store.upsert(P, memories[20:])  # answered, not applied
    queries = unit_queries([vectors[30], vectors[5], rng.standard_normal(DIM)], DIM)

    def expected(q: np.ndarray, limit: int, cut: float | None) -> list[str]:
        q = q / np.linalg.norm(q)
        ranked = sorted(
            ((float(v @ q), m.id) for m, v in zip(memories, vectors, strict=True)),
            key=lambda p: (-p[0], p[1]),
        )
        return [i for s, i in ranked if cut is None or s >= cut - 1e-6][:limit]

    for limit, cut in [(2, None), (5, None), (40, None), (10, 0.5)]:
        rows = await store.search_many(P, queries, EVERYTHING, Nearest(limit, min_similarity=cut))
        assert [[h.memory.id for h in row] for row in rows] == [
            expected(q, limit, cut) for q in queries
        ]
    held.release()
    await core.close()


#: A group-commit delay no test waits out: only close or a read applies before it.
FOREVER_S = 3600.0


async def test_writes_logged_within_the_delay_share_one_commit_and_close_hurries_it(
    tmp_path: Path,
) -> None:
    held, core, store = await _held(tmp_path, delay_s=FOREVER_S)
    for i in range(5):
        await store.upsert(P, [_memory(i)])
    await asyncio.sleep(0.05)  # the background apply runs now if it does not wait
    assert held.applied == 0 and len(core.pending) == 5
    assert {m.id for m in await store.get(P, [f"m{i}" for i in range(5)])} == {
        f"m{i}" for i in range(5)
    }
    async with asyncio.timeout(30):  # close does not sit out the delay
        await core.close()
    assert held.applied == 1  # five logged writes, one store commit
    assert len(await held.inner.get(P, [f"m{i}" for i in range(5)])) == 5


async def test_a_read_with_no_overlay_applies_at_once_rather_than_waiting_out_the_delay(
    tmp_path: Path,
) -> None:
    held, core, store = await _held(tmp_path, delay_s=FOREVER_S)
    await store.upsert(P, [_memory(1, "a note about the dentist")])
    async with asyncio.timeout(30):
        hits = await store.text_search(P, "dentist", EVERYTHING, 5)
        assert await store.count(P, EVERYTHING) == 1
    assert [h.memory.id for h in hits] == ["m1"]
    assert held.applied == 1 and not core.pending
    await core.close()


async def test_a_write_past_the_bound_applies_the_backlog_without_waiting_out_the_delay(
    tmp_path: Path,
) -> None:
    held, core, store = await _held(tmp_path, behind=2, delay_s=FOREVER_S)
    await store.upsert(P, [_memory(1)])
    await store.upsert(P, [_memory(2)])
    assert held.applied == 0
    async with asyncio.timeout(30):
        await store.upsert(P, [_memory(3), _memory(4)])  # past the bound of 2
    assert held.applied >= 1 and not core.pending
    assert len(await held.inner.get(P, ["m1", "m2", "m3", "m4"])) == 4
    await core.close()


async def test_a_read_applies_its_own_partition_only(tmp_path: Path) -> None:
    # Issue 20, finding 9: a count (and a full-text search, before it was laid over
    # the log) waited until every agent's logged writes were applied; it catches up
    # its own partition, nothing else.
    _, core, store = await _held(tmp_path, delay_s=60)  # no background pass here
    await store.upsert(OTHER, [_memory(i, partition=OTHER) for i in range(5, 9)])
    await store.upsert(P, [_memory(1, "a note about the dentist")])
    await store.upsert(OTHER, [_memory(9, partition=OTHER)])
    hits = await store.text_search(P, "dentist", EVERYTHING, 5)
    assert [h.memory.id for h in hits] == ["m1"]
    assert len(core.pending) == 3  # full text applied nothing
    assert await store.count(P, EVERYTHING) == 1
    waiting = [op.partition for e in core.pending.values() for op in e.ops]
    assert waiting == [OTHER, OTHER]  # the other agent's writes are still to apply
    await core.close()


async def test_a_key_write_is_not_queued_behind_other_agents_writes(tmp_path: Path) -> None:
    # Past the bound a write is applied before its answer: its own partition only.
    held, core, store = await _held(tmp_path, behind=4, delay_s=60)
    for i in range(4):
        await store.upsert(OTHER, [_memory(10 + i, partition=OTHER)])
    records = DurableRecordStore(core)
    record = Record(kind=RecordKind.KEY, key="k", doc={}, version=1, updated_at=utcnow())
    await records.put_records(P, [record])  # applied before it is answered ...
    assert [r.key for r in await core.records.get_records(P, RecordKind.KEY, ["k"])] == ["k"]
    assert held.applied == 0  # ... alone: the other agent's four are still waiting
    assert len(core.pending) == 4
    await core.close()
    assert not core.pending  # close applies the rest
